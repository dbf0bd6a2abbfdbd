"""Agent memory through the CLI, on a real SQLite file: record runs, read the strategy table,
choose, reuse a decomposition, check for failures."""

from __future__ import annotations

import json
from typing import Any


def _record(run: Any, n: int, strategy: str, ok: bool, *extra: str) -> str:
    outcome = "--success" if ok else "--failure"
    result = run(
        "agents",
        "record",
        "--workflow",
        f"wf-{n}",
        "--agent",
        "researcher",
        "--input",
        f"Summarise report {n}",
        outcome,
        "--strategy",
        strategy,
        "--kind",
        "summary",
        "--tokens-in",
        str(100 * n),
        "--duration-ms",
        "1500",
        *extra,
    )
    return str(result.output.strip())


def test_an_orchestrator_loop_through_the_cli(run: Any) -> None:
    first = _record(
        run,
        1,
        "react",
        True,
        "--tool-call",
        '{"name": "sql", "parameters": {"q": "SELECT 1"}, "output": "1"}',
    )
    for n in range(2, 6):
        _record(run, n, "react" if n % 2 else "plan", n != 4, "--error-class", "Timeout")
    table = run("stats", "strategies").output.splitlines()
    assert table[0].split() == [
        "strategy", "kind", "runs", "success", "tokens", "p95", "tokens", "ms", "p95", "ms"
    ]  # fmt: skip
    assert table[1].split()[:4] == ["plan", "*", "2", "50%"]
    rows = json.loads(run("stats", "strategies", "--json").output)
    assert {(r["strategy"], r["kind"], r["runs"]) for r in rows} == {
        ("plan", "*", 2),
        ("plan", "summary", 2),
        ("react", "*", 3),
        ("react", "summary", 3),
    }
    listed = json.loads(run("agents", "executions", "--failure", "--json").output)
    assert [e["workflow_id"] for e in listed] == ["wf-4"]
    (recorded,) = json.loads(run("agents", "executions", "--workflow", "wf-1", "--json").output)
    assert recorded["id"] == first and recorded["tool_calls"][0]["name"] == "sql"
    found = run("agents", "search", "summarise report 3").output
    assert "wf-3/researcher" in found.splitlines()[0]

    choice = run("agents", "choose", "react", "plan", "--kind", "summary", "--epsilon", "0")
    assert choice.output.splitlines()[0] == "react"
    assert "utility" in choice.output.splitlines()[1]

    run("agents", "decompose", "Compare three databases", "list them", "benchmark", "report")
    suggested = run("agents", "suggest", "compare 3 databases").output
    assert "1. list them" in suggested and "3. report" in suggested
    assert run("agents", "suggest", "bake a cake").output.strip() == (
        "no similar request was decomposed"
    )

    check = run("agents", "check", "Summarise the whole document", "--plan", "fetch in bulk")
    assert "rate_limit" in check.output and "context_overflow" in check.output
    assert "mitigation:" in check.output
    assert run("agents", "check", "Translate the invoice into French").output.strip() == (
        "no known failure pattern"
    )
    patterns = run("agents", "failures").output
    assert "learned:Timeout (1x)" in patterns


def test_bad_agent_input_is_a_one_line_error(run: Any) -> None:
    result = run(
        "agents", "record", "--workflow", "w", "--agent", "a", "--input", " ", "--success", code=2
    )
    assert "content must not be empty" in result.output
    assert "Traceback" not in result.output
    bad_call = run(
        "agents",
        "record",
        "--workflow",
        "w",
        "--agent",
        "a",
        "--input",
        "x",
        "--success",
        "--tool-call",
        "[1]",
        code=2,
    )
    assert "JSON object" in bad_call.output


def test_teams_through_the_cli(run: Any) -> None:
    pair = ("--member", "researcher=r-1@small", "--member", "writer=w-1")
    for n, outcome in enumerate(["--success", "--success", "--failure"]):
        shown = run("agents", "team", *pair, "--kind", "report", outcome, "--tokens", str(n))
    assert shown.output.strip() == "researcher: r-1 (small) + writer: w-1: 2/3 succeeded on report"
    run("agents", "team", "--member", "writer=w-1", "--kind", "report", "--failure")
    table = run("stats", "teams", "--kind", "report").output.splitlines()
    assert table[0].split()[:3] == ["kind", "team", "runs"]
    assert "67%" in table[1] and "0%" in table[2]
    suggested = run("agents", "suggest-team", "--kind", "report", "--prefer", "accuracy")
    first, why = suggested.output.splitlines()[:2]
    assert first == "researcher: r-1 (small) + writer: w-1" and "accuracy" in why
    answer = json.loads(run("--json", "agents", "suggest-team", "--kind", "report").output)
    assert answer["reason"] == "exploit" and len(answer["team"]) == 2
    bad = run("agents", "team", "--member", "writer", "--kind", "report", "--success", code=2)
    assert "ROLE=AGENT" in bad.output


def test_a_users_work_style_through_the_cli(run: Any) -> None:
    session = run("session", "create", "ada").output.strip()
    for said in ("skip the basics: silhouette vs gap statistic?", "just the one-liner, quick"):
        run("turn", session, "--user", said)
    shown = run("agents", "work-style", "ada").output
    assert "expertise: expert" in shown and "leaning: speed" in shown and "resets at" in shown
    kept = json.loads(run("--json", "agents", "work-style", "ada", "--remember").output)
    assert kept["remembered"] is True and kept["resets_at"] is None
