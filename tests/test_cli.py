"""The memvault CLI, through click's runner against a real SQLite file."""

import json
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from memvault.cli import cli
from memvault.cli.reference import commands, reference


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


def test_every_command_has_help() -> None:
    assert cli.help
    runner = CliRunner()
    paths = list(commands(cli))
    assert ("session", "create") in paths and ("bench", "locomo") in paths
    for path in paths:
        command: click.Command = cli
        for name in path:
            assert isinstance(command, click.Group)
            command = command.commands[name]
        assert command.help, f"{' '.join(path)} has no help text"
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                assert param.help, f"{' '.join(path)} {param.opts} has no help"
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, path


def test_the_cli_reference_is_in_sync() -> None:
    written = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text("utf-8")
    assert written == reference(cli), "regenerate: python -m memvault.cli.reference > docs/cli.md"


def test_an_unexpected_error_is_one_line_not_a_traceback(
    run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("memvault.memory.Memory.count", broken)
    result = run("count", code=1)
    assert "internal error (ZeroDivisionError: a bug)" in result.stderr
    assert "Traceback" not in result.output
    monkeypatch.setenv("MEMVAULT_DEBUG", "1")
    assert isinstance(CliRunner().invoke(cli, ["count"]).exception, ZeroDivisionError)


def test_a_misspelt_variable_is_a_config_error(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_TENNANT", "acme")
    result = run("count", code=2)  # bad input, as documented
    assert "Error: unknown environment variable MEMVAULT_TENNANT" in result.stderr
    assert "did you mean MEMVAULT_TENANT?" in result.stderr


def test_write_get_list_round_trip(run: Any) -> None:
    entry_id = run("write", "prefers tea", "--scope", "user:alice", "--tag", "pref").stdout.strip()
    shown = as_json(run("get", entry_id, "--json"))
    assert (shown["content"], shown["scope"], shown["tags"]) == (
        "prefers tea",
        "user:alice",
        ["pref"],
    )
    assert "prefers tea" in run("get", entry_id).stdout
    listed = as_json(run("list", "--scope", "user:alice", "--json"))
    assert [e["id"] for e in listed["entries"]] == [entry_id]
    assert listed["next_cursor"] is None
    assert entry_id in run("list").stdout


def test_write_from_stdin_with_provenance(run: Any) -> None:
    written = as_json(
        run(
            "write",
            "-",
            "--scope",
            "session:s1",
            "--source",
            "user_turn",
            "--confidence",
            "0.8",
            "--metadata",
            '{"k": 1}',
            "--json",
            input="multi\nline",
        )
    )
    assert written["content"] == "multi\nline"
    assert written["metadata"] == {"k": 1}
    assert written["provenance"]["source"] == "user_turn"
    assert written["provenance"]["created_in_session_id"] == "s1"


def test_update_promote_count_delete(run: Any) -> None:
    entry_id = run("write", "draft", "--scope", "session:s1", "--ttl", "3600").stdout.strip()
    updated = as_json(run("update", entry_id, "--content", "final", "--no-expiry", "--json"))
    assert (updated["content"], updated["expires_at"], updated["revision"]) == ("final", None, 2)
    promoted = as_json(run("promote", entry_id, "--to", "user:alice", "--json"))
    assert promoted["promoted_from_id"] == entry_id
    assert as_json(run("count", "--json")) == {"count": 2}
    narrower = ("count", "--scope", "user:alice", "--include-narrower", "--session", "s1")
    assert run(*narrower).stdout.strip() == "2"
    assert as_json(run("delete", entry_id, "--json")) == {"id": entry_id, "deleted": True}
    assert as_json(run("delete", entry_id, "--json"))["deleted"] is False
    assert as_json(run("delete-scope", "user:alice", "--yes", "--json"))["deleted"] == 1
    assert run("count").stdout.strip() == "0"


def test_delete_scope_asks_first(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run("write", "x", "--scope", "user:a")
    monkeypatch.setattr("memvault.cli.common.interactive", lambda: True)  # a person answers
    declined = run("delete-scope", "user:a", input="n\n", code=6)
    assert "aborted: nothing was changed" in declined.stderr
    assert run("count").stdout.strip() == "1"
    run("delete-scope", "user:a", input="y\n")
    assert run("count").stdout.strip() == "0"


def test_paging_with_cursor(run: Any) -> None:
    for n in range(5):
        run("write", f"e{n}", "--scope", "user:a")
    first = as_json(run("list", "--limit", "3", "--json"))
    second = as_json(run("list", "--limit", "3", "--cursor", first["next_cursor"], "--json"))
    contents = [e["content"] for e in first["entries"] + second["entries"]]
    assert contents == ["e4", "e3", "e2", "e1", "e0"]
    assert "--cursor" in run("list", "--limit", "2").stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("get", "nope"), 3, "not found"),
        (("update", "nope", "--content", "x"), 3, "not found"),
        (("write", "", "--scope", "user:a"), 2, "must not be empty"),
        (("write", "x", "--scope", "user"), 2, "malformed scope"),
        (("write", "x", "--scope", "user:a", "--metadata", "[1]"), 2, "JSON object"),
        (("write", "x", "--scope", "user:a", "--expires-at", "2030-01-01"), 2, "timezone"),
        (("list", "--limit", "0"), 2, "limit must be a positive integer"),
        (("list", "--cursor", "garbage"), 2, "invalid cursor"),
        (("count", "--include-narrower"), 2, "need --scope"),
        (("update", "x"), 2, "nothing to change"),
        (("promote", "nope", "--to", "user:a"), 3, "not found"),
        (("write", "x", "--scope", "user:a", "--metadata", "[" * 5000 + "]" * 5000), 2, "JSON"),
        (("write", "x", "--scope", "user:a", "--metadata", '{"a": NaN}'), 2, "finite"),
        (("write", "x \udcff", "--scope", "user:a"), 2, "not valid Unicode"),
        (("search", "q", "--scope", "user:a", "--min-score", "nan"), 2, "finite"),
    ],
)
def test_errors_are_one_line_with_exit_codes(
    run: Any, args: tuple[str, ...], code: int, message: str
) -> None:
    result = run(*args, code=code)
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_the_shell_example_twice_keeps_one_copy(run: Any) -> None:
    for attempt in range(2):
        note = run("write", "User prefers dark mode", "--scope", "session:s1", "--tag", "ui")
        assert ("nothing new written" in note.stderr) == (attempt == 1)
        promoted = json.loads(
            run("promote", note.stdout.strip(), "--to", "user:alice", "--json").stdout
        )
        assert promoted["duplicate"] == (attempt == 1)
    hits = json.loads(run("search", "which theme?", "--scope", "user:alice", "--json").stdout)
    assert [h["content"] for h in hits] == ["User prefers dark mode"]


def test_a_narrowing_promotion_is_bad_input(run: Any) -> None:
    entry_id = run("write", "x", "--scope", "org:o").stdout.strip()
    result = run("promote", entry_id, "--to", "user:a", code=2)
    assert "cannot promote from org:o to user:a" in result.stderr


def test_default_store_under_memvault_home(isolated_environment: Path) -> None:
    result = CliRunner().invoke(cli, ["write", "x", "--scope", "user:a"])
    assert result.exit_code == 0, result.output
    assert (isolated_environment / "memvault.db").exists()


@pytest.mark.parametrize("store", ["memory://", ":memory:", "sqlite:///:memory:"])
def test_a_store_that_forgets_is_refused_not_silently_lost(store: str) -> None:
    result = CliRunner().invoke(cli, ["--store", store, "write", "x", "--scope", "user:a"])
    assert result.exit_code == 2 and "forgets everything" in result.stderr
    serve = CliRunner().invoke(cli, ["--store", store, "serve", "--workers", "2"])
    assert serve.exit_code == 2 and "lives in one process" in serve.stderr


def test_backup_and_restore_a_backup(run: Any, tmp_path: Path) -> None:
    first = run("write", "kept before the backup", "--scope", "user:a").output.strip()
    copy = str(tmp_path / "copy.db")
    assert "backed up to" in run("backup", copy).output
    run("write", "written after it", "--scope", "user:a")
    assert "exists" in run("backup", copy, code=2).output
    assert "restored from" in run("restore-backup", copy, "--yes").output
    assert run("count", "--scope", "user:a").output.strip() == "1"
    assert run("get", first).output
    (tmp_path / "junk.db").write_bytes(b"junk" * 1000)
    assert (
        "not a memvault SQLite store"
        in run("restore-backup", str(tmp_path / "junk.db"), "--yes", code=2).output
    )
    assert run("count", "--scope", "user:a").output.strip() == "1"


def test_erase_prints_a_receipt_without_content(run: Any) -> None:
    run("write", "Bob's unmistakable secret recipe", "--scope", "user:bob")
    run("write", "Alice stays", "--scope", "user:alice")
    receipt = run("erase", "--user", "bob", "--yes").output
    assert "erased user bob" in receipt and "total: 1" in receipt and "recipe" not in receipt
    assert "scan of the store: 0" in receipt
    assert run("count", "--scope", "user:alice").output.strip() == "1"
    assert "exactly one" in run("erase", "--yes", code=2).output


def test_audit_lists_who_changed_what_never_content(run: Any) -> None:
    entry = run("--actor", "ops-bot", "write", "Bob's secret recipe", "--scope", "user:bob")
    entry_id = entry.output.strip()
    run("update", entry_id, "--tag", "checked")
    listed = run("audit").output
    assert f"changed  {entry_id} user:bob  update by local" in listed
    assert f"created  {entry_id} user:bob  write by ops-bot" in listed
    assert "recipe" not in listed
    page = json.loads(run("audit", "--by", "ops-bot", "--json").output)
    assert [e["change"] for e in page["events"]] == ["created"] and page["next_cursor"] is None
    first = json.loads(run("audit", "--oldest", "--limit", "1", "--json").output)
    assert first["events"][0]["operation"] == "write" and first["next_cursor"]
    rest = run("audit", "--oldest", "--cursor", first["next_cursor"]).output
    assert "update by local" in rest and "write by" not in rest
    assert "no events" in run("audit", "--change", "erased").output
    assert "actor must be" in run("--actor", "", "write", "x", "--scope", "user:a", code=2).output


def test_retention_run_lists_and_removes(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_RETENTION", "expired=0")
    run("write", "gone soon", "--scope", "user:a", "--ttl", "0.001")
    time.sleep(0.01)
    listed = run("retention", "run", "--dry-run").output
    assert "expired" in listed and "would remove 1" in listed and "gone soon" not in listed
    assert "removed 1" in run("retention", "run").output
    assert "removed 0" in run("retention", "run").output
    monkeypatch.delenv("MEMVAULT_RETENTION")
    assert "no retention policy" in run("retention", "run").output


def test_a_session_is_exported_and_imported_as_a_new_one(run: Any, tmp_path: Any) -> None:
    sid = run("session", "create", "alice", "--private").output.strip()
    run("record", "append", sid, "user", "I want to see Lisbon")
    path = tmp_path / "s.zip"
    exported = run("export-session", sid, str(path)).output
    assert f"exported session {sid} -> {path}" in exported and "total: 2" in exported
    imported = json.loads(run("import-session", str(path), "--json").output)
    assert imported["source_session_id"] == sid and imported["session_id"] != sid
    assert "Lisbon" in run("record", "list", imported["session_id"]).output
    assert "exists already" in run("export-session", sid, str(path), code=2).output
    path.write_bytes(b"not a bundle")
    assert "not a whole zip" in run("import-session", str(path), code=2).output
