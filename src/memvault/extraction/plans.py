"""Learning from conversations: ``add_turn`` appends a turn's records; ``extract`` turns the
latest turns into memories — one LLM call at most (or the heuristic extractor), one
transaction for everything it stores, merges and supersedes."""

from __future__ import annotations

import builtins
import itertools
import json
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .. import validation as check
from ..config import Settings
from ..core import Invoke, Plan, Planner, backoff, call, run, run_all
from ..embeddings.local import MODEL_NAME as PACKAGED_MODEL
from ..errors import (
    ConfigError,
    ConflictError,
    ForbiddenError,
    StructuredOutputError,
    ValidationError,
)
from ..facilities.model import (
    GLOBAL_MEMORY,
    LEARNED_THROUGH,
    RECORD,
    SESSION_MEMORY,
    Record,
    Session,
    cursor_at,
)
from ..facilities.notes import NotePlans
from ..facilities.sessions import SessionPlans
from ..llm.base import ChatMessage, ChatModel, ChatReply, ChatRequest, ResponseSchema
from ..security import guard
from ..security.redact import Redactor
from ..security.text import normalise
from ..store import duplicates
from ..store.ops import CountOp, Filter, GetOp, ListOp, Op, PutOp, ReplaceOp
from ..types import MemoryEntry, NewEntry, Provenance, Scope
from ..versions import MAX_CHAIN, MAX_REASON_CHARS, reason_text, retire
from . import parse, pipeline, prompts, schema
from .facts import Candidate

log = logging.getLogger("memvault.extraction")

PAGE = 100
MAX_TOOL_RECORDS = 64
MAX_UNREAD = 64
"""User/assistant records one extraction reads at most: when more wait, the oldest are
skipped (and counted in :attr:`Extraction.skipped`)."""
ATTEMPTS = 8
"""Tries of an extraction's write when what it touches changes meanwhile."""
REQUEST_OVERHEAD = 4096
"""Bytes of an LLM request that are not the messages (model, parameters, JSON framing)."""
DEFAULT_REASON = "the user said something new about it"
CURSOR = LEARNED_THROUGH


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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnResult:
        records = tuple(Record.from_dict(r) for r in data["records"])
        return cls(data["session_id"], records, data["extraction"], data["redactions"])


@dataclass(frozen=True, slots=True)
class Dropped:
    """A proposed fact that was not stored, and why."""

    fact: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"fact": self.fact, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Dropped:
        return cls(data["fact"], data["reason"])


@dataclass(frozen=True, slots=True)
class Refused:
    """Part of a stored fact's proposal that the checks refused: a replacement
    (``replaces <id>``) or its native expression (``native``), and why."""

    fact: str
    what: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"fact": self.fact, "what": self.what, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Refused:
        return cls(data["fact"], data["what"], data["reason"])


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """An LLM reply that said something but proposed nothing usable: the model, why, and the
    start of the reply."""

    model: str
    reason: str
    reply: str

    def to_dict(self) -> dict[str, str]:
        return {"model": self.model, "reason": self.reason, "reply": self.reply}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ParseFailure:
        return cls(data["model"], data["reason"], data["reply"])


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one extraction did: stored, merged into existing entries, superseded, dropped."""

    session_id: str
    extractor: str
    stored: tuple[MemoryEntry, ...] = ()
    merged: tuple[MemoryEntry, ...] = ()
    superseded: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    replies: tuple[ChatReply, ...] = ()
    """The LLM's replies (one per window read) with their token and latency accounting."""
    redactions: Mapping[str, int] = field(default_factory=dict)
    turns: int = 0
    """User and assistant records read for the first time."""
    skipped: int = 0
    """Unread records left out because more than ``MAX_UNREAD`` were waiting (the oldest)."""
    refused: tuple[Refused, ...] = ()
    """What the checks refused of the facts stored: replacements the extractor proposed, native
    expressions that were not the user's words."""
    parse_failures: tuple[ParseFailure, ...] = ()
    """LLM replies that said something but proposed nothing usable (one per window at most)."""

    def __add__(self, other: Extraction) -> Extraction:
        counts = dict(self.redactions)
        for rule, n in other.redactions.items():
            counts[rule] = counts.get(rule, 0) + n
        return Extraction(
            self.session_id or other.session_id,
            self.extractor or other.extractor,
            self.stored + other.stored,
            self.merged + other.merged,
            self.superseded + other.superseded,
            self.dropped + other.dropped,
            self.replies + other.replies,
            counts,
            self.turns + other.turns,
            self.skipped + other.skipped,
            self.refused + other.refused,
            self.parse_failures + other.parse_failures,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "extractor": self.extractor,
            "stored": [e.to_dict() for e in self.stored],
            "merged": [e.to_dict() for e in self.merged],
            "superseded": list(self.superseded),
            "dropped": [d.to_dict() for d in self.dropped],
            "llm": [r.to_dict() for r in self.replies],
            "redactions": dict(self.redactions),
            "turns": self.turns,
            "skipped": self.skipped,
            "refused": [r.to_dict() for r in self.refused],
            "parse_failures": [f.to_dict() for f in self.parse_failures],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Extraction:
        """The extraction of :meth:`to_dict`; the LLM's replies carry their accounting, not
        their text (which :meth:`to_dict` leaves out)."""
        return cls(
            data["session_id"],
            data["extractor"],
            tuple(MemoryEntry.from_dict(e) for e in data["stored"]),
            tuple(MemoryEntry.from_dict(e) for e in data["merged"]),
            tuple(data["superseded"]),
            tuple(Dropped.from_dict(d) for d in data["dropped"]),
            tuple(ChatReply.from_dict(r) for r in data["llm"]),
            data["redactions"],
            data["turns"],
            data["skipped"],
            tuple(Refused.from_dict(r) for r in data.get("refused", ())),
            tuple(ParseFailure.from_dict(f) for f in data.get("parse_failures", ())),
        )


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
        tool_records: Iterable[str | Mapping[str, Any]] | None = (),
    ) -> Plan[TurnResult]:
        """Append one turn — the user's message, the tool outputs, the assistant's answer — to
        the session's log in one transaction; extraction then runs in the background."""
        session = yield from self.sessions.session_entry(session_id)
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
        yield from run_all([*puts, *self.sessions.teaches(session, entries)])
        self.store.stats.add("written", len(entries))
        records = tuple(Record.from_entry(e) for e in entries)
        return TurnResult(session_id, records, redactions=counts)

    def _user_and_tools(
        self, user: str | None, tool_records: Iterable[str | Mapping[str, Any]] | None
    ) -> Iterable[tuple[str, str, dict[str, Any]]]:
        if user is not None:
            yield "user", user, {}
        if tool_records is None:
            return
        if isinstance(tool_records, str | bytes | Mapping) or not isinstance(
            tool_records, Iterable
        ):
            raise ValidationError("tool_records must be a list of strings or record mappings")
        items = list(itertools.islice(tool_records, MAX_TOOL_RECORDS + 1))
        if len(items) > MAX_TOOL_RECORDS:
            raise ValidationError(f"a turn holds at most {MAX_TOOL_RECORDS} tool records")
        for item in items:
            yield "tool", *_tool_record(item)

    # -- extraction ---------------------------------------------------------------------------

    def extract(self, session_id: str) -> Plan[Extraction]:
        """Learn from the session's turns that no extraction has read yet (all of them, window
        by window); what the background extraction does."""
        entry = yield from self.sessions.session_entry(session_id)
        mode = self.mode
        if mode == "off":
            return Extraction(session_id, "off")
        log = yield from self._unread(entry)
        done = Extraction(session_id, mode, skipped=log.skipped)
        windows = pipeline.windows_of(log.records, log.fresh_from)
        for n, read in enumerate(windows, start=1):
            through = log.records[-1] if n == len(windows) else read.records[-1]
            placed = replace(read, positions=tuple(log.offset + p for p in read.positions))
            done += yield from self._learn(session_id, placed, through)
        if not windows and log.fresh_from < len(log.records):  # tool output only: read it
            yield from self._advance(session_id, log.records[-1])
        self.store.stats.add("extractions")
        return done

    def _learn(self, session_id: str, window: pipeline.Window, through: Record) -> Plan[Extraction]:
        """Learn from one window and move the session's cursor to ``through``, in one
        transaction; a concurrent change of what it touches re-decides against the new state
        (the extractor is not asked again)."""
        counts: dict[str, int] = {}
        turns = tuple(replace(t, text=self._redacted(t.text, counts)) for t in window.turns)
        window = replace(
            window, turns=turns, tools=tuple(self.redactor.redact(t).text for t in window.tools)
        )
        proposed: Proposal | None = None
        for attempt in range(ATTEMPTS):
            if attempt:
                yield Invoke(time.sleep, (backoff(attempt),), blocking=True)
            entry = yield from self.sessions.session_entry(session_id)
            if _has_read(entry, through):
                return Extraction(session_id, self.mode)  # another process read it meanwhile
            session = Session.from_entry(entry)
            memories = pipeline.shown((yield from self._memories(session)))
            if proposed is None:
                proposed = yield from self._propose(window, memories)
            asked = proposed.reply is not None
            where = pipeline.situation(
                window,
                proposed.shown if asked else memories,
                private=session.private,
                use_slots=not asked,
            )
            decisions = pipeline.decide(proposed.candidates, where)
            # every version is read only when a fact of this window changes another of it
            history = (yield from self._history(session)) if pipeline.outdated(decisions) else []
            cursor = self._cursor_op(entry, through)
            tried = dict(counts)
            try:
                result = yield from self._store(
                    session, window, decisions, history, tried, cursor=cursor
                )
            except ConflictError:
                continue
            fresh = len(window.turns) - window.fresh + 1
            return replace(
                result,
                replies=() if proposed.reply is None else (proposed.reply,),
                parse_failures=() if proposed.failure is None else (proposed.failure,),
                redactions=tried,
                turns=fresh,
            )
        raise ConflictError(f"session {session_id} kept changing; extraction gave up")

    def _propose(
        self, window: pipeline.Window, memories: tuple[pipeline.Shown, ...]
    ) -> Plan[Proposal]:
        """The extractor's candidates: the LLM's (one call, shown ``memories``), else the
        heuristic's from the window's new turns."""
        if self.mode == "llm":
            return (yield from self._ask(window, memories))
        from . import heuristic  # its rules are read by the first extraction, not on import

        found = heuristic.extract([replace(t, text=normalise(t.text)) for t in window.turns])
        return Proposal([c for c in found if c.turn is None or c.turn >= window.fresh], memories)

    def _unread(self, session: MemoryEntry) -> Plan[Unread]:
        """The end of the session's log: the records no extraction has read (at most
        ``MAX_UNREAD`` user/assistant ones, the newest) after a few read ones as context.
        Before the first extraction, the last ``WINDOW`` user/assistant records count as unread."""
        where = Filter(self.store.tenant, (session.scope,), categories=(RECORD,))
        read_through = _read_through(session)
        total = yield from run(CountOp(where))
        newest: builtins.list[MemoryEntry] = []
        after = None
        while True:
            page = yield from run(ListOp(where, PAGE, after=after))
            newest += page
            tail = _tail(newest, read_through)
            if len(page) < PAGE or tail.said_unread > MAX_UNREAD:
                break
            if tail.said_read >= pipeline.WINDOW - 1:
                break
            after = (page[-1].created_at, page[-1].id)
        unread, skipped = tail.unread, 0
        if tail.said_unread > MAX_UNREAD:
            unread = _through_said(newest, MAX_UNREAD)
            pending = replace(where, since=read_through[0]) if read_through else where
            skipped = (yield from run(CountOp(pending))) - unread - (1 if read_through else 0)
        records = [Record.from_entry(e) for e in reversed(newest)]
        return Unread(tuple(records), len(records) - unread, total - len(records), max(0, skipped))

    def _cursor_op(self, session: MemoryEntry, through: Record) -> ReplaceOp:
        """The op that marks the session's log read through ``through``."""
        metadata = {**session.metadata, CURSOR: cursor_at(*_position(through))}
        revised = replace(
            session, metadata=metadata, updated_at=self.store.now(), revision=session.revision + 1
        )
        return ReplaceOp(self.store.tenant, revised, session.revision)

    def _advance(self, session_id: str, through: Record) -> Plan[None]:
        for attempt in range(ATTEMPTS):
            if attempt:
                yield Invoke(time.sleep, (backoff(attempt),), blocking=True)
            entry = yield from self.sessions.session_entry(session_id)
            try:
                yield from run(self._cursor_op(entry, through))
            except ConflictError:
                continue
            return
        raise ConflictError(f"session {session_id} kept changing; extraction gave up")

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

    def _ask(self, window: pipeline.Window, memories: tuple[pipeline.Shown, ...]) -> Plan[Proposal]:
        """The one LLM call of an extraction: for JSON with a schema when the model takes one,
        asked again in the line format if the server refuses the schema (with
        ``llm_structured=on`` the refusal fails the extraction)."""
        assert self.chat is not None
        structured = self.chat.structured_output
        try:
            return (yield from self._asked(window, memories, structured=structured))
        except StructuredOutputError:
            if not structured or self.chat.structured_output:
                raise
            self.store.stats.add("extraction_structured_fallbacks")
            return (yield from self._asked(window, memories, structured=False))

    def _asked(
        self, window: pipeline.Window, memories: tuple[pipeline.Shown, ...], *, structured: bool
    ) -> Plan[Proposal]:
        """One LLM call and its reply parsed (fail closed on a leaked nonce)."""
        assert self.chat is not None
        nonce = guard.new_nonce()
        request = self._request(window, memories, nonce, structured=structured)
        reply: ChatReply = yield from call(self.chat.complete, request, slow=True)
        if guard.leaks(reply.text, nonce):
            self.store.stats.add("extraction_refused_leak")
            return Proposal((), memories, reply)
        parsed = parse.parse_reply(reply.text, window=len(window.turns), structured=structured)
        self.store.stats.add("extraction_rejected_lines", len(parsed.rejected))
        return Proposal(parsed.candidates, memories, reply, self._unparsed(reply, parsed))

    def _request(
        self,
        window: pipeline.Window,
        memories: Sequence[pipeline.Shown],
        nonce: str,
        *,
        structured: bool,
    ) -> ChatRequest:
        """The extraction request: instructions, memories and turns, cut to fit the request
        cap with the schema it carries (``structured``)."""
        settings = self.store.settings
        wanted = schema.facts_schema() if structured else None
        budget = settings.llm_max_request_bytes - REQUEST_OVERHEAD - _bytes(wanted)
        shown_window, shown = prompts.fitted(window, memories, nonce, budget, structured=structured)
        messages = (
            ChatMessage("system", prompts.system_message(nonce, structured=structured)),
            ChatMessage("user", prompts.user_message(shown_window, shown, nonce)),
        )
        return ChatRequest(
            messages, max_tokens=settings.llm_max_tokens, purpose="extraction", schema=wanted
        )

    def _unparsed(self, reply: ChatReply, parsed: parse.ParsedReply) -> ParseFailure | None:
        """The parse failure of a reply, counted and logged (None: the reply was usable)."""
        if parsed.failure is None:
            return None
        reason = parsed.failure
        if reply.finish_reason == "length":
            reason += "; the reply was cut at llm_max_tokens (MEMVAULT_LLM_MAX_TOKENS)"
        failure = ParseFailure(reply.model, reason, parse.excerpt(reply.text))
        self.store.stats.add("extraction_parse_failures")
        log.warning(
            "nothing learned from the reply of model %s: %s; it began %r",
            failure.model,
            reason,
            failure.reply,
        )
        return failure

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
        *,
        cursor: ReplaceOp,
    ) -> Plan[Extraction]:
        """Everything a window teaches, with the session's cursor, in one transaction. A fact
        that a later turn of the same window changes is kept as superseded (or dropped if it was
        known already)."""
        dropped = [Dropped(d.candidate.fact, str(d.dropped)) for d in decisions if not d.stored]
        changed_later = pipeline.outdated(decisions)
        planned: builtins.list[Planned] = []
        placed: dict[int, int] = {}
        for index, decision in enumerate(decisions):
            if not decision.stored:
                continue
            try:
                entry = self._entry(session, window, decision, counts)
                self.notes.check_learned(session, entry)  # the door's rules, checked early
            except (ValidationError, ForbiddenError) as exc:  # a filter, an unusable fact, a rule
                dropped.append(Dropped(decision.candidate.fact, f"refused: {exc}"))
                continue
            if any(duplicates.restates(p.entry.content, entry.content) for p in planned):
                dropped.append(Dropped(decision.candidate.fact, "repeats another fact"))
                continue
            known = any(duplicates.restates(e.content, entry.content) for e in history)
            if index in changed_later and known:
                dropped.append(Dropped(decision.candidate.fact, "known, and changed since"))
                continue
            reason = self._reason(decision.candidate.reason, counts)
            placed[index] = len(planned)
            vector = self._embedded(decision, entry)
            planned.append(Planned(entry, decision.replaces, reason, vector=vector))
        for earlier, later in changed_later.items():
            if earlier in placed and later in placed:
                at = placed[earlier]
                planned[at] = replace(planned[at], successor=placed[later])
        refused = tuple(
            Refused(d.content, what, why) for d in decisions if d.stored for what, why in d.refused
        )
        self.store.stats.add("extraction_dropped", len(dropped))
        self.store.stats.add("extraction_refused", len(refused))
        result = yield from self._write(session, planned, cursor)
        return replace(result, session_id=session.id, dropped=tuple(dropped), refused=refused)

    def _embedded(self, decision: pipeline.Decision, entry: MemoryEntry) -> Any:
        """The embedding the extractor made of the entry's content, if it is what the store's
        model would make (the packaged MiniLM, the same text)."""
        vector = decision.candidate.vector
        same_model = self.store.embedder.name == PACKAGED_MODEL
        return vector if same_model and entry.content == decision.candidate.fact else None

    def _reason(self, reason: str | None, counts: dict[str, int]) -> str:
        """Why a fact replaces another: the extractor's words (redacted, one line, capped),
        or a plain default."""
        text = " ".join(self._redacted(reason or "", counts).split())[:MAX_REASON_CHARS]
        return (reason_text(text) if text else None) or DEFAULT_REASON

    def _entry(
        self,
        session: Session,
        window: pipeline.Window,
        decision: pipeline.Decision,
        counts: dict[str, int],
    ) -> MemoryEntry:
        assert decision.turn is not None
        assert decision.destination is not None
        scope = (
            Scope.user(session.user_id)
            if decision.destination is pipeline.Destination.GLOBAL
            else Scope.session(session.id)
        )
        native = None if decision.native is None else self._redacted(decision.native, counts)
        request = NewEntry(
            self._redacted(decision.content, counts),
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

    def _write(
        self, session: Session, planned: Sequence[Planned], cursor: ReplaceOp
    ) -> Plan[Extraction]:
        """Store the new facts (through the notes' door: :meth:`NotePlans.put_learned`), retire
        the ones they change and move the cursor: one transaction, so a crash leaves all of it
        or none."""
        chunks = yield from self.store.index(
            [p.entry for p in planned], known=[p.vector for p in planned]
        )
        olds = yield from self._heads(i for p in planned for i in p.replaces)
        now, tenant = self.store.now(), self.store.tenant
        puts: builtins.list[PutOp] = []
        written: builtins.list[MemoryEntry] = []
        retirements: builtins.list[Op[Any]] = []
        superseded: builtins.list[str] = []
        entries = _linked(planned)
        for item, linked, entry_chunks in zip(planned, entries, chunks, strict=True):
            changed = [
                old
                for old in {olds[i].id: olds.pop(i) for i in item.replaces if i in olds}.values()
                if old.scope == linked.scope and old.id not in superseded
                if not duplicates.restates(old.content, linked.content)
            ]
            entry = replace(linked, supersedes=(*linked.supersedes, *(o.id for o in changed)))
            retirements += [retire(tenant, o, entry, item.reason, now) for o in changed]
            superseded += [o.id for o in changed]
            fresh = not changed and not entry.superseded and not entry.supersedes
            threshold = self.store.settings.near_duplicate_threshold if fresh else 0.0
            puts.append(PutOp(tenant, entry, chunks=entry_chunks, duplicate_threshold=threshold))
            written.append(entry)
        twins, _ = yield from self.notes.put_learned(session, puts, [*retirements, cursor])
        stored = tuple(e for e, twin in zip(written, twins, strict=True) if twin is None)
        self.store.stats.add("superseded", len(superseded))
        found = tuple(replace(twin, duplicate=True) for twin in twins if twin is not None)
        return Extraction("", "", stored, found, tuple(superseded))

    def _heads(self, ids: Iterable[str]) -> Plan[dict[str, MemoryEntry]]:
        """For each of ``ids``, the live, current entry at the end of its chain: itself, or what
        superseded it meanwhile (another session of the user may have learned first)."""
        now, heads = self.store.now(), {}
        for entry_id in sorted(set(ids)):
            entry = yield from run(GetOp(self.store.tenant, entry_id))
            for _ in range(MAX_CHAIN):
                if entry is None or not entry.superseded:
                    break
                entry = yield from run(GetOp(self.store.tenant, str(entry.superseded_by)))
            if entry is not None and not entry.superseded and not entry.is_expired(now):
                heads[entry_id] = entry
        return heads


@dataclass(frozen=True, slots=True)
class Proposal:
    """What the extractor proposed for a window: candidates, the memories it was shown, and
    the LLM's reply (None: the heuristic extractor), unusable as a whole if ``failure``."""

    candidates: Sequence[Candidate]
    shown: tuple[pipeline.Shown, ...]
    reply: ChatReply | None = None
    failure: ParseFailure | None = None


def _bytes(wanted: ResponseSchema | None) -> int:
    """Bytes a request's schema takes (0 without one)."""
    return 0 if wanted is None else len(json.dumps(dict(wanted.schema)).encode())


@dataclass(frozen=True, slots=True)
class Planned:
    """A fact about to be stored, the ids of the entries it may replace, and why."""

    entry: MemoryEntry
    replaces: tuple[str, ...]
    reason: str
    successor: int | None = None
    """The planned fact (by position) that a later turn of the window changed it into."""
    vector: Any = None
    """Its content's embedding, already made by the store's model (the extractor's judge)."""


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


@dataclass(frozen=True, slots=True)
class Unread:
    """The end of a session's log as an extraction reads it."""

    records: tuple[Record, ...]
    """Oldest first: read records as context, then the unread ones."""
    fresh_from: int
    """Index in ``records`` of the first unread one."""
    offset: int
    """Position of ``records[0]`` in the session's whole log."""
    skipped: int = 0


@dataclass(frozen=True, slots=True)
class Tail:
    unread: int
    said_unread: int
    said_read: int


Position = tuple[datetime, str]


def _tail(newest: Sequence[MemoryEntry], read_through: Position | None) -> Tail:
    """Of a log's newest records (newest first): how many are unread, and how many
    user/assistant records are unread and read. Before the first extraction the newest
    ``WINDOW`` user/assistant records, and what came after them, are the unread ones."""
    unread = said_unread = said_read = 0
    for n, entry in enumerate(newest):
        said = entry.metadata.get("role") in ("user", "assistant")
        if read_through is None:
            fresh = said_unread < pipeline.WINDOW
        else:
            fresh = (entry.created_at, entry.id) > read_through
        if fresh and unread == n:
            unread += 1
            said_unread += said
        else:
            said_read += said
    return Tail(unread, said_unread, said_read)


def _through_said(newest: Sequence[MemoryEntry], count: int) -> int:
    """How many of the newest records it takes to hold ``count`` user/assistant ones."""
    seen = 0
    for n, entry in enumerate(newest, start=1):
        seen += entry.metadata.get("role") in ("user", "assistant")
        if seen == count:
            return n
    return len(newest)


def _read_through(session: MemoryEntry) -> Position | None:
    """Where the session's log has been read to (None before the first extraction)."""
    cursor = session.metadata.get(CURSOR)
    if not isinstance(cursor, Mapping):
        return None
    try:
        return datetime.fromisoformat(str(cursor["at"])), str(cursor["id"])
    except (KeyError, ValueError):
        return None


def _position(record: Record) -> Position:
    return record.created_at, record.id


def _has_read(session: MemoryEntry, record: Record) -> bool:
    read_through = _read_through(session)
    return read_through is not None and read_through >= _position(record)
