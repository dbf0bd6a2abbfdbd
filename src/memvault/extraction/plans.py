"""Learning from conversations: ``add_turn`` appends a turn's records; ``extract`` turns the
latest turns into memories — one LLM call at most (or the heuristic extractor), one
transaction for everything it stores, merges and supersedes."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import validation as check
from ..config import Settings
from ..core import Plan, Planner, call, run, run_all
from ..errors import ConfigError, ValidationError
from ..facilities.model import (
    GLOBAL_MEMORY,
    RECORD,
    SESSION_MEMORY,
    Record,
    Session,
)
from ..facilities.notes import NotePlans
from ..facilities.sessions import SessionPlans
from ..llm.base import ChatMessage, ChatModel, ChatReply, ChatRequest
from ..security import guard
from ..security.redact import Redactor
from ..store import duplicates
from ..store.ops import CountOp, Filter, GetOp, ListOp, Op, PutOp, TrimOp
from ..types import MemoryEntry, NewEntry, Provenance, Scope, ScopeKind
from ..versions import retire
from . import heuristic, parse, pipeline, prompts
from .facts import Candidate

PAGE = 100
MAX_TOOL_RECORDS = 64


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What :meth:`Memory.add_turn` did: the records appended and what became of extraction
    (``scheduled``, ``queued`` behind a running one, or ``off``)."""

    session_id: str
    records: tuple[Record, ...]
    extraction: str = "off"
    redactions: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "records": [r.to_dict() for r in self.records],
            "extraction": self.extraction,
            "redactions": dict(self.redactions),
        }


@dataclass(frozen=True, slots=True)
class Dropped:
    """A proposed fact that was not stored, and why."""

    fact: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"fact": self.fact, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one extraction did: stored, merged into existing entries, superseded, dropped."""

    session_id: str
    extractor: str
    stored: tuple[MemoryEntry, ...] = ()
    merged: tuple[MemoryEntry, ...] = ()
    superseded: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    reply: ChatReply | None = None
    """The LLM's reply with its token and latency accounting (None without an LLM)."""
    redactions: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "extractor": self.extractor,
            "stored": [e.to_dict() for e in self.stored],
            "merged": [e.to_dict() for e in self.merged],
            "superseded": list(self.superseded),
            "dropped": [d.to_dict() for d in self.dropped],
            "llm": None if self.reply is None else self.reply.to_dict(),
            "redactions": dict(self.redactions),
        }


def extractor_mode(settings: Settings, chat: ChatModel | None) -> str:
    """``llm``, ``heuristic`` or ``off``: what ``settings.extraction`` means with this model."""
    mode = settings.extraction
    if mode == "auto":
        return "llm" if chat is not None else "heuristic"
    if mode == "llm" and chat is None:
        raise ConfigError("extraction=llm needs an LLM: set MEMVAULT_LLM_BASE_URL and _MODEL")
    return mode


class LearningPlans:
    """Turns in, memories out; composed on the store, session and note planners."""

    def __init__(
        self,
        store: Planner,
        sessions: SessionPlans,
        notes: NotePlans,
        chat: ChatModel | None = None,
    ) -> None:
        self.store, self.sessions, self.notes, self.chat = store, sessions, notes, chat
        self.redactor = Redactor.from_settings(store.settings)

    @property
    def mode(self) -> str:
        return extractor_mode(self.store.settings, self.chat)

    # -- turns --------------------------------------------------------------------------------

    def add_turn(
        self,
        session_id: str,
        user: str | None = None,
        assistant: str | None = None,
        tool_records: Sequence[str | Mapping[str, Any]] = (),
    ) -> Plan[TurnResult]:
        """Append one turn — the user's message, the tool outputs, the assistant's answer — to
        the session's log in one transaction; extraction then runs in the background."""
        yield from self.sessions.session_entry(session_id)
        turn = [*self._user_and_tools(user, tool_records)]
        if assistant is not None:
            turn.append(("assistant", assistant, {}))
        if not turn:
            raise ValidationError("a turn needs a user message, tool records or an answer")
        counts: dict[str, int] = {}
        entries = []
        for role, content, extra in turn:
            text = check.content(content, self.store.settings)
            if self.store.settings.redact_records:
                text = self._redacted(text, counts)
            entries.append(self.sessions.record_entry(session_id, role, text, **extra))
        chunks = yield from self.store.index(entries)
        puts = [PutOp(self.store.tenant, e, chunks=c) for e, c in zip(entries, chunks, strict=True)]
        yield from run_all(puts)
        self.store.stats.add("written", len(entries))
        records = tuple(Record.from_entry(e) for e in entries)
        return TurnResult(session_id, records, redactions=counts)

    def _user_and_tools(
        self, user: str | None, tool_records: Sequence[str | Mapping[str, Any]]
    ) -> Iterable[tuple[str, str, dict[str, Any]]]:
        if user is not None:
            yield "user", user, {}
        if isinstance(tool_records, str | Mapping):
            raise ValidationError("tool_records must be a list of strings or record mappings")
        if len(tool_records) > MAX_TOOL_RECORDS:
            raise ValidationError(f"a turn holds at most {MAX_TOOL_RECORDS} tool records")
        for item in tool_records:
            yield "tool", *_tool_record(item)

    # -- extraction ---------------------------------------------------------------------------

    def extract(self, session_id: str) -> Plan[Extraction]:
        """Learn from the session's latest turns now: what the background extraction does."""
        session = Session.from_entry((yield from self.sessions.session_entry(session_id)))
        mode = self.mode
        if mode == "off":
            return Extraction(session_id, "off")
        window = yield from self._window(session_id)
        counts: dict[str, int] = {}
        window = replace(
            window,
            turns=tuple(replace(t, text=self._redacted(t.text, counts)) for t in window.turns),
        )
        memories = pipeline.shown((yield from self._memories(session)))
        reply = None
        if not window.turns:
            candidates: Sequence[Candidate] = ()
        elif mode == "llm":
            reply, candidates = yield from self._ask(window, memories)
        else:
            candidates = heuristic.extract(window.turns)
        where = pipeline.situation(
            window, memories, private=session.private, use_slots=mode == "heuristic"
        )
        decisions = pipeline.decide(candidates, where)
        # every version is read only when a fact of this window changes another of it
        history = (yield from self._history(session)) if pipeline.outdated(decisions) else []
        result = yield from self._store(session, window, decisions, history, counts)
        self.store.stats.add("extractions")
        return replace(result, extractor=mode, reply=reply, redactions=counts)

    def _window(self, session_id: str) -> Plan[pipeline.Window]:
        """The last user/assistant records (read newest first until there are enough)."""
        where = Filter(self.store.tenant, (Scope.session(session_id),), categories=(RECORD,))
        total = yield from run(CountOp(where))
        newest: builtins.list[MemoryEntry] = []
        after = None
        while True:
            page = yield from run(ListOp(where, PAGE, after=after))
            newest += page
            said = sum(1 for e in newest if e.metadata.get("role") in ("user", "assistant"))
            if len(page) < PAGE or said >= pipeline.WINDOW:
                break
            after = (page[-1].created_at, page[-1].id)
        records = [Record.from_entry(e) for e in reversed(newest)]
        window = pipeline.window_of(records)
        offset = total - len(records)
        return replace(window, positions=tuple(offset + p for p in window.positions))

    def _memories(self, session: Session) -> Plan[builtins.list[MemoryEntry]]:
        """What the user and the session already hold (current entries), shown to the model."""
        global_memory = yield from self.notes.live_notes(Scope.user(session.user_id), GLOBAL_MEMORY)
        notes = yield from self.notes.live_notes(Scope.session(session.id), SESSION_MEMORY)
        return [*global_memory, *notes]

    def _history(self, session: Session) -> Plan[builtins.list[MemoryEntry]]:
        """Every version (superseded ones too) of what the user and the session hold."""
        found: builtins.list[MemoryEntry] = []
        for scope, categories in (
            (Scope.user(session.user_id), GLOBAL_MEMORY),
            (Scope.session(session.id), SESSION_MEMORY),
        ):
            where = Filter(self.store.tenant, (scope,), categories=categories)
            found += yield from self.store.every(where)
        return found

    def _ask(
        self, window: pipeline.Window, memories: Sequence[pipeline.Shown]
    ) -> Plan[tuple[ChatReply, Sequence[Candidate]]]:
        """The one LLM call of an extraction; its reply parsed (fail closed on a leaked nonce)."""
        assert self.chat is not None
        nonce = guard.new_nonce()
        request = ChatRequest(
            (
                ChatMessage("system", prompts.system_message(nonce)),
                ChatMessage("user", prompts.user_message(window, memories, nonce)),
            ),
            max_tokens=self.store.settings.llm_max_tokens,
            purpose="extraction",
        )
        reply: ChatReply = yield from call(self.chat.complete, request, blocking=True)
        if guard.leaks(reply.text, nonce):
            self.store.stats.add("extraction_refused_leak")
            return reply, ()
        parsed = parse.parse_reply(reply.text, window=len(window.turns))
        self.store.stats.add("extraction_rejected_lines", len(parsed.rejected))
        return reply, parsed.candidates

    def _redacted(self, text: str, counts: dict[str, int]) -> str:
        redaction = self.redactor.redact(text)
        for rule, n in redaction.counts.items():
            counts[rule] = counts.get(rule, 0) + n
            self.store.stats.add(f"redacted_{rule}", n)
        return redaction.text

    # -- storing ------------------------------------------------------------------------------

    def _store(
        self,
        session: Session,
        window: pipeline.Window,
        decisions: Sequence[pipeline.Decision],
        history: Sequence[MemoryEntry],
        counts: dict[str, int],
    ) -> Plan[Extraction]:
        """Everything an extraction keeps, in one transaction. A fact that a later turn of the
        same window changes is kept as superseded (or dropped if it was known already)."""
        dropped = [Dropped(d.candidate.fact, str(d.dropped)) for d in decisions if not d.stored]
        changed_later = pipeline.outdated(decisions)
        planned: builtins.list[Planned] = []
        placed: dict[int, int] = {}
        for index, decision in enumerate(decisions):
            if not decision.stored:
                continue
            try:
                entry = self._entry(session, window, decision, counts)
            except ValidationError as exc:  # a write filter, or an unusable fact
                dropped.append(Dropped(decision.candidate.fact, f"refused: {exc}"))
                continue
            if any(duplicates.restates(p.entry.content, entry.content) for p in planned):
                dropped.append(Dropped(decision.candidate.fact, "repeats another fact"))
                continue
            known = any(duplicates.restates(e.content, entry.content) for e in history)
            if index in changed_later and known:
                dropped.append(Dropped(decision.candidate.fact, "known, and changed since"))
                continue
            reason = decision.candidate.reason or "the user said something new about it"
            placed[index] = len(planned)
            planned.append(Planned(entry, decision.replaces, reason))
        for earlier, later in changed_later.items():
            if earlier in placed and later in placed:
                at = placed[earlier]
                planned[at] = replace(planned[at], successor=placed[later])
        self.store.stats.add("extraction_dropped", len(dropped))
        result = (yield from self._write(planned)) if planned else Extraction("", "")
        return replace(result, session_id=session.id, dropped=tuple(dropped))

    def _entry(
        self,
        session: Session,
        window: pipeline.Window,
        decision: pipeline.Decision,
        counts: dict[str, int],
    ) -> MemoryEntry:
        assert decision.turn is not None
        assert decision.destination is not None
        candidate = decision.candidate
        scope = (
            Scope.user(session.user_id)
            if decision.destination is pipeline.Destination.GLOBAL
            else Scope.session(session.id)
        )
        native = None if candidate.native is None else self._redacted(candidate.native, counts)
        request = NewEntry(
            self._redacted(candidate.fact, counts),
            scope,
            category=decision.category,
            metadata={"native": native} if native else {},
            provenance=Provenance(
                source=str(decision.source),
                created_in_session_id=session.id,
                source_turn_index=window.positions[decision.turn.number - 1],
                tool_originated=decision.tool_originated,
            ),
        )
        said = window.records[decision.turn.number - 1].created_at
        entry = self.store.new_entry(request, self.store.now())
        self.store.admit(entry.content)
        return replace(entry, valid_from=min(said, entry.valid_from))

    def _write(self, planned: Sequence[Planned]) -> Plan[Extraction]:
        """Store the new facts, retire the ones they change and apply the caps: one
        transaction, so a crash leaves all of it or none."""
        chunks = yield from self.store.index([p.entry for p in planned])
        olds = yield from self._current(i for p in planned for i in p.replaces)
        now, tenant = self.store.now(), self.store.tenant
        puts: builtins.list[Op[Any]] = []
        written: builtins.list[MemoryEntry] = []
        retirements: builtins.list[Op[Any]] = []
        superseded: builtins.list[str] = []
        entries = _linked(planned)
        for item, linked, entry_chunks in zip(planned, entries, chunks, strict=True):
            changed = [
                olds.pop(i)
                for i in item.replaces
                if i in olds and not duplicates.restates(olds[i].content, linked.content)
            ]
            entry = replace(linked, supersedes=(*linked.supersedes, *(o.id for o in changed)))
            retirements += [retire(tenant, o, entry, item.reason, now) for o in changed]
            superseded += [o.id for o in changed]
            fresh = not changed and not entry.superseded and not entry.supersedes
            threshold = self.store.settings.near_duplicate_threshold if fresh else 0.0
            puts.append(PutOp(tenant, entry, chunks=entry_chunks, duplicate_threshold=threshold))
            written.append(entry)
        trims = self._caps([p.entry.scope for p in planned])
        results = yield from run_all([*puts, *retirements, *trims])
        twins = results[: len(puts)]
        for evicted in results[len(puts) + len(retirements) :]:
            self.store.stats.add("evicted", len(evicted))
        merged = yield from run_all(GetOp(tenant, str(twin)) for twin in twins if twin)
        stored = tuple(e for e, twin in zip(written, twins, strict=True) if twin is None)
        self.store.stats.add("written", len(stored))
        self.store.stats.add("near_duplicate", len(twins) - len(stored))
        self.store.stats.add("superseded", len(superseded))
        found = tuple(replace(e, duplicate=True) for e in merged if e is not None)
        return Extraction("", "", stored, found, tuple(superseded))

    def _current(self, ids: Iterable[str]) -> Plan[dict[str, MemoryEntry]]:
        """The live, current entries among ``ids``, by id."""
        wanted = sorted(set(ids))
        found = yield from run_all(GetOp(self.store.tenant, i) for i in wanted)
        now = self.store.now()
        return {
            e.id: e for e in found if e is not None and not e.superseded and not e.is_expired(now)
        }

    def _caps(self, scopes: Iterable[Scope]) -> builtins.list[TrimOp]:
        """The FIFO caps of Global Memory and Session Memory, on the scopes written to."""
        settings = self.store.settings
        trims = []
        for scope in sorted(set(scopes), key=str):
            categories, keep = (
                (GLOBAL_MEMORY, settings.max_global_memory)
                if scope.kind is ScopeKind.USER
                else (SESSION_MEMORY, settings.max_session_memory)
            )
            where = Filter(self.store.tenant, (scope,), categories=categories, superseded="hide")
            trims.append(TrimOp(where, keep))
        return trims


@dataclass(frozen=True, slots=True)
class Planned:
    """A fact about to be stored, the ids of the entries it may replace, and why."""

    entry: MemoryEntry
    replaces: tuple[str, ...]
    reason: str
    successor: int | None = None
    """The planned fact (by position) that a later turn of the window changed it into."""


def _linked(planned: Sequence[Planned]) -> builtins.list[MemoryEntry]:
    """The planned entries, those changed later in the window stored superseded by their
    successor (and listed in its ``supersedes``)."""
    entries = [p.entry for p in planned]
    for at, item in enumerate(planned):
        if item.successor is None:
            continue
        after = entries[item.successor]
        entries[at] = replace(
            entries[at],
            valid_to=max(after.valid_from, entries[at].valid_from),
            superseded_by=after.id,
            superseded_reason=planned[item.successor].reason,
        )
        entries[item.successor] = replace(after, supersedes=(*after.supersedes, entries[at].id))
    return entries


def _tool_record(item: str | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A tool record given as its output text, or as a mapping with ``content`` and optional
    ``tool_name``, ``call_id``, ``object_ids``."""
    if isinstance(item, str):
        return item, {}
    if not isinstance(item, Mapping):
        raise ValidationError("a tool record is a string or a mapping with 'content'")
    known = {"content", "tool_name", "call_id", "object_ids"}
    unknown = sorted(str(k) for k in item if k not in known)
    if unknown or "content" not in item:
        raise ValidationError(
            f"a tool record mapping has 'content' and optionally tool_name, call_id, object_ids"
            f"{'; unknown: ' + ', '.join(unknown) if unknown else ''}"
        )
    extra = {k: item[k] for k in ("tool_name", "call_id", "object_ids") if k in item}
    return item["content"], extra
