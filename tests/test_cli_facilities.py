"""The facilities through the CLI, in the shape of seed 002's scenario, on a real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def as_json(result: Any) -> Any:
    return json.loads(result.stdout)


def test_a_person_adds_a_finding_without_loading_data(run: Any) -> None:
    sid = run("session", "create", "alice").output.strip()
    found = as_json(run("findings", "add", sid, "Week 10 of Osaka is a typo", "--json"))
    assert (found["source"], found["tool_originated"]) == ("manual", False)
    assert "- [user-stated] [" in run("prompt", sid).output
    assert "Week 10 of Osaka" in run("findings", "list", sid).output


def test_the_seed_scenario_through_the_cli(run: Any) -> None:
    sid = run("session", "create", "alice", "--title", "Q1 sales").output.strip()
    run("record", "append", sid, "user", "I prefer Go over Python. Load the Q1 sales CSV.")
    run("record", "append", sid, "tool", "3 tables loaded", "--tool-name", "load-data")
    run(
        "global",
        "add",
        "alice",
        "User prefers Go over Python",
        "--source",
        "user_turn",
        "--session",
        sid,
    )
    run("session", "note", sid, "User is analysing Q1 sales data", "--category", "context")
    guessed = run("findings", "add", sid, "a guess", "--source", "llm_promoted", code=4).output
    assert "no data loaded" in guessed and f"memvault session data-loaded {sid}" in guessed
    run("session", "data-loaded", sid)
    first = as_json(
        run(
            "findings",
            "add",
            sid,
            "Osaka Widget-C sold 1850 units in week 10",
            "--tag",
            "critical",
            "--json",
        )
    )
    again = run("findings", "add", sid, "osaka widget-c: sold 1850 units in week 10!")
    assert again.output.strip() == f"duplicate of {first['id']}"
    run("findings", "add", sid, "Tokyo Widget-A is flat at 130 units a week", "--tag", "info")
    assert [
        f["id"] for f in as_json(run("findings", "list", sid, "--tag", "critical", "--json"))
    ] == [first["id"]]
    pinned = as_json(run("pin", first["entry_id"], "--json"))
    assert pinned["provenance"]["source"] == "promoted_from_finding"

    other = run("session", "create", "alice", "--title", "Next week").output.strip()
    prompt = run("prompt", other, "--base", "You are an analyst.").output
    assert "[decision] Osaka Widget-C sold 1850 units in week 10 (promoted from Finding," in prompt
    assert "User prefers Go over Python" in prompt
    assert "Notes about the current session" not in prompt and "Tokyo" not in prompt
    assert run("prompt", other, "--base", "You are an analyst.").output == prompt

    window = as_json(run("context", sid, "--budget", "500", "--json"))
    assert [m["role"] for m in window["messages"]] == ["user", "user"]
    assert window["messages"][1]["content"].startswith("[")
    recalled = as_json(run("context", other, "--budget", "800", "--query", "Osaka", "--json"))
    assert any("Osaka" in hit["content"] for hit in recalled["relevant"])
    hits = as_json(run("record", "search", "sales CSV", "--user", "alice", "--json"))
    assert hits and hits[0]["scope"] == f"session:{sid}"
    found = as_json(run("session", "search", "sales CSV", "--user", "alice", "--json"))
    assert found[0]["session"]["id"] == sid and found[0]["turns"][0]["scope"] == f"session:{sid}"
    text = run("session", "search", "sales CSV", "--user", "alice", "--turns", "1").output
    assert text.splitlines()[0].split()[1] == sid and "Load the Q1 sales CSV" in text
    assert (
        "turns must be"
        in run("session", "search", "x", "--user", "a", "--turns", "0", code=2).output
    )

    assert as_json(run("session", "delete", sid, "--yes", "--json"))["deleted"] == 6
    assert run("session", "show", sid, code=3).output.startswith("Error: session not found")
    assert "promoted from Finding" in run("prompt", other).output


def test_private_sessions_and_immutable_records_exit_4(run: Any) -> None:
    sid = run("session", "create", "bob", "--private").output.strip()
    note = run("session", "note", sid, "the code name is Falcon").output.strip()
    assert "private" in run("pin", note, code=4).output
    record = as_json(run("record", "append", sid, "user", "hello", "--json"))
    assert "immutable" in run("delete", record["id"], code=4).output
    assert "immutable" in run("update", record["id"], "--content", "bye", code=4).output
    assert [r["content"] for r in as_json(run("record", "list", sid, "--json"))] == ["hello"]


def test_demote_and_global_list(run: Any) -> None:
    sid = run("session", "create", "carol").output.strip()
    entry = run(
        "global", "add", "carol", "Uses the staging cluster", "--category", "decision"
    ).output.strip()
    assert "Uses the staging cluster" in run("global", "list", "carol").output
    moved = as_json(run("demote", entry, "--session", sid, "--json"))
    assert moved["scope"] == f"session:{sid}"
    assert run("global", "list", "carol").output.strip() == "(no global memory)"
    assert "Uses the staging cluster" in run("session", "notes", sid).output


@pytest.mark.slow
def test_the_prompt_is_byte_identical_after_a_restart(tmp_path: Path) -> None:
    store = str(tmp_path / "restart.db")

    def memvault(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memvault", "--store", store, *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    sid = memvault("session", "create", "dana").strip()
    memvault("global", "add", "dana", "Prefers metric units")
    memvault("session", "note", sid, "Working on the Q3 budget", "--native", "Q3予算")
    memvault("session", "data-loaded", sid)
    memvault("findings", "add", sid, "Travel costs doubled in August", "--tag", "warning")
    first = memvault("prompt", sid, "--base", "Be brief.")
    assert memvault("prompt", sid, "--base", "Be brief.") == first
    assert first.count("\n- ") == 3 and "(Q3予算)" in first
