"""Without an edge's extra, memvault says which extra to install: one line, no traceback
(each case runs in a fresh interpreter in which the extra's packages cannot be imported)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a fresh interpreter per case

BLOCKED = "import sys\nfor name in {blocked!r}:\n    sys.modules[name] = None\n"
CLI = "import sys\nfrom memvault.cli import main\nsys.argv = ['memvault', *{args!r}]\nmain()\n"


def run_without(blocked: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    script = BLOCKED.format(blocked=blocked) + code
    return subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("blocked", "module", "extra"),
    [
        (("mcp",), "memvault.integrations.mcp", "memvault[mcp]"),
        (("mcp",), "memvault.integrations.mcp_agents", "memvault[mcp]"),
        (("starlette", "uvicorn"), "memvault.integrations.mcp", "memvault[mcp]"),
        (("langgraph",), "memvault.integrations.langgraph", "memvault[langgraph]"),
    ],
)
def test_importing_an_integration_names_its_extra(
    blocked: tuple[str, ...], module: str, extra: str
) -> None:
    code = f"import importlib\ntry:\n    importlib.import_module({module!r})\n"
    code += "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    done = run_without(blocked, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ConfigError ") and extra in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("blocked", "command", "extra"),
    [
        (("mcp",), ["mcp"], "memvault[mcp]"),
        (("starlette", "uvicorn"), ["mcp", "--transport", "http"], "memvault[mcp]"),
        (("starlette", "uvicorn"), ["serve"], "[server]"),
    ],
)
def test_a_command_without_its_extra_says_which_to_install(
    blocked: tuple[str, ...], command: list[str], extra: str, tmp_path: Path
) -> None:
    args = ["--store", str(tmp_path / "m.db"), *command]
    done = run_without(blocked, CLI.format(args=args))
    assert done.returncode == 2, done.stderr
    assert extra in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
