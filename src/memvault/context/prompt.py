"""The system prompt (pure): base prompt, then Global Memory, Session Memory and Findings.

The output depends only on the memory state — no clock, no randomness — so the same state gives
byte-identical prompts and an inference server's KV-cache prefix survives between turns. Each
item is one line (its text's line breaks become spaces, so no item can forge a header or another
item), and each section is bounded to 16 KiB, newest first, with a marker for what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..facilities.model import Finding, Source, trust_tag
from ..types import MemoryEntry

SECTION_BYTES = 16 * 1024
GLOBAL_HEADER = "Important facts you remember about the user:"
SESSION_HEADER = "Notes about the current session:"
FINDINGS_HEADER = "Analysis findings in this session:"
PROMOTED_LABELS = {
    Source.PROMOTED_FROM_FINDING: "promoted from Finding",
    Source.PROMOTED_FROM_SESSION_MEMORY: "promoted from Session Memory",
}


def one_line(text: str) -> str:
    return " ".join(text.split())


def memory_line(entry: MemoryEntry) -> str:
    """``- [trust] [category] fact (native) (learned YYYY-MM-DD)`` as in seed 002."""
    source = entry.provenance.source
    text = one_line(entry.content)
    native = entry.metadata.get("native")
    if isinstance(native, str) and one_line(native) and one_line(native) != text:
        text += f" ({one_line(native)})"
    day = f"{entry.created_at:%Y-%m-%d}"
    origin = PROMOTED_LABELS.get(source or "")  # type: ignore[call-overload]
    when = f"({origin}, {day})" if origin else f"(learned {day})"
    return f"- {trust_tag(source)} [{entry.category}] {text} {when}"


def finding_line(finding: Finding) -> str:
    """``- [trust] [YYYY-MM-DD] content`` as in seed 002."""
    day = f"{finding.created_at:%Y-%m-%d}"
    return f"- {trust_tag(finding.source)} [{day}] {one_line(finding.content)}"


def bounded(lines: Sequence[str], limit: int = SECTION_BYTES) -> list[str]:
    """The first lines (newest first) that fit in ``limit`` UTF-8 bytes, then an elision marker."""
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        rest = len(lines) - index - 1
        reserve = len(_elision(rest).encode()) + 1 if rest else 0
        size = len(line.encode()) + 1
        if used + size + reserve > limit:
            return [*kept, _elision(len(lines) - index)]
        kept.append(line)
        used += size
    return kept


def _elision(count: int) -> str:
    return f"- … {count} older {'entry' if count == 1 else 'entries'} not shown"


def section(header: str, lines: Sequence[str], limit: int = SECTION_BYTES) -> str | None:
    """A header and its bounded lines; None when there are no lines (no empty headers)."""
    if not lines:
        return None
    return "\n".join([header, *bounded(lines, limit)])


def system_prompt(
    base: str,
    global_memory: Sequence[MemoryEntry],
    session_memory: Sequence[MemoryEntry],
    findings: Sequence[Finding],
    limit: int = SECTION_BYTES,
) -> str:
    """Assemble the prompt; each sequence is newest first."""
    parts = [
        base.strip(),
        section(GLOBAL_HEADER, [memory_line(e) for e in global_memory], limit),
        section(SESSION_HEADER, [memory_line(e) for e in session_memory], limit),
        section(FINDINGS_HEADER, [finding_line(f) for f in findings], limit),
    ]
    return "\n\n".join(part for part in parts if part) + "\n"
