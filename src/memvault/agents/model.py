"""Agent memory's values — executions and their tool calls, decompositions — and how each is
kept as an entry of the scoped store (pure).

An execution is an entry of category ``execution``: its content is the input and the output
(chunked, embedded and searchable like any memory), its metadata the rest. A strategy's running
statistics, a decomposition and a learned failure pattern are entries too (categories
``strategy_stats``, ``decomposition``, ``failure_pattern``), with ids derived from what they are
about, so that concurrent executions fold into the same one (:class:`~memvault.store.FoldOp`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..errors import ValidationError
from ..types import MemoryEntry

EXECUTION = "execution"
STRATEGY_STATS = "strategy_stats"
DECOMPOSITION = "decomposition"
FAILURE_PATTERN = "failure_pattern"
TEAM_STATS = "team_stats"
WORK_STYLE = "work_style"
CATEGORIES = (EXECUTION, STRATEGY_STATS, DECOMPOSITION, FAILURE_PATTERN, TEAM_STATS, WORK_STYLE)
SOURCE = "agent_execution"
"""The provenance source of what agent memory stores (derived, never user-stated)."""


def derived_id(prefix: str, tenant: str, scope: str, *parts: str) -> str:
    """The id of the entry about ``parts`` (a strategy and kind, a decomposition, an error
    class) in one scope of one tenant: the same for every writer (ids are unique across
    tenants in the SQL stores)."""
    text = "\x00".join((tenant, scope, *parts)).encode("utf-8", "surrogatepass")
    return f"{prefix}-{hashlib.blake2b(text, digest_size=12).hexdigest()}"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool an execution called: its parameters, output, outcome and duration."""

    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""
    success: bool = True
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parameters": dict(self.parameters),
            "output": self.output,
            "success": self.success,
            "duration_ms": self.duration_ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        known = {"name", "parameters", "output", "success", "duration_ms"}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown or "name" not in data:
            problem = f"unknown fields {', '.join(unknown)}" if unknown else "no name"
            raise ValidationError(f"a tool call has {problem}")
        return cls(**data)

    @classmethod
    def coerce(cls, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        """A tool call from a ``ToolCall`` or a mapping; its parameters must be a mapping."""
        call = value if isinstance(value, ToolCall) else None
        if call is None and isinstance(value, Mapping):
            call = cls.from_dict(value)
        if call is None:
            raise ValidationError(f"a tool call must be a ToolCall or a mapping, got {value!r}")
        parameters: object = call.parameters
        if not isinstance(parameters, Mapping):
            kind = type(parameters).__name__
            raise ValidationError(f"a tool call's parameters must be a mapping, got {kind}")
        return call


@dataclass(frozen=True, slots=True)
class Execution:
    """One recorded run of an agent or a tool, as stored."""

    id: str
    scope: str
    created_at: datetime
    workflow_id: str
    agent_id: str
    input: str
    output: str
    success: bool
    strategy: str | None = None
    kind: str | None = None
    task_id: str | None = None
    parent_id: str | None = None
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    duration_ms: float = 0.0
    error_class: str | None = None
    error_message: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    session_id: str | None = None
    user_id: str | None = None

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__slots__}
        data["created_at"] = self.created_at.isoformat()
        data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Execution:
        fields_ = dict(data)
        fields_["created_at"] = datetime.fromisoformat(fields_["created_at"])
        fields_["tool_calls"] = tuple(ToolCall.from_dict(c) for c in fields_["tool_calls"])
        return cls(**fields_)

    @classmethod
    def from_entry(cls, entry: MemoryEntry) -> Execution:
        """The execution an ``execution`` entry holds."""
        meta = dict(entry.metadata)
        input_text = entry.content[: int(meta.pop("input_chars"))]
        output = entry.content[len(input_text) + len(SEPARATOR) :] if meta.get("has_output") else ""
        meta.pop("has_output", None)
        meta["tool_calls"] = tuple(ToolCall.from_dict(c) for c in meta.get("tool_calls", ()))
        return cls(
            id=entry.id,
            scope=str(entry.scope),
            created_at=entry.created_at,
            input=input_text,
            output=output,
            **meta,
        )


SEPARATOR = "\n\n"
"""Between an execution's input and output in its entry's content."""


def execution_content(input_text: str, output: str) -> tuple[str, dict[str, Any]]:
    """An execution entry's content, and the metadata that splits it back."""
    if not output:
        return input_text, {"input_chars": len(input_text), "has_output": False}
    content = f"{input_text}{SEPARATOR}{output}"
    return content, {"input_chars": len(input_text), "has_output": True}


def execution_metadata(execution: Execution) -> dict[str, Any]:
    """The metadata of an execution's entry (all but its input, output, id, scope, time)."""
    kept = execution.to_dict()
    for name in ("id", "scope", "created_at", "input", "output"):
        kept.pop(name)
    return kept


@dataclass(frozen=True, slots=True)
class Decomposition:
    """A request and the subtasks it was broken into, with how that went each time it was
    used: ``runs``, ``successes``, total tokens and duration."""

    id: str
    query: str
    subtasks: tuple[str, ...]
    strategy: str | None
    runs: int
    successes: int
    tokens: int
    duration_ms: float
    last_used: datetime

    @property
    def success_rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "subtasks": list(self.subtasks),
            "strategy": self.strategy,
            "runs": self.runs,
            "successes": self.successes,
            "success_rate": self.success_rate,
            "tokens": self.tokens,
            "duration_ms": self.duration_ms,
            "last_used": self.last_used.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decomposition:
        return cls(
            data["id"],
            data["query"],
            tuple(data["subtasks"]),
            data["strategy"],
            int(data["runs"]),
            int(data["successes"]),
            int(data["tokens"]),
            float(data["duration_ms"]),
            datetime.fromisoformat(data["last_used"]),
        )

    @classmethod
    def from_entry(cls, entry: MemoryEntry) -> Decomposition:
        return cls.from_dict({**entry.metadata, "id": entry.id, "query": entry.content})


def decomposition_metadata(  # noqa: PLR0917 - one per stored field
    subtasks: Iterable[str],
    strategy: str | None,
    runs: int,
    successes: int,
    tokens: int,
    duration_ms: float,
    last_used: datetime,
) -> dict[str, Any]:
    return {
        "subtasks": list(subtasks),
        "strategy": strategy,
        "runs": runs,
        "successes": successes,
        "tokens": tokens,
        "duration_ms": duration_ms,
        "last_used": last_used.isoformat(),
    }


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A past decomposition of a similar request (cosine ``similarity`` to the new one)."""

    decomposition: Decomposition
    similarity: float

    @property
    def subtasks(self) -> tuple[str, ...]:
        return self.decomposition.subtasks

    @property
    def id(self) -> str:
        return self.decomposition.id

    def to_dict(self) -> dict[str, Any]:
        return {"similarity": self.similarity, **self.decomposition.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Suggestion:
        return cls(Decomposition.from_dict(data), float(data["similarity"]))


def pooled(found: Iterable[Suggestion]) -> list[Suggestion]:
    """Suggestions of the same request, subtasks and strategy (recorded for several users) as one:
    their runs, successes, tokens and durations added, the best similarity, the latest use."""
    merged: dict[tuple[str, tuple[str, ...], str | None], Suggestion] = {}
    for item in found:
        key = (item.decomposition.query, item.decomposition.subtasks, item.decomposition.strategy)
        seen = merged.get(key)
        if seen is None:
            merged[key] = item
            continue
        a, b = seen.decomposition, item.decomposition
        both = replace(
            a,
            runs=a.runs + b.runs,
            successes=a.successes + b.successes,
            tokens=a.tokens + b.tokens,
            duration_ms=a.duration_ms + b.duration_ms,
            last_used=max(a.last_used, b.last_used),
        )
        merged[key] = Suggestion(both, max(seen.similarity, item.similarity))
    return list(merged.values())
