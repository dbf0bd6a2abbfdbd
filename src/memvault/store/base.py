"""The backend protocol: one abstract primitive (``batch``) plus declared capabilities."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ..errors import CapabilityError
from ..retrieval.filters import same_numbers
from ..types import MemoryEntry
from .ops import Candidates, Op, PutOp, SearchOp
from .vector_cache import similar_ids


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do. Code that needs a capability calls :meth:`Backend.require`."""

    persistent: bool = False
    """Data outlives the process."""
    multiprocess: bool = False
    """Several processes may use the same store at once."""
    full_text: bool = False
    """A full-text index is kept in sync with entry content."""


SIMILAR = 16
"""Most near-duplicate candidates a write compares (same scope, any category; then filtered)."""


class Backend(ABC):
    """Storage engine for one store (all tenants). Subclasses implement :meth:`batch`."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]

    @abstractmethod
    def batch(self, ops: Sequence[Op]) -> list[Any]:
        """Run ``ops`` in order, in one transaction; return their results in order.

        If any op raises, nothing of the batch is applied and the error propagates.
        """

    async def abatch(self, ops: Sequence[Op]) -> list[Any]:
        """Async form of :meth:`batch`; by default runs it in a worker thread."""
        return await asyncio.to_thread(self.batch, ops)

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections and files. Safe to call twice."""

    def _duplicate_of(self, op: PutOp, search: Callable[[SearchOp], Candidates],
                      get: Callable[[str], MemoryEntry | None]) -> str | None:  # fmt: skip
        """The live entry ``op.entry`` near-duplicates (same scope and category, cosine, same
        numbers)."""
        probe = op.duplicate_probe()
        if probe is None:
            return None
        for entry_id in similar_ids(search(probe), op.duplicate_threshold, most=SIMILAR):
            existing = get(entry_id)
            if (existing is not None and existing.category == op.entry.category
                    and same_numbers(existing.content, op.entry.content)):  # fmt: skip
                return entry_id
        return None

    def require(self, capability: str) -> None:
        """Raise CapabilityError unless this backend declares ``capability``."""
        names = {f.name for f in fields(Capabilities)}
        if capability not in names:
            raise ValueError(f"unknown capability {capability!r}; known: {sorted(names)}")
        if not getattr(self.capabilities, capability):
            raise CapabilityError(self.name, capability)
