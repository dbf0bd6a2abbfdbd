"""`memvault audit verify`: intact with what erasures removed (exit 0), the first event that
does not fit (exit 7), the chain's kind and head; `memvault audit` as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlean

KEY = "the-operators-audit-key"


def _story(run: Any) -> list[str]:
    ids = [run("write", f"fact {n}", "--scope", f"user:u{n % 2}").stdout.strip() for n in range(4)]
    run("update", ids[0], "--tag", "x")
    run("erase", "--user", "u1", "--yes")
    return ids


def test_verify_says_intact_and_what_erasures_removed(run: Any) -> None:
    assert run("audit", "verify").stdout.splitlines()[0] == "intact, 0 events"
    _story(run)
    lines = run("audit", "verify").stdout.splitlines()
    assert lines[0] == "intact, 4 events (1 erasures removed 2 events)"
    assert lines[1].startswith("chain: SHA-256, unkeyed")
    assert lines[2].startswith("head: event ") and len(lines[2].rsplit(" ", 1)[1]) == 64
    found = json.loads(run("audit", "verify", "--json").stdout)
    assert found["intact"] is True and found["removed"] == 2 and found["first_bad_seq"] is None
    events = json.loads(run("audit", "--oldest", "--json").stdout)["events"]
    assert [e["change"] for e in events] == ["created", "created", "changed", "erased"]
    assert found["head_seq"] == events[-1]["seq"]


def test_verify_exits_7_at_the_first_event_that_does_not_fit(run: Any, tmp_path: Path) -> None:
    _story(run)
    events = json.loads(run("audit", "--oldest", "--json").stdout)["events"]
    conn = sqlean.connect(str(tmp_path / "cli.db"))
    conn.execute("DROP TRIGGER audit_log_append_only")
    conn.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = ?", (events[1]["seq"],))
    conn.commit()
    conn.close()
    result = run("audit", "verify", code=7)
    assert result.stdout.startswith(f"NOT INTACT at event {events[1]['seq']}: ")
    assert "changed since it was written" in result.stdout and result.stderr == ""
    found = json.loads(run("audit", "verify", "--json", code=7).stdout)
    assert found["intact"] is False and found["first_bad_seq"] == events[1]["seq"]


def test_a_keyed_chain_says_so_and_refuses_writes_without_its_key(
    run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_AUDIT_KEY", KEY)
    _story(run)
    assert "chain: HMAC-SHA256, keyed" in run("audit", "verify").stdout
    monkeypatch.setenv("MEMVAULT_AUDIT_KEY", KEY + "-other")
    assert "not the chain's" in run("audit", "verify", code=7).stdout
    monkeypatch.delenv("MEMVAULT_AUDIT_KEY")
    refused = run("write", "unkeyed", "--scope", "user:a", code=2)
    assert "MEMVAULT_AUDIT_KEY" in refused.stderr
    monkeypatch.setenv("MEMVAULT_AUDIT_KEY", "short")
    assert "audit_key" in run("audit", "verify", code=2).stderr


def test_verify_takes_no_filter(run: Any) -> None:
    refused = run("audit", "--by", "me", "verify", code=2)
    assert "takes no --by" in refused.stderr
