"""memvault: long-term memory for LLM agents — scoped, searchable, safe and fast, offline."""

from .config import Settings
from .context.builder import ContextWindow, Message
from .context.plans import HierarchicalContext
from .context.summarize import ExtractiveSummarizer, Summarizer
from .core import UNSET, CompactionCallback
from .errors import (
    BackendError,
    CapabilityError,
    ClosedError,
    CompactionError,
    ConfigError,
    ConflictError,
    EmbeddingMismatchError,
    FilteredError,
    ForbiddenError,
    GuardError,
    InvalidScopeError,
    InvalidScopePromotionError,
    LLMError,
    LLMResponseError,
    LLMUnavailableError,
    MemvaultError,
    NotFoundError,
    SchemaError,
    SessionNotFoundError,
    ValidationError,
)
from .extraction.plans import Extraction, TurnResult
from .facilities.model import Finding, Record, Session, Source, trust_tag
from .llm.base import ChatMessage, ChatModel, ChatReply, ChatRequest
from .llm.tasks import LLMCompaction, LLMSummarizer
from .memory import AsyncMemory, Memory
from .rest import AsyncRemoteMemory, RemoteMemory
from .trust.erasure import ErasureReceipt
from .types import (
    ItemResult,
    MemoryEntry,
    NewEntry,
    Outcome,
    Page,
    Provenance,
    Scope,
    ScopeKind,
    SearchHit,
    WriteReport,
)
from .versions import Supersession

__version__ = "0.1.0"

__all__ = [
    "UNSET",
    "ChatMessage",
    "ChatModel",
    "ChatReply",
    "ChatRequest",
    "ErasureReceipt",
    "Extraction",
    "LLMCompaction",
    "LLMSummarizer",
    "TurnResult",
    "AsyncMemory",
    "AsyncRemoteMemory",
    "BackendError",
    "CapabilityError",
    "ClosedError",
    "CompactionCallback",
    "CompactionError",
    "ContextWindow",
    "ConfigError",
    "ConflictError",
    "EmbeddingMismatchError",
    "FilteredError",
    "ExtractiveSummarizer",
    "Finding",
    "ForbiddenError",
    "GuardError",
    "HierarchicalContext",
    "ItemResult",
    "InvalidScopeError",
    "InvalidScopePromotionError",
    "LLMError",
    "LLMResponseError",
    "LLMUnavailableError",
    "Memory",
    "MemoryEntry",
    "Message",
    "MemvaultError",
    "NewEntry",
    "NotFoundError",
    "Outcome",
    "Page",
    "Provenance",
    "Record",
    "RemoteMemory",
    "SchemaError",
    "Session",
    "SessionNotFoundError",
    "Scope",
    "ScopeKind",
    "SearchHit",
    "Supersession",
    "Settings",
    "Source",
    "Summarizer",
    "ValidationError",
    "WriteReport",
    "__version__",
    "trust_tag",
]
