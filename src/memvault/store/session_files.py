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

NAME = lazy(r"[a-z0-9][a-z0-9_.-]{0,127}")
"""A tenant or session id that names its folder as it is: lower case (one folder per id on a
file system that ignores case), nothing a file system refuses. Other ids are named by a hash
after ``+``, which no such name holds: the two never collide."""
HASHED = "+"


def store_key(url: str) -> str:
    """A short, stable name of the store a URL opens: a SQLite file by its real path (``~``
    expanded, links resolved), a server's URL without its credentials."""
    scheme, _, rest = normalize_url(url).partition("://")
    scheme = {"postgres": "postgresql"}.get(scheme.lower(), scheme.lower())
    if scheme == "sqlite" and rest.startswith("/") and rest != "/:memory:":
        rest = os.path.realpath(os.path.expanduser(rest[1:]))
    else:
        netloc, slash, path = rest.partition("/")
        rest = netloc.rpartition("@")[2] + slash + path
    return hashlib.sha256(f"{scheme}://{rest}".encode()).hexdigest()[:16]


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
        """The ids of the tenant's sessions that have a folder named by their id (a hashed name
        says no id: such a folder goes only with its session)."""
        place = self.root / _name(tenant)
        if not place.is_dir():
            return []
        return sorted(p.name for p in place.iterdir() if p.is_dir() and NAME.fullmatch(p.name))

    def remove(self, tenant: str, session_ids: Iterable[str]) -> None:
        """Delete the folders of these sessions (those that exist), trying every one;
        BackendError, naming them, for those that could not be."""
        failed = []
        for session_id in session_ids:
            folder = self.folder(tenant, session_id)
            try:
                if folder.is_symlink() or folder.is_file():
                    folder.unlink()
                elif folder.exists():
                    shutil.rmtree(folder)
            except OSError as exc:
                failed.append(f"{folder} ({exc.strerror or exc})")
        if failed:
            raise BackendError(
                f"the sessions are deleted, but not all their folders could be: {'; '.join(failed)}"
            )


def _name(value: str) -> str:
    if NAME.fullmatch(value):
        return value
    return HASHED + hashlib.sha256(value.encode()).hexdigest()[:32]
