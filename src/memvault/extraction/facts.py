"""The values extraction works with: the turns it reads and the candidate facts it proposes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal


class FactCategory(StrEnum):
    """The four categories extraction may propose; anything else is dropped."""

    PREFERENCE = "preference"
    DECISION = "decision"
    FACT = "fact"
    CONTEXT = "context"


QUOTED = "The user said: "
"""How a stored fact that keeps the user's own words begins."""
DURABLE = frozenset({FactCategory.PREFERENCE, FactCategory.DECISION})
"""Categories that describe the user for good: routed to Global Memory (never from a private
session); ``fact`` and ``context`` go to the session's Session Memory."""

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One record of the extraction window, as an extractor sees it."""

    number: int
    """1-based position in the window: the ``turn-N`` an extractor cites."""
    role: Role
    text: str
    tool_influenced: bool = False
    """The turn came after tool output in the same exchange (its facts are ``tool_originated``)."""


@dataclass(frozen=True, slots=True)
class Correction:
    """What a correcting turn replaces: the window turn that stated the fact, the value it had
    there and the value the user gives now ("Deloite" → "Deloitte" for "I work at Deloite",
    corrected by "*Deloitte, typo")."""

    turn: int
    wrong: str
    right: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact an extractor proposes; the pipeline decides whether and where it is stored."""

    category: str
    fact: str
    """The fact in English, about the user in the third person ("The user lives in Paris.")."""
    native: str | None = None
    """The same fact as the user said it, when they did not say it in English."""
    turn: int | None = None
    """The window turn the extractor cites (``turn-N``), if any."""
    replaces: tuple[str, ...] = ()
    """Handles (``M1``, ``M2``…) of shown memories this fact updates."""
    reason: str | None = None
    """Why it replaces them, in a few words."""
    identity: bool | None = None
    """Whether the extractor judged that the fact says who the user is (their work, family,
    home, health…: a ``fact`` routed to Global Memory when the user stated it); ``None`` when
    it did not judge, and the fact's shape decides."""
    accepts: str | None = None
    """The assistant's suggestion this fact says the user took, as the user named it ("The
    user chose kobo." from "kobo then"); the pipeline checks the acceptance again itself."""
    correction: Correction | None = None
    """The earlier statement this fact corrects: its turn's words ground the fact too, and a
    stored memory with the wrong value is what it replaces."""
    updates_only: bool = False
    """Proposed only as an update: the user's words of a change the extractor could not read
    as a fact ("dropped Spanish, doing Italian now"), stored only when they update a memory."""
    vector: Any = field(default=None, compare=False, repr=False)
    """The fact's embedding by the packaged MiniLM, when the extractor made one (the learned
    judge weighs it): a store that embeds with that model stores it as is."""
