"""The layering docs/architecture.md describes holds in the imports: import-linter's contract
(pyproject.toml, [tool.importlinter]) fails on any import of a layer above."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_imports_a_layer_above_it() -> None:
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert command, "import-linter is part of the [dev] extra"
    result = subprocess.run(
        [command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


SAMPLE = (
    "check_failures",
    "failure_patterns",
    "search_executions",
    "suggest_decomposition",
    "search_records",
    "search_sessions",
    "add_finding",
)
"""Operations with names of their own (no other identifier is spelt the same)."""
APPS = ("cli/", "chat/", "integrations/", "server/ui/")
"""Where the apps on a memory live: they call operations by name."""


def test_an_operation_is_named_only_where_it_is_made_declared_bound_and_commanded() -> None:
    """Issue 30: adding an operation touches its plan's module, its wing of the catalogue, the
    two facade lines and the apps that call it (the CLI, the chat agent, the MCP tools, the
    inspector's pages) — no routing table, client class or handler besides."""
    import re

    from memvault.api import CATALOGUE

    package = ROOT / "src" / "memvault"
    sources = {
        path.relative_to(package).as_posix(): path.read_text(encoding="utf-8")
        for path in package.rglob("*.py")
        if "testing" not in path.parts  # the shipped suites call every operation, as tests do
    }
    by_name = {op.name: op for op in CATALOGUE}
    for name in SAMPLE:
        op = by_name[name]
        plan_module = op.plan.__module__.removeprefix("memvault.").replace(".", "/") + ".py"
        wing = _wing_of(op)
        allowed = {plan_module, wing, "memory.py"}
        word = re.compile(rf"\b({name}|{name.upper()})\b")
        naming = {path for path, text in sources.items() if word.search(text)}
        callers = {p for p in naming if p.startswith(APPS)}
        assert naming - allowed <= callers, name
        lines = [line for line in sources["memory.py"].splitlines() if word.search(line)]
        assert len(lines) == 2, name  # Memory's line, and AsyncMemory's


def _wing_of(op: object) -> str:
    from memvault import api

    for wing in ("store", "facilities", "learning", "trust", "agents"):
        if op in getattr(api, wing).OPERATIONS:
            return f"api/{wing}.py"
    raise AssertionError(f"{op} is in no wing")
