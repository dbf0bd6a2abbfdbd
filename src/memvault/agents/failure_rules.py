"""Failure patterns: what tends to go wrong, how to see it coming, what to do instead (pure).

Three patterns are built in (``rate_limit``, ``context_overflow``, ``ambiguous_request``), each
seen in a request (or its plan) by indicator phrases and shown after a run by error classes.
More are learned from recorded failures: one per error class, which counts its failures and
keeps no text; its indicators are the terms that recur in the requests of the recent failed
executions of that class still kept (in at least half of them, and at least twice), worked
out when patterns are read — so an execution's words leave with it (retention, erasure). A
request matches a pattern when it (or its plan) holds one of a built-in pattern's phrases (an
ambiguous request: also one of fewer than three content words; a context overflow: also more
than 200,000 characters), or two of a learned pattern's recurring terms.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..retrieval.text import STOPWORDS, query_terms, tokens

LEARNED_MATCH = 2
"""Recurring terms a request must share with a learned pattern to match it."""
OVERFLOW_CHARS = 200_000
"""A request and plan longer than this (about 50,000 tokens) may overflow a context window."""


@dataclass(frozen=True, slots=True)
class FailurePattern:
    """A way runs fail: how to recognise it before (``indicators``) and after
    (``error_classes``), and the ``mitigation``. A learned pattern counts its ``occurrences``;
    its ``terms`` are those recurring in its recent failed requests, with in how many."""

    name: str
    description: str
    mitigation: str
    error_classes: tuple[str, ...] = ()
    indicators: tuple[str, ...] = ()
    learned: bool = False
    occurrences: int = 0
    terms: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "mitigation": self.mitigation,
            "error_classes": list(self.error_classes),
            "indicators": list(self.indicators),
            "learned": self.learned,
            "occurrences": self.occurrences,
            "terms": dict(self.terms),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailurePattern:
        return cls(
            str(data["name"]),
            str(data["description"]),
            str(data["mitigation"]),
            tuple(data["error_classes"]),
            tuple(data["indicators"]),
            bool(data["learned"]),
            int(data["occurrences"]),
            {str(k): int(v) for k, v in data["terms"].items()},
        )


@dataclass(frozen=True, slots=True)
class FailureMatch:
    """A pattern a request matches, and what in it matched."""

    pattern: FailurePattern
    matched: tuple[str, ...]

    @property
    def mitigation(self) -> str:
        return self.pattern.mitigation

    def to_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern.to_dict(), "matched": list(self.matched)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailureMatch:
        return cls(FailurePattern.from_dict(data["pattern"]), tuple(data["matched"]))


BUILT_IN = (
    FailurePattern(
        "rate_limit",
        "the model or tool provider refused requests for exceeding its rate",
        "space the calls out: retry with exponential backoff and jitter, lower the "
        "concurrency, batch the calls, or route part of them to another provider",
        ("RateLimitError", "RateLimitExceeded", "TooManyRequests", "HTTP429"),
        (
            "rate limit",
            "429",
            "too many requests",
            "in parallel",
            "concurrently",
            "bulk",
            "for each of",
        ),
    ),
    FailurePattern(
        "context_overflow",
        "the input did not fit the model's context window",
        "split the input into chunks and map-reduce them, summarise before planning, or "
        "retrieve only the relevant parts; choose a model with a longer context",
        ("ContextLengthExceeded", "ContextWindowExceeded", "context_length_exceeded"),
        (
            "entire codebase",
            "whole codebase",
            "entire repository",
            "whole repository",
            "all the files",
            "every file",
            "full transcript",
            "entire document",
            "whole document",
            "all documents",
            "every page",
        ),
    ),
    FailurePattern(
        "ambiguous_request",
        "the request did not say enough to act on",
        "ask one clarifying question (what, for whom, which output) before decomposing",
        ("AmbiguousRequest", "ClarificationNeeded"),
        ("something", "stuff", "whatever", "somehow", "and so on", "etc", "the thing"),
    ),
)
"""The patterns every store knows (seed 004: rate limit, context overflow, ambiguity)."""
_BY_ERROR = {cls: p for p in BUILT_IN for cls in p.error_classes}


def learned_from(existing: FailurePattern | None, error_class: str) -> FailurePattern:
    """The learned pattern of ``error_class`` with one more failure counted."""
    known = _BY_ERROR.get(error_class)
    base = existing or FailurePattern(
        f"learned:{error_class}",
        f"runs failed with {error_class}",
        known.mitigation if known is not None else "",
        (error_class,),
        learned=True,
    )
    occurrences = base.occurrences + 1
    mitigation = base.mitigation if known is not None else _advice(error_class, occurrences)
    return replace(base, mitigation=mitigation, occurrences=occurrences, terms={})


def with_recent(pattern: FailurePattern, requests: Iterable[str]) -> FailurePattern:
    """A learned pattern with the terms that recur in ``requests`` (its recent failed ones):
    those in at least half of them, and in at least two."""
    seen = [set(query_terms(text)) for text in requests]
    counts = Counter(term for terms in seen for term in terms)
    floor = max(2, (len(seen) + 1) // 2)
    recurring = {t: n for t, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])) if n >= floor}
    return replace(pattern, terms=recurring)


def _advice(error_class: str, occurrences: int) -> str:
    return (
        f"{occurrences} earlier runs of requests like this failed with {error_class}: check "
        "for its cause before running, or choose another strategy"
    )


def matching(
    request: str, plan: str | Iterable[str] | None, patterns: Iterable[FailurePattern]
) -> list[FailureMatch]:
    """The patterns ``request`` (with its ``plan``: text or steps) matches, built-in first."""
    steps = [plan] if isinstance(plan, str) else list(plan or ())
    text = "\n".join([request, *steps])
    found = []
    for pattern in patterns:
        if pattern.learned:
            matched = _learned_match(pattern, text)
        else:
            matched = _built_in_match(pattern, text, request)
        if matched:
            found.append(FailureMatch(pattern, matched))
    return found


def _built_in_match(pattern: FailurePattern, text: str, request: str) -> tuple[str, ...]:
    folded = " ".join(re.findall(r"[\w']+", text.casefold()))
    matched = [p for p in pattern.indicators if re.search(rf"\b{re.escape(p)}\b", folded)]
    if pattern.name == "context_overflow" and len(text) > OVERFLOW_CHARS:
        matched.append(f"{len(text):,} characters")
    content = [t for t in tokens(request) if t not in STOPWORDS]
    if pattern.name == "ambiguous_request" and 0 < len(content) < 3:
        matched.append("fewer than three content words")
    return tuple(matched)


def _learned_match(pattern: FailurePattern, text: str) -> tuple[str, ...]:
    shared = tuple(term for term in query_terms(text) if term in pattern.terms)
    return shared if len(shared) >= LEARNED_MATCH else ()
