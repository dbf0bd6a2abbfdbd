"""A chat session as one file: memvault's session bundle and the session's analysis database.

The file is a zip of ``manifest.json`` (format, version, each member's SHA-256 and size),
``session.mvbundle`` (:meth:`Memory.session_bundle`: records, notes, findings, audit) and, if
data was loaded, ``analysis.duckdb``. Reading trusts nothing: other members, a size past the
caps or a checksum that differs refuse the file, nothing imported; the database must open as
one. Importing makes a new session (memvault's bundle import) with the database beside it.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BundleError, ForbiddenError
from ..trust.bundle_file import MAX_BUNDLE_BYTES, read_file, write_new_file
from .data import DataEngine, DataError

if TYPE_CHECKING:
    from .agent import Agent

FORMAT = "memvault-chat-session"
VERSION = 1
MANIFEST, SESSION, DATABASE = "manifest.json", "session.mvbundle", "analysis.duckdb"
MAX_MEMBER_BYTES = 4 * MAX_BUNDLE_BYTES


def export(agent: Agent, path: Path) -> str:
    """Write the agent's session and its database to a new file at ``path``; a summary."""
    agent.memory.flush(session_id=agent.session.id)  # what is being learned goes in too
    data, report = agent.memory.session_bundle(agent.session.id)
    members = {SESSION: data}
    database = agent.bench.engine.path
    if database.exists():
        members[DATABASE] = database.read_bytes()
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
    """Import a file of :func:`export` as a new session of the agent's user; its id."""
    members = _members(read_file(path))
    report = agent.memory.import_bundle(members[SESSION])
    session = agent.memory.get_session(report.session_id)
    if session.user_id != agent.user:
        agent.memory.delete_session(session.id)
        raise ForbiddenError(f"the file holds a session of {session.user_id}, not {agent.user}")
    if DATABASE in members:
        target = agent.files / f"{session.id}.duckdb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(members[DATABASE])
        try:
            DataEngine(target, ()).tables()
        except DataError:
            DataEngine(target, ()).delete()
            agent.memory.delete_session(session.id)
            raise BundleError(f"{path}: {DATABASE} is not a DuckDB database") from None
    return session.id


def _described(blob: bytes) -> dict[str, object]:
    return {"sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob)}


def _members(raw: bytes) -> dict[str, bytes]:
    """The checked members of a chat session file; BundleError for anything else."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        names = archive.namelist()
        if MANIFEST not in names or not set(names) <= {MANIFEST, SESSION, DATABASE}:
            raise BundleError(f"not a chat session file: members {', '.join(sorted(names))}")
        manifest = json.loads(_read(archive, MANIFEST))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise BundleError("not a chat session file (its manifest names another format)")
        if manifest.get("version") != VERSION:
            raise BundleError(f"chat session file version {manifest.get('version')} is unknown")
        listed = manifest.get("members")
        if not isinstance(listed, dict) or set(listed) != set(names) - {MANIFEST}:
            raise BundleError("the manifest does not list the file's members")
        members = {name: _read(archive, name) for name in listed}
    except (zipfile.BadZipFile, ValueError, KeyError, OSError) as exc:
        raise BundleError(f"not a readable chat session file: {exc}") from None
    for name, blob in members.items():
        if listed[name] != _described(blob):
            raise BundleError(f"{name} does not match its checksum: the file was changed")
    if SESSION not in members:
        raise BundleError(f"the file holds no {SESSION}")
    return members


def _read(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes, reading no further than the cap (whatever size it declares)."""
    with archive.open(name) as member:
        blob = member.read(MAX_MEMBER_BYTES + 1)
    if len(blob) > MAX_MEMBER_BYTES:
        raise BundleError(f"{name} is larger than {MAX_MEMBER_BYTES} bytes")
    return blob
