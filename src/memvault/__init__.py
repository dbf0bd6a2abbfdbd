"""memvault: long-term memory for LLM agents — scoped, searchable, safe and fast, offline."""

from . import telemetry  # noqa: F401  (first: dependencies' telemetry off before they load)
from .agents.choice import StrategyChoice
from .agents.failures import FailureMatch, FailurePattern
from .agents.model import Decomposition, Execution, Suggestion, ToolCall
from .agents.stats import StrategyStats
from .config import Settings
from .context.builder import ContextWindow, Message
from .context.plans import HierarchicalContext
from .context.summarize import ExtractiveSummarizer, Summarizer
from .core import UNSET, CompactionCallback
from .errors import (
    BackendError,
    BundleError,
    CapabilityError,
    ClosedError,
    CompactionError,
    ConfigError,
    ConflictError,
    EmbeddingMismatchError,
    ErasureIncompleteError,
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
    StructuredOutputError,
    ValidationError,
)
from .extraction.plans import Extraction, TurnResult
from .extraction.worker import Failure
from .facilities.model import Finding, Record, Session, SessionHit, Source, trust_tag
from .llm.base import ChatMessage, ChatModel, ChatReply, ChatRequest
from .llm.tasks import LLMCompaction, LLMSummarizer
from .memory import AsyncMemory, Memory
from .rest import AsyncRemoteMemory, RemoteMemory
from .trust.bundles import BundleReport
from .trust.erasure import ErasureReceipt, FinishReport
from .trust.retention import RetentionReport
from .types import (
    AuditEvent,
    AuditPage,
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
from .versions import History, Supersession

__version__ = "0.1.0"

__all__ = [
    "AsyncMemory",
    "AsyncRemoteMemory",
    "AuditEvent",
    "AuditPage",
    "BackendError",
    "BundleError",
    "BundleReport",
    "CapabilityError",
    "ChatMessage",
    "ChatModel",
    "ChatReply",
    "ChatRequest",
    "ClosedError",
    "CompactionCallback",
    "CompactionError",
    "ConfigError",
    "ConflictError",
    "ContextWindow",
    "Decomposition",
    "EmbeddingMismatchError",
    "ErasureIncompleteError",
    "ErasureReceipt",
    "Execution",
    "Extraction",
    "ExtractiveSummarizer",
    "Failure",
    "FailureMatch",
    "FailurePattern",
    "FilteredError",
    "Finding",
    "FinishReport",
    "ForbiddenError",
    "GuardError",
    "HierarchicalContext",
    "History",
    "InvalidScopeError",
    "InvalidScopePromotionError",
    "ItemResult",
    "LLMCompaction",
    "LLMError",
    "LLMResponseError",
    "LLMSummarizer",
    "LLMUnavailableError",
    "Memory",
    "MemoryEntry",
    "MemvaultError",
    "Message",
    "NewEntry",
    "NotFoundError",
    "Outcome",
    "Page",
    "Provenance",
    "Record",
    "RemoteMemory",
    "RetentionReport",
    "SchemaError",
    "Scope",
    "ScopeKind",
    "SearchHit",
    "Session",
    "SessionHit",
    "SessionNotFoundError",
    "Settings",
    "Source",
    "StrategyChoice",
    "StrategyStats",
    "StructuredOutputError",
    "Suggestion",
    "Summarizer",
    "Supersession",
    "ToolCall",
    "TurnResult",
    "UNSET",
    "ValidationError",
    "WriteReport",
    "trust_tag",
    "__version__",
]
