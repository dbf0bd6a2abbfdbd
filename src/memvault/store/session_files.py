"""Files that belong to a session but live outside the store (seed 001 §5: a session's folder):
``$MEMVAULT_HOME/sessions/STORE/TENANT/SESSION/``, where STORE names the store by a hash of its
URL. The reference agent keeps a session's analysis database there.

Every deletion of a session through a memory on a local store removes its folder after the
transaction: ``delete_session``, ``delete_by_scope`` of its scope, an erasure, retention. Keyed
by store, a store's deletions never touch another's folders (a backup copy holds the same
session ids).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BackendError
from ..patterns import lazy
from .registry import normalize_url

NAME = lazy(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""A tenant or session id that can name a folder as it is (others are named by a hash)."""


def store_key(url: str) -> str:
    """A short, stable name of the store a URL opens (a SQLite file by its absolute path)."""
    normal = normalize_url(url)
    scheme, _, rest = normal.partition("://")
    if scheme == "sqlite" and rest.startswith("/") and rest != "/:memory:":
        normal = f"sqlite://{os.path.abspath(rest[1:])}"
    return hashlib.sha256(normal.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """The session folders of one store, under ``root``."""

    root: Path

    @classmethod
    def of(cls, home: Path, url: str) -> SessionFiles:
        """The session folders of the store at ``url``, under ``home``."""
        return cls(home / "sessions" / store_key(url))

    def folder(self, tenant: str, session_id: str) -> Path:
        """Where a session's files live (not created)."""
        return self.root / _name(tenant) / _name(session_id)

    def sessions(self, tenant: str) -> list[str]:
        """The ids of the tenant's sessions that have a folder."""
        place = self.root / _name(tenant)
        return sorted(p.name for p in place.iterdir()) if place.is_dir() else []

    def remove(self, tenant: str, session_ids: Iterable[str]) -> None:
        """Delete the folders of these sessions (those that exist); BackendError, naming the
        folder, if one cannot be."""
        for session_id in session_ids:
            folder = self.folder(tenant, session_id)
            try:
                shutil.rmtree(folder)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise BackendError(
                    f"session {session_id} is deleted, but its folder {folder} could not be: "
                    f"{exc.strerror or exc}"
                ) from None


def _name(value: str) -> str:
    if NAME.fullmatch(value) and value not in (".", ".."):
        return value
    return "h-" + hashlib.sha256(value.encode()).hexdigest()[:24]
