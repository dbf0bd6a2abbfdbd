"""A memory on a memvault server: ``Memory("http://host:8765", api_key=…)`` runs every
operation over REST — same operations, same results, same errors (docs/remote.md).

Each call is a remote plan (:meth:`memvault.api.Operation.steps`) run by the blocking or the
awaiting driver; only sending differs (:mod:`memvault.rest.transport`: ``httpx.Client`` or
``httpx.AsyncClient``, imported when a remote memory opens). The server decides the tenant
from the API key: a memory holds keys, learns each one's tenant when it opens, and
``with_tenant`` switches among those tenants only.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .agents.background import Recorder
from .api import store
from .breaker import Breaker
from .config import breaker_from_env
from .core import Stats
from .drivers import Steps, drive_awaiting, drive_blocking
from .errors import ClosedError, ConfigError, ForbiddenError
from .rest.codec import Caller, Options, Request, header_safe

if TYPE_CHECKING:
    from .rest.transport import Blocking

T = TypeVar("T")

LOCAL_ONLY = {
    "backend": "the store is the server's: `memvault serve` opens and closes it",
    "planners": "the plans run on the server",
    "settings": "the server's settings apply (MEMVAULT_* where `memvault serve` runs)",
    "embedder": "the server embeds with its own model",
    "llm": "extraction and summaries use the server's chat model",
    "stamp": "the server stamps the audit log's events (with its key's name and the agent)",
    "grant": "the server's API key decides what a request may reach (MEMVAULT_API_KEYS)",
}
"""What a local memory has and a server's has not, and why (``reembed`` says it itself)."""


@dataclass(slots=True)
class _Link:
    """What a remote memory and its views share: the sender, the key of each tenant (never
    shown), whether it is closed, the circuit breaker every request passes (a server that
    keeps failing is not hammered: ``docs/remote.md``), the background records."""

    sender: Any
    keys: Mapping[str, Known] = field(repr=False)
    breaker: Breaker = field(repr=False)
    closed: bool = False
    recorder: Recorder = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.recorder = Recorder(Stats(), self.breaker)

    def counts(self) -> dict[str, int]:
        """What this client counted itself: its breaker's counters, the records it dropped."""
        return self.breaker.counts() | self.recorder.counts()


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
            store.tenant(), functools.partial(sender.send, caller=Caller(key))
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


def _opened(options: Options, keys: Sequence[str | None], awaiting: bool) -> _Link:
    """The link to the server, with each key's tenant (asked with blocking calls: opening a
    memory blocks)."""
    from .rest.transport import Awaiting, Blocking

    policy = breaker_from_env()
    probe = Blocking(options)
    try:
        tenants = _tenants_of(probe, keys)
    except BaseException:
        probe.close()
        raise
    breaker = Breaker("server", f"the memvault server at {options.server}", policy)
    if not awaiting:
        return _Link(probe, tenants, breaker)
    probe.close()
    return _Link(Awaiting(options), tenants, breaker)


class Remote:
    """A memvault server and the work on it of one tenant (by key) and agent."""

    def __init__(
        self,
        url: str,
        *,
        tenant: str | None,
        actor: str | None,
        api_key: str | Sequence[str] | None,
        timeout: float | None,
        retries: int | None,
        awaiting: bool,
    ) -> None:
        self.agent = Caller.checked_agent(actor)
        if tenant is not None and not isinstance(tenant, str):
            raise ConfigError(f"tenant must be a string, got {type(tenant).__name__}")
        keys = _keys(api_key)
        options = Options.checked(url, timeout, retries, keyed=keys != [None])
        self.link = _opened(options, keys, awaiting)
        if tenant is not None and tenant not in self.link.keys:
            self.link.sender.close()
            raise ForbiddenError(_no_key(tenant, options.server))
        self.tenant = tenant if tenant is not None else next(iter(self.link.keys))
        self.owner = True

    @property
    def actor(self) -> str:
        """Who the server's audit log says made this memory's changes: its key's name (or the
        server's actor), and the agent it names after a ``/``."""
        known = self.link.keys[self.tenant].actor
        return known if self.agent is None else f"{known}/{self.agent}"

    @property
    def server(self) -> str:
        """The server's URL (without a user name or password)."""
        return str(self.link.sender.options.server)

    def with_tenant(self, tenant: str) -> Remote:
        if tenant not in self.link.keys:
            raise ForbiddenError(_no_key(tenant, self.server))
        return self._view(tenant, self.agent)

    def as_actor(self, actor: str) -> Remote:
        return self._view(self.tenant, Caller.checked_agent(actor))

    def _view(self, tenant: str, agent: str | None) -> Remote:
        view = object.__new__(Remote)
        view.link, view.tenant, view.agent, view.owner = self.link, tenant, agent, False
        return view

    def _open_link(self) -> _Link:
        if self.link.closed:
            raise ClosedError("this memory is closed: it sends no more requests")
        return self.link

    @property
    def _caller(self) -> Caller:
        return Caller(self.link.keys[self.tenant].key, self.agent)

    def run_blocking(self, steps: Steps[T]) -> T:
        """Run a remote plan, each request through the breaker."""
        link, caller = self._open_link(), self._caller
        send = functools.partial(link.sender.send, caller=caller)
        return drive_blocking(steps, functools.partial(link.breaker.call, send))

    async def run_awaiting(self, steps: Steps[T]) -> T:
        """Run a remote plan, awaiting each request through the breaker."""
        link, caller = self._open_link(), self._caller
        send: Callable[[Request], Awaitable[Any]] = functools.partial(
            link.sender.send, caller=caller
        )

        async def through(request: Request) -> Any:
            return await link.breaker.acall(send, request)

        return await drive_awaiting(steps, through)

    def close(self) -> None:
        """Close the connections to the server (a view closes nothing)."""
        if self.owner and not self.link.closed:
            self.link.closed = True
            self.link.sender.close()

    async def aclose(self) -> None:
        """Send the pending background records, then close the connections to the server."""
        if self.owner and not self.link.closed:
            await self.link.recorder.drain()
            self.link.closed = True
            await self.link.sender.aclose()


def _no_key(tenant: str, server: str) -> str:
    return (
        f"no API key of this memory acts in tenant {tenant!r} at {server}: the server decides "
        "the tenant from the key; open the memory with that tenant's key too (api_key=[…])"
    )
