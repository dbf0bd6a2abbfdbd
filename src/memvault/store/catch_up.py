"""Bringing a kept scope index up to a later version of its scope, without a rebuild (pure).

What happened in a scope since its index was built is in the audit log: entries created,
changed and deleted. Created entries are appended (they sort after everything the index
holds). A changed entry keeps its chunks unless its content changed (its text and vectors
are its chunks'; anything else an index holds of it is expiry and validity, patched in
place); new content comes with new chunk keys, and asks for a rebuild. A deleted entry stays
as a row no search can see (its expiry is :data:`~memvault.store.scope_index.GONE`) until
the index is compacted: when a quarter of it is gone, and before it is saved to a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .scope_index import GONE, ChunkTable, Ints

PATCHED = ("expires_us", "valid_from_us", "valid_to_us")
"""What a change to an entry may change in an index, beside its chunks."""
COMPACT_AT = 4
"""A table is compacted when more than one entry in this many is gone."""


@dataclass(frozen=True, slots=True)
class Delta:
    """The entries created, changed and deleted in a scope since some audit event."""

    created: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @classmethod
    def of(cls, events: Iterable[tuple[str, str]]) -> Delta | None:
        """The delta of ``(entry id, change)`` events, oldest first; None for a change it
        cannot follow."""
        seen: dict[str, list[str]] = {"created": [], "changed": [], "deleted": []}
        for entry_id, change in events:
            if change not in seen:
                return None
            seen[change].append(entry_id)
        deleted = set(seen["deleted"])
        created = [i for i in dict.fromkeys(seen["created"]) if i not in deleted]
        fresh = set(created)
        changed = [i for i in dict.fromkeys(seen["changed"]) if i not in deleted | fresh]
        return cls(tuple(created), tuple(changed), tuple(dict.fromkeys(seen["deleted"])))

    def __len__(self) -> int:
        return len(self.created) + len(self.changed) + len(self.deleted)


Reader = Callable[[Sequence[str]], ChunkTable]
"""Entry ids → their rows now, as a table (in table order)."""


def caught_up(
    table: ChunkTable, delta: Delta, read: Reader, *, in_place: bool
) -> ChunkTable | None:
    """``table`` with ``delta`` applied, or None when only a rebuild can apply it (an entry
    it does not hold changed, or got new chunks). ``in_place``: the table's spare room may
    pass to the result (see :meth:`ChunkTable.appended`)."""
    if not len(delta):
        return table
    if delta.changed or delta.deleted:
        patched = _patched(table, delta, read, in_place=in_place)
        if patched is None:
            return None
        table = (
            patched.compacted() if patched.gone * COMPACT_AT > len(patched.entry_ids) else patched
        )
    return table.appended(read(delta.created), in_place=in_place) if delta.created else table


def _patched(table: ChunkTable, delta: Delta, read: Reader, *, in_place: bool) -> ChunkTable | None:
    """``table`` with the changed entries' expiry and validity read again, and the deleted
    ones gone; None when a changed entry is not in it or has new chunks, or a deleted one
    is still there."""
    changed = table.positions(delta.changed)
    now = read(delta.changed + delta.deleted)
    if len(changed) != len(delta.changed) or not _same_chunks(table, changed, now):
        return None
    deleted = table.positions(delta.deleted)  # those created and deleted since are not there
    values = {
        name: np.concatenate([getattr(now, name), getattr(table, name)[deleted]])
        for name in PATCHED
    }
    values["expires_us"][len(changed) :] = GONE
    return table.patched(np.concatenate([changed, deleted]), values, in_place=in_place)


def _same_chunks(table: ChunkTable, changed: Ints, now: ChunkTable) -> bool:
    """Whether ``now`` (rows read again) holds exactly the entries at ``changed``, with the
    same creation times and chunks as in the table (a backend gives new content new chunk
    keys)."""
    return (
        np.array_equal(now.entry_ids, table.entry_ids[changed])
        and np.array_equal(now.created_us, table.created_us[changed])
        and np.array_equal(now.chunk_keys, table.chunk_keys[table.chunks_of(changed)])
    )
