"""Team compositions as plans on the store: each run of a team folds into its composition's
statistics over every kind of request and over its kind (in one transaction, with the
execution when it comes with one), and the suggestion of the team to run reads them."""

from __future__ import annotations

import builtins
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .. import validation as check
from ..core import Plan, Planner, run, run_all
from ..errors import ValidationError
from ..store.ops import FoldOp, GetManyOp, ReachOp
from ..types import Scope
from .choice import Prefer, pick, utilities
from .model import TEAM_STATS, derived_id
from .stats import ANY_KIND, Sample
from .strategies import KIND_RUNS, adding
from .team import MAX_MEMBERS, Member, RankedTeam, Team, TeamStats, TeamSuggestion
from .wing import MAX_AMOUNT, AgentWing, count, expiry, label, listed, owned, seeded
from .work_styles import WorkStylePlans


class TeamPlans(AgentWing):
    """Which team compositions worked on which kinds of request, and which to run next."""

    def __init__(self, store: Planner, styles: WorkStylePlans) -> None:
        super().__init__(store)
        self.styles = styles

    def record_team(
        self,
        *,
        kind: str,
        agents: Iterable[Member | Mapping[str, Any]],
        success: bool,
        tokens: int = 0,
        duration_ms: float = 0.0,
        cost: float = 0.0,
        workflow_id: str | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[TeamStats]:
        """Record one run of a team (``agents``: each a ``role``, an ``agent_id`` and an
        optional ``model``; their order does not matter) on a ``kind`` of request: folded, in
        one transaction, into its composition's statistics over every kind and over ``kind``.
        Returns those over ``kind``."""
        team = self.team(agents)
        kind = self.redacted(label("kind", kind))
        sample = Sample(
            check.flag("success", success),
            count("tokens", tokens),
            check.finite("duration_ms", duration_ms, 0, MAX_AMOUNT),
            check.finite("cost", cost, 0, MAX_AMOUNT),
            self.store.now(),
        )
        workflow = label("workflow_id", workflow_id, optional=True)
        folds = self.folds(team, kind, sample, self.scope(scope), workflow)
        folded = yield from run_all(folds)
        self.store.stats.add("team_runs")
        return TeamStats.from_dict(folded[-1].entry.metadata)

    def team_stats(
        self, *, kind: str | None = None, scope: Scope | str | None = None
    ) -> Plan[builtins.list[TeamStats]]:
        """Every composition's statistics (over every kind of request, and per kind;
        ``kind``: only those of that kind), by kind then success rate."""
        where = self.where(scope, TEAM_STATS)
        if kind is not None:
            where = replace(where, metadata=(("kind", label("kind", kind)),))
        entries = yield from self.store.every(where)
        rows = [TeamStats.from_dict(e.metadata) for e in entries]
        return sorted(rows, key=_table_order)

    def suggest_team(
        self,
        *,
        kind: str | None = None,
        query: str | None = None,
        candidates: Sequence[Sequence[Member | Mapping[str, Any]]] | None = None,
        epsilon: float = 0.0,
        prefer: Prefer | None = None,
        user: str | None = None,
        limit: int = 5,
        seed: int | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[TeamSuggestion]:
        """The team composition to run on ``kind`` requests (or, given a ``query`` and no
        kind, on the kind of most similar past requests), explained, with the compositions
        that worked on them ranked by utility for ``prefer`` (as ``choose_strategy`` ranks
        strategies; not given: the leaning of ``user``'s work style; none having run on
        them: those that worked on any). Among the
        ``candidates`` if given (one never run is tried first), else among those ranked;
        with probability ``epsilon`` one drawn at random. ``seed`` makes the draw
        repeatable."""
        epsilon = check.finite("epsilon", epsilon, 0, 1)
        limit = check.limit(limit, self.store.settings)
        rng = random.Random(seeded(seed))
        offered = None if candidates is None else self._candidates(candidates)
        prefer = yield from self.styles.prefer(prefer, user)
        where = self.scope(scope)
        if kind is None and query is not None:
            kind = yield from self.kind_of(query, scope)
        kind = self.redacted_label("kind", kind) or ANY_KIND
        if offered is None:  # those that ran on the kind; none: those that ran on any
            known = yield from self.team_stats(kind=kind, scope=where)
            if not known and kind != ANY_KIND:
                known = yield from self.team_stats(kind=ANY_KIND, scope=where)
        else:
            known = yield from self._stats_of(offered, kind, where)
        usable, overall = _usable(known, kind, offered)
        scores = utilities(usable, prefer)
        ranked = sorted(
            (RankedTeam(usable[key], scores[key]) for key in scores),
            key=lambda r: (-r.utility, r.stats.team.key),
        )
        worked = tuple(r for r in ranked if r.stats.successes)
        pool = [t.key for t in offered] if offered else [r.stats.team.key for r in worked]
        if not pool:
            self.store.stats.add("team_choices_none")
            return TeamSuggestion(None, "none", prefer, epsilon, kind, overall, worked[:limit])
        chosen = pick(pool, usable, epsilon, rng, prefer)
        self.store.stats.add(f"team_choices_{chosen.reason}")
        team = _team_of(chosen.name, offered, usable)
        return TeamSuggestion(team, chosen.reason, prefer, epsilon, kind, overall, worked[:limit])

    def team(self, agents: Iterable[Member | Mapping[str, Any]]) -> Team:
        """A team from its members, checked (1 to 64 of them, labels printable)."""
        members = [Member.coerce(m) for m in listed("agents", agents)]
        if not 0 < len(members) <= MAX_MEMBERS:
            raise ValidationError(f"a team has 1 to {MAX_MEMBERS} agents, got {len(members)}")
        return Team.of(
            Member(
                label("role", m.role),
                label("agent_id", m.agent_id),
                label("model", m.model, optional=True),
            )
            for m in members
        )

    def folds(
        self,
        team: Team,
        kind: str | None,
        sample: Sample,
        where: Scope,
        workflow_id: str | None = None,
    ) -> list[FoldOp]:
        """The folds of one run of ``team`` into its statistics (any kind; its kind)."""
        now = sample.at
        expires = expiry(now, self.store.settings.agent_aggregate_days)
        folds = []
        for each in dict.fromkeys([ANY_KIND, kind or ANY_KIND]):
            first = TeamStats(team=team, kind=each, last_workflow_id=workflow_id).adding(sample)
            entry = owned(
                self._stats_id(where, team, each),
                where,
                f"statistics of team {team} on {each} requests",
                TEAM_STATS,
                now,
                expires,
                first.to_dict(),
            )
            fold = adding(_reader(workflow_id), sample, now, expires)
            folds.append(FoldOp(self.store.tenant, entry, fold, live_at=now))
        return folds

    def _candidates(self, candidates: object) -> list[Team]:
        teams = list(dict.fromkeys(self.team(c) for c in listed("candidates", candidates)))
        if not teams:
            raise ValidationError("candidates must hold at least one team")
        return teams

    def _stats_of(self, teams: Sequence[Team], kind: str, where: Scope) -> Plan[list[TeamStats]]:
        """The statistics of ``teams`` on ``kind`` and on any kind."""
        ids = tuple(self._stats_id(where, t, k) for t in teams for k in {ANY_KIND, kind})
        reach = ReachOp(self.store.tenant, (str(where),))  # none found says something too
        found = yield from run(GetManyOp(self.store.tenant, ids), reach)
        now = self.store.now()
        return [TeamStats.from_dict(e.metadata) for e in found if not e.is_expired(now)]

    def _stats_id(self, scope: Scope, team: Team, kind: str) -> str:
        return derived_id("team", self.store.tenant, str(scope), team.key, kind)


def _usable(
    known: Sequence[TeamStats], kind: str, offered: Sequence[Team] | None
) -> tuple[dict[str, TeamStats], bool]:
    """The statistics to judge each composition by, and whether over every kind (none has run
    on ``kind``): a candidate's on ``kind`` once it has run on it 5 times, else its overall
    ones; without candidates, those of the compositions that ran on ``kind``."""
    on_kind = {s.team.key: s for s in known if s.kind == kind}
    overall = {s.team.key: s for s in known if s.kind == ANY_KIND}
    if offered is None:
        return (on_kind, False) if on_kind else (overall, kind != ANY_KIND and bool(overall))
    usable = {}
    for team in offered:
        own = on_kind.get(team.key)
        chosen = own if own is not None and own.runs >= KIND_RUNS else overall.get(team.key)
        if chosen is not None:
            usable[team.key] = chosen
    return usable, False


def _team_of(key: str, offered: Sequence[Team] | None, usable: Mapping[str, TeamStats]) -> Team:
    if offered is not None:
        return next(t for t in offered if t.key == key)
    return usable[key].team


def _reader(workflow_id: str | None) -> Any:
    """Reads a team's statistics from its entry, the newest workflow noted."""

    def read(data: Mapping[str, Any]) -> TeamStats:
        stats = TeamStats.from_dict(data)
        return stats if workflow_id is None else replace(stats, last_workflow_id=workflow_id)

    return read


def _table_order(stats: TeamStats) -> tuple[Any, ...]:
    return (stats.kind != ANY_KIND, stats.kind, -(stats.success_rate or 0), stats.team.key)
