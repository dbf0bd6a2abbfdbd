"""What a web browser could forge, refused before any route runs (pure).

A server on loopback is reachable by every page the user's browser opens. Three checks keep
such pages out, with or without API keys (``docs/server.md``, "Browsers"):

- **Host** (DNS rebinding): the ``Host`` header must name this server — a loopback name, the
  address it is bound to, or one of ``allowed_hosts`` — else 421.
- **Origin** (cross-site requests): a request with an ``Origin`` not in ``allowed_origins``, or
  with ``Sec-Fetch-Site`` other than ``none``/``same-origin`` and no allowed ``Origin``, is 403.
- **Content type**: every POST, PUT and PATCH, and every request with a body, must say
  ``Content-Type: application/json``, which no page can send to another site without a CORS
  preflight (granted only to ``allowed_origins``); otherwise 415.

The web inspector's pages (``/ui``, ``docs/inspector.md``) are sent by the server's own origin
too, and post HTML forms (``application/x-www-form-urlencoded``), each with a CSRF token.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlsplit

from ..config import Settings
from ..errors import ConfigError
from ..patterns import lazy
from .auth import KeyRing

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH"})
"""Methods that must carry a JSON content type even without a body: a browser can send a
bodiless POST cross-site without a preflight."""
SAFE_FETCH_SITES = frozenset({"none", "same-origin"})
"""``Sec-Fetch-Site`` values served without an allowed ``Origin``. ``same-site`` is refused: any
page on another port of localhost (or another subdomain) is "same-site"."""
WILDCARDS = frozenset({"0.0.0.0", "::"})
CORS_METHODS = "GET, POST, PATCH, DELETE"
CORS_HEADERS = "Authorization, Content-Type"
CORS_MAX_AGE = "600"

_HOST = lazy(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_.-]+))(?::\d{1,5})?")
_JSON_TYPE = lazy(r"application/(?:[a-z0-9!#$&^_.+-]+\+)?json")
_DEFAULT_PORTS = {"http": 80, "https": 443}
FORM_TYPE = "application/x-www-form-urlencoded"


class Refusal(NamedTuple):
    """Why a request is refused: its HTTP status, error type and message."""

    status: int
    kind: str
    message: str


def host_name(value: str) -> str | None:
    """The host of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``) or of a bare
    address, lower-case and with IP addresses in their canonical form; None when it is none."""
    value = value.strip().lower()
    address = _ip(value)
    if address is not None:  # a bare address, as in --host ::
        return str(address)
    match = _HOST.fullmatch(value)
    if match is None:
        return None
    name = match["v6"] or match["name"]
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return None if match["v6"] else name


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback(name: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    address = _ip(name)
    return name == "localhost" or (address is not None and address.is_loopback)


def origin_of(value: str) -> str | None:
    """``scheme://host[:port]`` in its serialized form (lower-case, no default port), or None."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if (
        parts.scheme.lower() not in _DEFAULT_PORTS
        or not parts.hostname
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        return None
    scheme, host = parts.scheme.lower(), parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    shown = "" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}"
    return f"{scheme}://{host}{shown}"


def _items(text: str) -> list[str]:
    return [item for item in (part.strip() for part in text.split(",")) if item]


@dataclass(frozen=True, slots=True)
class Guard:
    """The accepted Host names and web origins of one server."""

    hosts: frozenset[str] = frozenset()
    """Names accepted besides loopback ones."""
    any_host: bool = False
    """``allowed_hosts`` is ``*`` (e.g. behind a load balancer that checks Host)."""
    any_address: bool = False
    """Bound to every interface: any IP address is a name of this server (an address cannot be
    rebound, only a DNS name can)."""
    origins: frozenset[str] = frozenset()

    @classmethod
    def parse(
        cls, allowed_hosts: str = "", allowed_origins: str = "", bound_host: str | None = None
    ) -> Guard:
        """Read the comma-separated settings and the address the server listens on."""
        hosts: set[str] = set()
        entries = _items(allowed_hosts)
        for entry in (e for e in entries if e != "*"):
            name = host_name(entry)
            if name is None:
                raise ConfigError(
                    f"setting allowed_hosts: {entry!r} is not a host name like api.example.com"
                )
            hosts.add(name)
        bound = host_name(bound_host) if bound_host else None
        if bound is not None and bound not in WILDCARDS:
            hosts.add(bound)
        return cls(
            frozenset(hosts),
            any_host="*" in entries,
            any_address=bound in WILDCARDS,
            origins=frozenset(_origin_setting(entry) for entry in _items(allowed_origins)),
        )

    def host_refusal(self, host: str | None) -> Refusal | None:
        """Refuse a ``Host`` that names another server (421). A request without one (HTTP/1.0)
        passes: browsers always send it."""
        if host is None or self.any_host or self.knows(host):
            return None
        return Refusal(
            421,
            "MisdirectedRequest",
            f"this server does not answer for host {host[:100]!r}; "
            "add its name to MEMVAULT_ALLOWED_HOSTS",
        )

    def knows(self, host: str | None) -> bool:
        """Whether ``host`` names this server: loopback, a listed name, or any address when it
        listens on all of them (``*`` in the setting does not count: any name passes it)."""
        name = host_name(host) if host else None
        return name is not None and (
            is_loopback(name) or name in self.hosts or (self.any_address and _ip(name) is not None)
        )

    def allowed_origin(self, origin: str | None) -> str | None:
        """``origin`` when it is one of ``allowed_origins`` (it then gets CORS headers)."""
        if origin is None or not self.origins:
            return None
        return origin if origin_of(origin) in self.origins else None

    def origin_refusal(
        self, origin: str | None, fetch_site: str | None, own: str | None = None
    ) -> Refusal | None:
        """Refuse a request sent by a web page of another origin (403), unless that origin is
        allowed or is ``own``. Requests without ``Origin`` and ``Sec-Fetch-Site`` (curl, SDKs)
        pass."""
        if origin is not None:
            if self.allowed_origin(origin) or (own is not None and origin_of(origin) == own):
                return None
            return Refusal(
                403,
                "ForbiddenOrigin",
                f"requests from web origin {origin[:100]!r} are refused; "
                "add it to MEMVAULT_ALLOWED_ORIGINS to allow it",
            )
        if fetch_site is None or fetch_site.strip().lower() in SAFE_FETCH_SITES:
            return None
        return Refusal(
            403,
            "ForbiddenOrigin",
            f"a {fetch_site.strip()[:20]!r} request from a web page is refused (it has no "
            "allowed Origin)",
        )

    def refusal(
        self, method: str, headers: Mapping[str, str], own_origin: str | None = None
    ) -> Refusal | None:
        """The first check ``headers`` (lower-case names) fail: Host, then Origin, then the
        content type. ``own_origin`` (this server's origin as the request names it) marks a
        request for an inspector page: that origin may send it, and it posts forms, not JSON."""
        body_refusal = content_type_refusal if own_origin is None else form_refusal
        host = headers.get("host")
        own = own_origin if self.knows(host) else None  # a name '*' let in is anyone's origin
        return (
            self.host_refusal(host)
            or self.origin_refusal(headers.get("origin"), headers.get("sec-fetch-site"), own)
            or body_refusal(method, headers)
        )

    def preflight(self, method: str, headers: Mapping[str, str]) -> dict[str, str] | None:
        """The answer headers to a CORS preflight from an allowed origin; None when the request
        is not one (OPTIONS with Origin and Access-Control-Request-Method)."""
        origin = self.allowed_origin(headers.get("origin"))
        if method != "OPTIONS" or origin is None:
            return None
        if "access-control-request-method" not in headers:
            return None
        answer = {
            **cors_headers(origin),
            "access-control-allow-methods": CORS_METHODS,
            "access-control-allow-headers": CORS_HEADERS,
            "access-control-max-age": CORS_MAX_AGE,
        }
        if headers.get("access-control-request-private-network", "").lower() == "true":
            answer["access-control-allow-private-network"] = "true"
        return answer


def cors_headers(origin: str) -> dict[str, str]:
    """The headers that let the page of an allowed ``origin`` read an answer."""
    return {"access-control-allow-origin": origin, "vary": "Origin"}


def _origin_setting(entry: str) -> str:
    origin = origin_of(entry)
    if entry in ("*", "null") or origin is None:
        raise ConfigError(
            f"setting allowed_origins: {entry!r} is not a web origin like "
            "https://app.example.com ('*' and 'null' are not accepted)"
        )
    return origin


def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/…+json``; a charset, if given, must be UTF-8."""
    media, *parameters = content_type.split(";")
    return bool(_JSON_TYPE.fullmatch(media.strip().lower())) and _utf8(parameters)


def _utf8(parameters: list[str]) -> bool:
    """Whether media type ``parameters`` name no charset, or UTF-8."""
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in {
            "utf-8",
            "utf8",
        }:
            return False
    return True


def has_body(headers: Mapping[str, str]) -> bool:
    return headers.get("content-length", "0").strip() != "0" or "transfer-encoding" in headers


def content_type_refusal(method: str, headers: Mapping[str, str]) -> Refusal | None:
    """Refuse (415) a POST, PUT or PATCH, or any request with a body, that is not JSON."""
    if method not in UNSAFE_METHODS and not has_body(headers):
        return None
    content_type = headers.get("content-type")
    if content_type is not None and is_json(content_type):
        return None
    got = "none" if content_type is None else repr(content_type[:100])
    return Refusal(
        415,
        "UnsupportedMediaType",
        f"{method} requests must carry JSON: send 'Content-Type: application/json' (got {got})",
    )


def form_refusal(method: str, headers: Mapping[str, str]) -> Refusal | None:
    """Refuse (415) a POST, PUT or PATCH, or any request with a body, that is not an HTML form
    (``application/x-www-form-urlencoded``, UTF-8)."""
    if method not in UNSAFE_METHODS and not has_body(headers):
        return None
    content_type = headers.get("content-type") or ""
    media, *parameters = content_type.split(";")
    if media.strip().lower() == FORM_TYPE and _utf8(parameters):
        return None
    return Refusal(
        415,
        "UnsupportedMediaType",
        f"{method} requests to the inspector must be HTML forms ({FORM_TYPE}); "
        f"got {content_type[:100]!r}",
    )


def access_rules(
    settings: Settings, host: str, allow_anonymous: bool = False
) -> tuple[KeyRing, Guard]:
    """The API keys and the guard of a server listening on ``host``, from ``settings``.
    Without keys (unless ``allow_anonymous``) it refuses (ConfigError) to listen beyond
    loopback, and to answer any ``Host`` (``*``): a web page on any name (DNS rebinding) could
    then read the memory."""
    keys = KeyRing.parse(settings.api_keys)
    guard = Guard.parse(settings.allowed_hosts, settings.allowed_origins, host)
    if keys.enabled or allow_anonymous:
        return keys, guard
    name = host_name(host)
    if name is None or not is_loopback(name):
        raise ConfigError(
            f"refusing to serve {host} without API keys: set MEMVAULT_API_KEYS (tenant:key,…) "
            "or pass --allow-anonymous"
        )
    if guard.any_host:
        raise ConfigError(
            "refusing MEMVAULT_ALLOWED_HOSTS='*' without API keys: a web page under any name "
            "(DNS rebinding) could read the memory; set MEMVAULT_API_KEYS, list the host names, "
            "or pass --allow-anonymous"
        )
    return keys, guard
