"""``analyze-data``: the sliding-window summariser (seed 001 §6). The model reads a table one
window of rows at a time, with the notes it kept so far, and answers each window with new notes
and findings (JSON). Rows and notes go in as data in nonce-tagged wrappers; a reply that echoes
the nonce was steered by the data and is dropped, and a finding that addresses the model or the
memory (an injection) is dropped too. What it returns are proposals: the agent stores them as
``analyze_data`` Findings, which the facility deduplicates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import LLMError
from ..llm.base import ChatMessage, ChatModel, ChatRequest, ResponseSchema
from ..security import guard, injection
from .data import DataEngine, Rows

WINDOW_ROWS = 100
"""Rows the model reads at a time."""
MAX_FINDINGS = 20
"""Findings kept of one analysis."""
MAX_WINDOWS = 50
"""Windows one analysis reads at most (5,000 rows): each is a model call."""
MAX_FINDING_CHARS = 400
SEVERITIES = ("info", "warning", "critical")
NOTES_CHARS = 2000
"""The running notes carried from window to window, at most."""

SCHEMA = ResponseSchema(
    "window_analysis",
    {
        "type": "object",
        "properties": {
            "notes": {"type": "string"},
            "findings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "severity": {"type": "string", "enum": list(SEVERITIES)},
                    },
                    "required": ["content", "severity"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["notes", "findings"],
        "additionalProperties": False,
    },
)

REFUSED = "unusable, too long, or addressed to the model or memory"
Progress = Callable[[int, int], None]
"""Called with ``(window, of)`` as each window starts."""


@dataclass(frozen=True, slots=True)
class Proposed:
    """A finding the analysis proposes: one self-contained observation and its severity."""

    content: str
    severity: str


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the analysis of a table found: the notes at the end, the findings; the windows
    read, of how many, and dropped (their reply was unusable or steered by the data); the
    findings refused (too long, or addressing the model or its memory) and left over
    :data:`MAX_FINDINGS`."""

    notes: str
    findings: tuple[Proposed, ...]
    windows: int
    of: int
    dropped: int = 0
    refused: int = 0
    over: int = 0

    def summary(self, table: str) -> list[str]:
        """What the tool tells the model, besides the findings: nothing left out unsaid."""
        read = f"analysed {table} in {self.windows} window(s) of {WINDOW_ROWS} rows"
        lines = [
            read + (f", of {self.of}: the rest was not read" if self.of > self.windows else "")
        ]
        said = (
            (self.dropped, "window(s) gave no usable answer"),
            (self.refused, f"finding(s) refused ({REFUSED})"),
            (self.over, f"finding(s) left out (at most {MAX_FINDINGS} are kept)"),
        )
        lines += [f"{count} {what}" for count, what in said if count]
        return lines


def analyze(
    engine: DataEngine,
    model: ChatModel,
    table: str,
    question: str | None = None,
    *,
    progress: Progress = lambda n, of: None,
    rows: int = WINDOW_ROWS,
) -> Analysis:
    """Read ``table`` window by window with ``model`` (the first :data:`MAX_WINDOWS`); the
    notes and findings it makes."""
    notes, found, dropped, refused, windows, of = "", list[Proposed](), 0, 0, 0, 0
    for n, of, window in engine.windows(table, rows):
        if n > MAX_WINDOWS:
            break
        progress(n, min(of, MAX_WINDOWS))
        windows += 1
        nonce = guard.new_nonce()
        request = ChatRequest(
            (
                ChatMessage("system", system_message(nonce, model.structured_output)),
                ChatMessage(
                    "user",
                    window_message(table, question, (n, of), notes=notes, rows=window, nonce=nonce),
                ),
            ),
            purpose="analysis",
            schema=SCHEMA,
        )
        try:
            reply = model.complete(request).text
        except LLMError:
            dropped += 1
            continue
        answer = None if guard.leaks(reply, nonce) else parse(reply)
        if answer is None:
            dropped += 1
            continue
        notes = answer[0][-NOTES_CHARS:] or notes
        found.extend(p for p in answer[1] if p is not None)
        refused += answer[1].count(None)
    distinct = _distinct(found)
    kept = tuple(distinct[:MAX_FINDINGS])
    over = len(distinct) - len(kept)
    return Analysis(notes, kept, windows, of, dropped, refused, over)


def system_message(nonce: str, structured: bool) -> str:
    """What the model is asked to do with each window."""
    shape = (
        "Answer with the JSON object the schema asks for."
        if structured
        else 'Answer with one JSON object: {"notes": "...", "findings": [{"content": "...", '
        '"severity": "info|warning|critical"}]} and nothing else.'
    )
    return (
        "You analyse a table for a user, one window of rows at a time. Keep short running notes "
        "of what matters for the question, and report findings: each one self-contained "
        "observation about the data, with the values and rows it rests on (for example "
        '"Osaka sold 1850 units in week 10, 50 times its weekly average"). Report only what the '
        "rows show; no advice, no instructions, nothing about the user. Severity: critical for "
        "errors or extreme outliers, warning for anomalies, info otherwise. "
        f"{guard.data_notice(nonce)} {shape}"
    )


def window_message(
    table: str, question: str | None, at: tuple[int, int], *, notes: str, rows: Rows, nonce: str
) -> str:
    """Window ``at`` = (n, of) of rows (CSV) and the notes so far, as data."""
    n, of = at
    return (
        f"Question: {question or 'What stands out in this data?'}\n"
        f"Table {table}, window {n} of {of}.\n"
        f"Your notes so far:\n{guard.wrap('notes', notes or '(none yet)', nonce)}\n"
        f"Rows:\n{guard.wrap('table_rows', rows.as_text(), nonce)}"
    )


def parse(reply: str) -> tuple[str, list[Proposed | None]] | None:
    """The notes and findings of a reply (JSON, possibly fenced or with text around it), a
    finding refused as None; None if it holds no such object."""
    data = _json_object(reply)
    if data is None:
        return None
    notes = data.get("notes")
    items = data.get("findings")
    if not isinstance(notes, str) or not isinstance(items, list):
        return None
    return " ".join(notes.split()), [_proposed(item) for item in items]


def _json_object(reply: str) -> dict[str, object] | None:
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(reply[start : end + 1])
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _proposed(item: object) -> Proposed | None:
    """A finding of the reply, one line, if it is usable and addresses no one."""
    if not isinstance(item, dict):
        return None
    content, severity = item.get("content"), item.get("severity")
    if not isinstance(content, str):
        return None
    text = " ".join(content.split())
    if not text or len(text) > MAX_FINDING_CHARS or injection.scan(text, user_voice=False):
        return None
    return Proposed(text, severity if severity in SEVERITIES else "info")


def _distinct(found: Iterable[Proposed]) -> list[Proposed]:
    seen: set[str] = set()
    kept = []
    for proposed in found:
        key = re.sub(r"\W+", " ", proposed.content.casefold()).strip()
        if key not in seen:
            seen.add(key)
            kept.append(proposed)
    return kept
