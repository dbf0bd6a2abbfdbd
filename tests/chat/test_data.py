"""The session's analysis database on a real DuckDB: files load only from inside the allowed
folders and never through a link, queries only read (no writes, no other files), answers are
capped and say so, and a table is read in windows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memvault.chat.data import ROW_CAP, DataEngine, DataError

CSV = "city,week,units\nOsaka,9,37\nOsaka,10,1850\nTokyo,10,40\n"


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    data.mkdir()
    (work / "sales.csv").write_text(CSV)
    (data / "events.jsonl").write_text('{"kind": "a", "n": 1}\n{"kind": "b", "n": 2}\n')
    (data / "people.json").write_text(json.dumps([{"name": "Ann"}, {"name": "Bo"}]))
    return work, data


@pytest.fixture
def engine(tmp_path: Path, roots: tuple[Path, Path]) -> DataEngine:
    return DataEngine(tmp_path / "db" / "s1.duckdb", roots)


def test_csv_json_and_jsonl_load_from_either_root(engine: DataEngine) -> None:
    assert engine.load("sales.csv") == (
        "loaded sales.csv as table sales: 3 rows, columns city, week, units"
    )
    assert "2 rows" in engine.load("events.jsonl", "events")
    assert "2 rows" in engine.load("people.json")
    assert sorted(engine.tables()) == ["events", "people", "sales"]
    assert "table sales: 3 rows; columns: city VARCHAR, week BIGINT" in engine.describe()


@pytest.mark.parametrize(
    "path", ["../outside.csv", "/etc/passwd", "data/../../outside.csv", "~/x.csv"]
)
def test_paths_outside_the_roots_are_refused(
    engine: DataEngine, roots: tuple[Path, Path], path: str
) -> None:
    (roots[0].parent / "outside.csv").write_text(CSV)
    with pytest.raises(DataError, match="outside the allowed folders"):
        engine.load(path)


def test_a_link_is_refused_even_to_a_file_inside(
    engine: DataEngine, roots: tuple[Path, Path]
) -> None:
    work, data = roots
    os.symlink(work / "sales.csv", work / "link.csv")
    os.symlink(data, work / "linked-dir")
    for path in ("link.csv", "linked-dir/events.jsonl"):
        with pytest.raises(DataError, match="symbolic link"):
            engine.load(path)
    assert engine.tables() == []


def test_other_files_and_bad_names_are_refused(
    engine: DataEngine, roots: tuple[Path, Path]
) -> None:
    (roots[0] / "notes.txt").write_text("x")
    with pytest.raises(DataError, match="not a CSV"):
        engine.load("notes.txt")
    with pytest.raises(DataError, match="no file"):
        engine.load("missing.csv")
    with pytest.raises(DataError, match="table must be a name"):
        engine.load("sales.csv", 'x"; DROP TABLE y; --')


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE x AS SELECT 1",
        "INSERT INTO sales VALUES ('Kyoto', 1, 1)",
        "DELETE FROM sales",
        "COPY sales TO 'out.csv'",
        "ATTACH 'other.duckdb'",
        "INSTALL httpfs",
        "SELECT 1; DROP TABLE sales",
    ],
)
def test_query_sql_only_reads(engine: DataEngine, sql: str) -> None:
    engine.load("sales.csv")
    with pytest.raises(DataError):
        engine.query(sql)
    assert engine.query("SELECT count(*) AS n FROM sales").rows == ((3,),)


def test_a_query_cannot_read_another_file(engine: DataEngine, roots: tuple[Path, Path]) -> None:
    engine.load("sales.csv")
    secret = roots[0] / "secret.csv"
    secret.write_text("password\nhunter2\n")
    with pytest.raises(DataError, match=r"disabled|Permission"):
        engine.query(f"SELECT * FROM read_csv_auto('{secret}')")


def test_answers_are_capped_and_say_so(engine: DataEngine, roots: tuple[Path, Path]) -> None:
    rows = "".join(f"{n},{'x' * 300}\n" for n in range(ROW_CAP + 5))
    (roots[0] / "big.csv").write_text("n,text\n" + rows)
    engine.load("big.csv")
    answer = engine.query("SELECT * FROM big")
    assert len(answer.rows) == ROW_CAP and answer.more
    text = answer.as_text()
    assert text.endswith(f"(only the first {ROW_CAP} rows are shown)\n")
    assert "x" * 200 + "…" in text and "x" * 201 not in text


def test_a_table_is_read_in_windows(engine: DataEngine, roots: tuple[Path, Path]) -> None:
    (roots[0] / "n.csv").write_text("n\n" + "".join(f"{i}\n" for i in range(25)))
    engine.load("n.csv")
    windows = list(engine.windows("n", 10))
    assert [(n, of, len(rows.rows)) for n, of, rows in windows] == [
        (1, 3, 10),
        (2, 3, 10),
        (3, 3, 5),
    ]
    assert [r[0] for _, _, w in windows for r in w.rows] == list(range(25))
    with pytest.raises(DataError, match="no table"):
        list(engine.windows("missing", 10))


def test_delete_removes_the_file(engine: DataEngine) -> None:
    engine.load("sales.csv")
    assert engine.path.exists()
    engine.delete()
    assert not engine.path.exists() and engine.tables() == []


def test_hidden_files_and_folders_are_refused(engine: DataEngine, roots: tuple[Path, Path]) -> None:
    (roots[0] / ".secrets.csv").write_text(CSV)
    (roots[0] / ".config").mkdir()
    (roots[0] / ".config" / "x.csv").write_text(CSV)
    for path in (".secrets.csv", ".config/x.csv"):
        with pytest.raises(DataError, match="hidden"):
            engine.load(path)


@pytest.mark.parametrize("path", ["a" * 300 + ".csv", "~nosuchuser/x.csv", "x" * 2000])
def test_unreadable_names_are_data_errors(engine: DataEngine, path: str) -> None:
    with pytest.raises(DataError):
        engine.load(path)


def test_explain_and_overflowing_values_are_data_errors(engine: DataEngine) -> None:
    engine.load("sales.csv")
    with pytest.raises(DataError, match="only reads"):
        engine.query("EXPLAIN ANALYZE SELECT * FROM sales")
    with pytest.raises(DataError):
        engine.query("SELECT INTERVAL 100000000 YEAR")


def test_a_macro_in_the_database_cannot_redirect_a_load(
    engine: DataEngine, roots: tuple[Path, Path]
) -> None:
    """A database from elsewhere (an imported session) may hold a macro named like DuckDB's
    reader; the load names the reader in DuckDB's own catalogue, and such a database is refused
    by the check an import runs."""
    import duckdb

    secret = roots[0].parent / "outside-secret.txt"
    secret.write_text("the secret")
    engine.path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(engine.path)) as con:
        con.execute(
            f"CREATE MACRO read_csv_auto(p) AS TABLE SELECT content FROM read_text('{secret}')"
        )
    assert "3 rows, columns city, week, units" in engine.load("sales.csv")
    with pytest.raises(DataError, match="macros of its own"):
        engine.check()


def test_a_trailing_semicolon_or_comment_is_no_second_statement(engine: DataEngine) -> None:
    engine.load("sales.csv")
    for sql in ("SELECT count(*) FROM sales; -- done", "SELECT count(*) FROM sales;\n/* x */ ;"):
        assert engine.query(sql).rows == ((3,),)
    assert engine.query("SELECT city FROM sales ORDER BY units DESC").rows[0] == ("Osaka",)


def test_where_the_system_has_no_fd_paths_a_quote_in_a_name_stays_a_name(
    engine: DataEngine, roots: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without /proc/self/fd or /dev/fd (some systems), DuckDB is given the path itself: a
    quote in the file's name cannot add SQL of its own."""
    import os

    monkeypatch.setattr(os.path, "isdir", lambda path: False)
    name = "x'];CREATE TABLE pwn AS SELECT 42 AS v;--.csv"
    (roots[0] / name).write_text(CSV)
    assert "3 rows" in engine.load(name, "named")
    assert "pwn" not in engine.tables()


def test_an_imported_database_must_name_its_tables_as_load_data_does(
    engine: DataEngine,
) -> None:
    import duckdb

    engine.path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(engine.path)) as con:
        con.execute('CREATE TABLE "a""b" (x INT)')
    with pytest.raises(DataError, match="a table named"):
        engine.check()
