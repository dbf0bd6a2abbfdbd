"""A chat session as one file: memvault's session bundle, which carries the session's folder —
its analysis database with it (:mod:`memvault.trust.bundle_file`).

Importing makes a new session of the agent's user; the database it brings must be plain tables
(nothing of its own that runs: :meth:`DataEngine.check`), else the session is deleted again and
the import refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BundleError, ForbiddenError, MemvaultError
from .data import DataEngine, DataError

if TYPE_CHECKING:
    from .agent import Agent


def export(agent: Agent, path: Path) -> str:
    """Write the agent's session and its folder to a new file at ``path``; a summary."""
    agent.memory.flush(session_id=agent.session.id)  # what is being learned goes in too
    report = agent.memory.export_session(agent.session.id, path)
    return f"{report.total} entries, {report.files} file(s)"


def import_(agent: Agent, path: Path) -> str:
    """Import a session file as a new session of the agent's user; its id."""
    report = agent.memory.import_session(path)
    session = agent.memory.get_session(report.session_id)
    refusal: MemvaultError | None = None
    if session.user_id != agent.user:
        refusal = ForbiddenError(f"the file holds a session of {session.user_id}, not {agent.user}")
    elif (database := agent.database(session.id)).exists():
        try:
            DataEngine(database, ()).check()
        except DataError as exc:
            refusal = BundleError(f"{path}: its analysis database: {exc}")
    if refusal is not None:
        agent.memory.delete_session(session.id)  # its folder with it
        raise refusal
    return session.id
