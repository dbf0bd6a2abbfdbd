"""How a user likes work done, inferred from what they write and how their requests go (pure).

Two judgements, each with its evidence and a confidence: an **expertise** level (``novice``,
``intermediate``, ``expert``) from the user's vocabulary (specialist words and shapes: acronyms,
identifiers, figures with units), the questions they ask (what a basic term means, or a
trade-off between two advanced ones) and what they accept (asking for simpler words, or to
skip the basics); and a **leaning** (``speed``, ``accuracy``, ``balanced``) from what they say
("just a rough number", "double-check it", "no rush" — a negation turns the cue around) and do
(a correction or a retry of a failed request leans to accuracy; cutting an answer short or
dropping a failed request, to speed).

Only the user's own words count: quoted text ("my boss says 'quick and dirty'"), reported
speech, code and pasted lines (a log, an excerpt) are taken out before reading a turn. What is
kept are counts, the cues (:mod:`.work_style_cues`) that matched, a few specialist words, and
hashed term sets of the recent failed requests (to see a retry; short unkeyed hashes: a
dictionary could recover common words, so they leave with the entry): never their messages.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, Literal

from ..retrieval.text import query_terms
from .work_style_cues import (
    ACCURACY,
    ADVANCED,
    BASICS,
    CORRECTIONS,
    CUT_SHORT,
    DEEPER,
    NEGATION,
    NOT_SHAPES,
    PERSONAL,
    QUOTED,
    REPORTED,
    SHAPES,
    SIMPLER,
    SPECIALIST,
    SPEED,
    Cues,
)

Expertise = Literal["novice", "intermediate", "expert"]
Leaning = Literal["speed", "accuracy", "balanced"]
LEANINGS: tuple[Leaning, ...] = ("speed", "accuracy", "balanced")
RECENT = 8
"""Recent failed requests kept (hashed) to see a retry."""
KEPT_CUES = 6
"""Cues and specialist words kept as evidence, per list."""
SAME_REQUEST = 0.5
"""Share of terms (Jaccard) at which a request repeats or rewords an earlier one."""
MIN_CONFIDENCE = 0.3
"""Confidence a leaning needs before a choice made for the user follows it."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What has been seen of a user's way of working, as counts (and the cues that matched)."""

    turns: int = 0
    words: int = 0
    specialist: int = 0
    basics: int = 0
    advanced: int = 0
    simpler: int = 0
    deeper: int = 0
    speed: int = 0
    accuracy: int = 0
    corrections: int = 0
    cut_short: int = 0
    runs: int = 0
    failed_runs: int = 0
    retries: int = 0
    dropped: int = 0
    pending_failure: bool = False
    cues: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    failed: tuple[tuple[str, ...], ...] = ()

    def __add__(self, other: Evidence) -> Evidence:
        """Both bodies of evidence (``other`` the newer)."""
        counts = {
            f.name: getattr(self, f.name) + getattr(other, f.name)
            for f in fields(self)
            if f.name not in {"pending_failure", "cues", "failed"}
        }
        cues = {
            name: _kept(self.cues.get(name, ()), other.cues.get(name, ()))
            for name in {*self.cues, *other.cues}
        }
        merged = Evidence(
            pending_failure=other.pending_failure,
            cues=dict(sorted(cues.items())),
            failed=(self.failed + other.failed)[-RECENT:],
        )
        return replace(merged, **counts)

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["cues"] = {k: list(v) for k, v in self.cues.items()}
        data["failed"] = [list(s) for s in self.failed]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["cues"] = {str(k): tuple(v) for k, v in dict(data.get("cues") or {}).items()}
        values["failed"] = tuple(tuple(s) for s in data.get("failed") or ())
        return cls(**values)


def _kept(old: Iterable[str], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*old, *new]))[:KEPT_CUES]


def own_words(text: str) -> str:
    """The user's own words in ``text``: without quoted text, code, reported speech, and the
    lines of a paste (those after the first that address no one)."""
    text = QUOTED.sub(" ", text)
    text = REPORTED.sub(" ", text)
    lines = [line for line in text.splitlines() if line.strip()]
    kept = lines[:1] + [line for line in lines[1:] if PERSONAL.search(line)]
    return "\n".join(kept)


def _matches(text: str, cues: Cues) -> list[tuple[str, bool]]:
    """The cues in ``text`` (lower case), each with whether a negation comes just before."""
    found = []
    for cue, pattern in cues:
        if cue not in text:  # most cues are not there: the plain search first
            continue
        for hit in pattern.finditer(text):
            before = text[max(0, hit.start() - 40) : hit.start()]
            before = re.split(r"[.,;:!?\n]|\bbut\b", before)[-1]
            found.append((cue, bool(NEGATION.search(before))))
    return found


def read_turn(text: str) -> Evidence:
    """What one message of the user shows."""
    mine = own_words(text)
    low = f" {mine.lower()} "
    words = re.findall(r"[\w'-]+", mine)
    cues: dict[str, list[str]] = {}
    counts: dict[str, Any] = dict.fromkeys(
        ("speed", "accuracy", "corrections", "cut_short", "basics", "advanced", "simpler",
         "deeper"), 0
    )  # fmt: skip

    def seen(name: str, cue: str) -> None:
        counts[name] += 1
        cues.setdefault(name, []).append(cue.strip())

    for cue, negated in _matches(low, SPEED):
        seen("accuracy" if negated else "speed", ("not " if negated else "") + cue)
    for cue, negated in _matches(low, ACCURACY):
        seen("speed" if negated else "accuracy", ("not " if negated else "") + cue)
    for name, listed in (
        ("corrections", CORRECTIONS),
        ("cut_short", CUT_SHORT),
        ("basics", BASICS),
        ("advanced", ADVANCED),
        ("simpler", SIMPLER),
        ("deeper", DEEPER),
    ):
        for cue, negated in _matches(low, listed):
            if not negated:
                seen(name, cue)
    special = [w for w in words if w.lower() in SPECIALIST]
    special += [s for s in SHAPES.findall(mine) if s not in NOT_SHAPES]
    if special:
        cues["specialist"] = special
    found = Evidence(
        turns=1,
        words=len(words),
        specialist=len(special),
        cues={k: _kept((), v) for k, v in sorted(cues.items())},
    )
    return replace(found, **counts)


def signature(request: str) -> tuple[str, ...]:
    """A request's terms, hashed (to compare requests without keeping them)."""
    return tuple(
        sorted(
            {hashlib.blake2b(t.encode(), digest_size=4).hexdigest() for t in query_terms(request)}
        )
    )


def read_run(before: Evidence, request: str, success: bool) -> Evidence:
    """What one run of the user's request adds to ``before``: a retry when it repeats or
    rewords a recent failed one; a dropped request when the one before failed and this is
    another."""
    mine = set(signature(request))
    retry = any(_similar(mine, set(old)) for old in before.failed)
    dropped = before.pending_failure and not retry
    return Evidence(
        runs=1,
        failed_runs=int(not success),
        retries=int(retry),
        dropped=int(dropped),
        pending_failure=not success,
        failed=() if success else (tuple(sorted(mine)),),
    )


def _similar(a: set[str], b: set[str]) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) >= SAME_REQUEST


@dataclass(frozen=True, slots=True)
class Judgement:
    """One inference: its ``value``, a ``confidence`` from 0 to 1, and the evidence for it."""

    value: str
    confidence: float
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "confidence": self.confidence, "evidence": list(self.evidence)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Judgement:
        return cls(str(data["value"]), float(data["confidence"]), tuple(data["evidence"]))


def _confidence(margin: float, amount: float) -> float:
    """Grows with the margin of the winning side and the amount of evidence."""
    return round((1 - math.exp(-abs(margin) / 2)) * (1 - math.exp(-amount / 3)), 3)


def _shown(evidence: Evidence, name: str, label: str) -> list[str]:
    count = getattr(evidence, name)
    if not count:
        return []
    cues = evidence.cues.get(name, ())
    return [f"{label}: {count}" + (f" ({', '.join(cues)})" if cues else "")]


def expertise(evidence: Evidence) -> Judgement:
    """The expertise the evidence shows."""
    density = evidence.specialist / max(evidence.words, 1)
    vocabulary = min(3.0, 40 * density) if evidence.specialist >= 2 else 0.0
    score = (
        vocabulary
        + 1.5 * evidence.advanced
        + 2.0 * evidence.deeper
        - 1.5 * evidence.basics
        - 2.0 * evidence.simpler
    )
    value: Expertise = "expert" if score >= 2.5 else "novice" if score <= -1.5 else "intermediate"
    shown = [
        f"vocabulary: {evidence.specialist} specialist words in {evidence.words}"
        + (f" ({', '.join(evidence.cues.get('specialist', ()))})" if evidence.specialist else ""),
        *_shown(evidence, "basics", "basic questions"),
        *_shown(evidence, "advanced", "advanced questions"),
        *_shown(evidence, "simpler", "asked for simpler"),
        *_shown(evidence, "deeper", "asked for more depth"),
    ]
    middle = 2.5 - abs(score - 0.5) if value == "intermediate" else abs(score) - 1.0
    amount = evidence.turns + evidence.basics + evidence.advanced + evidence.specialist / 3
    return Judgement(value, _confidence(max(middle, 0.5), amount), tuple(shown))


def leaning(evidence: Evidence) -> Judgement:
    """The speed/accuracy leaning the evidence shows."""
    score = (
        1.5 * (evidence.accuracy - evidence.speed)
        + evidence.corrections
        + 1.5 * evidence.retries
        - 1.5 * evidence.cut_short
        - evidence.dropped
    )
    value: Leaning = "accuracy" if score >= 1.5 else "speed" if score <= -1.5 else "balanced"
    shown = [
        *_shown(evidence, "speed", "asked for speed"),
        *_shown(evidence, "accuracy", "asked for accuracy"),
        *_shown(evidence, "corrections", "corrections"),
        *_shown(evidence, "cut_short", "cut an answer short"),
        *_shown(evidence, "retries", "retried a failed request"),
        *_shown(evidence, "dropped", "dropped a failed request"),
    ]
    signals = (
        evidence.speed + evidence.accuracy + evidence.corrections + evidence.retries
        + evidence.cut_short + evidence.dropped
    )  # fmt: skip
    margin = abs(score) if value != "balanced" else 1.5 - abs(score) + 0.5
    amount = signals + (evidence.turns + evidence.runs) / 3
    return Judgement(value, _confidence(margin, amount), tuple(shown) or ("no signal",))


@dataclass(frozen=True, slots=True)
class WorkStyle:
    """What a user prefers in how work is done, inferred: ``expertise`` and ``leaning``, with
    their evidence; ``remembered`` (opted in: kept across inactivity) and when it resets
    (``resets_at``, None when remembered or nothing is known)."""

    user_id: str
    expertise: Judgement
    leaning: Judgement
    remembered: bool = False
    last_active: datetime | None = None
    resets_at: datetime | None = None
    evidence: Evidence = field(default_factory=Evidence)

    @classmethod
    def of(
        cls,
        user_id: str,
        evidence: Evidence,
        remembered: bool,
        last_active: datetime | None,
        resets_at: datetime | None,
    ) -> WorkStyle:
        return cls(
            user_id,
            expertise(evidence),
            leaning(evidence),
            remembered,
            last_active,
            resets_at,
            evidence,
        )

    @property
    def prefer(self) -> Leaning:
        """What a choice made for this user prefers: the leaning once its confidence is at
        least :data:`MIN_CONFIDENCE`, else balanced."""
        value = self.leaning.value if self.leaning.confidence >= MIN_CONFIDENCE else "balanced"
        return value if value in LEANINGS else "balanced"

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "expertise": self.expertise.to_dict(),
            "leaning": self.leaning.to_dict(),
            "remembered": self.remembered,
            "last_active": None if self.last_active is None else self.last_active.isoformat(),
            "resets_at": None if self.resets_at is None else self.resets_at.isoformat(),
            "evidence": self.evidence.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkStyle:
        def when(name: str) -> datetime | None:
            value = data.get(name)
            return None if value is None else datetime.fromisoformat(value)

        return cls(
            str(data["user_id"]),
            Judgement.from_dict(data["expertise"]),
            Judgement.from_dict(data["leaning"]),
            bool(data["remembered"]),
            when("last_active"),
            when("resets_at"),
            Evidence.from_dict(data["evidence"]),
        )
