"""The chat's slash commands, one table. ``/memory`` lists Global Memory as ``g1``, ``g2``… and
Session Memory as ``s1``…, ``/findings`` lists ``f1``…, newest first; ``/pin`` and ``/demote``
take such a label, or a bare number of the last list shown (a person's click, in the seed's
terms: nothing else pins).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..context.prompt import finding_line, memory_line
from ..errors import ValidationError
from . import bundle
from .agent import Agent

Handler = Callable[["Commands", str], str]


@dataclass(frozen=True, slots=True)
class Item:
    """One numbered item of a list: where it lives and its entry's id."""

    kind: str  # "global", "session" or "finding"
    entry_id: str

    @property
    def label(self) -> str:
        return self.kind[0]


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command; ``settles``: it waits for learning from the last turn to end (it
    leaves or copies the session, seed 001 §2)."""

    usage: str
    help: str
    run: Handler
    settles: bool = False


class Commands:
    """The slash commands of one agent; :meth:`run` answers a line starting with ``/``."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.shown: list[Item] = []

    def run(self, line: str) -> str:
        """What the command prints; ValidationError for an unknown command or bad arguments."""
        name, rest = split(line)
        return command_named(name).run(self, rest)

    def memory(self, rest: str) -> str:
        agent = self.agent
        own = agent.memory.global_memory(agent.user)
        notes = agent.memory.session_memory(agent.session.id) if agent.started else []
        self.shown = [Item("global", e.id) for e in own] + [Item("session", e.id) for e in notes]
        lines = [f"Global Memory ({agent.user}):"]
        lines += [f"  g{n}. {memory_line(e)[2:]}" for n, e in enumerate(own, 1)] or ["  none"]
        lines.append("Session Memory:")
        lines += [f"  s{n}. {memory_line(e)[2:]}" for n, e in enumerate(notes, 1)] or ["  none"]
        return "\n".join(lines)

    def findings(self, rest: str) -> str:
        """The findings (with the severity ``rest``), numbered as in the whole list, so a
        label means the same finding whatever the filter."""
        started = self.agent.started
        found = self.agent.memory.findings(self.agent.session.id) if started else []
        self.shown = [Item("finding", f.entry_id) for f in found]
        lines = [
            f"  f{n}. {finding_line(f)[2:]}"
            for n, f in enumerate(found, start=1)
            if not rest or rest in f.tags
        ]
        return "\n".join([f"Findings{f' ({rest})' if rest else ''}:", *(lines or ["  none"])])

    def pin(self, rest: str) -> str:
        item = self._item(rest)
        if item.kind == "global":
            raise ValidationError(f"item {rest} is already in Global Memory")
        pinned = self.agent.memory.pin(item.entry_id)
        return f"pinned to Global Memory: {pinned.content}"

    def demote(self, rest: str) -> str:
        item = self._item(rest)
        if item.kind != "global":
            raise ValidationError(f"item {rest} is not in Global Memory: /demote moves from there")
        moved = self.agent.memory.demote(item.entry_id, self.agent.session.id)
        self.shown = []
        return f"moved into this session's memory: {moved.content}"

    def export(self, rest: str) -> str:
        if not rest:
            raise ValidationError("/export needs a file name")
        if not self.agent.started:
            raise ValidationError("nothing to export yet: this session starts with a message")
        report = bundle.export(self.agent, Path(rest).expanduser())
        return f"exported session {self.agent.session.id} to {rest}: {report}"

    def import_(self, rest: str) -> str:
        if not rest:
            raise ValidationError("/import needs a file name")
        session = bundle.import_(self.agent, Path(rest).expanduser())
        return f"imported as session {session}; /resume {session} opens it"

    def new(self, rest: str) -> str:
        self.agent.new(private=rest == "private")
        self.shown = []
        kind = "private session" if rest == "private" else "session"
        return f"a new {kind} starts with your next message"

    def resume(self, rest: str) -> str:
        if not rest:
            raise ValidationError("/resume needs a session id (/sessions lists them)")
        session = self.agent.resume(rest)
        self.shown = []
        return f"resumed session {session.id}: {session.title}"

    def sessions(self, rest: str) -> str:
        current = self.agent.session.id if self.agent.started else None
        lines = [
            f"{'*' if s.id == current else ' '} {s.id}  {s.created_at:%Y-%m-%d %H:%M}  "
            f"{'[private] ' if s.private else ''}{s.title}"
            for s in self.agent.sessions()
        ]
        return "\n".join(lines) or "no sessions"

    def delete(self, rest: str) -> str:
        if not rest:
            raise ValidationError("/delete needs a session id")
        removed = self.agent.delete_session(rest)
        return f"deleted session {rest} ({removed} entries) and its data"

    def help(self, rest: str) -> str:
        listed = [f"{c.usage:22} {c.help}" for c in COMMANDS.values()]
        return "\n".join([*listed, f"{'/quit, /exit':22} leave (so does Ctrl-D)"])

    def _item(self, rest: str) -> Item:
        """The item ``g2``, ``s1`` or ``f3`` names (listed anew), or number N of the last list."""
        label, digits = (rest[:1].lower(), rest[1:]) if rest[:1].isalpha() else ("", rest)
        if not digits.isdigit() or label not in ("", "g", "s", "f"):
            raise ValidationError("give an item of /memory or /findings: g1, s2, f3 (or N)")
        if label:
            shown = self.shown
            self.findings("") if label == "f" else self.memory("")
            items, self.shown = [i for i in self.shown if i.label == label], shown
        elif self.shown:
            items = self.shown
        else:
            raise ValidationError("list the items first: /memory or /findings")
        n = int(digits)
        if not 1 <= n <= len(items):
            raise ValidationError(f"no item {rest}: there are {len(items)}")
        return items[n - 1]


COMMANDS = {
    "memory": Command("/memory", "Global Memory and Session Memory, numbered", Commands.memory),
    "findings": Command("/findings [severity]", "this session's findings", Commands.findings),
    "pin": Command("/pin N", "copy item N into Global Memory", Commands.pin),
    "demote": Command("/demote N", "move Global Memory item N into this session", Commands.demote),
    "export": Command(
        "/export FILE", "this session and its data, as one file", Commands.export, settles=True
    ),
    "import": Command("/import FILE", "a session exported with /export", Commands.import_),
    "new": Command("/new [private]", "start a new session", Commands.new, settles=True),
    "resume": Command("/resume ID", "go back to a session", Commands.resume, settles=True),
    "sessions": Command("/sessions", "your sessions", Commands.sessions),
    "delete": Command("/delete ID", "delete a session and its data", Commands.delete, True),
    "help": Command("/help", "this list", Commands.help),
}


def split(line: str) -> tuple[str, str]:
    """A command line's name and the rest."""
    name, _, rest = line.strip().removeprefix("/").partition(" ")
    return name, rest.strip()


def command_named(name: str) -> Command:
    command = COMMANDS.get(name)
    if command is None:
        raise ValidationError(f"no command /{name}; /help lists them")
    return command
