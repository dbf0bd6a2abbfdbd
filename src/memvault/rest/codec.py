"""What the remote client sends and how it reads the answer (pure): Python arguments → one
:class:`Request` (path, query, JSON body) by the endpoint's fields; the JSON answer → values,
or the error the server answered → the same :class:`~memvault.errors.MemvaultError` subclass.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, TypeVar, get_args
from urllib.parse import quote, urlsplit, urlunsplit
from zoneinfo import ZoneInfo

from .. import validation as check
from ..agents.model import ToolCall
from ..agents.team import Member, Team
from ..core import UNSET
from ..errors import (
    BackendError,
    CapabilityError,
    ConfigError,
    InvalidScopeError,
    MemvaultError,
    UnavailableError,
    ValidationError,
    named,
    rebuilt,
)
from ..types import NewEntry, Provenance, Scope
from .endpoints import Endpoint
from .fields import query_text

T = TypeVar("T")
TIMEOUT = 30.0
"""Seconds a request may take (to connect, and between bytes of the answer)."""
MAX_URL_CHARS = 8000
"""The longest URL (path and query string, encoded) a request may have: HTTP servers refuse
longer request lines (uvicorn at 16 KiB of head; proxies often at 8 KiB)."""
RETRIES = 2
"""Times a request is sent again after a transport failure: any request that never reached
the server, and idempotent ones (reads, GET, DELETE) whose connection broke (not one that
timed out: the server may still be working on it)."""
HTTP_ERRORS: Mapping[str, type[MemvaultError]] = {
    "Unauthorized": ConfigError,
    "InvalidJSON": ValidationError,
    "NestingTooDeep": ValidationError,
    "PayloadTooLarge": ValidationError,
    "UnsupportedMediaType": ConfigError,
    "MisdirectedRequest": ConfigError,
    "ForbiddenOrigin": ConfigError,
    "NotFound": CapabilityError,
    "MethodNotAllowed": CapabilityError,
    "InternalError": BackendError,
}
"""The server's refusals that are about HTTP, not memvault, as the errors they mean here: a
bad key or Host is the client's configuration; no such route, a server without the feature."""
GATEWAY_DOWN = frozenset({502, 503, 504})
"""Statuses that, without a memvault error in the body, come from a proxy whose memvault
server is down or restarting: UnavailableError."""


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request of a remote plan; its driver answers the JSON body of the answer (or
    throws the error the server answered into the plan)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    body: Any = None
    """JSON-ready (None: no body)."""
    idempotent: bool = False
    """May be sent again when the answer was lost."""
    wait: float = 0.0
    """Seconds the server may take on purpose, beyond the client's timeout."""


def request(endpoint: Endpoint, named: Mapping[str, Any], wait: float = 0.0) -> Request:
    """The request of ``endpoint`` with the operation's arguments ``named``: each one fills a
    path parameter or the field whose keyword (or name) it is."""
    path: dict[str, str] = {}
    body: dict[str, Any] | None = {} if endpoint.body is not None else None
    query: list[tuple[str, str]] = []
    field_of = {f.keyword or name: name for name, f in endpoint.fields.items()}
    for parameter, value in named.items():
        if parameter in endpoint.parameters:
            path[parameter] = path_text(parameter, value, f"{{{parameter}:path}}" in endpoint.path)
            continue
        name = field_of[parameter]
        data = wire(value, parameter)
        if body is not None:
            body[name] = data
        else:
            query += ((name, text) for text in query_text(endpoint.fields[name], name, data))
    sent = Request(
        endpoint.method, endpoint.url(path), tuple(query), body, endpoint.idempotent, wait
    )
    length = len(sent.path) + sum(len(quote(k)) + len(quote(v)) + 2 for k, v in sent.query)
    if length > MAX_URL_CHARS:
        raise ValidationError(
            f"{sent.method} {endpoint.path}: its URL would be {length} characters, more than "
            f"a server reads ({MAX_URL_CHARS}); shorten the text it carries"
        )
    return sent


SCOPE_IDS = frozenset({"scope", "session_id", "user_id"})
"""Path parameters that are (part of) a scope: an empty one is an InvalidScopeError."""


def path_text(name: str, value: Any, slashes: bool = False) -> str:
    """A path parameter's value: a non-empty string (a scope as its string form), with no
    ``/`` unless the parameter takes slashes (no route could tell it from the path)."""
    value = str(value) if isinstance(value, Scope) else value
    if not isinstance(value, str) or not value:
        kind = InvalidScopeError if name in SCOPE_IDS else ValidationError
        raise kind(f"{name} must be a non-empty string, got {value!r}")
    if "/" in value and not slashes:
        raise ValidationError(f"{name} {value!r} cannot be sent in a URL path: it holds a '/'")
    return value


def wire(value: Any, name: str, top: bool = True) -> Any:
    """``value`` as JSON: datetimes as ISO-8601, durations in seconds, scopes and zones by
    name, entries and provenance as objects. An argument itself may be any iterable (tags);
    inside it only lists and tuples are arrays, as JSON has no sets."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Scope):
        return str(value)
    if isinstance(value, tzinfo):
        return zone_name(value, name)
    if isinstance(value, Provenance):
        return value.to_dict()
    if isinstance(value, NewEntry):
        return entry_fields(value, name)
    if isinstance(value, ToolCall | Member):
        return value.to_dict()
    if isinstance(value, Team):
        return value.to_list()
    if isinstance(value, Mapping):
        return plain(value, name)
    if isinstance(value, list | tuple) or (top and _iterable(value)):
        return [wire(item, name, False) for item in value]
    raise ValidationError(f"{name}: a {type(value).__name__} cannot be sent to a memvault server")


def plain(value: Any, name: str) -> Any:
    """A JSON object's contents as they are: only JSON's own types (no conversion inside, as
    a local memory stores none: a datetime in metadata is an error on both)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {_key(key, name): plain(item, name) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item, name) for item in value]
    raise ValidationError(f"{name} must be JSON-serialisable: a {type(value).__name__} is not")


def entry_fields(entry: NewEntry | Mapping[str, Any], name: str) -> Any:
    """An item of a bulk write as JSON: its given fields (each may be any iterable, as an
    argument may)."""
    given = (
        {f.name: getattr(entry, f.name) for f in fields(entry)}
        if isinstance(entry, NewEntry)
        else entry
    )
    return {_key(k, name): wire(v, f"{name}.{k}") for k, v in given.items() if v is not None}


def _iterable(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, bytes | bytearray)


def _key(key: Any, name: str) -> str:
    if not isinstance(key, str):
        raise ValidationError(f"{name}: keys must be strings, got {key!r}")
    return key


def zone_name(zone: tzinfo, name: str) -> str:
    """The IANA name the server reads a time zone by."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone.utcoffset(None) == timedelta(0) and zone == UTC:
        return "UTC"
    raise ValidationError(
        f"{name}: only IANA time zones (zoneinfo.ZoneInfo) and UTC can be sent to a memvault "
        f"server, not {zone!r}"
    )


def json_bytes(body: Any) -> bytes:
    """The UTF-8 JSON of ``body``; a lone surrogate travels as a ``\\ud800`` escape (for the
    server to refuse the one item that has it)."""
    text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(body, allow_nan=False, separators=(",", ":")).encode()


# -- the arguments of an operation -------------------------------------------------------------


@functools.cache
def signature(plan: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(plan, eval_str=True)


def arguments(
    plan: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    defaults: bool = False,
) -> dict[str, Any]:
    """The arguments of a call of ``plan`` (without its planner) that the caller gave (all,
    with ``defaults``), checked at the edge as :class:`~memvault.Memory` checks them (strings
    encodable, numbers finite, depth) — and None only where the API admits None."""
    bound = signature(plan).bind(None, *args, **kwargs)  # a TypeError, as a local call gives
    if defaults:
        bound.apply_defaults()
    named = {k: check.read_once(v) for k, v in list(bound.arguments.items())[1:] if v is not UNSET}
    own = frozenset(getattr(plan, check.PER_ITEM, ()))
    check.arguments({k: v for k, v in named.items() if k not in own})
    for name, value in named.items():
        if value is None and not admits_none(signature(plan).parameters[name].annotation):
            raise ValidationError(f"{name} must not be None")
    return named


def admits_none(annotation: Any) -> bool:
    """Whether a parameter annotated so may be None."""
    if annotation in (inspect.Parameter.empty, Any, None, type(None)):
        return True
    return type(None) in get_args(annotation)


# -- answers ----------------------------------------------------------------------------------


def answer(request: Request, status: int, content: bytes, server: str) -> Any:
    """The JSON body of a success; the error an error answer stands for, raised."""
    try:
        body = json.loads(content) if content else None
    except ValueError:
        body = None
        if status < 400:
            raise BackendError(
                f"the server at {server} answered {request.method} {request.path} with "
                f"{status} and a body that is not JSON: is it a memvault server?"
            ) from None
    if status >= 400:
        raise error_of(request, status, body, server)
    return body


def decoded(read: Callable[[Any], T], body: Any, request: Request) -> T:
    """``read(body)``; an answer it cannot read is a BackendError (another server version?),
    never a KeyError of the client's."""
    try:
        return read(body)
    except (LookupError, TypeError, ValueError, AttributeError) as exc:
        raise BackendError(
            f"the answer to {request.method} {request.path} is not what this client reads "
            f"({type(exc).__name__}: {exc}): is the server another memvault version?"
        ) from None


def error_of(request: Request, status: int, body: Any, server: str) -> MemvaultError:
    """The error an error answer stands for: the server's memvault error as it was raised
    there (type, message and data), an HTTP refusal as what it means to the client."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("type"), str):
        said = f"{request.method} {request.path} with {status}"
        if status in GATEWAY_DOWN:  # a proxy in front of a server that is down or restarting
            return UnavailableError(
                f"the server at {server} answered {said}, not with a memvault error: the "
                "memvault server behind it cannot be reached now"
            )
        return BackendError(  # a proxy's page, another service: nothing about the call
            f"the server at {server} answered {said}, not with a memvault error: is it a "
            "memvault server (or a proxy in front of one that refused the request)?"
        )
    found, message = error["type"], str(error.get("message", ""))
    memvault_error = named(found)
    if memvault_error is not None:
        return rebuilt(memvault_error, message, error)
    kind = HTTP_ERRORS.get(found, BackendError if status >= 500 else ValidationError)
    if kind is CapabilityError:
        return rebuilt(
            kind,
            f"the server at {server} has no route {request.method} {request.path}: is it "
            f"an older memvault? ({message})",
        )
    return rebuilt(kind, f"{found}: {message}")


def shown(url: str) -> str:
    """A server URL as errors and reprs show it: no user name or password."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(a malformed URL)"
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def backoff(attempt: int) -> float:
    """Seconds before sending again (attempt 1, 2…): 0.1 s doubling to 2 s, jittered."""
    return float(min(0.1 * 2.0 ** (attempt - 1), 2.0) * random.uniform(0.5, 1.5))


def header_safe(key: str) -> bool:
    """Whether an API key is printable ASCII without spaces (what a header carries as is)."""
    return bool(key) and all("!" <= ch <= "~" for ch in key)


AGENT_HEADER = "X-Memvault-Agent"
"""The header in which a client names the agent it is: the audit log's actor is then the
key's name and this agent (the key, never the header, decides the tenant)."""
MAX_AGENT_CHARS = 64


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sends a request: its API key (never shown) and the agent it says it is."""

    key: str | None = field(default=None, repr=False)
    agent: str | None = None

    @staticmethod
    def checked_agent(agent: object, what: str = "actor") -> str | None:
        """An agent's name as a header carries it: 1-64 printable ASCII characters (None:
        none); ValidationError naming ``what`` otherwise."""
        if agent is None:
            return None
        if not isinstance(agent, str) or not 0 < len(agent.strip()) <= MAX_AGENT_CHARS:
            raise ValidationError(
                f"{what} must be a string of 1-{MAX_AGENT_CHARS} characters, got {agent!r:.80}"
            )
        if not header_safe(agent.strip().replace(" ", "_")):
            raise ValidationError(f"{what} must be printable ASCII (it travels in a header)")
        return agent.strip()


def is_server_url(store: object) -> bool:
    """Whether ``store`` names a memvault server (``http://…`` or ``https://…``)."""
    return isinstance(store, str) and store.lower().startswith(("http://", "https://"))


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Options:
    """Where the server is and how to reach it."""

    url: str = field(repr=False)
    """As given: it may hold a user name and password (never shown)."""
    timeout: float = TIMEOUT
    retries: int = RETRIES

    @property
    def server(self) -> str:
        """The URL as messages show it (without a user name or password)."""
        return shown(self.url)

    @classmethod
    def checked(
        cls, url: str, timeout: float | None, retries: int | None, keyed: bool = False
    ) -> Options:
        """The options of a remote memory; ``keyed``: it sends API keys (which a user name and
        password in the URL would replace)."""
        if not (is_server_url(url) and _host(url)):
            raise ConfigError(f"{shown(url)!r} is not a server URL such as http://host:8765")
        if keyed and "@" in urlsplit(url).netloc:
            raise ConfigError(
                f"the URL of {shown(url)} holds a user name and password, which would replace "
                "the API key: give the key alone"
            )
        timeout = TIMEOUT if timeout is None else timeout
        retries = RETRIES if retries is None else retries
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not math.isfinite(timeout):
            raise ConfigError("timeout must be finite")
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
            raise ConfigError(f"retries must be an integer from 0 to 10, got {retries!r}")
        return cls(url, float(timeout), retries)
