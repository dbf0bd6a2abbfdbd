"""Storage, for backend authors: the backend protocol, every operation a backend handles, and the
registry that opens backends by URL.

A backend subclasses :class:`Backend`, implements :meth:`Backend.batch` (one transaction around
a sequence of ops, each run by :meth:`Backend.execute`) and one ``op_<name>(tx, op)`` handler per
op of :data:`AnyOp`, and proves itself with :class:`memvault.testing.conformance.MemoryConformance`.
"""

from ..retrieval.candidates import Candidates
from .base import AnyOp, Backend, Capabilities
from .ops import (
    ChunkPageOp,
    ChunkRecord,
    ChunkText,
    CountOp,
    DeleteMatchingOp,
    DeleteOp,
    DeleteScopeOp,
    EmbeddingInfoOp,
    Filter,
    GetOp,
    ListOp,
    Op,
    PurgeExpiredOp,
    PutOp,
    ReplaceOp,
    SearchOp,
    SetVectorsOp,
    StoredEmbeddingOp,
    TrimOp,
)
from .registry import open_backend, register_backend

__all__ = [
    "AnyOp",
    "Backend",
    "Candidates",
    "Capabilities",
    "ChunkPageOp",
    "ChunkRecord",
    "ChunkText",
    "CountOp",
    "DeleteMatchingOp",
    "DeleteOp",
    "DeleteScopeOp",
    "EmbeddingInfoOp",
    "Filter",
    "GetOp",
    "ListOp",
    "Op",
    "PurgeExpiredOp",
    "PutOp",
    "ReplaceOp",
    "SearchOp",
    "SetVectorsOp",
    "StoredEmbeddingOp",
    "TrimOp",
    "open_backend",
    "register_backend",
]
