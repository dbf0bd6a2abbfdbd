"""Backends as plugins: a store URL's scheme picks a factory, imported only when used.

Built-ins are registered exactly like third-party backends, which may also publish a
``memvault.backends`` entry point named after their URL scheme.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ..config import Settings
from ..errors import ConfigError
from .base import Backend

BackendFactory = Callable[[str, Settings], Backend]

_BUILTIN: dict[str, str] = {
    "sqlite": "memvault.store.sqlite:SQLiteBackend.from_url",
    "memory": "memvault.store.inmemory:InMemoryBackend.from_url",
    "postgresql": "memvault.store.postgres:PostgresBackend.from_url",
}
_registered: dict[str, BackendFactory] = {}


def register_backend(scheme: str, factory: BackendFactory) -> None:
    """Make ``scheme://…`` store URLs open with ``factory(url, settings)``."""
    _registered[scheme] = factory


def _load(target: str) -> BackendFactory:
    module_name, _, attribute = target.partition(":")
    obj: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[return-value]


def _factory(scheme: str) -> BackendFactory:
    if scheme in _registered:
        return _registered[scheme]
    if scheme in _BUILTIN:
        return _load(_BUILTIN[scheme])
    from importlib.metadata import entry_points  # ~10 ms, only for third-party schemes

    for point in entry_points(group="memvault.backends", name=scheme):
        factory: BackendFactory = point.load()
        return factory
    known = sorted({*_BUILTIN, *_registered})
    raise ConfigError(f"no backend for store URL scheme {scheme!r}; known: {', '.join(known)}")


def normalize_url(url: str) -> str:
    """Plain paths and ``:memory:`` become sqlite URLs; ``memory`` is the reference backend."""
    if url == ":memory:":
        return "sqlite:///:memory:"
    if url == "memory":
        return "memory://"
    if "://" not in url:
        return f"sqlite:///{url}"
    return url


def open_backend(url: str, settings: Settings) -> Backend:
    """Open the backend a store URL names."""
    url = normalize_url(url)
    scheme = url.partition("://")[0].lower()
    if scheme in {"postgresql", "postgres"}:
        scheme = "postgresql"
    return _factory(scheme)(url, settings)
