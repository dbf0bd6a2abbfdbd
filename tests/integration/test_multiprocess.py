"""Several processes on one SQLite file: nothing lost, no 'database is locked'."""

import multiprocessing
import traceback
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, NewEntry

pytestmark = pytest.mark.slow  # several processes on one file

PROCESSES = 4
SINGLE_WRITES = 100
BATCHES, BATCH_SIZE = 10, 10


def _worker(url: str, worker: int, barrier: Any, results: Any) -> None:
    try:
        barrier.wait(timeout=60)
        ids = []
        with Memory(url) as memory:
            for n in range(SINGLE_WRITES):
                entry = memory.write(f"w{worker} n{n}", scope=f"user:w{worker}", tags=["mp"])
                ids.append(entry.id)
                if n % 10 == 0:
                    memory.update(entry.id, content=f"w{worker} n{n} updated")
                    memory.retrieve("user:w0", limit=5)
            for b in range(BATCHES):
                batch = [NewEntry(f"w{worker} b{b} {i}", "org:shared") for i in range(BATCH_SIZE)]
                ids += [e.id for e in memory.write_many(batch).entries]
        results.put((worker, ids, None))
    except Exception:
        results.put((worker, [], traceback.format_exc()))


def test_four_processes_write_one_file_concurrently(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, w, barrier, results)) for w in range(PROCESSES)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    errors = [error for _, _, error in outcomes if error]
    assert not errors, "\n".join(errors)
    ids = [i for _, worker_ids, _ in outcomes for i in worker_ids]
    per_worker = SINGLE_WRITES + BATCHES * BATCH_SIZE
    assert len(set(ids)) == len(ids) == PROCESSES * per_worker
    with Memory(url) as memory:
        assert memory.count() == PROCESSES * per_worker
        assert memory.count("org:shared") == PROCESSES * BATCHES * BATCH_SIZE
        for worker in range(PROCESSES):
            assert memory.count(f"user:w{worker}", tags=["mp"]) == SINGLE_WRITES
        assert all(memory.get(i) is not None for i in ids)
