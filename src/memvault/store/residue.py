"""Looking for erased ids and contents in a store's bytes (pure). Entry ids — ULIDs, 26
characters of Crockford's base 32 — are all found in one pass: every 26-character window of
every run of such characters goes into a set (a store packs values side by side, so an id may
touch its neighbours). Any other id, and each content, is looked for by itself."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

ULID_LENGTH = 26
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
_RUN = re.compile(rb"[0-9A-Z]{26,}")


def found_in(images: Sequence[bytes], ids: Iterable[str], contents: Iterable[str]) -> int:
    """How many of ``ids`` and ``contents`` occur anywhere in ``images``."""
    wanted = list(ids)
    ulids = {i for i in wanted if _ULID.fullmatch(i)}
    windows = _windows(images) if ulids else set()
    others = [i for i in wanted if i not in ulids]
    return sum(i in windows for i in ulids) + sum(
        any(text.encode("utf-8", "surrogatepass") in image for image in images)
        for text in (*others, *contents)
    )


def _windows(images: Sequence[bytes]) -> set[str]:
    seen: set[str] = set()
    for image in images:
        for run in _RUN.findall(image):
            text = run.decode()
            seen.update(text[n : n + ULID_LENGTH] for n in range(len(text) - ULID_LENGTH + 1))
    return seen
