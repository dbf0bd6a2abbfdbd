"""What a backend's search returns for ranking: per-entry scores (a value type, pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True, eq=False)
class Candidates:
    """Per-entry scores, entries in (created_at, id) order; a chunk's best score stands for it."""

    entry_ids: npt.NDArray[np.object_]
    """Entry ids (str), one per candidate."""
    created_us: npt.NDArray[np.int64]
    lexical: npt.NDArray[np.float64]
    """BM25 relevance (higher is better); 0 where no term matched."""
    dense: npt.NDArray[np.float64]
    """Cosine similarity; -1 where the entry has no vector."""
    has_vector: npt.NDArray[np.bool_]
    vectors: npt.NDArray[np.float32] | None = field(default=None)
    """The best chunk's vector per entry, when asked for."""
