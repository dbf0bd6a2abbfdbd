"""The reliability proofs' harness: writers killed mid-work, and many writers on one store.

Used by the tests (small numbers) and by ``benchmarks/reliability.py`` (the figures of
``docs/reliability.md``). A writer is a child process (``python -m memvault.testing.reliability
write URL MODE COUNT``) that prints each id it was given *after* the call returned — an
acknowledged write — so whatever it printed before a ``SIGKILL`` must be in the store:

- ``entries``: ``write`` into a user scope, one at a time;
- ``records``: ``append_record`` to one session;
- ``import``: ``import_session`` of the bundle at ``MODE``'s argument, once (all or nothing).

:func:`kill_runs` runs writers and kills each at a random moment; :func:`check_store` says what
a store holds after one: ``integrity_check``, whether it opens clean, which acknowledged ids are
missing. :func:`crowd` runs processes (SQLite) or threads (any store) that write, search and
erase at once, and counts lost writes and "database is locked" errors. :func:`erasure_crowd`
runs processes that erase users while the others write and search, and :func:`left_on_disk`
scans the store's files for what they erased once every one has closed.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ErasureIncompleteError
from ..memory import Memory
from ..store import index_files
from ..store.residue import found_in
from . import HashEmbedder

USER = "user:crash"


def _write(url: str, mode: str, count: int, argument: str | None) -> None:
    """The child: write and acknowledge, one line per acknowledged id."""
    with Memory(url, embedder=HashEmbedder()) as memory:
        print("ready", flush=True)
        if mode == "import":
            report = memory.import_session(str(argument))
            print(report.session_id, flush=True)
            return
        session = memory.create_session("crash") if mode == "records" else None
        for n in range(count):
            if session is None:
                entry_id = memory.write(f"acknowledged write number {n}", scope=USER).id
            else:
                entry_id = memory.append_record(session.id, "user", f"message {n}").id
            print(entry_id, flush=True)


@dataclass
class KillRun:
    """One writer killed: when, how many writes it acknowledged, and what the store said."""

    killed_after_s: float
    acknowledged: list[str]
    integrity: str = ""
    opened: bool = False
    missing: list[str] = field(default_factory=list)
    finished: bool = False
    """The writer was done before the kill (nothing was cut short)."""


def _reader(stream: Any, lines: list[str]) -> None:
    for raw in stream:
        if raw.endswith("\n"):  # a line cut by the kill is no acknowledgement
            lines.append(raw.strip())


def kill_one(
    url: str, mode: str, count: int, after_s: float, argument: str | None = None
) -> KillRun:
    """Start a writer, SIGKILL it ``after_s`` seconds after it is ready, check the store."""
    lines: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-m", __name__, "write", url, mode, str(count), argument or ""],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as child:
        reader = threading.Thread(target=_reader, args=(child.stdout, lines), daemon=True)
        reader.start()
        deadline = time.monotonic() + 120
        while "ready" not in lines and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(after_s)
        finished = child.poll() is not None
        if not finished:
            os.kill(child.pid, signal.SIGKILL)
        child.wait()
        reader.join(timeout=10)
    acknowledged = [line for line in lines if line != "ready"]
    run = KillRun(after_s, acknowledged, finished=finished)
    check_store(url, run)
    return run


def check_store(url: str, run: KillRun) -> None:
    """Fill ``run`` with what the store at ``url`` says: integrity, opening, missing ids."""
    from ..store.sqlite import SQLiteBackend, path_from_url

    backend = SQLiteBackend(path_from_url(url))
    try:
        run.integrity = backend._conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        backend.close()
    with Memory(url, embedder=HashEmbedder()) as memory:
        run.opened = True
        run.missing = [i for i in run.acknowledged if not _present(memory, i)]


def _present(memory: Memory, found: str) -> bool:
    if found.startswith("s-"):  # an imported session
        return bool(memory.records(found))
    return memory.get(found) is not None


def kill_runs(
    url_of: Callable[[int], str],
    mode: str,
    runs: int,
    count: int,
    *,
    longest_s: float,
    argument: str | None = None,
    seed: int = 13,
) -> list[KillRun]:
    """``runs`` writers, each on the store ``url_of(n)`` and killed after a random time up to
    ``longest_s`` seconds (seeded)."""
    rng = random.Random(seed)
    return [
        kill_one(url_of(n), mode, count, rng.uniform(0.0, longest_s), argument) for n in range(runs)
    ]


# -- a crowd on one store ------------------------------------------------------------------------


@dataclass
class Worker:
    """What one member of a crowd did: acknowledged writes it kept, searches, erasures,
    errors (a "database is locked" is counted apart)."""

    kept: list[str] = field(default_factory=list)
    searches: int = 0
    erasures: int = 0
    locked: int = 0
    errors: list[str] = field(default_factory=list)


def work(memory: Memory, number: int, rounds: int) -> Worker:
    """One crowd member's work: each round a write it keeps, a shared write, a search, and
    every fifth round a throwaway user written and erased."""
    done = Worker()
    for n in range(rounds):
        try:
            done.kept.append(memory.write(f"worker {number} keeps {n}", scope=f"user:w{number}").id)
            done.kept.append(memory.write(f"shared note {number}-{n}", scope="org:crowd").id)
            memory.search(f"keeps {n}", scope="org:crowd", limit=5)
            done.searches += 1
            if n % 5 == 4:
                scratch = f"scratch-{number}-{n}"
                memory.write(f"temporary {n}", scope=f"user:{scratch}")
                receipt = memory.erase(user=scratch)
                assert receipt.total == 1, receipt
                done.erasures += 1
        except Exception as exc:
            if "locked" in str(exc):
                done.locked += 1
            done.errors.append(f"{type(exc).__name__}: {exc}"[:300])
    return done


def _process(url: str, number: int, rounds: int, barrier: Any, results: Any) -> None:
    try:
        with Memory(url, embedder=HashEmbedder()) as memory:
            barrier.wait(timeout=120)
            results.put((number, work(memory, number, rounds)))
    except Exception:
        results.put((number, Worker(errors=[traceback.format_exc()])))


def crowd_processes(url: str, processes: int, rounds: int) -> list[Worker]:
    """``processes`` spawned processes doing :func:`work` on the SQLite store at ``url``."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    members = [
        ctx.Process(target=_process, args=(url, n, rounds, barrier, results))
        for n in range(processes)
    ]
    for member in members:
        member.start()
    done = dict(results.get(timeout=1800) for _ in members)
    for member in members:
        member.join(timeout=60)
    return [done[n] for n in range(processes)]


def crowd_threads(memory: Memory, threads: int, rounds: int) -> list[Worker]:
    """``threads`` threads doing :func:`work` on one memory (any store)."""
    done: dict[int, Worker] = {}
    start = threading.Barrier(threads)

    def member(number: int) -> None:
        start.wait(timeout=120)
        done[number] = work(memory, number, rounds)

    members = [threading.Thread(target=member, args=(n,)) for n in range(threads)]
    for thread in members:
        thread.start()
    for thread in members:
        thread.join()
    return [done[n] for n in range(threads)]


def lost(memory: Memory, workers: list[Worker]) -> list[str]:
    """The kept writes of ``workers`` the store no longer has."""
    return [i for w in workers for i in w.kept if memory.get(i) is None]


# -- erasures in a crowd -----------------------------------------------------------------------


SHARED = "object:doc:crowd"
"""The scope every erased user also leaves an entry in (made in their session): searched by
every process, so indexes of it are kept (and saved) everywhere while users are erased."""


@dataclass
class Erasures:
    """What one process of an erasure crowd did: the ids and contents it erased, the residue
    each receipt said (an ErasureIncompleteError counts as its residue), errors."""

    ids: list[str] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    residues: list[int] = field(default_factory=list)
    writes: int = 0
    searches: int = 0
    errors: list[str] = field(default_factory=list)


def erase_among_others(memory: Memory, number: int, rounds: int) -> Erasures:
    """Each round: a write kept, a search of the shared scope, and a user with a session, a
    record, a fact and an entry in the shared scope made in that session — erased at once."""
    done = Erasures()
    for n in range(rounds):
        try:
            memory.write(f"worker {number} keeps note {n}", scope=f"user:w{number}")
            memory.search(f"secret {n}", scope=SHARED, limit=5)
            done.writes, done.searches = done.writes + 1, done.searches + 1
            user, secret = f"gone-{number}-{n}", f"secret {number}-{n}-{random.random():.12f}"
            session = memory.create_session(user)
            made = [
                memory.append_record(session.id, "user", f"the record of {secret}").id,
                memory.write(f"the fact of {secret}", scope=f"user:{user}").id,
                memory.write(
                    f"the shared {secret}",
                    scope=SHARED,
                    provenance={"created_in_session_id": session.id},
                ).id,
            ]
            done.ids += made
            done.contents += [f"the record of {secret}", f"the fact of {secret}"]
            done.contents.append(f"the shared {secret}")
            try:
                receipt = memory.erase(user=user)
                assert receipt.total == 5, receipt  # and the user's work style
                done.residues.append(receipt.residue or 0)
            except ErasureIncompleteError as exc:
                done.residues.append(exc.residue)
        except Exception as exc:
            done.errors.append(f"{type(exc).__name__}: {exc}"[:300])
    return done


def _erasing_process(url: str, number: int, rounds: int, saved_from: int, sync: Any) -> None:
    from ..store import sqlite

    sqlite.SAVED_FROM_ENTRIES = saved_from  # small: index files are saved (and raced) too
    barrier, results = sync
    try:
        with Memory(url, embedder=HashEmbedder()) as memory:
            barrier.wait(timeout=120)
            results.put((number, erase_among_others(memory, number, rounds)))
    except Exception:
        results.put((number, Erasures(errors=[traceback.format_exc()])))


def erasure_crowd(url: str, processes: int, rounds: int, saved_from: int = 20) -> list[Erasures]:
    """``processes`` spawned processes doing :func:`erase_among_others` at once on the SQLite
    store at ``url``; what each did, once every one has closed."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    members = [
        ctx.Process(target=_erasing_process, args=(url, n, rounds, saved_from, (barrier, results)))
        for n in range(processes)
    ]
    for member in members:
        member.start()
    done: dict[int, Erasures] = {}
    while (len(done) < processes and any(m.is_alive() for m in members)) or not results.empty():
        with contextlib.suppress(queue.Empty):
            number, did = results.get(timeout=1)
            done[number] = did
    for member in members:
        member.join(timeout=120)
    died = Erasures(errors=["the process died before it reported"])
    return [done.get(n, died) for n in range(processes)]


def left_on_disk(path: str, ids: list[str], contents: list[str]) -> int:
    """How many of ``ids`` and ``contents`` the SQLite database at ``path``, its write-ahead
    log and its index files hold (a byte scan, with every process closed)."""
    files = [Path(path), Path(f"{path}-wal")]
    directory = index_files.directory_for(path)
    if directory.is_dir():
        files += sorted(directory.iterdir())
    return found_in([f.read_bytes() for f in files if f.is_file()], ids, contents)


def main(argv: list[str]) -> None:
    command, url, mode, count, argument = argv
    if command != "write":
        raise SystemExit(f"unknown command {command!r}")
    _write(url, mode, int(count), argument or None)


if __name__ == "__main__":  # pragma: no cover - the child of kill_one
    main(sys.argv[1:])
