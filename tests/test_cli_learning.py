"""Learning through the CLI on a real SQLite file: a turn in and what it taught, the versions of
a fact (history, superseded, restore, supersede), search as of a date."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memvault.testing.openai_server import ScriptedOpenAIServer


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


def _unreachable() -> str:
    """The URL of an LLM server on a port nothing listens on."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_turn_the_llm_could_not_learn_from_is_stored_and_says_why(
    run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = run("session", "create", "alice").output.strip()
    monkeypatch.setenv("MEMVAULT_LLM_BASE_URL", _unreachable())
    monkeypatch.setenv("MEMVAULT_LLM_MODEL", "absent")
    monkeypatch.setenv("MEMVAULT_LLM_MAX_RETRIES", "0")
    failed = run("turn", sid, "--user", "I live in Berlin.", code=1)
    assert "extraction failed: LLMUnavailableError" in failed.output
    assert "I live in Berlin." in run("record", "list", sid).output


def test_an_unreachable_llm_is_one_line_naming_the_url_the_cause_and_the_setting(
    run: Any, tmp_path: Path
) -> None:
    sid = run("session", "create", "alice").output.strip()
    url = _unreachable()
    llm = {"MEMVAULT_LLM_BASE_URL": url, "MEMVAULT_LLM_MODEL": "absent"}
    command = ["--store", str(tmp_path / "cli.db"), "turn", sid, "--user", "I live in Berlin."]
    failed = subprocess.run(  # a real process: nothing configures its logging
        [sys.executable, "-m", "memvault", *command],
        env={**os.environ, **llm, "MEMVAULT_LLM_MAX_RETRIES": "0", "MEMVAULT_EMBED_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert line.startswith(f"extraction failed: LLMUnavailableError: the LLM server at {url} ")
    assert "could not connect" in line and "MEMVAULT_LLM_BASE_URL" in line


def test_a_model_without_a_server_is_a_config_error(
    run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = run("session", "create", "alice").output.strip()
    monkeypatch.setenv("MEMVAULT_LLM_MODEL", "qwen3:4b")
    refused = run("turn", sid, "--user", "I live in Berlin.", code=2)
    assert "MEMVAULT_LLM_MODEL is set but MEMVAULT_LLM_BASE_URL is empty" in refused.stderr
    monkeypatch.delenv("MEMVAULT_LLM_MODEL")
    assert "I live in Berlin." not in run("record", "list", sid).output  # nothing half-done


def test_a_reply_with_nothing_usable_is_shown(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = run("session", "create", "alice").output.strip()
    with ScriptedOpenAIServer(responder=lambda request: "Sure, noted!") as server:
        monkeypatch.setenv("MEMVAULT_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("MEMVAULT_LLM_MODEL", "scripted")
        taught = run("turn", sid, "--user", "I prefer green tea.").output
    assert "unparsed reply of scripted: not JSON, though structured output asked for it" in taught
    assert "'Sure, noted!'" in taught
