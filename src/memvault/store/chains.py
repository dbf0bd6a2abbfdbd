"""Keeping supersession chains whole when entries leave them (pure).

In a chain each superseded entry names its successor (``superseded_by``) and each successor
the entries it replaced (``supersedes``). When an entry is deleted its neighbours are linked
to each other: each predecessor it replaced points to its successor, and the successor lists
those predecessors instead of it. When the deleted entry was the current end of its chain, its
predecessors stay superseded (``valid_to`` and reason kept) with no successor. A *moved* entry
(demote: copied, then deleted) hands its place to its copy, the ``heir``.

Only the links change: the planner bumps revisions, and ``updated_at`` is kept (it dates the
supersession in the review list).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..types import MemoryEntry


def neighbour_ids(gone: Iterable[MemoryEntry]) -> set[str]:
    """The ids of the entries linked to ``gone`` (their predecessors and successors)."""
    entries = list(gone)
    linked = {i for e in entries for i in (*e.supersedes, e.superseded_by) if i}
    return linked - {e.id for e in entries}


def unlink(
    gone: Sequence[MemoryEntry],
    neighbours: Iterable[MemoryEntry],
    heir: MemoryEntry | None = None,
) -> dict[str, MemoryEntry]:
    """The entries (of ``neighbours`` and ``heir``) whose links change when ``gone`` are
    deleted, by id, changed. ``heir`` is the copy that takes the place of the one current entry
    of ``gone`` being moved: its predecessors point to the heir, which lists them."""
    links = {e.id: e for e in (*neighbours, *gone)}
    if heir is not None:
        (moved,) = gone
        links[moved.id] = replace(moved, superseded_by=heir.id)
        links[heir.id] = replace(heir, supersedes=(moved.id,))
    before = dict(links) if heir is None else {**links, heir.id: heir}
    for entry in gone:
        _remove(links, entry.id)
    return {i: e for i, e in links.items() if e != before[i]}


def _remove(links: dict[str, MemoryEntry], gone_id: str) -> None:
    gone = links.pop(gone_id)
    successor = links.get(gone.superseded_by or "")
    if successor is not None and gone.id not in successor.supersedes:
        successor = None  # it does not claim the entry: no link to mend
    predecessors = [
        p for i in gone.supersedes if (p := links.get(i)) is not None and p.superseded_by == gone.id
    ]
    for p in predecessors:
        after = None if gone.superseded_by == p.id else gone.superseded_by
        links[p.id] = replace(p, superseded_by=after)
    if successor is not None:
        kept = [i for i in successor.supersedes if i != gone.id]
        added = [p.id for p in predecessors if p.id != successor.id]
        links[successor.id] = replace(successor, supersedes=tuple(dict.fromkeys(kept + added)))


def orphaned(entries: Iterable[MemoryEntry], gone: Iterable[str]) -> list[MemoryEntry]:
    """Superseded ``entries`` whose successor is among the ``gone`` ids (current entries
    deleted without their links, e.g. by a FIFO cap), changed to have no successor."""
    ids = set(gone)
    return [replace(e, superseded_by=None) for e in entries if e.superseded_by in ids]
