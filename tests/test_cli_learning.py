"""Learning through the CLI on a real SQLite file: a turn in and what it taught, the versions of
a fact (history, superseded, restore, supersede), search as of a date."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest


def test_turns_teach_and_changes_supersede(run: Any) -> None:
    sid = run("session", "create", "alice").output.strip()
    taught = run("turn", sid, "--user", "I live in Berlin. I prefer dark mode.").output
    assert "global  [user-stated] [identity] The user lives in Berlin." in taught
    assert "[preference]" in taught
    moved = json.loads(run("turn", sid, "--user", "I moved to Paris.", "--json").output)
    berlin = moved["learned"]["superseded"][0]
    history = run("history", berlin).output
    assert "superseded by" in history and "(current)" in history
    assert "created  " in history and "extract by local" in history  # its audit events
    review = run("superseded", "--scope", "user:alice").output
    assert "Berlin" in review and "Paris" in review
    found = run("search", "where does the user live", "--scope", "user:alice").output
    assert "Paris" in found and "Berlin" not in found
    every = run("search", "lives", "--scope", "user:alice", "--include-superseded").output
    assert "Berlin" in every
    run("restore", berlin)
    assert "Berlin" in run("search", "lives", "--scope", "user:alice").output


def test_supersede_by_hand_and_errors(run: Any) -> None:
    entry = run("write", "Uses MySQL", "--scope", "user:bob").output.strip()
    new = run("supersede", entry, "Uses Postgres", "--reason", "migrated").output.strip()
    assert new and new != entry
    assert f"superseded by {new}" in run("supersede", entry, "Uses Oracle", code=1).output
    assert "nothing to restore" in run("restore", new, code=2).output
    assert "session not found" in run("turn", "nope", "--user", "hi", code=3).output


def test_a_turn_the_llm_could_not_learn_from_is_stored_and_says_why(
    run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = run("session", "create", "alice").output.strip()
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("MEMVAULT_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("MEMVAULT_LLM_MODEL", "absent")
    monkeypatch.setenv("MEMVAULT_LLM_MAX_RETRIES", "0")
    failed = run("turn", sid, "--user", "I live in Berlin.", code=1)
    assert "extraction failed: LLMUnavailableError" in failed.output
    assert "I live in Berlin." in run("record", "list", sid).output
