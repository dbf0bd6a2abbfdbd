"""Regular expressions compiled on first use, not on import.

memvault's checks hold hundreds of patterns (injection in seven languages, quoting, the
offline learner's rules); compiling them all cost most of ``import memvault``. A pattern made
by :func:`lazy` is a stand-in with the compiled pattern's methods and attributes (``search``,
``sub``, ``finditer``, ``pattern``…), compiled the first time one is used. Give it to
``re.sub`` and friends as ``.pattern`` or call its own methods: the ``re`` functions want the
real thing. A match's ``.re`` is the compiled pattern, not the stand-in: to ask which pattern
matched, compare ``.pattern`` (``match.re is PATTERN`` is never true).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast


class _Lazy:
    """A pattern's source and flags, compiled when first used; then the compiled pattern's
    members are kept on the stand-in itself, so a call costs what it costs on the pattern (a
    race compiles it twice: harmless)."""

    def __init__(self, source: str | Callable[[], str], flags: int) -> None:
        self._source, self._flags = source, flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        source = self._source if isinstance(self._source, str) else self._source()
        compiled = re.compile(source, self._flags)
        for member in _MEMBERS:
            setattr(self, member, getattr(compiled, member))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r}, {self._flags!r})"


_MEMBERS = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)
"""What a compiled pattern offers, kept on the stand-in once it is compiled."""


def lazy(source: str | Callable[[], str], flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, done the first time the pattern is used; ``source`` may
    be a function that writes the pattern (its work is put off too)."""
    return cast(re.Pattern[str], _Lazy(source, int(flags)))
