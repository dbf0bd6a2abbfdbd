"""A pattern compiled on first use behaves as the compiled one."""

from __future__ import annotations

import re
import subprocess
import sys

from memvault.patterns import lazy


def test_a_lazy_pattern_is_compiled_when_first_used() -> None:
    written: list[str] = []

    def source() -> str:
        written.append("now")
        return r"(\d+) (kg|lb)"

    pattern = lazy(source, re.IGNORECASE)
    assert written == []
    found = pattern.search("down to 84 KG")
    assert found is not None and found.groups() == ("84", "KG")
    assert pattern.sub(r"\1", "84 kg and 90 lb") == "84 and 90"
    assert pattern.flags & re.IGNORECASE and pattern.pattern == r"(\d+) (kg|lb)"
    assert written == ["now"]  # written once
    assert found.re is not pattern and found.re.pattern == pattern.pattern  # ask by .pattern
    bound = pattern.search.__self__  # type: ignore[attr-defined]
    assert isinstance(bound, re.Pattern)  # no stand-in between, after that


def test_importing_memvault_compiles_no_pattern_of_its_own() -> None:
    """The checks' patterns wait for their first use (they cost most of the import)."""
    probe = (
        "import re, sys\n"
        "ours = []\n"
        "real = re.compile\n"
        "def counted(*args, **kwargs):\n"
        "    if sys._getframe(1).f_globals.get('__name__', '').startswith('memvault'):\n"
        "        ours.append(args[0])\n"
        "    return real(*args, **kwargs)\n"
        "re.compile = counted\n"
        "import memvault, memvault.security.injection, memvault.security.quoting\n"
        "import memvault.extraction.grounding, memvault.extraction.heuristic\n"
        "print(len(ours))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert int(done.stdout.strip()) <= 10, done.stdout  # of some 800: a few small ones stay
