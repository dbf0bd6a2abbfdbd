"""``Memory`` and ``AsyncMemory``: thin drivers that run plans against a backend.

The plans come from small planners composed on the store planner (:class:`Planners`): the
store's own (:class:`memvault.core.Planner`), sessions and records, the note facilities and the
context. Both classes bind the same operations, each explicitly from the planner that does it
(``pin = _blocking(NotePlans.pin)``); only the way a step runs differs (a call vs ``await``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, ClassVar, Concatenate, ParamSpec, Self, TypeVar, cast

from . import validation as check
from .agents.background import Recorder
from .agents.model import Execution
from .agents.plans import AgentPlans
from .closing import AsyncClosing, Closing
from .config import Settings
from .context.plans import ContextPlans
from .core import Plan, Planner, utc_now
from .drivers import described, drive_awaiting, drive_blocking, name_operations
from .embeddings import Embedder, default_embedder
from .errors import ConfigError, ValidationError
from .extraction.plans import Extraction, LearningPlans, TurnResult, extractor_mode
from .extraction.worker import Failure, Learner, Matches, Slot
from .facilities.notes import NotePlans
from .facilities.sessions import SessionPlans
from .llm.base import ChatModel
from .llm.configured import chat_model_from_settings
from .rest.client import AsyncRemoteMemory, RemoteMemory
from .rest.codec import is_server_url
from .security import redact
from .store.audit import DIRECT, Stamp
from .store.base import Backend
from .store.registry import open_backend
from .trust.audit import AuditPlans
from .trust.bundles import BundlePlans
from .trust.erasure import ErasurePlans, Residue
from .trust.retention import RetentionPlans
from .versions import VersionPlans

P = ParamSpec("P")
T = TypeVar("T")
PlannerT = TypeVar("PlannerT")


def run_blocking(plan: Plan[T], backend: Backend, stamp: Stamp = DIRECT) -> T:
    """Run a plan to completion with blocking calls; the audit log says ``stamp`` of what it
    changes."""
    return drive_blocking(plan, functools.partial(backend.batch, stamp=stamp))


async def run_awaiting(plan: Plan[T], backend: Backend, stamp: Stamp = DIRECT) -> T:
    """Run a plan to completion, awaiting the backend and async callbacks; the audit log says
    ``stamp`` of what it changes."""
    return await drive_awaiting(plan, functools.partial(backend.abatch, stamp=stamp))


@dataclass(frozen=True, slots=True)
class Planners:
    """The planners of one tenant's memory: the store's, and the capabilities composed on it."""

    store: Planner
    versions: VersionPlans
    sessions: SessionPlans
    notes: NotePlans
    context: ContextPlans
    learning: LearningPlans
    erasure: ErasurePlans
    retention: RetentionPlans
    audit: AuditPlans
    bundles: BundlePlans
    agents: AgentPlans

    @classmethod
    def on(
        cls, store: Planner, chat: ChatModel | None = None, residue: Residue | None = None
    ) -> Planners:
        """The planners on ``store``; ``residue``: an erasure's purge and scan (none: the
        store cannot be scanned)."""
        sessions = SessionPlans(store)
        notes = NotePlans(store, sessions)
        context = ContextPlans(store, sessions, notes, chat)
        learning = LearningPlans(store, sessions, notes, chat)
        erasure = ErasurePlans(store, residue)
        return cls(
            store,
            VersionPlans(store),
            sessions,
            notes,
            context,
            learning,
            erasure,
            RetentionPlans(store),
            AuditPlans(store),
            BundlePlans(store, sessions),
            AgentPlans(store),
        )

    def of(self, owner: str) -> Any:
        """The planner of class ``owner`` (by name)."""
        return getattr(self, _PART[owner])


_PART = {
    "Planner": "store",
    "VersionPlans": "versions",
    "SessionPlans": "sessions",
    "NotePlans": "notes",
    "ContextPlans": "context",
    "LearningPlans": "learning",
    "ErasurePlans": "erasure",
    "RetentionPlans": "retention",
    "AuditPlans": "audit",
    "BundlePlans": "bundles",
    "AgentPlans": "agents",
}


class _Base:
    """What both drivers share: opening the store, tenancy, closing."""

    _remote: ClassVar[Callable[..., Any]]
    """What a memvault server's URL opens instead (:mod:`memvault.rest.client`)."""

    def __new__(cls, store: str | Backend | None = None, *args: Any, **options: Any) -> Self:
        """The URL of a memvault server (``http://…``) opens a remote memory: a sibling class
        with the same operations, not an instance of this one."""
        if is_server_url(store):
            return cast(Self, cls._remote(store, *args, **options))
        return super().__new__(cls)

    def __init__(
        self,
        store: str | Backend | None = None,
        *,
        tenant: str | None = None,
        settings: Settings | None = None,
        clock: Callable[[], datetime] | None = None,
        embedder: Embedder | None = None,
        check_embedding: bool = True,
        llm: ChatModel | None = None,
        actor: str | None = None,
        api_key: str | Sequence[str] | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        if (api_key, timeout, retries) != (None, None, None):
            raise ConfigError(
                "api_key, timeout and retries apply to a memvault server's URL (http://…) only"
            )
        settings = settings if settings is not None else Settings.from_env()
        self._actor = check.actor(actor if actor is not None else settings.actor, most=128)
        self._chat, self._owns_chat = llm, False
        self._learner, self._owns_learner = Learner(), True
        self._owns_backend = False
        self._unlisten: Callable[[], None] = lambda: None
        if llm is None:
            self._chat = chat_model_from_settings(settings)
            self._owns_chat = self._chat is not None
        try:
            extractor_mode(settings, self._chat)  # refuses extraction=llm without an LLM
            if isinstance(store, Backend):
                self._backend = store
            else:
                self._backend = open_backend(store or settings.store_url(), settings)
                self._owns_backend = True
            if embedder is None:
                embedder = default_embedder(settings.redis_url, settings.embed_threads)
            store_planner = Planner(tenant or settings.tenant, settings, clock or utc_now, embedder)
            self._planners = Planners.on(store_planner, self._chat, self._residue)
            self._unlisten = self._backend.listen(self._forget_copies)
            self._recorder = Recorder(store_planner.stats)
            if check_embedding:
                run_blocking(store_planner.check_embedding(), self._backend)
        except BaseException:
            self.close()  # what was opened so far: the LLM client, the backend, the workers
            raise

    @property
    def tenant(self) -> str:
        return self._planners.store.tenant

    @property
    def actor(self) -> str:
        """Who the audit log says made this object's changes."""
        return self._actor

    def stamp(self, operation: str) -> Stamp:
        """What the audit log says of the changes ``operation`` makes through this object."""
        return Stamp(operation, self._actor, self._planners.store.now)

    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def planners(self) -> Planners:
        """The planners behind the operations (internal): integrations compose their own plans
        on them and run those with :func:`run_blocking` or :func:`run_awaiting`."""
        return self._planners

    @property
    def settings(self) -> Settings:
        return self._planners.store.settings

    def with_tenant(self, tenant: str) -> Self:
        """A view of the same store for another tenant; it shares (and does not own) the backend."""
        view = self._shared()
        store = self._planners.store.for_tenant(tenant)
        view._planners = Planners.on(store, self._chat, view._residue)
        return view

    def as_actor(self, actor: str) -> Self:
        """A view of the same store and tenant whose changes the audit log says ``actor``
        made (an agent, a person); it shares (and does not own) the backend."""
        view = self._shared()
        view._actor = check.actor(actor)
        return view

    def _shared(self) -> Self:
        view = object.__new__(type(self))
        view._backend, view._owns_backend = self._backend, False
        view._chat, view._owns_chat = self._chat, False
        view._learner, view._owns_learner = self._learner, False
        view._planners, view._actor = self._planners, self._actor
        view._recorder = self._recorder
        view._unlisten = lambda: None
        return view

    def _forget_copies(self) -> None:
        """Drop the copies of content kept in this process — the last extraction results, the
        embedding cache's vectors, the redaction's cached windows (the backend drops its own
        search indexes): an erasure or a session's deletion happened, here or in another
        process (the backend calls this at its first transaction after it)."""
        self._learner.forget()
        self.embedder.clear()
        redact.forget_windows()

    def _residue(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> int | None:
        """An erasure's purge and scan: the store's (:meth:`Backend.residue`), and this
        process's copies dropped again and checked (a result or a vector of an erased text
        kept by a race)."""
        found = self._backend.residue(ids, contents, hashed)
        self._forget_copies()
        held = self._learner.holding([*ids, *contents]) + self.embedder.holding(contents)
        return found if not held else (found or 0) + held

    @property
    def embedder(self) -> Embedder:
        return self._planners.store.embedder

    @property
    def llm(self) -> ChatModel | None:
        """The chat model extraction and summaries use (None: none configured)."""
        return self._chat

    def stats(self) -> dict[str, int]:
        """Counters: entries written, near-duplicates returned, writes filtered, searches,
        extractions, supersessions, redactions, and the LLM's calls, tokens and latency."""
        counts = self._planners.store.stats.snapshot()
        if self._chat is not None:
            counts.update(self._chat.usage.snapshot())
        learner = {"extraction_failures": self._learner.failures}
        learner["extraction_pending"] = self._learner.pending()
        return counts | {name: n for name, n in learner.items() if n}

    def last_extraction(self, session_id: str) -> Extraction | Failure | None:
        """What the last background extraction of the session did (or the error it raised);
        None before the first one finished, and after an erasure or a session's deletion by
        any process (it reads the store's forgetting mark first: one small transaction)."""
        self._backend.hear()
        found: Extraction | Failure | None = self._learner.results.get((self.tenant, session_id))
        return found

    def _waits_for(
        self, timeout: float | None, session_id: str | None
    ) -> tuple[float | None, Matches]:
        """A flush's timeout, checked, and the extractions it waits for: this tenant's (or those
        of one of its sessions)."""
        timeout = check.timeout(timeout)
        if session_id is None:
            tenant = self.tenant
            return timeout, lambda slot: isinstance(slot, tuple) and slot[0] == tenant
        if not isinstance(session_id, str):
            raise ValidationError(f"session_id must be a string, got {session_id!r}")
        session = (self.tenant, session_id)
        return timeout, lambda slot: slot == session

    def _scheduled(self, turn: TurnResult) -> TurnResult:
        """Start (or queue) the extraction of the turn's session in the background."""
        learning = self._planners.learning
        if learning.mode == "off":
            return turn
        session_id, backend, stamp = turn.session_id, self._backend, self.stamp("extract")

        def extract() -> Any:
            return run_blocking(learning.extract(session_id), backend, stamp)

        slot = Slot(learning.store.tenant, session_id)
        return replace(turn, extraction=self._learner.schedule(slot, extract))

    def close(self) -> None:
        """Wait for pending extractions, then close what this object opened: its extraction
        workers, the LLM client, the backend (a view made by :meth:`with_tenant` closes
        nothing)."""
        if self._owns_learner:
            self._learner.close()
            self._unlisten()
        if self._owns_chat and self._chat is not None:
            self._chat.close()
        if self._owns_backend:
            self._backend.close()


Arguments = tuple[tuple[Any, ...], dict[str, Any]]


def _argument_check(
    plan: Callable[..., Any],
) -> Callable[[tuple[Any, ...], dict[str, Any]], Arguments]:
    """The edge check of a plan's arguments (all but those the plan checks item by item); it
    returns the arguments with one-shot iterators (generators) read into tuples, so that what
    was checked is what the plan gets."""
    parameters = inspect.signature(plan, eval_str=True).parameters
    names = tuple(parameters)[1:]
    own = frozenset(getattr(plan, check.PER_ITEM, ()))
    flags = frozenset(name for name, p in parameters.items() if p.annotation is bool)

    def check_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Arguments:
        args = tuple(_read(value) for value in args)
        kwargs = {name: _read(value) for name, value in kwargs.items()}
        named = {**dict(zip(names, args, strict=False)), **kwargs}
        check.arguments({name: value for name, value in named.items() if name not in own})
        for name in flags & named.keys():
            check.flag(name, named[name])
        return args, kwargs

    return check_call


def _read(value: Any) -> Any:
    """A one-shot iterator as a tuple; any other value as it is."""
    return tuple(value) if isinstance(value, Iterator) else value


def _owner(plan: Callable[..., Any]) -> str:
    """The planner class a plan belongs to (checked when the operation is bound)."""
    owner = plan.__qualname__.rsplit(".", 1)[0]
    if owner not in _PART:
        raise TypeError(f"{plan.__qualname__} is not a plan of a known planner")
    return owner


Then = Callable[[Any, Any], Any]
"""What a driver does with an operation's result before returning it (``then(self, result)``)."""


def _keep(driver: Any, result: T) -> T:
    return result


def _blocking(
    plan: Callable[Concatenate[PlannerT, P], Plan[T]], then: Then = _keep
) -> Callable[Concatenate[Memory, P], T]:
    """Bind a plan as a blocking operation of Memory."""
    check_call, owner, name = _argument_check(plan), _owner(plan), plan.__name__

    @functools.wraps(plan)
    def operation(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        args, kwargs = check_call(args, kwargs)  # type: ignore[assignment]
        plan_run = plan(self._planners.of(owner), *args, **kwargs)
        return cast(T, then(self, run_blocking(plan_run, self._backend, self.stamp(name))))

    described(operation, plan)
    return operation


def _awaitable(
    plan: Callable[Concatenate[PlannerT, P], Plan[T]], then: Then = _keep
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, T]]:
    """Bind a plan as an ``async`` operation of AsyncMemory."""
    check_call, owner, name = _argument_check(plan), _owner(plan), plan.__name__

    @functools.wraps(plan)
    async def operation(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        args, kwargs = check_call(args, kwargs)  # type: ignore[assignment]
        plan_run = plan(self._planners.of(owner), *args, **kwargs)
        result = await run_awaiting(plan_run, self._backend, self.stamp(name))
        return cast(T, then(self, result))

    described(operation, plan)
    return operation


@name_operations
class Memory(_Base, Closing):
    """A scoped memory store (blocking API). ``Memory()`` opens the default SQLite file.

    ``store`` is a URL (``sqlite:///path.db``, ``:memory:``, ``memory://``), a path, or a
    :class:`~memvault.store.Backend` — or a memvault server's URL (``http://host:8765``, with
    ``api_key=``, ``timeout=``, ``retries=``), which gives a
    :class:`~memvault.rest.client.RemoteMemory` (docs/remote.md).
    """

    _remote = RemoteMemory

    write = _blocking(Planner.write)
    write_many = _blocking(Planner.write_many)
    retrieve = _blocking(Planner.retrieve)
    get = _blocking(Planner.get)
    update = _blocking(Planner.update)
    delete = _blocking(Planner.delete)
    delete_by_scope = _blocking(Planner.delete_by_scope)
    promote = _blocking(Planner.promote)
    compact = _blocking(Planner.compact)
    count = _blocking(Planner.count)
    list = _blocking(Planner.list)
    purge_expired = _blocking(Planner.purge_expired)
    search = _blocking(Planner.search)
    reembed = _blocking(Planner.reembed)
    # supersession: changed facts replace old ones, which are kept
    supersede = _blocking(VersionPlans.supersede)
    history = _blocking(VersionPlans.history)
    restore = _blocking(VersionPlans.restore)
    superseded = _blocking(VersionPlans.superseded)
    # the facilities: sessions and records, notes, findings, global memory, context
    create_session = _blocking(SessionPlans.create_session)
    get_session = _blocking(SessionPlans.get_session)
    list_sessions = _blocking(SessionPlans.list_sessions)
    rename_session = _blocking(SessionPlans.rename_session)
    set_data_loaded = _blocking(SessionPlans.set_data_loaded)
    delete_session = _blocking(SessionPlans.delete_session)
    append_record = _blocking(SessionPlans.append_record)
    records = _blocking(SessionPlans.records)
    search_records = _blocking(SessionPlans.search_records)
    search_sessions = _blocking(SessionPlans.search_sessions)
    add_session_memory = _blocking(NotePlans.add_session_memory)
    session_memory = _blocking(NotePlans.session_memory)
    add_finding = _blocking(NotePlans.add_finding)
    findings = _blocking(NotePlans.findings)
    add_global_memory = _blocking(NotePlans.add_global_memory)
    global_memory = _blocking(NotePlans.global_memory)
    pin = _blocking(NotePlans.pin)
    demote = _blocking(NotePlans.demote)
    build_context = _blocking(ContextPlans.build_context)
    system_prompt = _blocking(ContextPlans.system_prompt)
    recall = _blocking(ContextPlans.recall)
    # learning from conversations: turns in, memories out (in the background)
    add_turn = _blocking(LearningPlans.add_turn, then=_Base._scheduled)
    extract = _blocking(LearningPlans.extract)
    # trust: erasure with a receipt, retention, the audit log
    erase = _blocking(ErasurePlans.erase)
    finish_erasures = _blocking(ErasurePlans.finish_erasures)
    apply_retention = _blocking(RetentionPlans.apply_retention)
    audit = _blocking(AuditPlans.audit)
    export_session = _blocking(BundlePlans.export_session)
    import_session = _blocking(BundlePlans.import_session)
    session_bundle = _blocking(BundlePlans.session_bundle)
    import_bundle = _blocking(BundlePlans.import_bundle)
    # agent memory: executions, strategies, decompositions, failure patterns
    record_execution = _blocking(AgentPlans.record_execution)
    executions = _blocking(AgentPlans.executions)
    search_executions = _blocking(AgentPlans.search_executions)
    strategy_stats = _blocking(AgentPlans.strategy_stats)
    choose_strategy = _blocking(AgentPlans.choose_strategy)
    record_decomposition = _blocking(AgentPlans.record_decomposition)
    suggest_decomposition = _blocking(AgentPlans.suggest_decomposition)
    failure_patterns = _blocking(AgentPlans.failure_patterns)
    check_failures = _blocking(AgentPlans.check_failures)

    def flush(self, timeout: float | None = None, *, session_id: str | None = None) -> bool:
        """Wait until this tenant's background extractions (or one session's) are done; False if
        ``timeout`` (seconds) came first."""
        return self._learner.flush(*self._waits_for(timeout, session_id))


@name_operations
class AsyncMemory(_Base, AsyncClosing):
    """The same store with an ``async`` API; use ``async with AsyncMemory(...) as memory``.
    A memvault server's URL gives an :class:`~memvault.rest.client.AsyncRemoteMemory`."""

    _remote = AsyncRemoteMemory

    write = _awaitable(Planner.write)
    write_many = _awaitable(Planner.write_many)
    retrieve = _awaitable(Planner.retrieve)
    get = _awaitable(Planner.get)
    update = _awaitable(Planner.update)
    delete = _awaitable(Planner.delete)
    delete_by_scope = _awaitable(Planner.delete_by_scope)
    promote = _awaitable(Planner.promote)
    compact = _awaitable(Planner.compact)
    count = _awaitable(Planner.count)
    list = _awaitable(Planner.list)
    purge_expired = _awaitable(Planner.purge_expired)
    search = _awaitable(Planner.search)
    reembed = _awaitable(Planner.reembed)
    # supersession: changed facts replace old ones, which are kept
    supersede = _awaitable(VersionPlans.supersede)
    history = _awaitable(VersionPlans.history)
    restore = _awaitable(VersionPlans.restore)
    superseded = _awaitable(VersionPlans.superseded)
    # the facilities: sessions and records, notes, findings, global memory, context
    create_session = _awaitable(SessionPlans.create_session)
    get_session = _awaitable(SessionPlans.get_session)
    list_sessions = _awaitable(SessionPlans.list_sessions)
    rename_session = _awaitable(SessionPlans.rename_session)
    set_data_loaded = _awaitable(SessionPlans.set_data_loaded)
    delete_session = _awaitable(SessionPlans.delete_session)
    append_record = _awaitable(SessionPlans.append_record)
    records = _awaitable(SessionPlans.records)
    search_records = _awaitable(SessionPlans.search_records)
    search_sessions = _awaitable(SessionPlans.search_sessions)
    add_session_memory = _awaitable(NotePlans.add_session_memory)
    session_memory = _awaitable(NotePlans.session_memory)
    add_finding = _awaitable(NotePlans.add_finding)
    findings = _awaitable(NotePlans.findings)
    add_global_memory = _awaitable(NotePlans.add_global_memory)
    global_memory = _awaitable(NotePlans.global_memory)
    pin = _awaitable(NotePlans.pin)
    demote = _awaitable(NotePlans.demote)
    build_context = _awaitable(ContextPlans.build_context)
    system_prompt = _awaitable(ContextPlans.system_prompt)
    recall = _awaitable(ContextPlans.recall)
    # learning from conversations: turns in, memories out (in the background)
    add_turn = _awaitable(LearningPlans.add_turn, then=_Base._scheduled)
    extract = _awaitable(LearningPlans.extract)
    # trust: erasure with a receipt, retention, the audit log
    erase = _awaitable(ErasurePlans.erase)
    finish_erasures = _awaitable(ErasurePlans.finish_erasures)
    apply_retention = _awaitable(RetentionPlans.apply_retention)
    audit = _awaitable(AuditPlans.audit)
    export_session = _awaitable(BundlePlans.export_session)
    import_session = _awaitable(BundlePlans.import_session)
    session_bundle = _awaitable(BundlePlans.session_bundle)
    import_bundle = _awaitable(BundlePlans.import_bundle)
    # agent memory: executions, strategies, decompositions, failure patterns
    record_execution = _awaitable(AgentPlans.record_execution)
    executions = _awaitable(AgentPlans.executions)
    search_executions = _awaitable(AgentPlans.search_executions)
    strategy_stats = _awaitable(AgentPlans.strategy_stats)
    choose_strategy = _awaitable(AgentPlans.choose_strategy)
    record_decomposition = _awaitable(AgentPlans.record_decomposition)
    suggest_decomposition = _awaitable(AgentPlans.suggest_decomposition)
    failure_patterns = _awaitable(AgentPlans.failure_patterns)
    check_failures = _awaitable(AgentPlans.check_failures)

    def record_execution_later(self, **fields: Any) -> asyncio.Task[Execution | None]:
        """Record an execution (the fields of :meth:`record_execution`) without waiting for it:
        fire and forget, so a workflow never fails because of its bookkeeping. A store error
        is retried 3 times with backoff (0.1, 0.2, 0.4 s); a record that still fails, or is
        invalid, is dropped, logged and counted (``stats()["executions_dropped"]``).
        :meth:`flush` and closing wait for pending records. Call it inside a running loop
        (else ValidationError: ``record_execution`` records at once)."""
        return self._recorder.submit(lambda: self.record_execution(**fields))

    async def flush(self, timeout: float | None = None, *, session_id: str | None = None) -> bool:
        """Wait until this memory's background records are stored (or dropped) and this
        tenant's background extractions (or one session's) are done; False if ``timeout``
        (seconds) came first. The wait holds no thread."""
        timeout, matches = self._waits_for(timeout, session_id)
        done, left = await self._recorder.drain(timeout)
        return done and await self._learner.flushed(left, matches)

    async def aclose(self) -> None:
        """Wait for pending records and extractions, then close what this object opened (off
        the event loop)."""
        await self._recorder.drain()
        await asyncio.to_thread(self.close)
