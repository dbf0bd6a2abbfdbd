"""Every operation of ``Memory`` as it travels over REST: the local plan it stands for (its
name, parameters, docstring and result), the endpoint it is sent to, and how the answer reads.

A remote operation is a plan too (:data:`~memvault.drivers.Steps`): it yields
:class:`~memvault.rest.codec.Request` steps (and :class:`~memvault.core.Invoke` for a caller's
callback), so :mod:`memvault.rest.client` runs each one with a blocking and an awaiting
driver, like :class:`~memvault.Memory` and :class:`~memvault.AsyncMemory` run the local plans.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from .. import validation as check
from ..agents.choice import StrategyChoice
from ..agents.failures import FailureMatch, FailurePattern
from ..agents.model import Decomposition, Execution, Suggestion
from ..agents.plans import AgentPlans
from ..agents.stats import StrategyStats
from ..context.builder import ContextWindow
from ..context.plans import ContextPlans, HierarchicalContext
from ..core import Invoke, Plan, Planner, summarised
from ..drivers import Steps
from ..errors import CompactionError, NotFoundError, ValidationError, restated
from ..extraction.plans import Extraction, LearningPlans, TurnResult
from ..extraction.worker import Failure
from ..facilities.model import Finding, Record, Session, SessionHit
from ..facilities.notes import NotePlans
from ..facilities.sessions import SessionPlans
from ..trust.audit import AuditPlans
from ..trust.bundle_file import read_file, write_new_file
from ..trust.bundles import BundlePlans, BundleReport
from ..trust.erasure import ErasurePlans, ErasureReceipt, FinishReport
from ..trust.retention import RetentionPlans, RetentionReport
from ..types import AuditPage, ItemResult, MemoryEntry, NewEntry, Page, SearchHit, WriteReport
from ..versions import History, Supersession, VersionPlans
from . import endpoints as api
from .answers import PLAIN, Codec, Custom, Each, Scored, Value, Whole, Written
from .codec import arguments, decoded, entry_fields, request, wire

P = ParamSpec("P")
T = TypeVar("T")

ENTRIES = Each("entries", MemoryEntry)
"""A list of entries, as most reads answer."""
FLUSH_WAIT = 30.0
"""Seconds one flush request lets the server wait (a longer flush sends several)."""


@dataclass(frozen=True, slots=True)
class Operation(Generic[P, T]):
    """How an operation of ``Memory`` travels."""

    plan: Callable[Concatenate[Any, P], Plan[T]]
    """The local plan: the operation's name, parameters, docstring and result."""
    endpoint: api.Endpoint
    answer: Codec = PLAIN
    """The result as JSON and back: the server encodes with it, the client decodes."""
    run: Callable[[Operation[P, T], dict[str, Any]], Steps[T]] | None = None
    """Steps of its own (several requests, a callback here), else one exchange."""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    """Fields always sent."""
    kept: tuple[str, ...] = ()
    """Parameters used here by :attr:`run`, never sent (a callback)."""
    refused: Mapping[str, str] = field(default_factory=dict)
    """Parameters that cannot travel, and why (given one, the call is refused)."""
    defaults: bool = False
    """Send every argument, defaults too (an endpoint that serves several operations)."""

    @property
    def name(self) -> str:
        return self.plan.__name__

    def steps(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Steps[T]:
        """The remote plan of a call (its arguments checked now, before any request)."""
        named = arguments(self.plan, args, kwargs, self.defaults)
        for name, reason in self.refused.items():
            if named.pop(name, None) is not None:
                raise ValidationError(f"{name}: {reason}")
        return self.run(self, named) if self.run is not None else self._exchange(named)

    def _exchange(self, named: Mapping[str, Any]) -> Steps[T]:
        sent = request(self.endpoint, {**named, **self.fixed})
        result: T = decoded(self.answer.decode, (yield sent), sent)
        return result


def _get(op: Operation[Any, MemoryEntry | None], named: dict[str, Any]) -> Steps[Any]:
    sent = request(op.endpoint, named)
    try:
        body = yield sent
    except NotFoundError:
        return None
    return decoded(op.answer.decode, body, sent)


def _write_many(op: Operation[Any, WriteReport], named: dict[str, Any]) -> Steps[Any]:
    """Items that cannot be sent (not finite, not JSON) are refused here, as the core refuses
    them, and the server's report is told in the caller's numbering."""
    items, strict = named["items"], named.get("strict", False)
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise ValidationError(f"items must be a list of entries, got {type(items).__name__}")
    sent, positions, refused = [], [], []
    for index, item in enumerate(items):
        try:
            check.arguments({"": item})
            entry = isinstance(item, NewEntry | Mapping)
            sent.append(entry_fields(item, "item") if entry else wire(item, "item"))
            positions.append(index)
        except ValidationError as exc:
            if strict:
                raise restated(exc, f"item {index}", index) from exc
            refused.append(ItemResult.refusal(index, exc))
    batch = request(op.endpoint, {**named, "items": sent})
    report: WriteReport = decoded(op.answer.decode, (yield batch), batch)
    return report.placed(positions, refused)


def _compact(op: Operation[Any, MemoryEntry], named: dict[str, Any]) -> Steps[Any]:
    """Read the sources (the server checks them), make their text with the callback here,
    then store it — if the sources are still at the revisions the text was made from."""
    callback = named.pop("callback")
    asked = request(
        api.COMPACTION_SOURCES, {k: named[k] for k in ("entry_ids", "scope") if k in named}
    )
    sources: list[MemoryEntry] = decoded(ENTRIES.decode, (yield asked), asked)
    ids = [e.id for e in sources]
    text = yield from summarised(ids, callback, sources)
    if not isinstance(text, str):  # as the core says it: the server only checks text
        kind = type(text).__name__
        raise CompactionError(
            ids, f"the callback's result is unusable: content must be a string, got {kind}"
        )
    revisions = [e.revision for e in sources]
    store = request(op.endpoint, {**named, "content": text, "revisions": revisions})
    return decoded(op.answer.decode, (yield store), store)


SUMMARIZER = "a summariser object cannot be sent to a server: the server summarises with its own"

WRITE = Operation(Planner.write, api.WRITE, Written(MemoryEntry))
WRITE_MANY = Operation(Planner.write_many, api.WRITE_BATCH, Whole(WriteReport), run=_write_many)
RETRIEVE = Operation(Planner.retrieve, api.RETRIEVE, ENTRIES)
GET = Operation(Planner.get, api.GET, Whole(MemoryEntry), run=_get)
UPDATE = Operation(Planner.update, api.UPDATE, Whole(MemoryEntry))
DELETE = Operation(Planner.delete, api.DELETE, Value("deleted"))
DELETE_BY_SCOPE = Operation(Planner.delete_by_scope, api.DELETE_SCOPE, Value("deleted"))
PROMOTE = Operation(Planner.promote, api.PROMOTE, Written(MemoryEntry))
COMPACT = Operation(
    Planner.compact, api.COMPACT, Whole(MemoryEntry), run=_compact, kept=("callback",)
)
COUNT = Operation(Planner.count, api.COUNT, Value("count"))
LIST = Operation(Planner.list, api.LIST, Whole(Page))
PURGE_EXPIRED = Operation(Planner.purge_expired, api.PURGE_EXPIRED, Value("purged"))
SEARCH = Operation(Planner.search, api.SEARCH, Each("hits", SearchHit))
SUPERSEDE = Operation(VersionPlans.supersede, api.SUPERSEDE_MANY, Written(MemoryEntry))
HISTORY = Operation(VersionPlans.history, api.HISTORY, Whole(History))
RESTORE = Operation(VersionPlans.restore, api.RESTORE, Whole(MemoryEntry))
SUPERSEDED = Operation(VersionPlans.superseded, api.SUPERSEDED, Each("supersessions", Supersession))
CREATE_SESSION = Operation(SessionPlans.create_session, api.CREATE_SESSION, Whole(Session))
GET_SESSION = Operation(SessionPlans.get_session, api.GET_SESSION, Whole(Session))
LIST_SESSIONS = Operation(SessionPlans.list_sessions, api.LIST_SESSIONS, Each("sessions", Session))
RENAME_SESSION = Operation(SessionPlans.rename_session, api.CHANGE_SESSION, Whole(Session))
SET_DATA_LOADED = Operation(
    SessionPlans.set_data_loaded, api.CHANGE_SESSION, Whole(Session), defaults=True
)
DELETE_SESSION = Operation(SessionPlans.delete_session, api.DELETE_SESSION, Value("deleted"))
APPEND_RECORD = Operation(SessionPlans.append_record, api.APPEND_RECORD, Whole(Record))
RECORDS = Operation(SessionPlans.records, api.RECORDS, Each("records", Record))
SEARCH_RECORDS = Operation(SessionPlans.search_records, api.SEARCH_RECORDS, Each("hits", SearchHit))
SEARCH_SESSIONS = Operation(
    SessionPlans.search_sessions, api.SEARCH_SESSIONS, Each("sessions", SessionHit)
)
ADD_SESSION_MEMORY = Operation(NotePlans.add_session_memory, api.ADD_NOTE, Written(MemoryEntry))
SESSION_MEMORY = Operation(NotePlans.session_memory, api.NOTES, ENTRIES)
ADD_FINDING = Operation(NotePlans.add_finding, api.ADD_FINDING, Written(Finding))
FINDINGS = Operation(NotePlans.findings, api.FINDINGS, Each("findings", Finding))
ADD_GLOBAL_MEMORY = Operation(NotePlans.add_global_memory, api.ADD_GLOBAL, Written(MemoryEntry))
GLOBAL_MEMORY = Operation(NotePlans.global_memory, api.GLOBAL, ENTRIES)
PIN = Operation(NotePlans.pin, api.PIN, Written(MemoryEntry))
DEMOTE = Operation(NotePlans.demote, api.DEMOTE, Written(MemoryEntry))
BUILD_CONTEXT = Operation(
    ContextPlans.build_context,
    api.CONTEXT,
    Whole(ContextWindow),
    refused={"summarizer": SUMMARIZER},
)
SYSTEM_PROMPT = Operation(ContextPlans.system_prompt, api.PROMPT, Value("prompt"))
RECALL = Operation(
    ContextPlans.recall,
    api.CONTEXT,
    Whole(HierarchicalContext),
    fixed={"recall": True},
    refused={"summarizer": SUMMARIZER},
)
ADD_TURN = Operation(LearningPlans.add_turn, api.ADD_TURN, Whole(TurnResult))
EXTRACT = Operation(LearningPlans.extract, api.EXTRACT, Whole(Extraction))
ERASE = Operation(ErasurePlans.erase, api.ERASE, Whole(ErasureReceipt))
FINISH_ERASURES = Operation(ErasurePlans.finish_erasures, api.FINISH_ERASURES, Whole(FinishReport))
APPLY_RETENTION = Operation(RetentionPlans.apply_retention, api.RETENTION, Whole(RetentionReport))
AUDIT = Operation(AuditPlans.audit, api.AUDIT, Whole(AuditPage))


def _bundle(body: Any) -> tuple[bytes, BundleReport]:
    return base64.b64decode(body["bundle"], validate=True), BundleReport.from_dict(body["report"])


def _bundled(result: tuple[bytes, BundleReport]) -> Any:
    data, report = result
    return {"bundle": base64.b64encode(data).decode("ascii"), "report": report.to_dict()}


BUNDLED = Custom(_bundled, _bundle)
"""A session's bundle and the report of its making."""


def _export_session(op: Operation[Any, BundleReport], named: dict[str, Any]) -> Steps[Any]:
    """Ask the server for the session's bundle; write it here, at ``path``."""
    path = named.pop("path")
    if not isinstance(path, str | Path) or not str(path):
        raise ValidationError("path must name the bundle file to write")
    asked = request(op.endpoint, named)
    data, report = decoded(BUNDLED.decode, (yield asked), asked)
    written = yield Invoke(write_new_file, (path, data), blocking=True)
    return replace(report, path=written)


def _import_session(op: Operation[Any, BundleReport], named: dict[str, Any]) -> Steps[Any]:
    """Read the bundle file here, at ``path``; the server imports it."""
    path = named["path"]
    if not isinstance(path, str | Path) or not str(path):
        raise ValidationError("path must name the bundle file to read")
    data = yield Invoke(read_file, (path,), blocking=True)
    return (yield from _sent_bundle(op, data))


def _import_bundle(op: Operation[Any, BundleReport], named: dict[str, Any]) -> Steps[Any]:
    data = named["data"]
    if not isinstance(data, bytes | bytearray):
        raise ValidationError("a bundle is bytes")
    return (yield from _sent_bundle(op, bytes(data)))


def _sent_bundle(op: Operation[Any, BundleReport], data: bytes) -> Steps[Any]:
    sent = request(op.endpoint, {"bundle": base64.b64encode(data).decode("ascii")})
    return decoded(op.answer.decode, (yield sent), sent)


SESSION_BUNDLE = Operation(BundlePlans.session_bundle, api.SESSION_BUNDLE, BUNDLED)
EXPORT_SESSION = Operation(
    BundlePlans.export_session, api.SESSION_BUNDLE, BUNDLED, run=_export_session, kept=("path",)
)
IMPORT_SESSION = Operation(
    BundlePlans.import_session,
    api.IMPORT_BUNDLE,
    Whole(BundleReport),
    run=_import_session,
    kept=("path",),
)
IMPORT_BUNDLE = Operation(
    BundlePlans.import_bundle,
    api.IMPORT_BUNDLE,
    Whole(BundleReport),
    run=_import_bundle,
    kept=("data",),
)


RECORD_EXECUTION = Operation(AgentPlans.record_execution, api.RECORD_EXECUTION, Whole(Execution))
EXECUTIONS = Operation(AgentPlans.executions, api.EXECUTIONS, Each("executions", Execution))
SEARCH_EXECUTIONS = Operation(
    AgentPlans.search_executions, api.SEARCH_EXECUTIONS, Scored("hits", Execution)
)
STRATEGY_STATS = Operation(
    AgentPlans.strategy_stats, api.STRATEGIES, Each("strategies", StrategyStats)
)
CHOOSE_STRATEGY = Operation(AgentPlans.choose_strategy, api.CHOOSE_STRATEGY, Whole(StrategyChoice))
RECORD_DECOMPOSITION = Operation(
    AgentPlans.record_decomposition, api.RECORD_DECOMPOSITION, Whole(Decomposition)
)
SUGGEST_DECOMPOSITION = Operation(
    AgentPlans.suggest_decomposition,
    api.SUGGEST_DECOMPOSITION,
    Each("suggestions", Suggestion),
)
FAILURE_PATTERNS = Operation(
    AgentPlans.failure_patterns, api.FAILURE_PATTERNS, Each("patterns", FailurePattern)
)
CHECK_FAILURES = Operation(
    AgentPlans.check_failures, api.CHECK_FAILURES, Each("matches", FailureMatch)
)

OPERATIONS: tuple[Operation[Any, Any], ...] = (
    WRITE,
    WRITE_MANY,
    RETRIEVE,
    GET,
    UPDATE,
    DELETE,
    DELETE_BY_SCOPE,
    PROMOTE,
    COMPACT,
    COUNT,
    LIST,
    PURGE_EXPIRED,
    SEARCH,
    SUPERSEDE,
    HISTORY,
    RESTORE,
    SUPERSEDED,
    CREATE_SESSION,
    GET_SESSION,
    LIST_SESSIONS,
    RENAME_SESSION,
    SET_DATA_LOADED,
    DELETE_SESSION,
    APPEND_RECORD,
    RECORDS,
    SEARCH_RECORDS,
    SEARCH_SESSIONS,
    ADD_SESSION_MEMORY,
    SESSION_MEMORY,
    ADD_FINDING,
    FINDINGS,
    ADD_GLOBAL_MEMORY,
    GLOBAL_MEMORY,
    PIN,
    DEMOTE,
    BUILD_CONTEXT,
    SYSTEM_PROMPT,
    RECALL,
    ADD_TURN,
    EXTRACT,
    ERASE,
    FINISH_ERASURES,
    APPLY_RETENTION,
    AUDIT,
    SESSION_BUNDLE,
    EXPORT_SESSION,
    IMPORT_SESSION,
    IMPORT_BUNDLE,
    RECORD_EXECUTION,
    EXECUTIONS,
    SEARCH_EXECUTIONS,
    STRATEGY_STATS,
    CHOOSE_STRATEGY,
    RECORD_DECOMPOSITION,
    SUGGEST_DECOMPOSITION,
    FAILURE_PATTERNS,
    CHECK_FAILURES,
)

LOCAL_ONLY = {
    "backend": "the store is the server's: `memvault serve` opens and closes it",
    "planners": "the plans run on the server",
    "settings": "the server's settings apply (MEMVAULT_* where `memvault serve` runs)",
    "embedder": "the server embeds with its own model",
    "llm": "extraction and summaries use the server's chat model",
    "reembed": "it rewrites every tenant's vectors: run `memvault reembed` on the server's store",
    "stamp": "the server stamps the audit log's events (with its key's name and the agent)",
}
"""What a ``Memory`` has and a remote one has not, and why."""


# -- what is not an operation of a planner ----------------------------------------------------


def tenant() -> Steps[tuple[str, str]]:
    """The tenant the server lets the key act in, and the actor its audit log names."""
    asked = request(api.TENANT, {})
    return decoded(lambda body: (str(body["tenant"]), str(body["actor"])), (yield asked), asked)


def stats() -> Steps[dict[str, int]]:
    asked = request(api.STATS, {})
    return decoded(dict, (yield asked), asked)


def last_extraction(session_id: str) -> Steps[Extraction | Failure | None]:
    asked = request(api.LAST_EXTRACTION, {"session_id": session_id})
    return decoded(_extraction, (yield asked), asked)


def _extraction(body: Any) -> Extraction | Failure | None:
    found = body["extraction"]
    if found is None:
        return None
    return Failure.from_dict(found) if set(found) == {"error"} else Extraction.from_dict(found)


def flush(timeout: float | None, session_id: str | None) -> Steps[bool]:
    """Wait until the server's background extractions (or the session's) are done, asking
    in requests of at most :data:`FLUSH_WAIT` seconds; False if ``timeout`` came first."""
    timeout = check.timeout(timeout)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = FLUSH_WAIT if deadline is None else deadline - time.monotonic()
        wait = min(max(left, 0.0), FLUSH_WAIT)
        asked = request(api.FLUSH, {"timeout": wait, "session_id": session_id}, wait)
        done = decoded(lambda body: bool(body["done"]), (yield asked), asked)
        if done or (deadline is not None and left <= FLUSH_WAIT):
            return done
