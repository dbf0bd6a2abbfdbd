"""What holds for every command of the CLI: the global options go before or after it, every
error exits with the documented code of its kind, a command that asks first never hangs a
script, and what a person reads shows what matters (no stray lines, no Python internals)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from memvault import errors
from memvault.cli import cli
from memvault.cli.common import EXIT_BY_ERROR, exit_code
from memvault.cli.reference import commands
from memvault.errors import AbortedError, BackendError, MemvaultError

ROOT = Path(__file__).resolve().parents[1]
GLOBAL = (("--store", "x.db"), ("--tenant", "acme"), ("--actor", "ops"), ("--json",))


def command_at(path: tuple[str, ...]) -> click.Command:
    found: click.Command = cli
    for name in path:
        assert isinstance(found, click.Group)
        found = found.commands[name]
    return found


def leaves() -> list[str]:
    """Every command that runs: not a group, unless it runs without a subcommand too."""
    return [" ".join(p) for p in commands(cli) if _runs(command_at(p))]


def _runs(command: click.Command) -> bool:
    return not isinstance(command, click.Group) or command.invoke_without_command


# -- global options anywhere ------------------------------------------------------------------


def test_every_command_takes_the_global_options_after_its_name() -> None:
    runner = CliRunner()
    for path in commands(cli):
        for option in GLOBAL:
            result = runner.invoke(cli, [*path, *option, "--help"])
            assert result.exit_code == 0, f"memvault {' '.join(path)} {option[0]}: {result.output}"
        every = [word for option in GLOBAL for word in option]
        assert runner.invoke(cli, [*path, *every, "--help"]).exit_code == 0, path


def test_global_options_after_the_command_act_as_before_it(tmp_path: Path) -> None:
    runner = CliRunner()
    store = str(tmp_path / "after.db")

    def out(*args: str) -> str:
        result = runner.invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.stdout

    out("write", "tea", "--scope", "user:a", "--store", store, "--tenant", "acme", "--actor", "ops")
    assert out("--store", store, "--tenant", "acme", "count").strip() == "1"
    assert out("count", "--store", store).strip() == "0"  # tenant default: nothing there
    assert json.loads(out("count", "--store", store, "--tenant", "acme", "--json")) == {"count": 1}
    assert json.loads(out("--json", "--store", store, "count")) == {"count": 0}
    audit = json.loads(out("audit", "--store", store, "--tenant", "acme", "--json"))
    assert [e["actor"] for e in audit["events"]] == ["ops"]
    assert json.loads(out("session", "--store", store, "--json", "list")) == []
    assert out("--store", str(tmp_path / "other.db"), "count", "--store", store).strip() == "0"
    nearer = out("--tenant", "default", "count", "--store", store, "--tenant", "acme")
    assert nearer.strip() == "1"  # given twice: the one nearer the end wins
    serve = runner.invoke(cli, ["serve", "--store", "memory://", "--workers", "2"])
    assert serve.exit_code == 2 and "lives in one process" in serve.stderr


def test_the_readme_teaches_the_global_options_anywhere() -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    assert "go before or after any command" in text


# -- exit codes -------------------------------------------------------------------------------

INPUT, NOT_FOUND, FORBIDDEN, ABORTED = 2, 3, 4, 6
CASES: dict[str, list[tuple[str, int]]] = {
    "agents check": [('agents check ""', INPUT)],
    "agents choose": [("agents choose a --epsilon 2", INPUT)],
    "agents decompose": [('agents decompose "" a', INPUT)],
    "agents executions": [("agents executions --limit 0", INPUT)],
    "agents failures": [("agents failures --scope bad", INPUT)],
    "agents record": [
        ("agents record --workflow w --agent a --input x --success --cost -1", INPUT)
    ],
    "agents search": [('agents search ""', INPUT)],
    "agents suggest": [('agents suggest ""', INPUT)],
    "agents work-style": [('agents work-style ""', INPUT)],
    "agents suggest-team": [("agents suggest-team --epsilon 2", INPUT)],
    "agents team": [("agents team --member w=a --kind r --success --tokens -1", INPUT)],
    "audit": [("audit --change nonsense", INPUT), ("audit --limit 0", INPUT)],
    "audit verify": [("audit --limit 5 verify", INPUT), ("audit verify --bogus", INPUT)],
    "backup": [("backup {file}", INPUT)],
    "bench locomo": [
        ("bench locomo --data {missing}", INPUT),
        ("bench locomo --data {file}", INPUT),
    ],
    "chat": [("chat --once hi", INPUT), ("chat --budget 1000 --once hi", INPUT), ("chat", INPUT)],
    "context": [("context {session} --budget 0", INPUT), ("context nope --budget 9", NOT_FOUND)],
    "count": [("count --scope bad", INPUT)],
    "delete": [("delete {record}", FORBIDDEN), ("delete ''", INPUT)],
    "delete-scope": [("delete-scope bad --yes", INPUT), ("delete-scope user:a", INPUT)],
    "demote": [("demote nope --session {session}", NOT_FOUND), ("demote {org} --session x", INPUT)],
    "erase": [
        ("erase", INPUT),
        ("erase --user bob", INPUT),
        ("erase --user b --scope user:b", INPUT),
    ],
    "export-session": [
        ("export-session nope {missing}", 3),
        ("export-session {session} {file}", 2),
    ],
    "extract": [("extract nope", NOT_FOUND), ("extract ''", INPUT)],
    "findings add": [("findings add nope x", NOT_FOUND), ("findings add x y --source z", INPUT)],
    "findings list": [("findings list nope", NOT_FOUND), ("findings list {session} --tag ''", 2)],
    "get": [("get nope", NOT_FOUND), ("get ''", INPUT)],
    "global add": [('global add alice ""', INPUT), ("global add alice f --session {session}", 4)],
    "global list": [('global list ""', INPUT)],
    "history": [("history nope", NOT_FOUND), ("history ''", INPUT)],
    "import": [("import {missing}", INPUT), ("import {file}", INPUT)],
    "import-session": [("import-session {missing}", INPUT), ("import-session {file}", INPUT)],
    "list": [("list --limit 0", INPUT), ("list --cursor garbage", INPUT)],
    "mcp": [("mcp --transport nope", INPUT)],
    "pin": [("pin nope", NOT_FOUND), ("pin {note}", FORBIDDEN), ("pin ''", INPUT)],
    "promote": [
        ("promote nope --to user:a", NOT_FOUND),
        ("promote {org} --to user:a", INPUT),  # narrowing
        ("promote {record} --to user:a", FORBIDDEN),
    ],
    "prompt": [("prompt nope", NOT_FOUND), ("prompt {session} --base-file {missing}", 2)],
    "purge-expired": [("purge-expired --bogus", INPUT)],
    "record append": [("record append nope user hi", NOT_FOUND), ("record append x bad hi", INPUT)],
    "record list": [("record list nope", NOT_FOUND), ("record list ''", INPUT)],
    "record search": [("record search q", INPUT)],
    "reembed": [("reembed --batch 0", INPUT)],
    "restore": [("restore nope", NOT_FOUND), ("restore {org}", INPUT)],
    "restore-backup": [
        ("restore-backup {missing} --yes", INPUT),
        ("restore-backup {file} --yes", INPUT),  # not a database: bad input, not a store error
        ("restore-backup {file}", INPUT),  # no one to answer
    ],
    "retention run": [("retention run --bogus", INPUT)],
    "search": [("search q --scope bad", INPUT), ("search q --scope user:a --min-score nan", INPUT)],
    "reinforce": [("reinforce ''", INPUT)],
    "hygiene": [("hygiene --stale-days 0", INPUT), ("hygiene --scope bad", INPUT)],
    "serve": [("serve --port 99999", INPUT)],
    "session create": [('session create ""', INPUT)],
    "session data-loaded": [("session data-loaded nope", 3), ("session data-loaded ''", 2)],
    "session delete": [("session delete {session}", INPUT)],
    "session list": [("session list --limit 0", INPUT)],
    "session note": [("session note nope fact", NOT_FOUND), ("session note {session} ''", INPUT)],
    "session notes": [("session notes nope", NOT_FOUND), ("session notes ''", INPUT)],
    "session rename": [("session rename nope t", NOT_FOUND), ("session rename {session} ''", 2)],
    "session search": [("session search q --user alice --limit 0", INPUT)],
    "session show": [("session show nope", NOT_FOUND), ("session show ''", INPUT)],
    "stats strategies": [("stats strategies --scope bad", INPUT)],
    "stats teams": [("stats teams --scope bad", INPUT)],
    "supersede": [
        ("supersede nope x", NOT_FOUND),
        ("supersede {record} y", FORBIDDEN),
        ("supersede {org} ''", INPUT),
    ],
    "superseded": [("superseded --scope bad", INPUT)],
    "turn": [("turn nope --user hi", NOT_FOUND), ("turn {session}", INPUT)],
    "update": [
        ("update nope --content x", NOT_FOUND),
        ("update {record} --content x", FORBIDDEN),
        ("update x", INPUT),
    ],
    "write": [("write x --scope bad", INPUT), ("write '' --scope user:a", INPUT)],
}
ASKING = {
    "delete-scope": "delete-scope user:a",
    "session delete": "session delete {session}",
    "erase": "erase --user alice",
    "restore-backup": "restore-backup {backup}",
}
"""The commands that ask for confirmation, each asking."""


@pytest.fixture
def story(run: Any, tmp_path: Path) -> dict[str, str]:
    """A store to err in: a private session with a note and a record, an org entry, a backup;
    and paths: a file that is nothing memvault reads, one that does not exist."""
    session = run("session", "create", "alice", "--private").stdout.strip()
    record = json.loads(run("record", "append", session, "user", "hello", "--json").stdout)
    (tmp_path / "junk.txt").write_text("not a database, a bundle or JSON lines\n" * 50)
    run("backup", str(tmp_path / "backup.db"))
    return {
        "session": session,
        "note": run("session", "note", session, "User likes tea").stdout.strip(),
        "record": record["id"],
        "org": run("write", "an org fact", "--scope", "org:o").stdout.strip(),
        "file": str(tmp_path / "junk.txt"),
        "missing": str(tmp_path / "missing" / "nothing.db"),
        "backup": str(tmp_path / "backup.db"),
    }


def test_every_command_has_a_case_of_bad_input() -> None:
    assert set(CASES) == set(leaves())
    assert set(ASKING) <= set(CASES)
    assert all(any(code == INPUT for _, code in cases) for cases in CASES.values())


@pytest.mark.parametrize("command", sorted(CASES))
def test_every_error_exits_with_the_code_of_its_kind(
    command: str, run: Any, story: dict[str, str]
) -> None:
    for line, code in CASES[command]:
        result = run(*shlex.split(line.format(**story)), code=code)
        said = result.stderr or result.stdout  # import reports refused lines on stdout
        last = said.strip().splitlines()[-1]  # after click's usage, if any
        assert last.startswith("Error: ") or "refused" in last, line
        assert "Traceback" not in said, line


def test_the_exit_codes_are_one_table_by_type() -> None:
    kinds = [e for e in vars(errors).values() if isinstance(e, type)]
    for kind in (e for e in kinds if issubclass(e, MemvaultError)):
        error = kind.__new__(kind)
        expected = next((c for k, c in EXIT_BY_ERROR if issubclass(kind, k)), 1)
        assert exit_code(error) == expected, kind
    assert exit_code(AbortedError("no")) == ABORTED
    assert exit_code(BackendError("disk")) == 1


def test_the_exit_codes_are_documented() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    for documented in ("1 store error", "2 bad input", "3 not found", "4 not allowed"):
        assert documented in readme
    assert "5 an erasure pending" in readme and "6 aborted by the user" in readme
    assert "6 aborted by the user" in (cli.help or "")


# -- confirmation -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(ASKING))
def test_a_script_is_told_to_say_yes_and_nothing_changes(
    command: str, run: Any, story: dict[str, str]
) -> None:
    run("write", "kept", "--scope", "user:a")
    before = run("count").stdout
    refused = run(*shlex.split(ASKING[command].format(**story)), code=INPUT)
    assert "--yes" in refused.stderr and "not a terminal" in refused.stderr
    assert run("count").stdout == before
    assert run("session", "show", story["session"]).stdout


@pytest.mark.parametrize("command", sorted(ASKING))
def test_a_person_who_declines_aborts_with_its_own_code(
    command: str, run: Any, story: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memvault.cli.common.interactive", lambda: True)
    run("write", "kept", "--scope", "user:a")
    before = run("count").stdout
    declined = run(*shlex.split(ASKING[command].format(**story)), input="n\n", code=ABORTED)
    assert "aborted: nothing was changed" in declined.stderr
    interrupted = run(*shlex.split(ASKING[command].format(**story)), input="", code=ABORTED)
    assert "aborted" in interrupted.stderr
    assert run("count").stdout == before


def test_a_bad_backup_is_refused_before_anyone_is_asked(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memvault.cli.common.interactive", lambda: True)
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    refused = run("restore-backup", str(text), input="", code=INPUT)
    assert "not a memvault SQLite store" in refused.stderr and "Replace" not in refused.stdout


def test_erase_in_a_script_fails_at_once_instead_of_waiting(tmp_path: Path) -> None:
    store = str(tmp_path / "script.db")
    env = {**os.environ, "MEMVAULT_HOME": str(tmp_path)}
    read, write = os.pipe()  # standard input open, never written to: a prompt would wait
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memvault", "--store", store, "erase", "--user", "bob"],
            stdin=read,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    finally:
        os.close(read)
        os.close(write)
    assert done.returncode == INPUT and "--yes" in done.stderr


def test_the_readme_names_yes_where_it_shows_erasure() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "memvault erase --user bob --yes" in readme


# -- what a person sees -----------------------------------------------------------------------


def test_import_prints_its_summary_only_and_names_an_unknown_key(run: Any) -> None:
    lines = [
        {"content": "Alice drinks green tea", "scope": "user:alice"},
        {"content": "Bob drinks coffee", "scope": "user:bob", "catgory": "preference"},
        {"content": "Carol drinks water", "scope": "user:carol", "created_at": 5},
    ]
    result = run("import", "-", input="\n".join(map(json.dumps, lines)) + "\n", code=2)
    assert result.stderr == ""  # no progress line where no terminal shows it
    assert result.stdout.splitlines() == [
        "stored 1, merged 0, refused 2",
        "line 2: refused (ValidationError): unknown field(s): catgory; accepted: category, "
        "content, context, created_at, expires_at, metadata, provenance, scope, tags",
        "line 3: refused (ValidationError): created_at must be an ISO-8601 string, got int",
    ]
    again = [lines[0], lines[1], lines[0]]  # lines 1 and 3 merge into the stored entry
    mixed = run("import", "-", input="\n".join(map(json.dumps, again)) + "\n", code=2)
    told = [line.split(":")[0] for line in mixed.stdout.splitlines()[1:]]
    assert told == ["line 1", "line 2", "line 3"]  # merged and refused, in the input's order
    strict = run("import", "-", "--strict", input=json.dumps(lines[1]) + "\n", code=2)
    assert "line 1: unknown field(s): catgory" in strict.stderr and "__init__" not in strict.stderr


def test_text_output_shows_category_tags_and_expiry(run: Any) -> None:
    entry_id = run(
        "write",
        "Alice's name is Alice",
        "--scope",
        "user:alice",
        "--category",
        "identity",
        "--tag",
        "name",
        "--expires-at",
        "2099-01-02T03:04:00+00:00",
    ).stdout.strip()
    line = run("list").stdout.splitlines()[0]
    assert line.startswith(entry_id) and "user:alice [identity] #name" in line
    assert "expires 2099-01-02 03:04" in line


def test_search_shows_each_hits_score_under_a_header(run: Any) -> None:
    run("write", "Alice drinks green tea every morning", "--scope", "user:alice")
    run("write", "The quarterly report is due on Friday", "--scope", "user:alice")
    text = run("search", "green tea", "--scope", "user:alice").stdout.splitlines()
    assert text[0].split() == ["score", "relevance", "lexical", "dense", "entry"]
    best, weak = (float(line.split()[0]) for line in text[1:])
    assert best > weak and "green tea" in text[1] and text[2].split()[2] == "0.00"
    assert float(text[1].split()[1]) > float(text[2].split()[1])  # the relevance column
    kept = run("search", "green tea", "--scope", "user:alice", "--min-score", str(weak + 0.01))
    assert len(kept.stdout.splitlines()) == 2 and "green tea" in kept.stdout


def test_the_readme_documents_min_score() -> None:
    assert "--min-score" in (ROOT / "README.md").read_text("utf-8")
