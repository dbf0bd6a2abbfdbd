"""Storage: the backend protocol, its operations, and the registry that opens backends."""

from .base import Backend, Capabilities
from .ops import (
    CountOp,
    DeleteOp,
    DeleteScopeOp,
    Filter,
    GetOp,
    ListOp,
    Op,
    PurgeExpiredOp,
    PutOp,
    ReplaceOp,
    StoredEmbeddingOp,
)
from .registry import open_backend, register_backend

__all__ = [
    "Backend",
    "Capabilities",
    "CountOp",
    "DeleteOp",
    "DeleteScopeOp",
    "Filter",
    "GetOp",
    "ListOp",
    "Op",
    "PurgeExpiredOp",
    "PutOp",
    "ReplaceOp",
    "StoredEmbeddingOp",
    "open_backend",
    "register_backend",
]
