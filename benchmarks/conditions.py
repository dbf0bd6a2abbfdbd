"""The conditions a benchmark ran in, recorded with its figures: machine, versions, load."""

from __future__ import annotations

import os
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any


def load_average() -> list[float]:
    """1-, 5- and 15-minute load averages (runnable processes), rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    """Cores, CPU, OS, Python and the versions of the packages that do the work."""
    from memvault.embeddings.local import usable_cores

    return {
        "cpus": os.cpu_count(),
        "usable_cores": usable_cores(),
        "cpu": _cpu_model(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "memvault": _version("memvault"),
        "numpy": _version("numpy"),
        "onnxruntime": _version("onnxruntime"),
        "sqlite": __import__("sqlean").sqlite_version,  # the SQLite memvault's backend uses
    }
