"""A chat session as one file: memvault's session bundle and the session's analysis database.

The file is a zip of ``manifest.json`` (format, version, each member's SHA-256 and size),
``session.mvbundle`` (:meth:`Memory.session_bundle`: records, notes, findings, audit) and, if
data was loaded, ``analysis.duckdb``. Reading trusts nothing: other members, a size past the
caps (those of memvault's bundles, zip bombs included) or a checksum that differs refuse the
file, and the database must be plain tables (nothing of its own that runs) — all checked before
anything is stored. Importing makes a new session (memvault's bundle import) with the database
beside it.
"""

from __future__ import annotations

import hashlib
import io
import json
import uuid
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BundleError, ForbiddenError
from ..trust.bundle_file import read_file, write_new_file, zip_members
from .data import DataEngine, DataError

if TYPE_CHECKING:
    from .agent import Agent

FORMAT = "memvault-chat-session"
VERSION = 1
MANIFEST, SESSION, DATABASE = "manifest.json", "session.mvbundle", "analysis.duckdb"


def export(agent: Agent, path: Path) -> str:
    """Write the agent's session and its database to a new file at ``path``; a summary."""
    agent.memory.flush(session_id=agent.session.id)  # what is being learned goes in too
    data, report = agent.memory.session_bundle(agent.session.id)
    members = {SESSION: data}
    database = agent.bench.engine.path
    if database.exists():
        members[DATABASE] = _bytes_of(database)
    listed = {name: _described(blob) for name, blob in members.items()}
    manifest = {"format": FORMAT, "version": VERSION, "members": listed}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
        for name, blob in members.items():
            archive.writestr(name, blob)
    write_new_file(path, out.getvalue())
    tables = f", {len(agent.bench.engine.tables())} table(s)" if DATABASE in members else ""
    return f"{report.total} entries{tables}"


def import_(agent: Agent, path: Path) -> str:
    """Import a file of :func:`export` as a new session of the agent's user; its id. Its
    database is checked before the session is stored."""
    members = _members(read_file(path))
    staged = None
    if DATABASE in members:
        staged = agent.files.root / f".import-{uuid.uuid4().hex}.duckdb"
        _write(staged, members[DATABASE])
        try:
            DataEngine(staged, ()).check()
        except DataError as exc:
            DataEngine(staged, ()).delete()
            raise BundleError(f"{path}: {DATABASE}: {exc}") from None
    try:
        report = agent.memory.import_bundle(members[SESSION])
        session = agent.memory.get_session(report.session_id)
        if session.user_id != agent.user:
            agent.memory.delete_session(session.id)
            raise ForbiddenError(f"the file holds a session of {session.user_id}, not {agent.user}")
        if staged is not None:
            target = agent.database(session.id)
            target.parent.mkdir(parents=True, exist_ok=True)
            staged.replace(target)
    finally:
        if staged is not None:
            staged.unlink(missing_ok=True)
    return session.id


def _described(blob: bytes) -> dict[str, object]:
    return {"sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob)}


def _members(raw: bytes) -> dict[str, bytes]:
    """The checked members of a chat session file; BundleError for anything else."""
    members = zip_members(raw, frozenset({MANIFEST, SESSION}), frozenset({DATABASE}))
    try:
        manifest = json.loads(members.pop(MANIFEST).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BundleError("not a chat session file: its manifest is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError("not a chat session file (its manifest names another format)")
    if manifest.get("version") != VERSION:
        raise BundleError(f"chat session file version {manifest.get('version')!r} is unknown")
    listed = manifest.get("members")
    if not isinstance(listed, dict) or set(listed) != set(members):
        raise BundleError("the manifest does not list the file's members")
    for name, blob in members.items():
        if listed[name] != _described(blob):
            raise BundleError(f"{name} does not match its checksum: the file was changed")
    return members


def _bytes_of(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read {file}: {exc.strerror or exc}") from None


def _write(file: Path, data: bytes) -> None:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    except OSError as exc:
        raise BundleError(f"cannot write {file}: {exc.strerror or exc}") from None
