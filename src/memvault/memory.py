"""``Memory`` and ``AsyncMemory``: one facade per driver, for a local store or a server.

Each operation is bound with one line from its declaration in the catalogue
(:mod:`memvault.api`): ``pin = _blocking(facilities.PIN)``. A bound operation runs the
operation's plan on a local store (:class:`~memvault.local.Local`), or sends it to a memvault
server (:class:`~memvault.remote.Remote`) when the memory was opened with the server's URL;
only the way a step runs differs between the two drivers (a call vs ``await``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, Self, TypeVar, cast

from . import validation as check
from .agents.background import Recorder
from .agents.model import Execution
from .api import agents, facilities, learning, store, trust
from .api.operation import Operation
from .closing import AsyncClosing, Closing
from .config import Settings
from .core import Plan
from .drivers import described, name_operations
from .embeddings import Embedder
from .errors import ConfigError, ForbiddenError, LocalOnlyError
from .extraction.plans import Extraction
from .extraction.worker import Failure
from .llm.base import ChatModel
from .local import Local, Planners, part_of, run_awaiting
from .remote import LOCAL_ONLY, Remote
from .rest.codec import is_server_url
from .store.audit import Stamp
from .store.base import Backend
from .store.grants import Grant

P = ParamSpec("P")
T = TypeVar("T")


class _Base:
    """What both drivers share: where the memory is (a local store or a server), tenancy,
    views."""

    _at: Local | Remote
    _awaiting = False

    def __init__(
        self,
        store: str | os.PathLike[str] | Backend | None = None,
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
        if isinstance(store, os.PathLike):  # a SQLite file's path
            store = os.fspath(store)
        if not (store is None or isinstance(store, str | Backend)):
            raise ConfigError(
                f"store must be a URL, a path or a Backend, not {type(store).__name__}"
            )
        local = {"settings": settings, "clock": clock, "embedder": embedder, "llm": llm}
        if is_server_url(store):
            theirs = [name for name, value in local.items() if value is not None]
            if theirs:
                raise ConfigError(
                    f"{', '.join(theirs)}: not with a memvault server's URL, whose own apply; "
                    "set them where `memvault serve` runs"
                )
            self._at = Remote(
                cast(str, store),
                tenant=tenant,
                actor=actor,
                api_key=api_key,
                timeout=timeout,
                retries=retries,
                awaiting=self._awaiting,
            )
            return
        if (api_key, timeout, retries) != (None, None, None):
            raise ConfigError(
                "api_key, timeout and retries apply to a memvault server's URL (http://…) only"
            )
        self._at = Local(
            store,
            tenant=tenant,
            settings=settings,
            clock=clock,
            embedder=embedder,
            check_embedding=check_embedding,
            llm=llm,
            actor=actor,
        )

    @property
    def tenant(self) -> str:
        """The tenant this memory acts in (on a server: the one its API key acts in)."""
        return self._at.tenant

    @property
    def actor(self) -> str:
        """Who the audit log says made this object's changes (on a server: its key's name, and
        the agent named by ``actor=`` after a ``/``)."""
        return self._at.actor

    @property
    def server(self) -> str | None:
        """The URL of the memvault server this memory runs on (None: a local store)."""
        return self._at.server if isinstance(self._at, Remote) else None

    def _local(self, name: str) -> Local:
        """The local store, for what only a local store has."""
        if isinstance(self._at, Remote):
            raise LocalOnlyError(name, LOCAL_ONLY[name])
        return self._at

    def stamp(self, operation: str) -> Stamp:
        """What the audit log says of the changes ``operation`` makes through this object."""
        return self._local("stamp").stamp(operation)

    @property
    def backend(self) -> Backend:
        """The store (internal; a view limited by a grant has none: it would bypass it)."""
        at = self._local("backend")
        if at.grant.limited:
            raise ForbiddenError("a view limited by a grant runs operations, not the backend")
        return at.backend

    @property
    def grant(self) -> Grant:
        """What this memory may read and write (on a server: its API key's grant)."""
        return self._local("grant").grant

    @property
    def planners(self) -> Planners:
        """The planners behind the operations (internal): integrations compose their own plans
        on them and run those with :func:`~memvault.local.run_blocking` or
        :func:`~memvault.local.run_awaiting`."""
        return self._local("planners").planners

    @property
    def settings(self) -> Settings:
        return self._local("settings").planners.store.settings

    @property
    def embedder(self) -> Embedder:
        return self._local("embedder").planners.store.embedder

    @property
    def llm(self) -> ChatModel | None:
        """The chat model extraction and summaries use (None: none configured)."""
        return self._local("llm").chat

    def with_tenant(self, tenant: str) -> Self:
        """A view of the same store for another tenant; it shares (and does not own) the
        backend. On a server, the tenant must be one a key of this memory acts in (the key
        decides the tenant)."""
        return self._view(self._at.with_tenant(tenant))

    def as_actor(self, actor: str) -> Self:
        """A view of the same store and tenant whose changes the audit log says ``actor``
        made (an agent, a person); it shares (and does not own) what this one opened. On a
        server, its log says ``<key name>/<actor>``."""
        return self._view(self._at.as_actor(actor))

    def with_grant(self, grant: Grant) -> Self:
        """A view that may only read and write what ``grant`` allows (what a server gives a
        request of an API key with ``read=``/``write=`` fields): every op of every operation
        through it is checked, and one outside the grant raises ForbiddenError, changing
        nothing."""
        return self._view(self._local("grant").with_grant(grant))

    def _view(self, at: Local | Remote) -> Self:
        view = object.__new__(type(self))
        view._at = at
        return view

    def __repr__(self) -> str:
        if isinstance(self._at, Remote):
            return f"{type(self).__name__}({self._at.server!r}, tenant={self.tenant!r})"
        return f"<{type(self).__name__} tenant={self.tenant!r}>"


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
        args = tuple(check.read_once(value) for value in args)
        kwargs = {name: check.read_once(value) for name, value in kwargs.items()}
        named = {**dict(zip(names, args, strict=False)), **kwargs}
        check.arguments({name: value for name, value in named.items() if name not in own})
        for name in flags & named.keys():
            check.flag(name, named[name])
        return args, kwargs

    return check_call


Then = Callable[[Local, Any], Any]
"""What a local memory does with an operation's result before returning it."""


def _keep(at: Local, result: T) -> T:
    return result


def _scheduled(at: Local, turn: Any) -> Any:
    return at.scheduled(turn)


def _blocking(op: Operation[P, T], then: Then = _keep) -> Callable[Concatenate[Memory, P], T]:
    """Bind a catalogue entry as a blocking operation of Memory."""
    check_call, part = _argument_check(op.plan), part_of(op.plan)

    @functools.wraps(op.plan)
    def operation(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        at, (args, kwargs) = self._at, check_call(args, kwargs)  # type: ignore[assignment]
        if isinstance(at, Remote):
            return at.run_blocking(op.steps(args, kwargs))
        return cast(T, then(at, at.run_blocking(op.plan, part, args, kwargs, op.changes)))

    described(operation, op.plan)
    return operation


def _awaitable(
    op: Operation[P, T], then: Then = _keep
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, T]]:
    """Bind a catalogue entry as an ``async`` operation of AsyncMemory."""
    check_call, part = _argument_check(op.plan), part_of(op.plan)

    @functools.wraps(op.plan)
    async def operation(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        at, (args, kwargs) = self._at, check_call(args, kwargs)  # type: ignore[assignment]
        if isinstance(at, Remote):
            return await at.run_awaiting(op.steps(args, kwargs))
        return cast(T, then(at, await at.run_awaiting(op.plan, part, args, kwargs, op.changes)))

    described(operation, op.plan)
    return operation


@name_operations
class Memory(_Base, Closing):
    """A scoped memory store (blocking API). ``Memory()`` opens the default SQLite file.

    ``store`` is a URL (``sqlite:///path.db``, ``:memory:``, ``memory://``), a path, or a
    :class:`~memvault.store.Backend` — or a memvault server's URL (``http://host:8765``, with
    ``api_key=``, ``timeout=``, ``retries=``): the same operations then run on the server
    (docs/remote.md), and what only a local store has raises
    :class:`~memvault.errors.LocalOnlyError`.
    """

    write = _blocking(store.WRITE)
    write_many = _blocking(store.WRITE_MANY)
    retrieve = _blocking(store.RETRIEVE)
    get = _blocking(store.GET)
    update = _blocking(store.UPDATE)
    delete = _blocking(store.DELETE)
    delete_by_scope = _blocking(store.DELETE_BY_SCOPE)
    promote = _blocking(store.PROMOTE)
    compact = _blocking(store.COMPACT)
    count = _blocking(store.COUNT)
    list = _blocking(store.LIST)
    purge_expired = _blocking(store.PURGE_EXPIRED)
    search = _blocking(store.SEARCH)
    reinforce = _blocking(store.REINFORCE)
    reembed = _blocking(store.REEMBED)
    # supersession: changed facts replace old ones, which are kept
    supersede = _blocking(learning.SUPERSEDE)
    history = _blocking(learning.HISTORY)
    restore = _blocking(learning.RESTORE)
    superseded = _blocking(learning.SUPERSEDED)
    # the facilities: sessions and records, notes, findings, global memory, context
    create_session = _blocking(facilities.CREATE_SESSION)
    get_session = _blocking(facilities.GET_SESSION)
    list_sessions = _blocking(facilities.LIST_SESSIONS)
    rename_session = _blocking(facilities.RENAME_SESSION)
    set_data_loaded = _blocking(facilities.SET_DATA_LOADED)
    delete_session = _blocking(facilities.DELETE_SESSION)
    append_record = _blocking(facilities.APPEND_RECORD)
    records = _blocking(facilities.RECORDS)
    search_records = _blocking(facilities.SEARCH_RECORDS)
    search_sessions = _blocking(facilities.SEARCH_SESSIONS)
    add_session_memory = _blocking(facilities.ADD_SESSION_MEMORY)
    session_memory = _blocking(facilities.SESSION_MEMORY)
    add_finding = _blocking(facilities.ADD_FINDING)
    findings = _blocking(facilities.FINDINGS)
    add_global_memory = _blocking(facilities.ADD_GLOBAL_MEMORY)
    global_memory = _blocking(facilities.GLOBAL_MEMORY)
    pin = _blocking(facilities.PIN)
    demote = _blocking(facilities.DEMOTE)
    build_context = _blocking(facilities.BUILD_CONTEXT)
    system_prompt = _blocking(facilities.SYSTEM_PROMPT)
    recall = _blocking(facilities.RECALL)
    # learning from conversations: turns in, memories out (in the background)
    add_turn = _blocking(learning.ADD_TURN, then=_scheduled)
    extract = _blocking(learning.EXTRACT)
    # trust: erasure with a receipt, retention, the audit log
    erase = _blocking(trust.ERASE)
    finish_erasures = _blocking(trust.FINISH_ERASURES)
    apply_retention = _blocking(trust.APPLY_RETENTION)
    audit = _blocking(trust.AUDIT)
    verify_audit = _blocking(trust.VERIFY_AUDIT)
    hygiene = _blocking(trust.HYGIENE)
    tidy = _blocking(trust.TIDY)
    export_session = _blocking(trust.EXPORT_SESSION)
    import_session = _blocking(trust.IMPORT_SESSION)
    session_bundle = _blocking(trust.SESSION_BUNDLE)
    import_bundle = _blocking(trust.IMPORT_BUNDLE)
    # agent memory: executions, strategies, teams, decompositions, failure patterns
    record_execution = _blocking(agents.RECORD_EXECUTION)
    executions = _blocking(agents.EXECUTIONS)
    search_executions = _blocking(agents.SEARCH_EXECUTIONS)
    strategy_stats = _blocking(agents.STRATEGY_STATS)
    choose_strategy = _blocking(agents.CHOOSE_STRATEGY)
    record_team = _blocking(agents.RECORD_TEAM)
    team_stats = _blocking(agents.TEAM_STATS)
    suggest_team = _blocking(agents.SUGGEST_TEAM)
    user_preferences = _blocking(agents.USER_PREFERENCES)
    remember_work_style = _blocking(agents.REMEMBER_WORK_STYLE)
    record_decomposition = _blocking(agents.RECORD_DECOMPOSITION)
    suggest_decomposition = _blocking(agents.SUGGEST_DECOMPOSITION)
    failure_patterns = _blocking(agents.FAILURE_PATTERNS)
    check_failures = _blocking(agents.CHECK_FAILURES)

    def stats(self) -> dict[str, int]:
        """Counters: entries written, near-duplicates returned, writes filtered, searches,
        extractions, supersessions, redactions, and the LLM's calls, tokens and latency, and
        the store's circuit breaker (``breaker_store_*``) when it has one (on a server: the
        server's, of every tenant's work, and this client's breaker, ``breaker_server_*``)."""
        at = self._at
        if isinstance(at, Remote):
            return at.run_blocking(store.stats()) | at.link.counts()
        return at.stats()

    def last_extraction(self, session_id: str) -> Extraction | Failure | None:
        """What the last background extraction of the session did (or the error it raised);
        None before the first one finished, and after an erasure or a session's deletion by
        any process (it reads the store's forgetting mark first: one small transaction)."""
        at = self._at
        if isinstance(at, Remote):
            return at.run_blocking(learning.last_extraction(session_id))
        return at.last_extraction(session_id)

    def flush(self, timeout: float | None = None, *, session_id: str | None = None) -> bool:
        """Wait until this tenant's background extractions (or one session's) are done; False if
        ``timeout`` (seconds) came first."""
        at = self._at
        if isinstance(at, Remote):
            return at.run_blocking(learning.flush(timeout, session_id))
        return at.learner.flush(*at.waits_for(timeout, session_id))

    def close(self) -> None:
        """Wait for pending extractions, then close what this object opened: its extraction
        workers, the LLM client, the backend — or the connections to the server, which goes
        on (what it extracts in the background is not lost). A view closes nothing."""
        self._at.close()


@name_operations
class AsyncMemory(_Base, AsyncClosing):
    """The same store with an ``async`` API; use ``async with AsyncMemory(...) as memory``
    (a memvault server's URL too: opening it asks the server, once, which tenant each key
    acts in)."""

    _awaiting = True

    write = _awaitable(store.WRITE)
    write_many = _awaitable(store.WRITE_MANY)
    retrieve = _awaitable(store.RETRIEVE)
    get = _awaitable(store.GET)
    update = _awaitable(store.UPDATE)
    delete = _awaitable(store.DELETE)
    delete_by_scope = _awaitable(store.DELETE_BY_SCOPE)
    promote = _awaitable(store.PROMOTE)
    compact = _awaitable(store.COMPACT)
    count = _awaitable(store.COUNT)
    list = _awaitable(store.LIST)
    purge_expired = _awaitable(store.PURGE_EXPIRED)
    search = _awaitable(store.SEARCH)
    reinforce = _awaitable(store.REINFORCE)
    reembed = _awaitable(store.REEMBED)
    # supersession: changed facts replace old ones, which are kept
    supersede = _awaitable(learning.SUPERSEDE)
    history = _awaitable(learning.HISTORY)
    restore = _awaitable(learning.RESTORE)
    superseded = _awaitable(learning.SUPERSEDED)
    # the facilities: sessions and records, notes, findings, global memory, context
    create_session = _awaitable(facilities.CREATE_SESSION)
    get_session = _awaitable(facilities.GET_SESSION)
    list_sessions = _awaitable(facilities.LIST_SESSIONS)
    rename_session = _awaitable(facilities.RENAME_SESSION)
    set_data_loaded = _awaitable(facilities.SET_DATA_LOADED)
    delete_session = _awaitable(facilities.DELETE_SESSION)
    append_record = _awaitable(facilities.APPEND_RECORD)
    records = _awaitable(facilities.RECORDS)
    search_records = _awaitable(facilities.SEARCH_RECORDS)
    search_sessions = _awaitable(facilities.SEARCH_SESSIONS)
    add_session_memory = _awaitable(facilities.ADD_SESSION_MEMORY)
    session_memory = _awaitable(facilities.SESSION_MEMORY)
    add_finding = _awaitable(facilities.ADD_FINDING)
    findings = _awaitable(facilities.FINDINGS)
    add_global_memory = _awaitable(facilities.ADD_GLOBAL_MEMORY)
    global_memory = _awaitable(facilities.GLOBAL_MEMORY)
    pin = _awaitable(facilities.PIN)
    demote = _awaitable(facilities.DEMOTE)
    build_context = _awaitable(facilities.BUILD_CONTEXT)
    system_prompt = _awaitable(facilities.SYSTEM_PROMPT)
    recall = _awaitable(facilities.RECALL)
    # learning from conversations: turns in, memories out (in the background)
    add_turn = _awaitable(learning.ADD_TURN, then=_scheduled)
    extract = _awaitable(learning.EXTRACT)
    # trust: erasure with a receipt, retention, the audit log
    erase = _awaitable(trust.ERASE)
    finish_erasures = _awaitable(trust.FINISH_ERASURES)
    apply_retention = _awaitable(trust.APPLY_RETENTION)
    audit = _awaitable(trust.AUDIT)
    verify_audit = _awaitable(trust.VERIFY_AUDIT)
    hygiene = _awaitable(trust.HYGIENE)
    tidy = _awaitable(trust.TIDY)
    export_session = _awaitable(trust.EXPORT_SESSION)
    import_session = _awaitable(trust.IMPORT_SESSION)
    session_bundle = _awaitable(trust.SESSION_BUNDLE)
    import_bundle = _awaitable(trust.IMPORT_BUNDLE)
    # agent memory: executions, strategies, teams, decompositions, failure patterns
    record_execution = _awaitable(agents.RECORD_EXECUTION)
    executions = _awaitable(agents.EXECUTIONS)
    search_executions = _awaitable(agents.SEARCH_EXECUTIONS)
    strategy_stats = _awaitable(agents.STRATEGY_STATS)
    choose_strategy = _awaitable(agents.CHOOSE_STRATEGY)
    record_team = _awaitable(agents.RECORD_TEAM)
    team_stats = _awaitable(agents.TEAM_STATS)
    suggest_team = _awaitable(agents.SUGGEST_TEAM)
    user_preferences = _awaitable(agents.USER_PREFERENCES)
    remember_work_style = _awaitable(agents.REMEMBER_WORK_STYLE)
    record_decomposition = _awaitable(agents.RECORD_DECOMPOSITION)
    suggest_decomposition = _awaitable(agents.SUGGEST_DECOMPOSITION)
    failure_patterns = _awaitable(agents.FAILURE_PATTERNS)
    check_failures = _awaitable(agents.CHECK_FAILURES)

    def record_execution_later(self, **fields: Any) -> asyncio.Task[Execution | None]:
        """Record an execution (the fields of :meth:`record_execution`) without waiting for it:
        fire and forget, so a workflow never fails because of its bookkeeping. A store error
        is retried 3 times with backoff (0.1, 0.2, 0.4 s); a record that still fails, or is
        invalid, is dropped, logged and counted (``stats()["executions_dropped"]``) — at once,
        without retries, while the store's circuit breaker is open (it is down).
        :meth:`flush` and closing wait for pending records. Call it inside a running loop
        (else ValidationError: ``record_execution`` records at once)."""
        return self._recorder.submit(lambda: self.record_execution(**fields))

    @property
    def _recorder(self) -> Recorder:
        at = self._at
        return at.link.recorder if isinstance(at, Remote) else at.recorder

    async def stats(self) -> dict[str, int]:
        """Counters: entries written, near-duplicates returned, writes filtered, searches,
        extractions, supersessions, redactions, the LLM's calls, tokens and latency, the
        background records dropped, and the store's circuit breaker (``breaker_store_*``) when
        it has one (on a server: the server's, of every tenant's work, and this client's
        breaker, ``breaker_server_*``)."""
        at = self._at
        if isinstance(at, Remote):
            return await at.run_awaiting(store.stats()) | at.link.counts()
        return at.stats()

    async def run_plan(self, plan: Plan[T], operation: str, *, changes: bool) -> T:
        """Run a plan made on :attr:`planners` as ``operation`` of this view, under its grant
        (internal: what a server's handler composes)."""
        at = self._local("planners")
        return await run_awaiting(plan, at.backend, at.stamp(operation, changes))

    async def last_extraction(self, session_id: str) -> Extraction | Failure | None:
        """What the last background extraction of the session did (or the error it raised);
        None before the first one finished, and after an erasure or a session's deletion by
        any process (it reads the store's forgetting mark first: one small transaction)."""
        at = self._at
        if isinstance(at, Remote):
            return await at.run_awaiting(learning.last_extraction(session_id))
        return await asyncio.to_thread(at.last_extraction, session_id)

    async def flush(self, timeout: float | None = None, *, session_id: str | None = None) -> bool:
        """Wait until this memory's background records are stored (or dropped) and this
        tenant's background extractions (or one session's) are done; False if ``timeout``
        (seconds) came first. The wait holds no thread."""
        at = self._at
        if isinstance(at, Remote):
            done, left = await self._recorder.drain(check.timeout(timeout))
            return done and await at.run_awaiting(learning.flush(left, session_id))
        timeout, matches = at.waits_for(timeout, session_id)
        done, left = await self._recorder.drain(timeout)
        return done and await at.learner.flushed(left, matches)

    def close(self) -> None:
        """Close what this object opened without waiting for background records; prefer
        ``await aclose()`` (or ``async with``)."""
        self._at.close()

    async def aclose(self) -> None:
        """Wait for pending records and extractions, then close what this object opened (off
        the event loop); on a server, its connections (the server goes on)."""
        at = self._at
        if isinstance(at, Remote):
            await at.aclose()
            return
        await at.recorder.drain()
        await asyncio.to_thread(at.close)
