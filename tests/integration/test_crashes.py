"""Writers killed mid-work lose no acknowledged write and leave a whole store; an import killed
mid-way is all or nothing; processes writing, searching and erasing on one SQLite file lose
nothing and never see "database is locked". (The figures at full size: benchmarks/reliability.py,
docs/reliability.md.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault import Memory
from memvault.testing import HashEmbedder
from memvault.testing.reliability import crowd_processes, kill_runs, lost

pytestmark = pytest.mark.slow  # processes killed mid-work


@pytest.mark.parametrize("mode", ["entries", "records"])
def test_a_killed_writer_loses_no_acknowledged_write(tmp_path: Path, mode: str) -> None:
    runs = kill_runs(lambda n: f"sqlite:///{tmp_path / f'{n}.db'}", mode, 3, 5000, longest_s=1.0)
    for run in runs:
        assert run.integrity == "ok" and run.opened
        assert run.missing == [], f"lost {len(run.missing)} acknowledged writes"
    assert sum(len(run.acknowledged) for run in runs) > 0
    assert not all(run.finished for run in runs), "no writer was cut short"


def test_a_killed_import_is_all_or_nothing(tmp_path: Path) -> None:
    bundle = tmp_path / "big.zip"
    with Memory(str(tmp_path / "source.db"), embedder=HashEmbedder()) as source:
        session = source.create_session("crash", title="big")
        for n in range(1500):
            source.append_record(session.id, "user", f"message number {n} of a long talk")
        source.export_session(session.id, bundle)
    stores = [tmp_path / f"target-{n}.db" for n in range(4)]
    runs = kill_runs(
        lambda n: f"sqlite:///{stores[n]}", "import", 4, 0, longest_s=0.6, argument=str(bundle)
    )
    for run, store in zip(runs, stores, strict=True):
        assert run.integrity == "ok" and run.opened and run.missing == []
        with Memory(str(store), embedder=HashEmbedder()) as memory:
            sessions = memory.list_sessions("crash")
            assert len(sessions) == len(run.acknowledged) or (
                run.acknowledged == [] and len(sessions) <= 1
            )
            for found in sessions:
                assert len(memory.records(found.id)) == 1500  # all of it
            if not sessions:
                assert memory.count(include_superseded=True) == 0  # or nothing


def test_processes_writing_searching_and_erasing_lose_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crowd.db'}"
    workers = crowd_processes(url, 4, 15)
    assert [w.errors for w in workers] == [[]] * 4
    assert sum(w.locked for w in workers) == 0
    assert all(w.erasures == 3 for w in workers)
    with Memory(url, embedder=HashEmbedder()) as memory:
        assert lost(memory, workers) == []
        assert memory.count("org:crowd") == 4 * 15
