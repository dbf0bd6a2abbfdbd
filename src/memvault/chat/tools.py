"""The agent's tools, declared once (seed 001 §6): each :class:`Tool` row gives the model's tool
list, the approval default (human in the loop) and the dispatch. Adding a tool adds one row.

Arguments are checked before a tool runs: at most :data:`MAX_ARGUMENT_BYTES` of JSON, an object
with the declared string (or string list) fields only, the required ones present. A tool's
failure is its answer (``error: …``), which the model reads and may correct.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import MemvaultError, ValidationError
from ..retrieval.when import date_of
from ..security import injection
from . import analyze
from .data import DataEngine

if TYPE_CHECKING:
    from ..llm.base import ChatModel
    from ..memory import Memory

log = logging.getLogger("memvault.chat")

MAX_ARGUMENT_BYTES = 1024 * 1024
"""The longest arguments of one call (seed 001 §9: 1 MiB)."""


@dataclass
class Workbench:
    """What the tools work on: the memory and session, the session's data, the model, and
    where progress is reported."""

    memory: Memory
    session_id: str
    engine: DataEngine
    model: ChatModel
    progress: Callable[[str], None] = field(default=lambda line: None)
    now: Callable[[], datetime] = field(default=lambda: datetime.now().astimezone())

    @property
    def data_loaded(self) -> bool:
        """Whether a table is loaded (the data tools that need one are offered)."""
        return bool(self.engine.tables())


Run = Callable[[Workbench, Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: what the model is told, whether a person approves each call by default, whether
    it needs loaded data, and what it runs. ``preview`` is what an approval shows."""

    name: str
    description: str
    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...]
    run: Run
    approval: bool = False
    needs_data: bool = False
    preview: Callable[[Mapping[str, Any]], str] = lambda args: json.dumps(dict(args))

    def definition(self) -> dict[str, Any]:
        """The tool as the model sees it (OpenAI's ``tools`` entry)."""
        parameters = {
            "type": "object",
            "properties": {k: dict(v) for k, v in self.properties.items()},
            "required": list(self.required),
            "additionalProperties": False,
        }
        function = {"name": self.name, "description": self.description, "parameters": parameters}
        return {"type": "function", "function": function}

    def arguments(self, raw: str) -> dict[str, Any]:
        """The call's arguments, checked; ValidationError saying what is wrong."""
        if len(raw.encode()) > MAX_ARGUMENT_BYTES:
            raise ValidationError(f"the arguments exceed {MAX_ARGUMENT_BYTES} bytes")
        try:
            args = json.loads(raw or "{}")
        except (ValueError, RecursionError):
            raise ValidationError("the arguments are not JSON") from None
        if not isinstance(args, dict):
            raise ValidationError("the arguments must be a JSON object")
        unknown = sorted(set(args) - set(self.properties))
        missing = [name for name in self.required if args.get(name) in (None, "")]
        if unknown or missing:
            said = [f"unknown {', '.join(unknown)}" if unknown else ""]
            said.append(f"missing {', '.join(missing)}" if missing else "")
            raise ValidationError(f"{self.name} arguments: {'; '.join(s for s in said if s)}")
        for name, value in args.items():
            _check_type(name, value, self.properties[name])
        return {k: v for k, v in args.items() if v is not None}


def _check_type(name: str, value: Any, schema: Mapping[str, Any]) -> None:
    if value is None:
        return
    if schema["type"] == "array":
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ValidationError(f"{name} must be a list of strings")
    elif not isinstance(value, str):
        raise ValidationError(f"{name} must be a string")


# -- what the tools run -----------------------------------------------------------------------


def load_data(bench: Workbench, args: Mapping[str, Any]) -> str:
    loaded = bench.engine.load(args["path"], args.get("table"))
    bench.memory.set_data_loaded(bench.session_id)
    return loaded


def describe_data(bench: Workbench, args: Mapping[str, Any]) -> str:
    return bench.engine.describe(args.get("table"))


def query_sql(bench: Workbench, args: Mapping[str, Any]) -> str:
    return bench.engine.query(args["sql"]).as_text()


def analyze_data(bench: Workbench, args: Mapping[str, Any]) -> str:
    table = args["table"]

    def progress(n: int, of: int) -> None:
        bench.progress(f"analyze-data — window {n}/{of}")

    done = analyze.analyze(
        bench.engine, bench.model, table, args.get("question"), progress=progress
    )
    lines = done.summary(table)
    for proposed in done.findings:
        finding = bench.memory.add_finding(
            bench.session_id, proposed.content, tags=[proposed.severity], source="analyze_data"
        )
        seen = " (already known)" if finding.duplicate else ""
        lines.append(f"finding {finding.id} [{proposed.severity}]{seen}: {proposed.content}")
    lines.append(f"notes: {done.notes}" if done.notes else "no notes")
    return "\n".join(lines)


def promote_finding(bench: Workbench, args: Mapping[str, Any]) -> str:
    tags = args.get("tags") or []
    flags = injection.scan(args["content"], user_voice=False)
    if flags:
        kinds = ", ".join(sorted({flag.kind for flag in flags}))
        raise ValidationError(f"refused: the finding addresses the model or its memory ({kinds})")
    finding = bench.memory.add_finding(bench.session_id, args["content"], tags=tags)
    if finding.duplicate:
        return f"already a finding: {finding.id}: {finding.content}"
    return f"finding {finding.id} added: {finding.content}"


def resolve_date(bench: Workbench, args: Mapping[str, Any]) -> str:
    now = bench.now()
    prefer = args.get("prefer") or "future"
    if prefer not in ("past", "future"):
        raise ValidationError("prefer must be past or future")
    when = date_of(args["expression"], now, prefer)
    if when is None:
        raise ValidationError(f"cannot read a date in {args['expression'][:100]!r}")
    return f"{when:%Y-%m-%d} ({when:%A}); today is {now:%Y-%m-%d} ({now:%A})"


TEXT = {"type": "string"}
TOOLS = (
    Tool(
        "load-data",
        "Load a CSV, JSON or JSONL file (a path in the current folder or the data folder) into "
        "a table of this session's analysis database.",
        {"path": TEXT | {"description": "the file's path"}, "table": TEXT},
        ("path",),
        load_data,
    ),
    Tool(
        "describe-data",
        "List the loaded tables with their columns, types and row counts (or one table's).",
        {"table": TEXT},
        (),
        describe_data,
    ),
    Tool(
        "query-sql",
        "Run one read-only SQL query (DuckDB) on the loaded tables; shows at most 50 rows.",
        {"sql": TEXT},
        ("sql",),
        query_sql,
        approval=True,
        needs_data=True,
        preview=lambda args: str(args.get("sql", "")),
    ),
    Tool(
        "analyze-data",
        "Read a whole table window by window and record what stands out as findings.",
        {"table": TEXT, "question": TEXT | {"description": "what to look for"}},
        ("table",),
        analyze_data,
        needs_data=True,
    ),
    Tool(
        "promote-finding",
        "Record one observation about the loaded data as a finding of this session.",
        {"content": TEXT, "tags": {"type": "array", "items": TEXT}},
        ("content",),
        promote_finding,
        approval=True,
        needs_data=True,
        preview=lambda args: (
            str(args.get("content", ""))
            + (f"  (tags: {', '.join(args['tags'])})" if args.get("tags") else "")
        ),
    ),
    Tool(
        "resolve-date",
        "Turn a date expression ('next Friday', 'in 3 days', '2 weeks ago') into a date.",
        {"expression": TEXT, "prefer": TEXT | {"enum": ["past", "future"]}},
        ("expression",),
        resolve_date,
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


def offered(data_loaded: bool) -> tuple[dict[str, Any], ...]:
    """The tools the model may call now (those needing data only once a table is loaded)."""
    return tuple(t.definition() for t in TOOLS if data_loaded or not t.needs_data)


def run(bench: Workbench, tool: Tool, args: Mapping[str, Any]) -> str:
    """Run a tool; a failure is its answer, as ``error: …`` (one the tool did not foresee is
    logged at debug level with its traceback, logger ``memvault.chat``)."""
    try:
        return tool.run(bench, args)
    except MemvaultError as exc:
        return f"error: {exc}"
    except Exception as exc:
        log.debug("%s failed unexpectedly", tool.name, exc_info=True)
        return f"error: {tool.name} failed unexpectedly ({type(exc).__name__}: {exc})"
