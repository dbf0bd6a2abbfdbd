"""The reference agent is offline too: a whole ``memvault chat --once`` turn with data tools,
run as a new user runs it (empty ``HOME``, a temporary directory of its own, the audit hook in
every Python process, under ``strace`` where it is installed), talks to nothing but the model's
loopback server and writes nothing outside ``MEMVAULT_HOME`` (DuckDB installs no extension)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memvault.store.session_files import store_key
from memvault.testing.openai_server import ScriptedOpenAIServer

from ..integration.test_offline import AUDIT_HOOK, clean_environment, remote_address, strace_prefix
from .conftest import Router

pytestmark = pytest.mark.slow


def test_a_turn_with_data_tools_stays_on_the_machine(
    server: ScriptedOpenAIServer, model: Router, tmp_path: Path
) -> None:
    for name in ("home", "tmp", "memvault-home", "work", "hook"):
        (tmp_path / name).mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(AUDIT_HOOK)
    (tmp_path / "work" / "sales.csv").write_text("city,units\nOsaka,1850\nTokyo,40\n")
    model.calls(("load-data", {"path": "sales.csv"}))
    model.calls(("query-sql", {"sql": "SELECT sum(units) AS total FROM sales"}))
    model.calls(("analyze-data", {"table": "sales"}))
    model.says("Done.")
    env = clean_environment(tmp_path) | {
        "MEMVAULT_LLM_BASE_URL": server.base_url,
        "MEMVAULT_LLM_MODEL": "scripted",
    }
    trace = strace_prefix(tmp_path / "strace.log")
    command = [sys.executable, "-m", "memvault", "chat", "--yes", "--once", "Analyse sales.csv"]
    done = subprocess.run(
        [*trace, *command],
        cwd=tmp_path / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == "Done.\n", done.stderr[-3000:]
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    session = next(
        line.split()[1] for line in done.stderr.splitlines() if line.startswith("session")
    )
    key = store_key(str(tmp_path / "memvault-home" / "memvault.db"))
    assert [p for p in written if not p.startswith(("hook/", "strace.log"))] == [
        "memvault-home/memvault.db",
        f"memvault-home/sessions/{key}/default/{session}/analysis.duckdb",
        "work/sales.csv",
    ]
    assert not (tmp_path / "audit.log").exists()
    if trace:
        calls = (tmp_path / "strace.log").read_text().splitlines()
        assert [line for line in calls if remote_address(line)] == []
