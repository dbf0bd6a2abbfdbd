"""Team compositions (pure): who filled which role, identified by its members and not their
order; a composition's running statistics per kind of request; and the suggestion of the team
to run, explained."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ValidationError
from .choice import Prefer, Reason
from .stats import ANY_KIND, Tally

MAX_MEMBERS = 64
"""Most members of one team."""
MEMBER_FIELDS = frozenset({"role", "agent_id", "model"})


@dataclass(frozen=True, slots=True, order=True)
class Member:
    """One agent of a team: its ``role``, which agent filled it, on which ``model``."""

    role: str
    agent_id: str
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "agent_id": self.agent_id, "model": self.model}

    @classmethod
    def coerce(cls, value: object) -> Member:
        """A member from a ``Member`` or a mapping of ``role``, ``agent_id`` and ``model``
        (types are checked by the caller)."""
        if isinstance(value, Member):
            return value
        if not isinstance(value, Mapping):
            raise ValidationError(f"a team member must be a mapping, got {type(value).__name__}")
        unknown = sorted(str(key) for key in value if key not in MEMBER_FIELDS)
        if unknown:
            raise ValidationError(f"a team member has unknown fields {', '.join(unknown)}")
        if "role" not in value or "agent_id" not in value:
            raise ValidationError("a team member needs a role and an agent_id")
        return cls(value["role"], value["agent_id"], value.get("model"))

    def __str__(self) -> str:
        model = f" ({self.model})" if self.model else ""
        return f"{self.role}: {self.agent_id}{model}"


@dataclass(frozen=True, slots=True)
class Team:
    """A composition: its members, sorted (the same members in any order are one team)."""

    members: tuple[Member, ...]

    @classmethod
    def of(cls, members: Iterable[Member]) -> Team:
        return cls(tuple(sorted(members, key=lambda m: (m.role, m.agent_id, m.model or ""))))

    @property
    def key(self) -> str:
        """What identifies the composition (the same for every order of its members)."""
        return "\x1e".join(f"{m.role}\x1f{m.agent_id}\x1f{m.model or ''}" for m in self.members)

    def to_list(self) -> list[dict[str, Any]]:
        return [member.to_dict() for member in self.members]

    @classmethod
    def from_list(cls, data: Iterable[Mapping[str, Any]]) -> Team:
        return cls.of(Member.coerce(item) for item in data)

    def __str__(self) -> str:
        return " + ".join(map(str, self.members))


@dataclass(frozen=True, slots=True)
class TeamStats(Tally):
    """How a team composition has done on one kind of request."""

    team: Team
    last_workflow_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row of the team table and what it is made of; also what the statistics'
        entry stores as its metadata."""
        return {
            "team": self.team.to_list(),
            "label": str(self.team),
            "last_workflow_id": self.last_workflow_id,
            **self.tally_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TeamStats:
        try:
            return cls(
                team=Team.from_list(data["team"]),
                last_workflow_id=data.get("last_workflow_id"),
                **cls.tally_fields(data),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(f"malformed team statistics: {exc}") from exc


Why = Reason | Literal["none"]


@dataclass(frozen=True, slots=True)
class RankedTeam:
    """A composition that worked, its statistics and its utility for the preference."""

    stats: TeamStats
    utility: float

    def to_dict(self) -> dict[str, Any]:
        return {"utility": self.utility, **self.stats.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RankedTeam:
        return cls(TeamStats.from_dict(data), float(data["utility"]))


@dataclass(frozen=True, slots=True)
class TeamSuggestion:
    """The team to run (None: no composition is known for these requests and none was
    offered), and why: ``untried`` (an offered candidate never run on them), ``explore``
    (drawn at random, with probability ``epsilon``), ``exploit`` (the highest utility) or
    ``none``; ``ranked``: the compositions that worked on ``kind`` requests (``overall``: on
    any, none having run on these), best first."""

    team: Team | None
    reason: Why
    prefer: Prefer
    epsilon: float
    kind: str = ANY_KIND
    overall: bool = False
    ranked: tuple[RankedTeam, ...] = field(default_factory=tuple)

    @property
    def explanation(self) -> str:
        """One sentence on why this team was suggested."""
        where = "any request" if self.kind == ANY_KIND else f"{self.kind!r} requests"
        if self.team is None:
            return f"no team composition has worked on {where} yet: none to suggest"
        if self.reason == "untried":
            return f"{self.team}: never run on {where}; tried before the others"
        mine = next((r for r in self.ranked if r.stats.team == self.team), None)
        overall = " over every kind" if mine is not None and mine.stats.kind != self.kind else ""
        record = (
            ""
            if mine is None
            else (
                f"; {mine.stats.successes}/{mine.stats.runs} succeeded{overall}, mean "
                f"{mine.stats.duration_ms.mean or 0:.0f} ms and {mine.stats.tokens.mean or 0:.0f} "
                "tokens"
            )
        )
        if self.reason == "explore":
            return (
                f"{self.team}: drawn at random to keep learning (epsilon {self.epsilon:g}){record}"
            )
        rest = [r for r in self.ranked if r.stats.team != self.team][:3]
        others = ", ".join(f"{r.stats.team} {r.utility:.3f}" for r in rest)
        utility = f"{mine.utility:.3f}" if mine is not None else "?"
        return (
            f"{self.team}: best {self.prefer} utility on {where} ({utility}; "
            f"{others or 'no other composition'}){record}"
        )

    def __str__(self) -> str:
        return self.explanation

    def to_dict(self) -> dict[str, Any]:
        return {
            "team": None if self.team is None else self.team.to_list(),
            "reason": self.reason,
            "prefer": self.prefer,
            "epsilon": self.epsilon,
            "kind": self.kind,
            "overall": self.overall,
            "explanation": self.explanation,
            "ranked": [r.to_dict() for r in self.ranked],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TeamSuggestion:
        team = data["team"]
        return cls(
            None if team is None else Team.from_list(team),
            data["reason"],
            data["prefer"],
            float(data["epsilon"]),
            data["kind"],
            bool(data["overall"]),
            tuple(RankedTeam.from_dict(r) for r in data["ranked"]),
        )
