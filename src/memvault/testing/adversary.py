"""A compromised extraction model, and the attack corpus run through both extraction paths.

The model's reply is untrusted input: :func:`compromised_replies` answers, for one attack of a
corpus (``tests/data/attacks_dev.jsonl``, ``benchmarks/data/attacks_blind.jsonl``), what a
steered model would — the payload stated as the user's fact (``naive``), the same laundered
through the native field holding the user's own words (``native``), and a grounded trivial fact
that ``replaces`` every stored memory (``replaces``). :func:`run_attack` sends one turn through a
memory whose LLM is a real OpenAI-protocol server answering that reply (or through the heuristic
extractor) and reports what reached the user's Global Memory or system prompt as
``[user-stated]``, and which stored memories were retired. :func:`run_statement` does the same
for a benign statement answered honestly, and reports how much of it was learned.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..facilities.model import Source
from ..memory import Memory
from ..patterns import lazy

Row = Mapping[str, Any]


def load(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a JSONL corpus file."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def plain(text: str) -> str:
    """Text compared for a payload: NFKC, without format characters, case-folded, one line."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.casefold().split())


def _line(category: str, fact: str, native: str = "", replaces: Sequence[int] = ()) -> str:
    handles = ",".join(f"M{n}" for n in replaces)
    tail = f"|replaces {handles}: the user said something new about it" if handles else ""
    return f"{category}|turn-1|{' '.join(fact.split())}|{' '.join(native.split())}{tail}"


def compromised_replies(attack: Row) -> dict[str, str]:
    """What a steered model answers for ``attack``, by variant (``native``: one text for every
    fact, or a list of one per fact)."""
    facts = attack["facts"]
    native = attack.get("native") or attack["user"]
    natives = native if isinstance(native, list) else [native] * len(facts)
    replies = {
        "naive": "\n".join(_line(f["category"], f["fact"]) for f in facts),
        "native": "\n".join(
            _line(f["category"], f["fact"], n) for f, n in zip(facts, natives, strict=False)
        ),
    }
    existing = attack.get("existing") or []
    if existing:
        every = range(1, len(existing) + 1)
        replies["replaces"] = "\n".join(
            _line(f["category"], f["fact"], replaces=every) for f in facts
        )
    return replies


_SHOWN = lazy(r'<memory_[0-9a-f]+ handle="M(\d+)"[^>]*>\n(.*?)\n</memory_', re.DOTALL)


def shown(prompt: str) -> dict[str, int]:
    """The memories an extraction request shows, content → handle number."""
    return {plain(text): int(n) for n, text in _SHOWN.findall(prompt)}


def honest_reply(statement: Row, prompt: str) -> str:
    """What an honest model answers for a benign statement, given the extraction request: its
    facts, the native expression when the user did not write English, and (on the first fact)
    the handles of the stored memories it replaces."""
    native = statement["user"] if statement.get("lang", "en") != "en" else ""
    handles = shown(prompt)
    existing = statement.get("existing") or []
    replaces = [handles[plain(existing[i])] for i in _replaced(statement)]
    return "\n".join(
        _line(f["category"], f["fact"], native, replaces if n == 0 else ())
        for n, f in enumerate(statement["facts"])
    )


@dataclass(slots=True)
class AttackResult:
    """What one attack achieved: payloads that reached Global Memory or the system prompt as
    ``[user-stated]``, and stored memories it retired."""

    attack: str
    variant: str
    reached: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return not self.reached and not self.retired


def _seed(memory: Memory, user: str, session_id: str, facts: Sequence[str]) -> list[str]:
    return [
        memory.add_global_memory(
            user, fact, category="preference", source=Source.USER_TURN, session_id=session_id
        ).id
        for fact in facts
    ]


def _turn(memory: Memory, session_id: str, row: Row) -> None:
    tools = [{"content": t, "tool_name": "fetch"} for t in row.get("tool") or []]
    memory.add_turn(
        session_id, user=row["user"], tool_records=tools, assistant=row.get("assistant")
    )
    memory.flush()


def run_attack(memory: Memory, attack: Row, variant: str, user: str) -> AttackResult:
    """Send ``attack`` as one turn of a new session of ``user`` (its ``existing`` facts stored
    first, as the user's) and report what it achieved."""
    session = memory.create_session(user)
    seeded = _seed(memory, user, session.id, attack.get("existing") or [])
    _turn(memory, session.id, attack)
    result = AttackResult(attack["id"], variant)
    payload = plain(attack["payload"])
    if not attack.get("replaces_all"):
        for entry in memory.retrieve(f"user:{user}", include_superseded=True, limit=500):
            stated = entry.provenance.source == Source.USER_TURN and entry.id not in seeded
            if stated and payload in plain(f"{entry.content} {entry.metadata.get('native', '')}"):
                result.reached.append(f"global memory: {entry.content}")
        for line in memory.system_prompt(session.id).splitlines():
            if "[user-stated]" in line and payload in plain(line) and not _seeded(line, attack):
                result.reached.append(f"system prompt: {line}")
    for entry_id in seeded:
        kept = memory.get(entry_id)
        if kept is None or kept.superseded:
            result.retired.append(entry_id)
    return result


def _seeded(line: str, attack: Row) -> bool:
    return any(plain(fact) in plain(line) for fact in attack.get("existing") or [])


@dataclass(slots=True)
class StatementResult:
    """How much of a benign statement was learned, and whether its updates were right."""

    statement: str
    expected: int
    learned: int
    updates_right: bool | None = None
    missed: list[str] = field(default_factory=list)


def run_statement(memory: Memory, statement: Row, user: str) -> StatementResult:
    """Send a benign statement as one turn (its ``existing`` facts stored first) and count the
    expected facts whose keywords a current, user-stated memory holds — in another language,
    every fact when such a memory quotes the user's words."""
    session = memory.create_session(user)
    seeded = _seed(memory, user, session.id, statement.get("existing") or [])
    _turn(memory, session.id, {"user": statement["user"], "assistant": "OK."})
    held = [
        plain(f"{e.content} {e.metadata.get('native', '')}")
        for e in _current(memory, user, session.id)
        if e.id not in seeded and e.provenance.source == Source.USER_TURN
    ]
    result = StatementResult(statement["id"], len(statement["facts"]), 0)
    theirs = statement.get("lang", "en") != "en" and any(
        piece in text for piece in _pieces(statement["user"]) for text in held
    )
    for fact in statement["facts"]:
        keywords = [plain(k) for k in fact.get("keywords") or []]
        if theirs or any(all(k in text for k in keywords) for text in held):
            result.learned += 1
        else:
            result.missed.append(fact["fact"])
    if statement.get("existing"):
        wanted = {seeded[i] for i in _replaced(statement)}
        gone = {i for i in seeded if (e := memory.get(i)) is None or e.superseded}
        result.updates_right = gone == wanted
    return result


def _replaced(statement: Row) -> list[int]:
    """The indexes into ``existing`` a statement replaces (given as indexes or as the facts)."""
    existing = [plain(fact) for fact in statement.get("existing") or []]
    return [
        item if isinstance(item, int) else existing.index(plain(item))
        for item in statement.get("replaces") or []
    ]


def _pieces(text: str) -> list[str]:
    """The sentences of a statement, plain: in another language a memory that quotes one keeps
    the user's own words (its English keywords cannot be in them)."""
    return [p for p in (plain(x) for x in re.split(r"[.!?\u3002,\uff0c]", text)) if len(p) >= 4]


def _current(memory: Memory, user: str, session_id: str) -> Iterator[Any]:
    """The user's current Global Memory and the session's Session Memory."""
    yield from memory.retrieve(f"user:{user}", limit=500)
    notes = memory.retrieve(f"session:{session_id}", limit=500)
    yield from (e for e in notes if e.category in ("fact", "context"))
