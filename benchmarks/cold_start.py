"""CLI cold start: wall time of fresh ``python -m memvault …`` processes, per source tree.

Run by hand: ``python benchmarks/cold_start.py [--tree before=/tmp/mv-before/src] [--runs 5]
[--json OUT]``. Without ``--tree`` it times the memvault this Python imports.

Each tree runs with ``PYTHONPATH=<tree>`` and its own bytecode cache (``PYTHONPYCACHEPREFIX``,
warmed first, as an installed package has), so trees differ only in their code. Commands run
interleaved (for each run: every command on every tree), on a new SQLite file holding a few
entries; reported: the median wall time and CPU time (user + system: less disturbed by other
work on the machine) of the runs, and ``os.getloadavg()`` before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conditions import load_average, machine

COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "count": ["count"],
    "list": ["list", "--scope", "user:a"],
    "search": ["search", "x", "--scope", "user:a"],
}


def environment(tree: str, cache: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMVAULT_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    if tree:
        env["PYTHONPATH"] = tree
    return env


def memvault(env: dict[str, str], store: str, *args: str) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one ``memvault ARGS`` process."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "memvault", "--store", store, *args],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - cpu.ru_utime + after.ru_stime - cpu.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", action="append", default=[], help="NAME=SRC_DIR (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"installed": ""}
    with tempfile.TemporaryDirectory() as tmp:
        envs = {name: environment(src, Path(tmp) / f"pyc-{name}") for name, src in trees.items()}
        store = f"sqlite:///{tmp}/cold.db"
        first = next(iter(envs.values()))
        for n in range(3):
            memvault(first, store, "write", "--scope", "user:a", f"cold start note {n} about tea")
        for env in envs.values():  # warm the bytecode caches and the OS's file cache
            for command in COMMANDS.values():
                memvault(env, store, *command)
        runs: dict[str, dict[str, list[tuple[float, float]]]] = {
            name: {command: [] for command in COMMANDS} for name in envs
        }
        load_before = load_average()
        for _ in range(args.runs):
            for command, argv in COMMANDS.items():
                for name, env in envs.items():
                    runs[name][command].append(memvault(env, store, *argv))
        load_after = load_average()

    def median_ms(which: int) -> dict[str, dict[str, int]]:
        return {
            name: {c: round(statistics.median(r[which] for r in v) * 1000) for c, v in by.items()}
            for name, by in runs.items()
        }

    report: dict[str, Any] = {
        "machine": machine(),
        "runs": args.runs,
        "wall_median_ms": median_ms(0),
        "cpu_median_ms": median_ms(1),
        "load_before": load_before,
        "load_after": load_after,
    }
    report["wall_ms"] = {
        name: {c: [round(r[0] * 1000) for r in v] for c, v in by.items()}
        for name, by in runs.items()
    }
    print(json.dumps(report, indent=2))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
