"""The remote client: ``Memory("http://host:8765", api_key=…)`` and ``AsyncMemory(…)`` give a
:class:`RemoteMemory` / :class:`AsyncRemoteMemory` that runs every operation on a
``memvault serve`` over REST — same operations, same results, same errors.

Each operation is a remote plan (:mod:`.operations`) run by the blocking or the awaiting driver
of :mod:`memvault.drivers`; only sending differs (:mod:`.transport`: ``httpx.Client`` or
``httpx.AsyncClient``, imported when a remote memory opens).
The server decides the tenant from the API key: a client holds keys, learns each one's tenant
when it opens, and :meth:`~_Remote.with_tenant` switches among those tenants only.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Self, TypeVar

from .. import validation as check
from ..agents.background import Recorder
from ..agents.model import Execution
from ..closing import AsyncClosing, Closing
from ..core import Stats
from ..drivers import Steps, described, drive_awaiting, drive_blocking, name_operations
from ..errors import ClosedError, ConfigError, ForbiddenError
from ..extraction.plans import Extraction
from ..extraction.worker import Failure
from . import operations as ops
from .codec import Caller, Options, Request, header_safe
from .operations import LOCAL_ONLY, Operation

if TYPE_CHECKING:
    from ..config import Settings
    from ..embeddings import Embedder
    from ..llm.base import ChatModel
    from .transport import Awaiting, Blocking

P = ParamSpec("P")
T = TypeVar("T")

ASKED = frozenset({"stats", "last_extraction"})
"""What ``AsyncMemory`` answers at once and :class:`AsyncRemoteMemory` awaits: it asks the
server."""


@dataclass(slots=True)
class _Link:
    """What a remote memory and its tenant views share: the sender, the key of each tenant
    (never shown), whether it is closed."""

    sender: Any
    keys: Mapping[str, Known] = field(repr=False)
    closed: bool = False
    recorder: Recorder = field(default_factory=lambda: Recorder(Stats()), repr=False)
    """Background records (:meth:`AsyncRemoteMemory.record_execution_later`) and their drops."""


@dataclass(frozen=True, slots=True)
class Known:
    """A key of a tenant (never shown), and the actor the server says it acts as."""

    key: str | None = field(repr=False)
    actor: str


def _tenants_of(sender: Blocking, keys: Sequence[str | None]) -> dict[str, Known]:
    """The tenant the server gives each key, and its actor (the first key of a tenant wins)."""
    found: dict[str, Known] = {}
    for key in keys:
        tenant, actor = drive_blocking(
            ops.tenant(), functools.partial(sender.send, caller=Caller(key))
        )
        found.setdefault(tenant, Known(key, actor))
    return found


def _keys(api_key: str | Sequence[str] | None) -> list[str | None]:
    if api_key is None:
        return [None]
    keys = [api_key] if isinstance(api_key, str) else list(api_key)
    if not keys or not all(isinstance(k, str) and k.strip() for k in keys):
        raise ConfigError("api_key must be a key, or a list of keys, of this server")
    stripped: list[str | None] = [k.strip() for k in keys]
    for number, key in enumerate(stripped, start=1):
        if not header_safe(str(key)):  # the key itself is never shown
            raise ConfigError(
                f"api_key {number} holds a character an HTTP header cannot carry (a space, a "
                "control character or non-ASCII): a server's keys are printable ASCII"
            )
    return stripped


class _Remote:
    """What both remote memories share: the server, its tenants, the views."""

    _link: _Link
    _tenant: str
    _agent: str | None
    _owner: bool

    def __init__(
        self,
        store: str,
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
        agent = Caller.checked_agent(actor)
        given = {"settings": settings, "clock": clock, "embedder": embedder, "llm": llm}
        theirs = [name for name, value in given.items() if value is not None]
        if theirs:
            raise ConfigError(
                f"{', '.join(theirs)}: not with a memvault server's URL, whose own apply; set "
                "them where `memvault serve` runs"
            )
        keys = _keys(api_key)
        options = Options.checked(store, timeout, retries, keyed=keys != [None])
        sender = self._sender(options)
        try:
            tenants = self._tenants(sender, keys)
            if tenant is not None and tenant not in tenants:
                raise ForbiddenError(_no_key(tenant, options.server))
        except BaseException:
            sender.close()
            raise
        self._link = _Link(sender, tenants)
        self._tenant = tenant if tenant is not None else next(iter(tenants))
        self._agent, self._owner = agent, True

    def _sender(self, options: Options) -> Any:
        raise NotImplementedError

    def _tenants(self, sender: Any, keys: Sequence[str | None]) -> dict[str, Known]:
        """The tenant of each key, asked with blocking calls (opening a memory blocks)."""
        from .transport import Blocking

        probe = Blocking(sender.options)
        try:
            return _tenants_of(probe, keys)
        finally:
            probe.close()

    @property
    def tenant(self) -> str:
        """The tenant this memory acts in: the one the server gives its API key."""
        return self._tenant

    @property
    def actor(self) -> str:
        """Who the server's audit log says made this memory's changes: its key's name (or the
        server's actor), and the agent it names (``actor=``) after a ``/``."""
        known = self._link.keys[self._tenant].actor
        return known if self._agent is None else f"{known}/{self._agent}"

    @property
    def server(self) -> str:
        """The server's URL (without a user name or password)."""
        sender: Any = self._link.sender
        return str(sender.options.server)

    def with_tenant(self, tenant: str) -> Self:
        """A view of the same server for another tenant, with the key the server gives it;
        a tenant none of this memory's keys reaches is refused (the key decides the tenant)."""
        if tenant not in self._link.keys:
            raise ForbiddenError(_no_key(tenant, self.server))
        return self._view(tenant, self._agent)

    def as_actor(self, actor: str) -> Self:
        """A view of the same server and tenant that names the agent ``actor`` in its
        requests: the server's audit log says ``<key name>/<actor>`` made its changes."""
        return self._view(self._tenant, Caller.checked_agent(actor))

    def _view(self, tenant: str, agent: str | None) -> Self:
        view = object.__new__(type(self))
        view._link, view._tenant, view._agent, view._owner = self._link, tenant, agent, False
        return view

    @property
    def _caller(self) -> Caller:
        return Caller(self._link.keys[self._tenant].key, self._agent)

    def _open_link(self) -> _Link:
        if self._link.closed:
            raise ClosedError("this memory is closed: it sends no more requests")
        return self._link

    def __getattr__(self, name: str) -> Any:
        if name in LOCAL_ONLY:
            raise AttributeError(
                f"{type(self).__name__} has no {name}: {LOCAL_ONLY[name]}", name=name, obj=self
            )
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.server!r}, tenant={self._tenant!r})"


def _no_key(tenant: str, server: str) -> str:
    return (
        f"no API key of this memory acts in tenant {tenant!r} at {server}: the server decides "
        "the tenant from the key; open the memory with that tenant's key too (api_key=[…])"
    )


def _blocking(op: Operation[P, T]) -> Callable[Concatenate[RemoteMemory, P], T]:
    """Bind a remote operation as a blocking method."""

    @functools.wraps(op.plan)
    def operation(self: RemoteMemory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(op.steps(args, kwargs))

    described(operation, op.plan)
    return operation


def _awaitable(
    op: Operation[P, T],
) -> Callable[Concatenate[AsyncRemoteMemory, P], Coroutine[Any, Any, T]]:
    """Bind a remote operation as an ``async`` method."""

    @functools.wraps(op.plan)
    async def operation(self: AsyncRemoteMemory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(op.steps(args, kwargs))

    described(operation, op.plan)
    return operation


@name_operations
class RemoteMemory(_Remote, Closing):
    """The blocking API on a memvault server: what ``Memory("http://host:8765", api_key=…)``
    returns. Not a :class:`~memvault.Memory` (``isinstance`` says so): a sibling with the same
    operations, results and errors; what only a local store has is in ``LOCAL_ONLY``."""

    def _sender(self, options: Options) -> Blocking:
        from .transport import Blocking

        return Blocking(options)

    def _tenants(self, sender: Blocking, keys: Sequence[str | None]) -> dict[str, Known]:
        return _tenants_of(sender, keys)

    def _run(self, steps: Steps[T]) -> T:
        link, caller = self._open_link(), self._caller
        return drive_blocking(steps, functools.partial(link.sender.send, caller=caller))

    write = _blocking(ops.WRITE)
    write_many = _blocking(ops.WRITE_MANY)
    retrieve = _blocking(ops.RETRIEVE)
    get = _blocking(ops.GET)
    update = _blocking(ops.UPDATE)
    delete = _blocking(ops.DELETE)
    delete_by_scope = _blocking(ops.DELETE_BY_SCOPE)
    promote = _blocking(ops.PROMOTE)
    compact = _blocking(ops.COMPACT)
    count = _blocking(ops.COUNT)
    list = _blocking(ops.LIST)
    purge_expired = _blocking(ops.PURGE_EXPIRED)
    search = _blocking(ops.SEARCH)
    supersede = _blocking(ops.SUPERSEDE)
    history = _blocking(ops.HISTORY)
    restore = _blocking(ops.RESTORE)
    superseded = _blocking(ops.SUPERSEDED)
    create_session = _blocking(ops.CREATE_SESSION)
    get_session = _blocking(ops.GET_SESSION)
    list_sessions = _blocking(ops.LIST_SESSIONS)
    rename_session = _blocking(ops.RENAME_SESSION)
    set_data_loaded = _blocking(ops.SET_DATA_LOADED)
    delete_session = _blocking(ops.DELETE_SESSION)
    append_record = _blocking(ops.APPEND_RECORD)
    records = _blocking(ops.RECORDS)
    search_records = _blocking(ops.SEARCH_RECORDS)
    search_sessions = _blocking(ops.SEARCH_SESSIONS)
    add_session_memory = _blocking(ops.ADD_SESSION_MEMORY)
    session_memory = _blocking(ops.SESSION_MEMORY)
    add_finding = _blocking(ops.ADD_FINDING)
    findings = _blocking(ops.FINDINGS)
    add_global_memory = _blocking(ops.ADD_GLOBAL_MEMORY)
    global_memory = _blocking(ops.GLOBAL_MEMORY)
    pin = _blocking(ops.PIN)
    demote = _blocking(ops.DEMOTE)
    build_context = _blocking(ops.BUILD_CONTEXT)
    system_prompt = _blocking(ops.SYSTEM_PROMPT)
    recall = _blocking(ops.RECALL)
    add_turn = _blocking(ops.ADD_TURN)
    extract = _blocking(ops.EXTRACT)
    erase = _blocking(ops.ERASE)
    finish_erasures = _blocking(ops.FINISH_ERASURES)
    apply_retention = _blocking(ops.APPLY_RETENTION)
    audit = _blocking(ops.AUDIT)
    export_session = _blocking(ops.EXPORT_SESSION)
    import_session = _blocking(ops.IMPORT_SESSION)
    session_bundle = _blocking(ops.SESSION_BUNDLE)
    import_bundle = _blocking(ops.IMPORT_BUNDLE)
    # agent memory
    record_execution = _blocking(ops.RECORD_EXECUTION)
    executions = _blocking(ops.EXECUTIONS)
    search_executions = _blocking(ops.SEARCH_EXECUTIONS)
    strategy_stats = _blocking(ops.STRATEGY_STATS)
    choose_strategy = _blocking(ops.CHOOSE_STRATEGY)
    record_decomposition = _blocking(ops.RECORD_DECOMPOSITION)
    suggest_decomposition = _blocking(ops.SUGGEST_DECOMPOSITION)
    failure_patterns = _blocking(ops.FAILURE_PATTERNS)
    check_failures = _blocking(ops.CHECK_FAILURES)

    def stats(self) -> dict[str, int]:
        """The server's counters (those of the store it serves, every tenant's work)."""
        return self._run(ops.stats())

    def last_extraction(self, session_id: str) -> Extraction | Failure | None:
        """What the server's last background extraction of the session did (or the error it
        raised); None before the first one finished."""
        return self._run(ops.last_extraction(session_id))

    def flush(self, timeout: float | None = None, *, session_id: str | None = None) -> bool:
        """Wait until the server's background extractions (or that of one session) are done;
        False if ``timeout`` (seconds) came first."""
        return self._run(ops.flush(timeout, session_id))

    def close(self) -> None:
        """Close the connections to the server (a view made by :meth:`with_tenant` closes
        nothing). The server goes on: what it extracts in the background is not lost."""
        if self._owner and not self._link.closed:
            self._link.closed = True
            self._link.sender.close()


@name_operations
class AsyncRemoteMemory(_Remote, AsyncClosing):
    """The ``async`` API on a memvault server: what ``AsyncMemory("http://host:8765", …)``
    returns (opening it asks the server, once, which tenant each key acts in). ``stats()`` and
    ``last_extraction()`` are awaited here: they ask the server."""

    def _sender(self, options: Options) -> Awaiting:
        from .transport import Awaiting

        return Awaiting(options)

    async def _run(self, steps: Steps[T]) -> T:
        link, caller = self._open_link(), self._caller
        send: Callable[[Request], Awaitable[Any]] = functools.partial(
            link.sender.send, caller=caller
        )
        return await drive_awaiting(steps, send)

    write = _awaitable(ops.WRITE)
    write_many = _awaitable(ops.WRITE_MANY)
    retrieve = _awaitable(ops.RETRIEVE)
    get = _awaitable(ops.GET)
    update = _awaitable(ops.UPDATE)
    delete = _awaitable(ops.DELETE)
    delete_by_scope = _awaitable(ops.DELETE_BY_SCOPE)
    promote = _awaitable(ops.PROMOTE)
    compact = _awaitable(ops.COMPACT)
    count = _awaitable(ops.COUNT)
    list = _awaitable(ops.LIST)
    purge_expired = _awaitable(ops.PURGE_EXPIRED)
    search = _awaitable(ops.SEARCH)
    supersede = _awaitable(ops.SUPERSEDE)
    history = _awaitable(ops.HISTORY)
    restore = _awaitable(ops.RESTORE)
    superseded = _awaitable(ops.SUPERSEDED)
    create_session = _awaitable(ops.CREATE_SESSION)
    get_session = _awaitable(ops.GET_SESSION)
    list_sessions = _awaitable(ops.LIST_SESSIONS)
    rename_session = _awaitable(ops.RENAME_SESSION)
    set_data_loaded = _awaitable(ops.SET_DATA_LOADED)
    delete_session = _awaitable(ops.DELETE_SESSION)
    append_record = _awaitable(ops.APPEND_RECORD)
    records = _awaitable(ops.RECORDS)
    search_records = _awaitable(ops.SEARCH_RECORDS)
    search_sessions = _awaitable(ops.SEARCH_SESSIONS)
    add_session_memory = _awaitable(ops.ADD_SESSION_MEMORY)
    session_memory = _awaitable(ops.SESSION_MEMORY)
    add_finding = _awaitable(ops.ADD_FINDING)
    findings = _awaitable(ops.FINDINGS)
    add_global_memory = _awaitable(ops.ADD_GLOBAL_MEMORY)
    global_memory = _awaitable(ops.GLOBAL_MEMORY)
    pin = _awaitable(ops.PIN)
    demote = _awaitable(ops.DEMOTE)
    build_context = _awaitable(ops.BUILD_CONTEXT)
    system_prompt = _awaitable(ops.SYSTEM_PROMPT)
    recall = _awaitable(ops.RECALL)
    add_turn = _awaitable(ops.ADD_TURN)
    extract = _awaitable(ops.EXTRACT)
    erase = _awaitable(ops.ERASE)
    finish_erasures = _awaitable(ops.FINISH_ERASURES)
    apply_retention = _awaitable(ops.APPLY_RETENTION)
    audit = _awaitable(ops.AUDIT)
    export_session = _awaitable(ops.EXPORT_SESSION)
    import_session = _awaitable(ops.IMPORT_SESSION)
    session_bundle = _awaitable(ops.SESSION_BUNDLE)
    import_bundle = _awaitable(ops.IMPORT_BUNDLE)
    # agent memory
    record_execution = _awaitable(ops.RECORD_EXECUTION)
    executions = _awaitable(ops.EXECUTIONS)
    search_executions = _awaitable(ops.SEARCH_EXECUTIONS)
    strategy_stats = _awaitable(ops.STRATEGY_STATS)
    choose_strategy = _awaitable(ops.CHOOSE_STRATEGY)
    record_decomposition = _awaitable(ops.RECORD_DECOMPOSITION)
    suggest_decomposition = _awaitable(ops.SUGGEST_DECOMPOSITION)
    failure_patterns = _awaitable(ops.FAILURE_PATTERNS)
    check_failures = _awaitable(ops.CHECK_FAILURES)

    async def stats(self) -> dict[str, int]:
        """The server's counters (those of the store it serves, every tenant's work), and the
        background records this memory dropped (``executions_dropped``)."""
        counts = await self._run(ops.stats())
        return counts | self._link.recorder.counts()

    def record_execution_later(self, **fields: Any) -> asyncio.Task[Execution | None]:
        """Record an execution on the server without waiting for it: fire and forget, so a
        workflow never fails because of its bookkeeping. A failed request is retried 3 times
        with backoff (0.1, 0.2, 0.4 s); a record that still fails, or is invalid, is dropped,
        logged and counted here (``stats()["executions_dropped"]``). :meth:`flush` and closing
        wait for pending records. Call it inside a running loop."""
        return self._link.recorder.submit(lambda: self.record_execution(**fields))

    async def last_extraction(self, session_id: str) -> Extraction | Failure | None:
        """What the server's last background extraction of the session did (or the error it
        raised); None before the first one finished."""
        return await self._run(ops.last_extraction(session_id))

    async def flush(self, timeout: float | None = None, *, session_id: str | None = None) -> bool:
        """Wait until this memory's background records are sent (or dropped) and the server's
        background extractions (or that of one session) are done; False if ``timeout``
        (seconds) came first."""
        done, left = await self._link.recorder.drain(check.timeout(timeout))
        return done and await self._run(ops.flush(left, session_id))

    def close(self) -> None:
        """Close the connections to the server; prefer ``await aclose()`` (or ``async with``),
        which waits until they are closed."""
        if self._owner and not self._link.closed:
            self._link.closed = True
            self._link.sender.close()

    async def aclose(self) -> None:
        """Send the pending background records, then close the connections to the server (a
        view made by :meth:`with_tenant` closes nothing). The server goes on: what it extracts
        in the background is not lost."""
        if self._owner and not self._link.closed:
            await self._link.recorder.drain()
            self._link.closed = True
            await self._link.sender.aclose()
