"""memvault: long-term memory for LLM agents — scoped, searchable, safe and fast, offline."""

import importlib
import threading
import warnings
from typing import TYPE_CHECKING, Any

from . import telemetry  # noqa: F401  (first: dependencies' telemetry off before they load)
from .errors import (
    AuditKeyError,
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
    LocalOnlyError,
    MemvaultError,
    NotFoundError,
    SchemaError,
    SessionNotFoundError,
    StructuredOutputError,
    UnavailableError,
    ValidationError,
)

if TYPE_CHECKING:  # what the names below load on first use, for type checkers
    from . import openai as openai
    from .agents.choice import StrategyChoice
    from .agents.failure_rules import FailureMatch, FailurePattern
    from .agents.model import Decomposition, Execution, Suggestion, ToolCall
    from .agents.stats import StrategyStats
    from .agents.team import Member, Team, TeamStats, TeamSuggestion
    from .agents.work_style import Judgement, WorkStyle
    from .config import Settings
    from .context.builder import ContextWindow, Message
    from .context.plans import HierarchicalContext
    from .context.summarize import ExtractiveSummarizer, Summarizer
    from .core import UNSET, CompactionCallback
    from .extraction.plans import Extraction, TurnResult
    from .extraction.worker import Failure
    from .facilities.model import Finding, Record, Session, SessionHit, Source, trust_tag
    from .llm.base import ChatMessage, ChatModel, ChatReply, ChatRequest
    from .llm.tasks import LLMCompaction, LLMSummarizer
    from .memory import AsyncMemory, Memory
    from .trust.audit_verify import AuditVerification
    from .trust.bundles import BundleReport
    from .trust.erasure import ErasureReceipt, FinishReport
    from .trust.hygiene import TidyReport
    from .trust.hygiene_rules import HygieneReport, ScopeHygiene
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
    "AuditEvent",
    "AuditKeyError",
    "AuditPage",
    "AuditVerification",
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
    "Judgement",
    "LLMCompaction",
    "LLMError",
    "LLMResponseError",
    "LLMSummarizer",
    "LLMUnavailableError",
    "LocalOnlyError",
    "Memory",
    "Member",
    "MemoryEntry",
    "MemvaultError",
    "Message",
    "NewEntry",
    "NotFoundError",
    "Outcome",
    "Page",
    "Provenance",
    "Record",
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
    "Team",
    "TeamStats",
    "TeamSuggestion",
    "ToolCall",
    "TurnResult",
    "UNSET",
    "UnavailableError",
    "ValidationError",
    "WorkStyle",
    "WriteReport",
    "trust_tag",
    "__version__",
    "HygieneReport",
    "ScopeHygiene",
    "TidyReport",
]


def __getattr__(name: str) -> Any:
    """An exported name, loaded on first use (:data:`_LAZY`); ``RemoteMemory`` and
    ``AsyncRemoteMemory``: deprecated names of ``Memory`` and ``AsyncMemory``, which a memvault
    server's URL opens (removed in the release after 0.1)."""
    if name in _LAZY:
        with _LOADING:  # one thread at a time: the modules import one another
            value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:  # a module of its own (memvault.openai), loaded on first use
        with _LOADING:
            return importlib.import_module(f".{name}", __name__)
    if name in _RENAMED:
        warnings.warn(
            f"memvault.{name} is deprecated: Memory(url) and AsyncMemory(url) are the memories "
            f"on a memvault server; use {_RENAMED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return __getattr__(_RENAMED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_RENAMED = {"RemoteMemory": "Memory", "AsyncRemoteMemory": "AsyncMemory"}
_SUBMODULES = frozenset({"openai"})
_LOADING = threading.RLock()


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_LAZY = {
    "AsyncMemory": "memory",
    "AuditEvent": "types",
    "AuditPage": "types",
    "AuditVerification": "trust.audit_verify",
    "BundleReport": "trust.bundles",
    "ChatMessage": "llm.base",
    "ChatModel": "llm.base",
    "ChatReply": "llm.base",
    "ChatRequest": "llm.base",
    "CompactionCallback": "core",
    "ContextWindow": "context.builder",
    "Decomposition": "agents.model",
    "ErasureReceipt": "trust.erasure",
    "Execution": "agents.model",
    "Extraction": "extraction.plans",
    "ExtractiveSummarizer": "context.summarize",
    "Failure": "extraction.worker",
    "FailureMatch": "agents.failures",
    "FailurePattern": "agents.failures",
    "Finding": "facilities.model",
    "FinishReport": "trust.erasure",
    "HierarchicalContext": "context.plans",
    "History": "versions",
    "ItemResult": "types",
    "LLMCompaction": "llm.tasks",
    "LLMSummarizer": "llm.tasks",
    "Memory": "memory",
    "MemoryEntry": "types",
    "Message": "context.builder",
    "NewEntry": "types",
    "Outcome": "types",
    "Page": "types",
    "Provenance": "types",
    "Record": "facilities.model",
    "RetentionReport": "trust.retention",
    "HygieneReport": "trust.hygiene_rules",
    "ScopeHygiene": "trust.hygiene_rules",
    "TidyReport": "trust.hygiene",
    "Scope": "types",
    "ScopeKind": "types",
    "SearchHit": "types",
    "Session": "facilities.model",
    "SessionHit": "facilities.model",
    "Settings": "config",
    "Source": "facilities.model",
    "StrategyChoice": "agents.choice",
    "StrategyStats": "agents.stats",
    "Member": "agents.team",
    "Team": "agents.team",
    "TeamStats": "agents.team",
    "TeamSuggestion": "agents.team",
    "Judgement": "agents.work_style",
    "WorkStyle": "agents.work_style",
    "Suggestion": "agents.model",
    "Summarizer": "context.summarize",
    "Supersession": "versions",
    "ToolCall": "agents.model",
    "TurnResult": "extraction.plans",
    "UNSET": "core",
    "WriteReport": "types",
    "trust_tag": "facilities.model",
}
"""Where each exported name lives: its module loads when the name is first used, so
``import memvault`` costs little (the store, numpy and the planners load with ``Memory``)."""
