"""Room for a scope index to grow at its end without copying what it holds.

Appending a new entry to a large scope's index would otherwise copy every column (150 MB of
vectors at 100k chunks) on each write. Instead the columns of the newest table are views of
buffers with spare rows at their end: the next entries are written there, and the new table's
views are longer. Rows are only ever written past the newest table's, so an older table's
shorter views never change; appending to any other table copies into new buffers.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

CHUNK_COLUMNS = ("chunk_keys", "chunk_entry", "matrix", "has_vector")
ENTRY_COLUMNS = ("entry_ids", "created_us", "expires_us", "valid_from_us", "valid_to_us")
COLUMNS = (*CHUNK_COLUMNS, *ENTRY_COLUMNS, "entry_start")
SLACK = 4
"""New buffers have room for a quarter more rows (at least 64)."""
Array = npt.NDArray[Any]
Columns = Mapping[str, Array]


def _length(name: str, chunks: int, entries: int) -> int:
    """Rows of column ``name`` in a table of ``chunks`` and ``entries`` (entry_start has one
    more: where the chunks of the next entry would start)."""
    return chunks if name in CHUNK_COLUMNS else entries + (name == "entry_start")


@dataclass(eq=False)
class Spare:
    """Buffers behind the columns of the newest table built on them, and its size."""

    buffers: dict[str, Array]
    chunks: int
    entries: int
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def around(cls, columns: Columns, rows: Columns) -> Spare:
        """New buffers holding ``columns`` then ``rows`` (entry_start's without its first)."""
        chunks, entries = len(columns["chunk_keys"]), len(columns["entry_ids"])
        more_chunks, more_entries = len(rows["chunk_keys"]), len(rows["entry_ids"])
        wide = np.promote_types(columns["entry_ids"].dtype, rows["entry_ids"].dtype)
        buffers = {}
        for name in COLUMNS:
            used = _length(name, chunks, entries)
            size = _length(name, chunks + more_chunks, entries + more_entries)
            dtype = wide if name == "entry_ids" else columns[name].dtype
            room = size + max(64, size // SLACK)
            buffer = np.empty((room, *columns[name].shape[1:]), dtype)
            buffer[:used] = columns[name]
            buffer[used:size] = rows[name]
            buffers[name] = buffer
        return cls(buffers, chunks + more_chunks, entries + more_entries)

    def extended(self, columns: Columns, rows: Columns) -> dict[str, Array] | None:
        """``columns`` followed by ``rows``, written into the spare rows; None unless the
        columns are this spare's newest views and the rows fit (then: :meth:`around`)."""
        chunks, entries = len(columns["chunk_keys"]), len(columns["entry_ids"])
        more_chunks, more_entries = len(rows["chunk_keys"]), len(rows["entry_ids"])
        with self.lock:
            newest = self._holds(columns)
            fits = (
                all(
                    _length(name, chunks + more_chunks, entries + more_entries) <= len(buffer)
                    for name, buffer in self.buffers.items()
                )
                and rows["entry_ids"].dtype.itemsize <= self.buffers["entry_ids"].dtype.itemsize
            )
            if not (newest and fits):
                return None
            for name, buffer in self.buffers.items():
                start = _length(name, chunks, entries)
                buffer[start : start + len(rows[name])] = rows[name]
            self.chunks, self.entries = chunks + more_chunks, entries + more_entries
            return self.views()

    def patched(
        self, columns: Columns, rows: Array, values: Mapping[str, Array]
    ) -> tuple[Spare, dict[str, Array]] | None:
        """``columns`` with ``values`` (per-entry columns) at the entries ``rows``, in copies of
        those columns' buffers; the other buffers, and their spare room, pass to the new
        spare (this one never extends again: two tables would write the same spare rows).
        None unless the columns are this spare's newest views."""
        with self.lock:
            if not self._holds(columns):
                return None
            buffers = dict(self.buffers)
            for name, value in values.items():
                buffers[name] = buffers[name].copy()
                buffers[name][rows] = value
            successor = Spare(buffers, self.chunks, self.entries)
            self.chunks = self.entries = -1
        return successor, successor.views()

    def _holds(self, columns: Columns) -> bool:
        """Whether ``columns`` are the newest views of these buffers (the lock held)."""
        size = (len(columns["chunk_keys"]), len(columns["entry_ids"]))
        return size == (self.chunks, self.entries) and all(
            columns[name].base is self.buffers[name] for name in COLUMNS
        )

    @property
    def capacity(self) -> int:
        """The chunks its buffers have room for."""
        return len(self.buffers["chunk_keys"])

    def views(self) -> dict[str, Array]:
        """The columns of the newest table: the used rows of each buffer, read-only (they are
        shared by every table built on these buffers)."""
        views = {}
        for name, buffer in self.buffers.items():
            view = buffer[: _length(name, self.chunks, self.entries)]
            view.flags.writeable = False
            views[name] = view
        return views
