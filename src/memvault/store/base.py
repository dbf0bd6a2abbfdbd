"""The backend protocol: one abstract primitive (``batch``) plus declared capabilities."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ..errors import CapabilityError
from .ops import Op


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do. Code that needs a capability calls :meth:`Backend.require`."""

    persistent: bool = False
    """Data outlives the process."""
    multiprocess: bool = False
    """Several processes may use the same store at once."""
    full_text: bool = False
    """A full-text index is kept in sync with entry content."""


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

    def require(self, capability: str) -> None:
        """Raise CapabilityError unless this backend declares ``capability``."""
        names = {f.name for f in fields(Capabilities)}
        if capability not in names:
            raise ValueError(f"unknown capability {capability!r}; known: {sorted(names)}")
        if not getattr(self.capabilities, capability):
            raise CapabilityError(self.name, capability)
