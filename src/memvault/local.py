"""A memory on a local store: the backend, the planners of one tenant, the chat model, the
background extractions and records — what ``Memory`` and ``AsyncMemory`` run operations on
when they are not given a memvault server's URL."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar, cast

from . import validation as check
from .agents.background import Recorder
from .agents.decompositions import DecompositionPlans
from .agents.executions import ExecutionPlans
from .agents.failures import FailurePlans
from .agents.strategies import StrategyPlans
from .agents.teams import TeamPlans
from .agents.work_styles import WorkStylePlans
from .config import Settings, default_home
from .context.plans import ContextPlans
from .core import Plan, Planner, utc_now
from .drivers import drive_awaiting, drive_blocking
from .embeddings import Embedder, default_embedder
from .errors import ForbiddenError, ValidationError
from .extraction.plans import Extraction, LearningPlans, TurnResult, extractor_mode
from .extraction.worker import Failure, Learner, Matches, Slot
from .facilities.notes import NotePlans
from .facilities.sessions import SessionPlans
from .llm.base import ChatModel
from .llm.configured import chat_model_from_settings
from .security import redact
from .store.audit import DIRECT, Stamp
from .store.base import Backend
from .store.grants import EVERYTHING, Grant, Reach
from .store.registry import open_backend
from .store.session_files import SessionFiles
from .store.use_log import Storing
from .trust.audit import AuditPlans
from .trust.bundles import BundlePlans
from .trust.erasure import ErasurePlans, Residue
from .trust.hygiene import HygienePlans
from .trust.retention import RetentionPlans
from .types import Scope
from .versions import VersionPlans

T = TypeVar("T")


def run_blocking(plan: Plan[T], backend: Backend, stamp: Stamp = DIRECT) -> T:
    """Run a plan to completion with blocking calls; the audit log says ``stamp`` of what it
    changes."""
    return drive_blocking(plan, functools.partial(backend.batch, stamp=stamp))


async def run_awaiting(plan: Plan[T], backend: Backend, stamp: Stamp = DIRECT) -> T:
    """Run a plan to completion, awaiting the backend and async callbacks; the audit log says
    ``stamp`` of what it changes."""
    return await drive_awaiting(plan, functools.partial(backend.abatch, stamp=stamp))


@dataclass(frozen=True, slots=True)
class Planners:
    """The planners of one tenant's memory: the store's, and the capabilities composed on it."""

    store: Planner
    versions: VersionPlans
    sessions: SessionPlans
    notes: NotePlans
    context: ContextPlans
    learning: LearningPlans
    erasure: ErasurePlans
    retention: RetentionPlans
    audit: AuditPlans
    bundles: BundlePlans
    executions: ExecutionPlans
    strategies: StrategyPlans
    teams: TeamPlans
    work_styles: WorkStylePlans
    decompositions: DecompositionPlans
    failures: FailurePlans
    hygiene: HygienePlans

    @classmethod
    def on(
        cls, store: Planner, chat: ChatModel | None = None, residue: Residue | None = None
    ) -> Planners:
        """The planners on ``store``; ``residue``: an erasure's purge and scan (none: the
        store cannot be scanned)."""
        sessions = SessionPlans(store)
        notes = NotePlans(store, sessions)
        context = ContextPlans(store, sessions, notes, chat)
        learning = LearningPlans(store, sessions, notes, chat)
        erasure = ErasurePlans(store, residue)
        retention = RetentionPlans(store)
        styles = WorkStylePlans(store)
        sessions.observers.append(styles.from_turns)
        strategies, teams = StrategyPlans(store, styles), TeamPlans(store, styles)
        failures = FailurePlans(store)
        store.leaving = notes.may_leave  # the notes' rule, for every door that copies out
        return cls(
            store,
            VersionPlans(store),
            sessions,
            notes,
            context,
            learning,
            erasure,
            retention,
            AuditPlans(store),
            BundlePlans(store, sessions),
            ExecutionPlans(store, strategies, teams, failures, styles),
            strategies,
            teams,
            styles,
            DecompositionPlans(store),
            failures,
            HygienePlans(store, retention),
        )


def part_of(plan: Callable[..., Any]) -> str:
    """Which of :class:`Planners` makes ``plan`` (TypeError: a plan of no known planner)."""
    owner = plan.__qualname__.rsplit(".", 1)[0]
    if owner not in PART:
        raise TypeError(f"{plan.__qualname__} is not a plan of a known planner")
    return PART[owner]


PART = {
    "Planner": "store",
    "VersionPlans": "versions",
    "SessionPlans": "sessions",
    "NotePlans": "notes",
    "ContextPlans": "context",
    "LearningPlans": "learning",
    "ErasurePlans": "erasure",
    "RetentionPlans": "retention",
    "AuditPlans": "audit",
    "BundlePlans": "bundles",
    "ExecutionPlans": "executions",
    "StrategyPlans": "strategies",
    "TeamPlans": "teams",
    "WorkStylePlans": "work_styles",
    "DecompositionPlans": "decompositions",
    "FailurePlans": "failures",
    "HygienePlans": "hygiene",
}
"""The planner of each planner class, by the class's name."""


class Local:
    """A local store and the work on it of one tenant and actor (a view shares, and does not
    own, what it was made from)."""

    def __init__(
        self,
        store: str | Backend | None,
        *,
        tenant: str | None,
        settings: Settings | None,
        clock: Callable[[], datetime] | None,
        embedder: Embedder | None,
        check_embedding: bool,
        llm: ChatModel | None,
        actor: str | None,
    ) -> None:
        settings = settings if settings is not None else Settings.from_env()
        self.actor = check.actor(actor if actor is not None else settings.actor, most=128)
        self.grant = EVERYTHING
        self.storing: Storing | None = None
        self.chat, self._owns_chat = llm, False
        self.learner, self._owns_learner = Learner(), True
        self._owns_backend = False
        self._unlisten: Callable[[], None] = lambda: None
        if llm is None:
            self.chat = chat_model_from_settings(settings)
            self._owns_chat = self.chat is not None
        try:
            extractor_mode(settings, self.chat)  # refuses extraction=llm without an LLM
            url = None if isinstance(store, Backend) else store or settings.store_url()
            if url is None:
                self.backend = cast(Backend, store)
            else:
                self.backend = open_backend(url, settings)
                self._owns_backend = True
            if embedder is None:
                embedder = default_embedder(settings.redis_url, settings.embed_threads)
            store_planner = Planner(tenant or settings.tenant, settings, clock or utc_now, embedder)
            if url is not None and self.backend.capabilities.persistent:
                store_planner.files = SessionFiles.of(default_home(), url)
            self.planners = Planners.on(store_planner, self.chat, self._residue)
            self._unlisten = self.backend.listen(self._forget_copies)
            self.storing = Storing(self._store_uses)
            store_planner.uses.added = self.storing.soon
            self.recorder = Recorder(store_planner.stats, self.backend.breaker)
            if check_embedding:
                run_blocking(store_planner.check_embedding(), self.backend)
        except BaseException:
            self.close()  # what was opened so far: the LLM client, the backend, the workers
            raise

    @property
    def tenant(self) -> str:
        return self.planners.store.tenant

    def stamp(self, operation: str, changes: bool = True) -> Stamp:
        """What the audit log says of the changes ``operation`` makes here, with this view's
        grant (``changes``: whether the operation may change memory)."""
        return Stamp(operation, self.actor, self.planners.store.now, self.grant, changes)

    def run_blocking(
        self,
        plan: Callable[..., Plan[T]],
        part: str,
        args: Any,
        kwargs: Any,
        changes: bool = True,
    ) -> T:
        """Run ``plan`` of this memory's planner ``part`` with blocking calls."""
        made = plan(getattr(self.planners, part), *args, **kwargs)
        return run_blocking(made, self.backend, self.stamp(plan.__name__, changes))

    async def run_awaiting(
        self,
        plan: Callable[..., Plan[T]],
        part: str,
        args: Any,
        kwargs: Any,
        changes: bool = True,
    ) -> T:
        """Run ``plan`` of this memory's planner ``part``, awaiting the backend."""
        made = plan(getattr(self.planners, part), *args, **kwargs)
        return await run_awaiting(made, self.backend, self.stamp(plan.__name__, changes))

    def with_tenant(self, tenant: str) -> Local:
        view = self._shared()
        store = self.planners.store.for_tenant(tenant)
        view.planners = Planners.on(store, self.chat, view._residue)
        return view

    def as_actor(self, actor: str) -> Local:
        view = self._shared()
        view.actor = check.actor(actor)
        return view

    def with_grant(self, grant: Grant) -> Local:
        view = self._shared()
        view.grant = grant
        return view

    def _shared(self) -> Local:
        view = object.__new__(Local)
        view.backend, view._owns_backend = self.backend, False
        view.chat, view._owns_chat = self.chat, False
        view.learner, view._owns_learner = self.learner, False
        view.planners, view.actor, view.grant = self.planners, self.actor, self.grant
        view.recorder, view.storing = self.recorder, None
        view._unlisten = lambda: None
        return view

    def _forget_copies(self) -> None:
        """Drop the copies of content kept in this process — the last extraction results, the
        embedding cache's vectors, the redaction's cached windows (the backend drops its own
        search indexes): an erasure or a session's deletion happened, here or in another
        process (the backend calls this at its first transaction after it)."""
        self.learner.forget()
        self.planners.store.uses.clear()  # ids of what may have been erased
        self.planners.store.embedder.clear()
        redact.forget_windows()

    def _residue(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> int | None:
        """An erasure's purge and scan: the store's (:meth:`Backend.residue`), and this
        process's copies dropped again and checked (a result or a vector of an erased text
        kept by a race)."""
        found = self.backend.residue(ids, contents, hashed)
        self._forget_copies()
        embedder = self.planners.store.embedder
        held = self.learner.holding([*ids, *contents]) + embedder.holding(contents)
        return found if not held else (found or 0) + held

    def stats(self) -> dict[str, int]:
        if self.grant.limited:  # every tenant's counters: a key limited to scopes has none
            raise ForbiddenError(
                "a key limited by read= or write= cannot read the server's counters"
            )
        counts = self.planners.store.stats.snapshot()
        if self.chat is not None:
            counts.update(self.chat.usage.snapshot())
        learner = {"extraction_failures": self.learner.failures}
        learner["extraction_unavailable"] = self.learner.unavailable
        learner["extraction_pending"] = self.learner.pending()
        learner["uses_dropped"] = self.storing.dropped if self.storing is not None else 0
        breaker = self.backend.breaker
        counts |= breaker.counts() if breaker is not None else {}
        return counts | {name: n for name, n in learner.items() if n}

    def last_extraction(self, session_id: str) -> Extraction | Failure | None:
        session = str(Scope.session(session_id))
        self.grant.require(Reach((session,)), changes=True)
        self.backend.hear()
        found: Extraction | Failure | None = self.learner.results.get((self.tenant, session_id))
        if isinstance(found, Extraction):  # what it learned, where: to read, or to write
            learned = {str(e.scope) for e in (*found.stored, *found.merged)}
            self.grant.require(Reach((session, *sorted(learned))), changes=True)
        return found

    def waits_for(
        self, timeout: float | None, session_id: str | None
    ) -> tuple[float | None, Matches]:
        """A flush's timeout, checked, and the extractions it waits for: this tenant's (or those
        of one of its sessions)."""
        timeout = check.timeout(timeout)
        if session_id is None:
            tenant = self.tenant
            return timeout, lambda slot: isinstance(slot, tuple) and slot[0] == tenant
        if not isinstance(session_id, str):
            raise ValidationError(f"session_id must be a string, got {session_id!r}")
        session = (self.tenant, session_id)
        return timeout, lambda slot: slot == session

    def scheduled(self, turn: TurnResult) -> TurnResult:
        """Start (or queue) the extraction of the turn's session in the background."""
        learning = self.planners.learning
        if learning.mode == "off":
            return turn
        session_id, backend, stamp = turn.session_id, self.backend, self.stamp("extract")

        def extract() -> Any:
            return run_blocking(learning.extract(session_id), backend, stamp)

        slot = Slot(learning.store.tenant, session_id)
        return replace(turn, extraction=self.learner.schedule(slot, extract))

    def _store_uses(self) -> int:
        """Store the uses of entries this process saw (its views' too)."""
        store = self.planners.store
        if not len(store.uses):
            return 0
        return run_blocking(store.store_uses(), self.backend, Stamp("use", self.actor))

    def close(self) -> None:
        """Wait for pending extractions, store the uses of entries seen, then close what this
        object opened: its extraction workers, the LLM client, the backend (a view closes
        nothing)."""
        if self._owns_learner:
            self.learner.close()
            if self.storing is not None:
                self.storing.close()
            self._unlisten()
        if self._owns_chat and self.chat is not None:
            self.chat.close()
        if self._owns_backend:
            self.backend.close()
