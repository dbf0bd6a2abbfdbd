"""Storage, for backend authors: the backend protocol, every operation a backend handles, and the
registry that opens backends by URL.

A backend subclasses :class:`Backend`, implements :meth:`Backend.batch` (one transaction around
a sequence of ops, run by :meth:`Backend.run_batch`, which appends the audit log's events of
their changes under the batch's :class:`Stamp`) and one ``op_<name>(tx, op)`` handler per op of
:data:`AnyOp`, and proves itself with :class:`memvault.testing.conformance.MemoryConformance`.
"""

from ..retrieval.candidates import Candidates
from .audit import DIRECT, Stamp
from .base import AnyOp, Backend, Capabilities
from .ops import (
    AppendAuditOp,
    AuditOp,
    AuditQuery,
    ChunkPageOp,
    ChunkRecord,
    ChunkText,
    CountOp,
    DeleteMatchingOp,
    DeleteOp,
    DeleteScopeOp,
    EmbeddingInfoOp,
    Filter,
    Folded,
    FoldOp,
    ForgetAuditOp,
    ForgetCopiesOp,
    GetManyOp,
    GetOp,
    ListOp,
    Op,
    PendErasureOp,
    PendingErasure,
    PendingErasuresOp,
    PurgeExpiredOp,
    PutOp,
    ReachOp,
    Removed,
    ReplaceOp,
    SearchOp,
    SetVectorsOp,
    StoredEmbeddingOp,
    TrimOp,
    TwinsOp,
)
from .registry import open_backend, register_backend

__all__ = [
    "DIRECT",
    "AnyOp",
    "AppendAuditOp",
    "AuditOp",
    "AuditQuery",
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
    "FoldOp",
    "Folded",
    "ForgetAuditOp",
    "ForgetCopiesOp",
    "GetManyOp",
    "GetOp",
    "ListOp",
    "Op",
    "PendErasureOp",
    "ReachOp",
    "PendingErasure",
    "PendingErasuresOp",
    "PurgeExpiredOp",
    "PutOp",
    "Removed",
    "ReplaceOp",
    "SearchOp",
    "SetVectorsOp",
    "Stamp",
    "StoredEmbeddingOp",
    "TrimOp",
    "TwinsOp",
    "open_backend",
    "register_backend",
]
