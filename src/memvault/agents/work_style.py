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
kept are counts, the cues from the lists below that matched, a few specialist words, and
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


Cues = tuple[tuple[str, re.Pattern[str]], ...]


def _cues(listed: str) -> Cues:
    """Cue phrases, ``|``-separated (a leading or trailing space is part of a cue), each with
    its pattern: the phrase, not inside a longer word."""
    return tuple(
        (cue, re.compile(rf"(?<![\w-]){re.escape(cue)}(?![\w-])")) for cue in listed.split("|")
    )


_NEGATION = re.compile(
    r"\b(?:not|no|never|without|don'?t|doesn'?t|didn'?t|isn'?t|needn'?t|nothing|do not|"
    r"does not|need not)\b(?:\s+\w+){0,4}\s*$"
)
_SPEED = _cues(
    "quick|quickly|quickest|fast|faster|asap|rough|roughly|ballpark|brief|briefly|short "
    "version|keep it short|tl;dr|tldr|gist|one-liner|one liner|one line|just the|just tell "
    "me|just give me|gimme|yes or no|yes/no|no explanation|don't explain|skip the "
    "explanation|skip the summaries|skip the long|skip the caveats|hurry|in a rush|rushed|good "
    "enough|approximate|approximately|estimate|rough idea|quick and dirty|real quick|short "
    "pls|short please|in a minute|in 5|due in an hour|fast answer|the command|just the "
    "number|just the syntax|only the|no analysis|just confirm|y/n|just is it|the whole "
    "lecture|whole medical lecture|close enough|short answer"
)
_ACCURACY = _cues(
    "exact|exactly|precise|precisely|accurate|accurately|correct|careful|carefully|thorough|"
    "thoroughly|double-check|double check|verify|verified|confirm|make sure|be sure|"
    "to be sure|take your time|step by "
    "step|rigorous|every step|show your work|cite|citation|sources|no mistakes|a mistake|don't "
    "guess|not a paraphrase|be certain|sound|recheck|re-check|check again|check my|check "
    "that|check the|go over it|slow and correct|rather be|get this right|get it right|perfect"
)
_CORRECTIONS = _cues(
    "that's wrong|that is wrong|that's not right|not right|incorrect|doesn't match|does not "
    "match|don't match|you got a different|that's not what|redo|try again|do it "
    "again|wrong|mistake in|you said|that can't be"
)
_CUT_SHORT = _cues(
    "too long|too much info|too much|shorter|just the gist|skip it|that's enough|that's all i "
    "needed|nvm|never mind|stop|tl;dr"
)
_BASICS = _cues(
    "what is|what's a|what's an|whats a|whats an|what are|what does|what do you mean|what any "
    "of|mean?|i don't know|i dont know|no idea|don't understand|dont understand|new to|never "
    "done|never filed|first time|first ever|beginner|basic question|dumb question|sorry "
    "if|explain like|simple terms|simple words|plain english|simpler|layman|eli5|confused|not "
    "sure what|not really a|i'm not a|im not a|how do i|what should i|is it bad|help me "
    "understand|in simple|what even is|what mean|just started|i am new|i'm new|im new|started "
    "using"
)
_ADVANCED = _cues(
    "skip the basics|i'm familiar|im familiar| vs | versus |trade-off|tradeoff|at scale|in "
    "production|in prod|edge case|per current|under |benchmark|here. |here,|we currently|we're "
    "running|we run|our cluster|complexity|semantics|asymptotic|invariant|idempotent|concurrency"
)
_SIMPLER = _cues(
    "simpler|simple words|simple terms|plain english|less technical|too technical|dumb it "
    "down|like i'm five|eli5"
)
_DEEPER = _cues(
    "skip the basics|too basic|more depth|go deeper|more technical|i know that|i know joins|don't"
    " need the basics|assume i know"
)
_SPECIALIST = frozenset(
    """
    api sdk cli latency throughput idempotent idempotency mutex deadlock cache caching regex
    kernel compiler runtime schema index query queries join joins postgres sql nosql shard
    sharding replica replication cluster kubernetes container docker terraform cron daemon
    async await thread threads pointer pointers allocation heap stack recursion algorithm
    hashing hash serialization deserialization protocol tcp udp http https dns tls ssl
    gradient regression classifier embedding embeddings tensor tensors inference overfitting
    variance covariance heteroscedasticity bayesian posterior prior likelihood p-value anova
    quantile percentile silhouette k-means clustering bootstrap stochastic
    contraindicated contraindication pharmacokinetics dosing titration inhibitor inhibition
    etiology prognosis differential diagnosis comorbidity renal hepatic cytokine antibody
    tort statute jurisdiction liability indemnity indemnification estoppel precedent
    plaintiff defendant fiduciary arbitration injunction covenant
    ebitda wacc dcf amortization depreciation accrual arbitrage derivative derivatives
    hedging liquidity valuation yield duration convexity tranche equity leverage
    emulsion emulsify gelatin braise roux mise maillard fermentation hydration lamination
    joist rafter load-bearing subfloor flashing grout drywall amperage breaker gfci
    wavelength spectroscopy titrate molarity stoichiometry enthalpy entropy isotope
    eigenvalue eigenvector manifold topology homomorphism lemma theorem
    hydrate hydration crdt crdts tombstone tombstones consensus raft paxos quorum
    monorepo microservice microservices orchestration observability telemetry
    """.split()
)
_QUOTED = re.compile(
    r"```.*?```|`[^`\n]*`|\"[^\"\n]{3,}\"|\u201c[^\u201d\n]{3,}\u201d|"
    r"\u2018[^\u2019\n]{3,}\u2019|(?<![\w])'[^'\n]{3,}'(?![\w])",
    re.DOTALL,
)
_REPORTED = re.compile(
    r"\b(?:says|said|say|saying|told me|tells me|wrote|writes|mentioned|insists|keeps saying|"
    r"according to|the (?:readme|docs|manual|runbook|ticket|email) (?:says|said))\b[^.!?\n]*",
    re.IGNORECASE,
)
_PERSONAL = re.compile(r"\b(?:i|i'm|im|my|me|we|our|you|your|pls|please|can|could)\b", re.I)
_SHAPES = re.compile(
    r"\b(?:[A-Z]{2,}[0-9A-Z]*s?|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w+_\w+|[a-z]+\d+\w*|"
    r"\w+\.\w+\(\)?|--\w[\w-]*)\b"
)
_NOT_SHAPES = frozenset({"OK", "I", "US", "USA", "UK", "EU", "AM", "PM", "TV", "ID", "PDF"})


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
    text = _QUOTED.sub(" ", text)
    text = _REPORTED.sub(" ", text)
    lines = [line for line in text.splitlines() if line.strip()]
    kept = lines[:1] + [line for line in lines[1:] if _PERSONAL.search(line)]
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
            found.append((cue, bool(_NEGATION.search(before))))
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

    for cue, negated in _matches(low, _SPEED):
        seen("accuracy" if negated else "speed", ("not " if negated else "") + cue)
    for cue, negated in _matches(low, _ACCURACY):
        seen("speed" if negated else "accuracy", ("not " if negated else "") + cue)
    for name, listed in (
        ("corrections", _CORRECTIONS),
        ("cut_short", _CUT_SHORT),
        ("basics", _BASICS),
        ("advanced", _ADVANCED),
        ("simpler", _SIMPLER),
        ("deeper", _DEEPER),
    ):
        for cue, negated in _matches(low, listed):
            if not negated:
                seen(name, cue)
    special = [w for w in words if w.lower() in _SPECIALIST]
    special += [s for s in _SHAPES.findall(mine) if s not in _NOT_SHAPES]
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
