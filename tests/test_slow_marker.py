"""A bare ``python -m pytest`` is the inner loop: it leaves the slow tests out, and says so;
``--runslow`` (CI), naming the tests, or an ``-m`` of one's own runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a pytest process per case

ROOT = Path(__file__).resolve().parents[1]
SLOW_MODULE = "tests/integration/test_crashes.py"  # every test in it is marked slow


def collect(*args: str) -> str:
    """What ``python -m pytest --collect-only ARGS`` says in the repository."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout


@pytest.mark.parametrize(
    ("args", "summary"),
    [
        ([], "no tests collected (4 deselected)"),
        (["--runslow"], "4 tests collected"),
        (["-m", ""], "4 tests collected"),
        (["-m", "not slow"], "no tests collected (4 deselected)"),
    ],
    ids=["bare", "--runslow", "-m ''", "-m 'not slow'"],
)
def test_a_bare_run_leaves_slow_tests_out(args: list[str], summary: str) -> None:
    bare = ["-o", f"testpaths={SLOW_MODULE}"]  # a bare run, over one module of slow tests
    assert summary in collect(*bare, *args)


def test_naming_tests_runs_them_slow_or_not() -> None:
    assert "4 tests collected" in collect(SLOW_MODULE)
