"""memvault: long-term memory for LLM agents — scoped, searchable, safe and fast, offline."""

from .config import Settings
from .core import UNSET, CompactionCallback
from .errors import (
    BackendError,
    CapabilityError,
    CompactionError,
    ConfigError,
    ConflictError,
    InvalidScopeError,
    InvalidScopePromotionError,
    MemvaultError,
    NotFoundError,
    SchemaError,
    ValidationError,
)
from .memory import AsyncMemory, Memory
from .types import MemoryEntry, NewEntry, Page, Provenance, Scope, ScopeKind

__version__ = "0.1.0"

__all__ = [
    "UNSET",
    "AsyncMemory",
    "BackendError",
    "CapabilityError",
    "CompactionCallback",
    "CompactionError",
    "ConfigError",
    "ConflictError",
    "InvalidScopeError",
    "InvalidScopePromotionError",
    "Memory",
    "MemoryEntry",
    "MemvaultError",
    "NewEntry",
    "NotFoundError",
    "Page",
    "Provenance",
    "SchemaError",
    "Scope",
    "ScopeKind",
    "Settings",
    "ValidationError",
    "__version__",
]
