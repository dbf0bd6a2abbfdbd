"""The catalogue: every operation of ``Memory``, declared once in the wing that owns it — its
plan (name, parameters, docstring, result), its endpoint and the codec of its answer.

``Memory`` and ``AsyncMemory`` bind each entry with one line and run it on a local backend or
over the wire; the server derives a route from each entry that has nothing special to do
(:attr:`Operation.special` says why the others have a handler of their own).
"""

from __future__ import annotations

from typing import Any

from . import agents, facilities, learning, store, trust
from .operation import Operation

CATALOGUE: tuple[Operation[Any, Any], ...] = (
    *store.OPERATIONS,
    *facilities.OPERATIONS,
    *learning.OPERATIONS,
    *trust.OPERATIONS,
    *agents.OPERATIONS,
)
"""Every operation, wing by wing."""

__all__ = ["CATALOGUE", "Operation"]
