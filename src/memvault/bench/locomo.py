"""LoCoMo retrieval benchmark: turn_recall@k and session_any@k through the public API.

Each conversation is one scope; every turn is one entry whose text is
``"<session date> <speaker>: <text>"`` (plus ``" [shares image: <caption>]"``), written with
its session's date as ``created_at``, the turn before it as ``context``, and its ``dia_id`` in
metadata. Every question goes through :meth:`Memory.search` (conversational, reranked; the same
search without the reranker is measured too). A plain BM25 ranking and a
dense-only ranking over the same turns are measured in the same run as baselines. The LLM-made
``observation``/``session_summary`` and the human ``event_summary`` fields are never read.
"Nothing relevant" (no hit of the best 10 reaching ``Settings.min_relevance``) is scored on
the questions nothing answers: category 5, and ``abstention`` questions where a file has them
(memvault's labelled sets).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Settings
from ..embeddings import Embedder
from ..errors import ValidationError
from ..memory import Memory
from ..patterns import lazy
from ..retrieval.lexical import bm25
from ..retrieval.text import words
from ..types import NewEntry, Scope, SearchHit

ANSWERABLE = (1, 2, 3, 4)
_EVIDENCE = lazy(r"^D(\d+):(\d+)$")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    session: int
    text: str
    line: str
    when: datetime


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(slots=True)
class Conversation:
    sample_id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    abstentions: list[str] = field(default_factory=list)
    """Questions nothing in the conversation bears on (memvault's labelled sets add them)."""


def parse_session_date(text: str) -> datetime:
    """LoCoMo dates look like ``1:56 pm on 8 May, 2023`` (taken as UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load(path: Path) -> list[Conversation]:
    """Conversations with their turns and the questions that have usable evidence; a file that
    is not LoCoMo JSON is a ValidationError."""
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
        conversations = _conversations(samples if isinstance(samples, list) else [])
    except (ValueError, UnicodeDecodeError, RecursionError, KeyError, TypeError) as exc:
        reason = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise ValidationError(f"{path} is not a LoCoMo JSON file ({reason})") from None
    if not any(c.questions for c in conversations):
        raise ValidationError(f"{path} holds no LoCoMo conversation with usable questions")
    return conversations


def _conversations(samples: list[dict[str, Any]]) -> list[Conversation]:
    conversations = []
    for sample in samples:
        conversation = Conversation(sample["sample_id"])
        dialogue = sample["conversation"]
        n = 1
        while f"session_{n}" in dialogue:
            date = dialogue[f"session_{n}_date_time"]
            for turn in dialogue[f"session_{n}"]:
                text = f"{date} {turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares image: {turn['blip_caption']}]"
                line = f"{turn['speaker']}: {turn['text']}"
                conversation.turns.append(
                    Turn(turn["dia_id"], n, text, line, parse_session_date(date))
                )
            n += 1
        for qa in sample["qa"]:
            evidence = tuple(e for e in qa.get("evidence", []) if _EVIDENCE.match(e))
            if evidence:
                conversation.questions.append(Question(qa["question"], qa["category"], evidence))
        conversation.abstentions = [str(q["question"]) for q in sample.get("abstention", [])]
        conversations.append(conversation)
    return conversations


def session_of(dia_id: str) -> int:
    match = _EVIDENCE.match(dia_id)
    return int(match[1]) if match else -1


def score_ranking(
    ranking: Sequence[str], question: Question, ks: Sequence[int]
) -> dict[str, float]:
    """turn_recall@k and session_any@k of one ranked list of dia_ids."""
    evidence = set(question.evidence)
    wanted = {session_of(e) for e in evidence}
    sessions = list(dict.fromkeys(session_of(d) for d in ranking))
    result = {}
    for k in ks:
        result[f"turn_recall@{k}"] = len(evidence & set(ranking[:k])) / len(evidence)
        result[f"session_any@{k}"] = float(bool(wanted & set(sessions[:k])))
    return result


def summarise(rows: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    """Means over answerable questions, over all, and per category."""

    def mean(selected: list[dict[str, float]]) -> dict[str, float]:
        if not selected:
            return {}
        return {key: round(statistics.fmean(r[key] for r in selected), 4) for key in selected[0]}

    by_category = {
        str(c): mean([r for cat, r in rows if cat == c])
        | {"questions": sum(1 for cat, _ in rows if cat == c)}
        for c in sorted({cat for cat, _ in rows})
    }
    return {
        "answerable": mean([r for cat, r in rows if cat in ANSWERABLE]),
        "all": mean([r for _, r in rows]),
        "by_category": by_category,
    }


def ingest(memory: Memory, conversation: Conversation) -> Scope:
    scope = Scope.object("conversation", conversation.sample_id)
    items = []
    previous: Turn | None = None
    for turn in conversation.turns:
        context = previous.line if previous and previous.session == turn.session else None
        items.append(
            NewEntry(
                turn.text,
                scope,
                metadata={"dia_id": turn.dia_id},
                context=context,
                created_at=turn.when,
            )
        )
        previous = turn
    memory.write_many(items)
    return scope


def _nothing(hits: Sequence[SearchHit], threshold: float) -> bool:
    """Whether none of the best 10 hits reaches the relevance threshold."""
    return not any(hit.relevance >= threshold for hit in hits[:10])


def _dia_ids(hits: Sequence[SearchHit]) -> list[str]:
    return [str(hit.entry.metadata["dia_id"]) for hit in hits]


def baseline_rankings(
    conversation: Conversation, embedder: Embedder, depth: int
) -> dict[str, list[list[str]]]:
    """Plain BM25 (every query word, no stemming) and dense-only cosine over the turn texts."""
    ids = [t.dia_id for t in conversation.turns]
    documents = [words(t.text) for t in conversation.turns]
    turn_vectors = embedder.embed([t.text for t in conversation.turns])
    question_vectors = embedder.embed([q.text for q in conversation.questions])
    lexical, dense = [], []
    for question, vector in zip(conversation.questions, question_vectors, strict=True):
        scores = bm25(documents, words(question.text))
        lexical.append([ids[i] for i in np.argsort(-scores, kind="stable")[:depth]])
        dense.append([ids[i] for i in np.argsort(-(turn_vectors @ vector), kind="stable")[:depth]])
    return {"bm25": lexical, "dense": dense}


def nothing_relevant(flags: list[tuple[int, bool]], threshold: float) -> dict[str, Any]:
    """How well "no hit reaches the threshold" tells the questions nothing bears on: those of
    category 5 (adversarial) and abstention questions (category 0), against answerable ones."""
    unanswerable = [flag for category, flag in flags if category in (0, 5)]
    answerable = [flag for category, flag in flags if category in ANSWERABLE]
    flagged = sum(unanswerable) + sum(answerable)
    by = {
        str(c): round(statistics.fmean(f for cat, f in flags if cat == c), 4)
        for c in sorted({cat for cat, _ in flags})
    }
    return {
        "threshold": threshold,
        "recall": round(statistics.fmean(unanswerable), 4) if unanswerable else None,
        "precision": round(sum(unanswerable) / flagged, 4) if flagged else None,
        "flagged_by_category": by,
    }


def run(
    data: Path,
    ks: Sequence[int] = (1, 5, 10, 25),
    *,
    store: str = ":memory:",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark; the result is JSON-ready."""
    conversations = load(data)
    depth = max(*ks, 50)
    settings = Settings(near_duplicate_threshold=0.0, max_limit=max(depth, 10_000))
    rows: list[tuple[int, dict[str, float]]] = []
    baseline_rows: dict[str, list[tuple[int, dict[str, float]]]] = {
        "no_rerank": [],
        "bm25": [],
        "dense": [],
    }
    latencies: list[float] = []
    flags: list[tuple[int, bool]] = []
    threshold = settings.min_relevance
    ingest_s = 0.0
    with Memory(store, settings=settings) as memory:
        for conversation in conversations:
            started = time.perf_counter()
            scope = ingest(memory, conversation)
            ingest_s += time.perf_counter() - started
            for question in conversation.questions:
                started = time.perf_counter()
                hits = memory.search(
                    question.text, scope, limit=depth, conversational=True, rerank=True
                )
                latencies.append((time.perf_counter() - started) * 1000)
                rows.append((question.category, score_ranking(_dia_ids(hits), question, ks)))
                flags.append((question.category, _nothing(hits, threshold)))
                first = memory.search(question.text, scope, limit=depth, conversational=True)
                baseline_rows["no_rerank"].append(
                    (question.category, score_ranking(_dia_ids(first), question, ks))
                )
            for asked in conversation.abstentions:
                hits = memory.search(asked, scope, limit=10, conversational=True, rerank=True)
                flags.append((0, _nothing(hits, threshold)))
            for name, rankings in baseline_rankings(conversation, memory.embedder, depth).items():
                for question, ranking in zip(conversation.questions, rankings, strict=True):
                    baseline_rows[name].append(
                        (question.category, score_ranking(ranking, question, ks))
                    )
            if progress:
                progress(
                    f"{conversation.sample_id}: {len(conversation.turns)} turns, "
                    f"{len(conversation.questions)} questions"
                )
    return {
        **summarise(rows),
        "baselines": {name: summarise(r) for name, r in baseline_rows.items()},
        "nothing_relevant": nothing_relevant(flags, threshold),
        "ingest_s": round(ingest_s, 2),
        "search_ms_p50": round(statistics.median(latencies), 2),
        "search_ms_p99": round(float(np.percentile(latencies, 99)), 2),
        "questions": len(rows),
        "turns": sum(len(c.turns) for c in conversations),
        "conversations": [c.sample_id for c in conversations],
    }


def table(result: dict[str, Any], ks: Iterable[int]) -> str:
    """A plain-text summary: memvault against the baselines, answerable questions."""
    keys = [f"turn_recall@{k}" for k in ks] + [f"session_any@{k}" for k in ks]
    lines = [f"{'ranking':<12}" + "".join(f"{k:>17}" for k in keys)]
    rows = [("memvault", result["answerable"])] + [
        (name, summary["answerable"]) for name, summary in result["baselines"].items()
    ]
    for name, summary in rows:
        lines.append(f"{name:<12}" + "".join(f"{summary.get(k, 0):>17.3f}" for k in keys))
    lines.append(
        f"ingest {result['ingest_s']} s, search p50 {result['search_ms_p50']} ms, "
        f"{result['questions']} questions over {result['turns']} turns"
    )
    nothing = result["nothing_relevant"]
    lines.append(
        f"nothing relevant (no hit of the best 10 at relevance >= {nothing['threshold']}): "
        f"recall {nothing['recall']} on questions nothing answers (category 5, abstention), "
        f"precision {nothing['precision']}"
    )
    return "\n".join(lines)
