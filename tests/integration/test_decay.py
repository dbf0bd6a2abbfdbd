"""Uses across processes and through erasure, on a real SQLite file: a use counted in another
process ranks an entry as fresh here once that process closed (or stored its uses), and an
erasure leaves no use of what it erased."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlean

from memvault import Memory
from memvault.testing import HashEmbedder, ManualClock

NOTES = ("Deploys of Zephyr go out on Tuesday (ops)", "Deploys of Zephyr go out on Tuesday (wiki)")
QUERY = "when do Zephyr deploys go out"
REINFORCE = """
import sys
from memvault import Memory
from memvault.testing import HashEmbedder
with Memory(sys.argv[1], embedder=HashEmbedder()) as memory:
    assert memory.reinforce([sys.argv[2]]) == 1
"""


def test_a_use_counted_in_another_process_ranks_the_entry_fresh_here(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    clock = ManualClock(datetime.now(UTC) - timedelta(days=60))
    with Memory(path, embedder=HashEmbedder(), clock=clock) as memory:
        ids = [memory.write(n, scope="workspace:z", category="fact").id for n in NOTES]
        today = [hit.entry.id for hit in memory.search(QUERY, scope="workspace:z")]
    assert sorted(today) == sorted(ids)
    subprocess.run([sys.executable, "-c", REINFORCE, path, today[-1]], check=True, timeout=120)
    subprocess.run([sys.executable, "-c", REINFORCE, path, today[-1]], check=True, timeout=120)
    with Memory(path, embedder=HashEmbedder()) as memory:
        hits = memory.search(QUERY, scope="workspace:z", decay=True)
        assert [hit.entry.id for hit in hits] == today[::-1]
        assert hits[0].components["decay"] > 0.99
        assert hits[1].components["decay"] < 0.7  # 60 days of a 90-day half-life
    with sqlean.connect(path) as db:
        assert db.execute("SELECT uses FROM entry_uses").fetchall() == [(2,)]  # they add up


def test_an_erasure_leaves_no_use_of_what_it_erased(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memory(path, embedder=HashEmbedder()) as memory:
        gone = memory.write("Ann's locker code is 4711", scope="user:ann")
        kept = memory.write("Bob's locker is number 12", scope="user:bob")
        memory.reinforce([gone.id, kept.id])
    with Memory(path, embedder=HashEmbedder()) as memory:
        memory.reinforce([gone.id])  # pending in this process when the erasure comes
        assert memory.erase(user="ann").residue == 0
    with sqlean.connect(path) as db:
        rows = db.execute("SELECT e.id FROM entry_uses u JOIN entries e ON e.rowid = u.entry_rowid")
        assert rows.fetchall() == [(kept.id,)]
        assert db.execute("SELECT count(*) FROM entry_uses").fetchone() == (1,)


def test_a_restatement_merged_into_an_entry_counts_as_its_use(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memory(path, embedder=HashEmbedder()) as memory:
        first = memory.write("Ann prefers window seats", scope="user:ann")
        assert memory.write("Ann prefers window seats", scope="user:ann").duplicate
        report = memory.write_many([{"content": "Ann prefers window seats", "scope": "user:ann"}])
        assert report.items[0].outcome.value == "merged"
    with sqlean.connect(path) as db:
        rows = db.execute(
            "SELECT e.id, u.uses, u.restated FROM entry_uses u "
            "JOIN entries e ON e.rowid = u.entry_rowid"
        )
        assert rows.fetchall() == [(first.id, 2, 2)]


def test_a_context_uses_the_records_it_shows_as_they_are(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memory(path, embedder=HashEmbedder()) as memory:
        session = memory.create_session("ann")
        for n in range(40):
            memory.append_record(session.id, "user", f"message number {n} " * 20)
        window = memory.build_context(session.id, budget=400)
        assert 0 < window.verbatim < 40
    with sqlean.connect(path) as db:
        assert db.execute("SELECT count(*) FROM entry_uses").fetchone() == (window.verbatim,)
