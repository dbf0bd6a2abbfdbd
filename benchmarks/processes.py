"""Several writer processes on one machine: embedder threads as before vs the automatic share.

Run by hand: ``python benchmarks/processes.py [--processes 1,2,4,8] [--memories 200]
[--rounds 2] [--json OUT]``.

For each P, P fresh processes (``spawn``) each open their own SQLite file and write M short
memories one ``Memory.write`` at a time (embedding included). Two ways of running the packaged
model, interleaved in the same run (A B B A … so drift in the machine's load hits both):

- ``before``: onnxruntime's defaults, as memvault did before ``embed_threads`` (an intra-op
  thread per physical core in every process, spinning while it waits for work);
- ``automatic``: ``LocalEmbedder(automatic_threads(P))``, the threads ``memvault serve
  --workers P`` gives each worker: usable cores // P, at least 1 (inter-op 1, sequential).

Each process loads the model and embeds one text before a barrier; the clock runs from the
barrier to the last process's last write. Reported: entries/s over all processes, the ratio
automatic/before, and ``os.getloadavg()`` before and after every measurement.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conditions import load_average, machine

from memvault.embeddings.local import LocalEmbedder, automatic_threads

SUBJECTS = "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia".split()
TOPICS = "invoice deploy sales holiday printer budget hiring backup laptop contract".split()


class OrtDefaultEmbedder(LocalEmbedder):
    """The model with onnxruntime's default session options (memvault before embed_threads)."""

    def _session_options(self) -> Any:
        import onnxruntime as ort

        return ort.SessionOptions()


def embedder(variant: str, processes: int) -> LocalEmbedder:
    if variant == "before":
        return OrtDefaultEmbedder()
    return LocalEmbedder(automatic_threads(processes))


def writer(args: tuple[str, int, int, int, str, Any, Any]) -> None:
    variant, processes, index, memories, workdir, barrier, results = args
    from memvault import Memory, Settings

    settings = Settings(near_duplicate_threshold=0.0, sqlite_synchronous="NORMAL")
    model = embedder(variant, processes)
    with Memory(f"sqlite:///{workdir}/w{index}.db", settings=settings, embedder=model) as memory:
        model.embed(["warm up"])  # the model loads before the clock starts
        barrier.wait()
        started = time.perf_counter()
        for n in range(memories):
            subject, topic = SUBJECTS[n % len(SUBJECTS)], TOPICS[(n * 7 + index) % len(TOPICS)]
            memory.write(
                f"{subject} owns the {topic} work of week {n} (writer {index})",
                scope=f"user:w{index}",
            )
        results.put((started, time.perf_counter(), model.threads))


def run(variant: str, processes: int, memories: int) -> dict[str, Any]:
    context = mp.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    load_before = load_average()
    with tempfile.TemporaryDirectory() as workdir:
        jobs = [
            (variant, processes, i, memories, workdir, barrier, results) for i in range(processes)
        ]
        workers = [context.Process(target=writer, args=(job,)) for job in jobs]
        for worker in workers:
            worker.start()
        spans = []
        while len(spans) < processes:
            if any(worker.exitcode for worker in workers):
                for worker in workers:
                    worker.terminate()
                raise SystemExit("a writer failed (its traceback is above)")
            try:
                spans.append(results.get(timeout=1))
            except queue.Empty:
                continue
        for worker in workers:
            worker.join()
    seconds = max(end for _, end, _ in spans) - min(start for start, _, _ in spans)
    threads = spans[0][2] if variant == "automatic" else "onnxruntime default"
    return {
        "variant": variant,
        "processes": processes,
        "threads_per_process": threads,
        "entries": processes * memories,
        "seconds": round(seconds, 2),
        "entries_per_s": round(processes * memories / seconds, 1),
        "load_before": load_before,
        "load_after": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", default="1,2,4,8")
    parser.add_argument("--memories", type=int, default=200, help="writes per process")
    parser.add_argument("--rounds", type=int, default=2, help="A B B A … measurements per P")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "machine": machine(),
        "memories_per_process": args.memories,
        "runs": [],
        "summary": [],
    }
    print(json.dumps(report["machine"]), file=sys.stderr)
    for processes in (int(p) for p in args.processes.split(",")):
        rates: dict[str, list[float]] = {"before": [], "automatic": []}
        for round_ in range(args.rounds):
            order = ("before", "automatic") if round_ % 2 == 0 else ("automatic", "before")
            for variant in order:
                result = run(variant, processes, args.memories)
                report["runs"].append(result)
                rates[variant].append(result["entries_per_s"])
                print(json.dumps(result), file=sys.stderr)
        before, automatic = (statistics.median(rates[v]) for v in ("before", "automatic"))
        summary = {
            "processes": processes,
            "threads_automatic": automatic_threads(processes),
            "before_per_s": round(before, 1),
            "automatic_per_s": round(automatic, 1),
            "ratio": round(automatic / before, 2),
        }
        report["summary"].append(summary)
        print(json.dumps(summary), file=sys.stderr)
    print(json.dumps(report, indent=2))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
