"""Turning results into text or JSON for the terminal (pure)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..facilities.model import Finding, Record, Session, trust_tag
from ..types import AuditEvent, MemoryEntry, Outcome, SearchHit, WriteReport


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False)


def import_summary(report: WriteReport) -> str:
    """Counts, then one line per merged or refused line of the input, in the input's order
    (``index`` is the line)."""
    counts = report.counts()
    lines = [f"stored {counts['stored']}, merged {counts['merged']}, refused {counts['refused']}"]
    for item in sorted((*report.merged, *report.refused), key=lambda item: item.index):
        if item.outcome is Outcome.MERGED:
            lines.append(f"line {item.index}: merged into {item.entry and item.entry.id}")
        else:
            lines.append(f"line {item.index}: refused ({item.error}): {item.reason}")
    return "\n".join(lines)


STAMP = "%Y-%m-%d %H:%M"


def entry_line(entry: MemoryEntry, width: int = 60) -> str:
    """One summary line: id, creation, scope, ``[category]``, ``#tags``, the expiry, then the
    content (long or multi-line content is shortened with an ellipsis)."""
    text = " ".join(entry.content.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    category = f" [{entry.category}]" if entry.category else ""
    tags = "".join(f" #{tag}" for tag in entry.tags)
    expiry = f"  expires {entry.expires_at.strftime(STAMP)}" if entry.expires_at else ""
    stamp = entry.created_at.strftime(STAMP)
    return f"{entry.id}  {stamp}  {entry.scope}{category}{tags}{expiry}  {text}"


def hit_lines(hits: Sequence[SearchHit]) -> str:
    """Search hits under a header: the score, the calibrated relevance, the lexical (BM25)
    and dense (cosine) scores behind it — 0 lexical: no word in common — then the entry's
    line."""
    if not hits:
        return "(no hits)"
    rows = [
        f"{hit.score:5.3f}  {hit.relevance:9.2f}  {hit.components.get('lexical', 0):7.2f}  "
        f"{hit.components.get('dense', 0):5.2f}  {entry_line(hit.entry)}"
        for hit in hits
    ]
    return "\n".join(["score  relevance  lexical  dense  entry", *rows])


def _validity(entry: MemoryEntry) -> str:
    until = entry.valid_to.isoformat() if entry.valid_to else "now"
    return f"{entry.valid_from.isoformat()} to {until}"


def learned_line(entry: MemoryEntry) -> str:
    """A learned memory: where it went, its trust and category, the fact."""
    place = "global" if entry.scope.kind == "user" else "session"
    duplicate = "  (already known)" if entry.duplicate else ""
    trust = trust_tag(entry.provenance.source)
    return f"{place:<8}{trust} [{entry.category}] {entry.content}{duplicate}"


def entry_block(entry: MemoryEntry) -> str:
    """Every field of an entry, content in full."""
    lines = [
        f"id:          {entry.id}",
        f"scope:       {entry.scope}",
        f"created:     {entry.created_at.isoformat()}",
        f"updated:     {entry.updated_at.isoformat()}  (revision {entry.revision})",
    ]
    optional = {
        "category:": entry.category,
        "tags:": ", ".join(entry.tags),
        "expires:": entry.expires_at and entry.expires_at.isoformat(),
        "promoted from:": entry.promoted_from_id,
        "compacted from:": ", ".join(entry.compacted_from_ids),
        "valid:": _validity(entry),
        "superseded by:": entry.superseded_by
        and f"{entry.superseded_by} ({entry.superseded_reason or 'no reason given'})",
        "supersedes:": ", ".join(entry.supersedes),
        "metadata:": entry.metadata and json.dumps(dict(entry.metadata), ensure_ascii=False),
    }
    lines += [f"{label:<13}{value}" for label, value in optional.items() if value]
    provenance = {k: v for k, v in entry.provenance.to_dict().items() if v not in (None, False)}
    if provenance:
        lines.append("provenance:  " + ", ".join(f"{k}={v}" for k, v in provenance.items()))
    return "\n".join([*lines, "", entry.content])


def event_line(event: AuditEvent) -> str:
    """One audit event: when, what happened to which entry, by which operation and actor."""
    stamp = event.at.strftime("%Y-%m-%d %H:%M:%S")
    what = " ".join(x for x in (event.entry_id, event.scope) if x) or "-"
    note = f"  ({event.note})" if event.note else ""
    how = f"{event.operation} by {event.actor}"
    return f"{event.seq:>6}  {stamp}  {event.change:<8} {what}  {how}{note}"


def entry_lines(entries: Iterable[MemoryEntry]) -> str:
    return "\n".join(entry_line(e) for e in entries)


def session_line(session: Session) -> str:
    flags = " [private]" if session.private else ""
    flags += " [data]" if session.has_data else ""
    stamp = session.created_at.strftime("%Y-%m-%d %H:%M")
    return f"{session.id}  {stamp}  user:{session.user_id}{flags}  {session.title}"


def record_line(record: Record) -> str:
    stamp = record.created_at.strftime("%Y-%m-%d %H:%M")
    tool = f" ({record.tool_name})" if record.tool_name else ""
    return f"{stamp}  {record.role}{tool}: {' '.join(record.content.split())}"


def finding_line(finding: Finding) -> str:
    tags = f" [{', '.join(finding.tags)}]" if finding.tags else ""
    return f"{finding.id}  {trust_tag(finding.source)}{tags}  {finding.content}"


def note_line(entry: MemoryEntry) -> str:
    """A Session or Global Memory entry with its trust tag and category."""
    return f"{entry.id}  {trust_tag(entry.provenance.source)} [{entry.category}]  {entry.content}"
