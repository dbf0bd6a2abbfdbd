"""One operation of ``Memory`` as the catalogue declares it: the local plan it runs (its name,
parameters, docstring and result), the endpoint it travels to, and the codec of its answer.

A remote call is a plan too (:data:`~memvault.drivers.Steps`): it yields
:class:`~memvault.rest.codec.Request` steps (and :class:`~memvault.core.Invoke` for a caller's
callback), run by the blocking or the awaiting driver like the local plans.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from ..core import Plan
from ..drivers import Steps
from ..errors import LocalOnlyError, ValidationError
from ..rest.answers import PLAIN, Codec, Each
from ..rest.codec import arguments, decoded, request
from ..rest.endpoints import Endpoint
from ..types import MemoryEntry

P = ParamSpec("P")
T = TypeVar("T")

ENTRIES = Each("entries", MemoryEntry)
"""A list of entries, as most reads answer."""


@dataclass(frozen=True, slots=True)
class Operation(Generic[P, T]):
    """An operation of ``Memory``: run here on a backend, or sent to a memvault server."""

    plan: Callable[Concatenate[Any, P], Plan[T]]
    """The local plan: the operation's name, parameters, docstring and result."""
    endpoint: Endpoint | None
    """Where it travels (None: it runs on a local store only; :attr:`local_only` says why)."""
    answer: Codec = PLAIN
    """The result as JSON and back: the server encodes with it, the client decodes."""
    run: Callable[[Operation[P, T], dict[str, Any]], Steps[T]] | None = None
    """Steps of its own at the client (several requests, a callback here), else one exchange."""
    special: str = ""
    """Why the server serves it with a handler of its own (empty: its route is derived)."""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    """Fields always sent."""
    kept: tuple[str, ...] = ()
    """Parameters used here by :attr:`run`, never sent (a callback)."""
    refused: Mapping[str, str] = field(default_factory=dict)
    """Parameters that cannot travel, and why (given one, the call is refused)."""
    defaults: bool = False
    """Send every argument, defaults too (an endpoint that serves several operations)."""
    local_only: str = ""
    """Why a memvault server's memory cannot run it (with no endpoint)."""

    @property
    def name(self) -> str:
        return self.plan.__name__

    @property
    def changes(self) -> bool:
        """Whether it may change memory: all but a GET and a POST declared as only reading
        (an API key that may only write a scope may read it in these, as a write finds what
        it restates; an undeclared reader counts as changing, never the other way)."""
        endpoint = self.endpoint
        return endpoint is None or not (endpoint.reads or endpoint.method == "GET")

    @property
    def derived(self) -> bool:
        """Whether the server's route is derived from the declaration (no handler of its own)."""
        return self.endpoint is not None and not self.special

    def steps(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Steps[T]:
        """The remote plan of a call (its arguments checked now, before any request)."""
        if self.endpoint is None:
            raise LocalOnlyError(self.name, self.local_only)
        named = arguments(self.plan, args, kwargs, self.defaults)
        for name, reason in self.refused.items():
            if named.pop(name, None) is not None:
                raise ValidationError(f"{name}: {reason}")
        return self.run(self, named) if self.run is not None else self._exchange(named)

    def _exchange(self, named: Mapping[str, Any]) -> Steps[T]:
        sent = request(self.sent_to, {**named, **self.fixed})
        result: T = decoded(self.answer.decode, (yield sent), sent)
        return result

    @property
    def sent_to(self) -> Endpoint:
        """The endpoint (of an operation that has one)."""
        if self.endpoint is None:
            raise LocalOnlyError(self.name, self.local_only)
        return self.endpoint


def local(plan: Callable[Concatenate[Any, P], Plan[T]], why: str) -> Operation[P, T]:
    """An operation only a local store runs, and why."""
    return Operation(plan, None, local_only=why)
