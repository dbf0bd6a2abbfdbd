"""What a backend's search returns for ranking: per-entry scores (a value type, pure)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True, eq=False)
class Candidates:
    """Per-entry scores of the entries that may rank, in (created_at, id) order; a chunk's best
    score stands for its entry.

    A backend may leave out entries that cannot rank (neither among the best by BM25 nor by
    cosine, nor next to one that is): ``position`` then tells where each candidate lies among
    all the entries searched and ``timeline_us`` holds those entries' creation times, so that
    turns next to each other and episodes keep their meaning.
    """

    entry_ids: npt.NDArray[np.str_]
    created_us: npt.NDArray[np.int64]
    lexical: npt.NDArray[np.float64]
    """BM25 relevance (higher is better); 0 where no term matched."""
    dense: npt.NDArray[np.float64]
    """Cosine similarity; -1 where the entry has no vector."""
    has_vector: npt.NDArray[np.bool_]
    vectors: npt.NDArray[np.float32] | None = field(default=None)
    """The best chunk's vector per entry, when asked for."""
    position: npt.NDArray[np.int64] | None = field(default=None)
    """Place of each candidate among the entries searched (None: candidates are all of them)."""
    timeline_us: npt.NDArray[np.int64] | None = field(default=None)
    """Creation times of every entry searched, in order (None: ``created_us``)."""
    speaker: npt.NDArray[np.float64] | None = field(default=None)
    """How much each entry speaks as the query's names (entity keys ``s:``; None: not asked)."""
    entity: npt.NDArray[np.float64] | None = field(default=None)
    """How much it names the query's entities (names and phrases; None: not asked)."""
    linked: npt.NDArray[np.float64] | None = field(default=None)
    """How much it shares the rarer entities of the best entries (None: not asked)."""
    episode_lexical: npt.NDArray[np.float64] | None = field(default=None)
    """The BM25 of its episode's text as one document (None: not asked)."""
    traits: npt.NDArray[np.float64] | None = field(default=None)
    """Per entry (its first chunk): :data:`~memvault.retrieval.traits.TRAITS` and how many
    entity keys it has (None: not asked)."""

    def column(self, name: str) -> npt.NDArray[np.float64]:
        """One of the entity columns, zeros where it was not asked for."""
        values: npt.NDArray[np.float64] | None = getattr(self, name)
        return np.zeros(len(self.entry_ids)) if values is None else values

    @property
    def places(self) -> npt.NDArray[np.int64]:
        if self.position is None:
            return np.arange(len(self.entry_ids), dtype=np.int64)
        return self.position

    @property
    def timeline(self) -> npt.NDArray[np.int64]:
        return self.created_us if self.timeline_us is None else self.timeline_us

    def only(self, ids: Collection[str]) -> Candidates:
        """The candidates of the entries ``ids`` (a filter the store could not apply), each
        keeping its place among all the entries searched."""
        keep = np.fromiter((i in ids for i in self.entry_ids), bool, len(self.entry_ids))

        def kept(values: npt.NDArray[Any] | None) -> npt.NDArray[Any] | None:
            return None if values is None else values[keep]

        return Candidates(
            self.entry_ids[keep],
            self.created_us[keep],
            self.lexical[keep],
            self.dense[keep],
            self.has_vector[keep],
            kept(self.vectors),
            self.places[keep],
            self.timeline,
            kept(self.speaker),
            kept(self.entity),
            kept(self.linked),
            kept(self.episode_lexical),
            kept(self.traits),
        )
