"""Offline means offline: the README's examples, run as a new user runs them, write nothing
outside ``MEMVAULT_HOME`` and the stores they name, and try no connection beyond loopback.

One run of the quick start (Python and shell), the learning, MCP and LangGraph examples, in a
fresh process tree: an empty ``HOME``, no ``XDG_*`` directories, a temporary directory of its
own; in a network namespace with no interface up where the machine allows one (``unshare -rn``),
under ``strace`` where it is installed (it sees native code too, such as onnxruntime's uploader),
and always with an audit hook in every Python process of the tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from memvault import telemetry

pytestmark = pytest.mark.slow  # a process tree running the README's examples

README = Path(__file__).resolve().parents[2] / "README.md"
STORES = ("memory.db", "agent.db")  # the stores the examples name (in their working directory)
EXAMPLES = [  # (section, language, which block of that language)
    ("Quick start", "python", 0),
    ("Learning from conversations", "python", 0),
    ("MCP server", "python", 0),
    ("Use memvault as a LangGraph store", "python", 0),
    ("Quick start", "bash", 0),
]

AUDIT_HOOK = """
import os, sys

_LOG = os.environ["NETWORK_AUDIT_LOG"]
_LOOKUPS = ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
            "socket.gethostbyaddr")


def _remote(host):
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return isinstance(host, str) and host not in ("localhost", "::1", "") and not host.startswith(
        "127."
    )


def _hook(event, args):
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        address = args[1]
        host = address[0] if isinstance(address, tuple) and address else None
    elif event in _LOOKUPS:
        host = args[0]
    else:
        return
    if _remote(host):
        with open(_LOG, "a") as log:
            log.write(f"{os.getpid()} {event} {host!r}\\n")


sys.addaudithook(_hook)
"""


@dataclass(frozen=True)
class Run:
    root: Path
    output: str
    namespace: bool
    traced: bool

    def files_under(self, name: str) -> list[str]:
        base = self.root / name
        return sorted(str(p.relative_to(base)) for p in base.rglob("*") if not p.is_dir())


def example(text: str, section: str, language: str, index: int) -> str:
    body = re.search(rf"\n## {re.escape(section)}\n(.*?)(?=\n## |\Z)", text, re.S)
    assert body, f"README has no section {section!r}"
    blocks = re.findall(rf"```{language}\n(.*?)```", body[1], re.S)
    return str(blocks[index])


def python_driver(text: str) -> str:
    """One interpreter running each Python example in a namespace of its own."""
    codes = [example(text, *spec) for spec in EXAMPLES if spec[1] == "python"]
    return "\n".join(f"exec(compile({code!r}, 'README', 'exec'), {{}})" for code in codes)


def namespace_prefix() -> list[str]:
    """``unshare -rn`` (a user and network namespace: no interface up) where it is allowed."""
    if not shutil.which("unshare"):
        return []
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
    return ["unshare", "-rn"] if probe.returncode == 0 else []


def strace_prefix(log: Path) -> list[str]:
    if not shutil.which("strace"):
        return []
    calls = "trace=connect,sendto,sendmsg"
    return ["strace", "-f", "-qq", "-e", calls, "-e", "signal=none", "-o", str(log)]


def clean_environment(root: Path) -> dict[str, str]:
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMVAULT_", "XDG_"))
        and k not in {"HOME", "TMPDIR", "PYTHONPATH", *telemetry.OFF}
    }
    bin_dir = str(Path(sys.executable).parent)
    return kept | {
        "HOME": str(root / "home"),
        "TMPDIR": str(root / "tmp"),
        "MEMVAULT_HOME": str(root / "memvault-home"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(root / "hook"),
        "NETWORK_AUDIT_LOG": str(root / "audit.log"),
    }


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("offline")
    for name in ("home", "tmp", "memvault-home", "work", "hook"):
        (root / name).mkdir()
    (root / "hook" / "sitecustomize.py").write_text(AUDIT_HOOK)
    text = README.read_text(encoding="utf-8")
    (root / "examples.py").write_text(python_driver(text))
    shell = [example(text, *spec) for spec in EXAMPLES if spec[1] == "bash"]
    script = "set -euo pipefail\npython ../examples.py\n" + "\n".join(shell)
    (root / "examples.sh").write_text(script)
    namespace, trace = namespace_prefix(), strace_prefix(root / "strace.log")
    done = subprocess.run(
        [*namespace, *trace, "bash", str(root / "examples.sh")],
        cwd=root / "work",
        env=clean_environment(root),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return Run(root, done.stdout, bool(namespace), bool(trace))


def test_the_examples_ran_as_the_readme_says(readme_run: Run) -> None:
    assert "User prefers dark mode" in readme_run.output  # the quick start's search
    assert "recalled: ['Alice prefers dark mode']" in readme_run.output  # LangGraph
    assert '"content": "User prefers dark mode"' in readme_run.output  # the shell's --json search


def test_nothing_is_written_outside_memvault_home_and_the_named_stores(readme_run: Run) -> None:
    assert readme_run.files_under("home") == []  # no ~/.cache/Microsoft/DeveloperTools/…
    assert readme_run.files_under("tmp") == []  # onnxruntime's .ses session file: none
    assert readme_run.files_under("memvault-home") == ["memvault.db"]
    outside = [
        path
        for path in readme_run.files_under("work")
        if not any(path == s or path.startswith((f"{s}-", f"{s}/")) for s in STORES)
    ]
    assert outside == []


def test_no_connection_is_tried_beyond_loopback(readme_run: Run) -> None:
    audit = readme_run.root / "audit.log"
    assert not audit.exists(), audit.read_text()
    if readme_run.traced:  # native code too: every connect/sendto/sendmsg with an address
        calls = (readme_run.root / "strace.log").read_text().splitlines()
        assert [line for line in calls if remote_address(line)] == []


def remote_address(strace_line: str) -> bool:
    found = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"\)', strace_line)
    hosts = [host for pair in found for host in pair if host]
    return any(not re.match(r"127\.|::1$|::ffff:127\.", host) for host in hosts)


def test_the_run_was_cut_off_from_the_network_where_the_machine_allows_it(readme_run: Run) -> None:
    if not namespace_prefix():
        pytest.skip("user namespaces are not allowed here: the audit hook alone watched")
    assert readme_run.namespace


def test_telemetry_switches_are_set_unless_the_user_set_them() -> None:
    environ = {"ORT_DISABLE_TELEMETRY": "0"}
    telemetry.switch_off(environ)
    assert environ == {"ORT_DISABLE_TELEMETRY": "0", "HF_HUB_DISABLE_TELEMETRY": "1"}
    assert telemetry.onnxruntime_allowed(environ)
    assert not telemetry.onnxruntime_allowed({"ORT_DISABLE_TELEMETRY": "Yes"})
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"  # importing memvault set it
