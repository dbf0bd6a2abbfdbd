"""What a caller may read and write: scope patterns, and the check of every op (pure).

A :class:`Grant` names the scopes a caller may read and those it may write, each as patterns:
a scope (``user:alice``), a kind with a wildcard (``session:*``) or ``*`` (every scope of the
tenant). :data:`EVERYTHING` (an API key with neither field) reaches the whole tenant. The store
checks every op of every transaction against the grant of the operation that runs it
(:meth:`~memvault.store.Backend.run_batch`): the scopes an op names before it runs, the
scopes of what it found or removed after, inside the transaction — a refusal rolls it back.

An op that only reads is allowed on a readable scope, and on a writable one when the operation
changes memory (a write finds the entry it restates, an update reads what it changes): a key
that may only write cannot read through an operation that only reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ForbiddenError, InvalidScopeError
from ..types import AuditEvent, MemoryEntry, Scope, ScopeKind
from . import ops

EVERY_SCOPE = "*"


@dataclass(frozen=True, slots=True)
class Pattern:
    """``*`` (every scope), ``kind:*`` (every scope of a kind) or one scope."""

    text: str

    @classmethod
    def parse(cls, text: str) -> Pattern:
        """A pattern from its text; InvalidScopeError if it is none of the three forms."""
        text = text.strip()
        if text == EVERY_SCOPE:
            return cls(text)
        kind, sep, rest = text.partition(":")
        if "*" in text and not (sep and rest == "*"):
            raise InvalidScopeError(
                f"pattern {text!r}: '*' stands alone or after a kind ('session:*'), nowhere else"
            )
        if sep and rest == "*":
            if kind not in set(ScopeKind):
                raise InvalidScopeError(
                    f"unknown scope kind {kind!r} in pattern {text!r}; use one of: "
                    f"{', '.join(ScopeKind)}"
                )
            return cls(text)
        return cls(str(Scope.parse(text)))

    @property
    def kind(self) -> str | None:
        """The kind a ``kind:*`` pattern covers (None: another form)."""
        kind, _, rest = self.text.partition(":")
        return kind if rest == "*" else None

    def matches(self, scope: str) -> bool:
        """Whether ``scope`` (``kind:id``) is one this pattern names."""
        if self.text in (EVERY_SCOPE, scope):
            return True
        return self.kind is not None and scope.partition(":")[0] == self.kind

    def covers_kind(self, kind: str) -> bool:
        """Whether every scope of ``kind`` is one this pattern names."""
        return self.text == EVERY_SCOPE or self.kind == kind

    def __str__(self) -> str:
        return self.text


def patterns(text: str) -> tuple[Pattern, ...]:
    """``P1|P2|…`` as patterns; InvalidScopeError if one does not parse or none is given."""
    parts = [part.strip() for part in text.split("|")]
    if not all(parts):
        raise InvalidScopeError(f"an empty pattern in {text!r}: patterns are separated by '|'")
    return tuple(dict.fromkeys(Pattern.parse(part) for part in parts))


@dataclass(frozen=True, slots=True)
class Reach:
    """What an op touches: scopes named (None: every scope of the tenant, or of ``kinds``)."""

    scopes: tuple[str, ...] | None
    kinds: tuple[str, ...] = ()
    changes: bool = False


EVERY = Reach(None)
NOTHING = Reach(())


@dataclass(frozen=True, slots=True)
class Grant:
    """The scopes a caller may read and write (None: every scope of its tenant)."""

    read: tuple[Pattern, ...] | None = None
    write: tuple[Pattern, ...] | None = None

    @classmethod
    def of(cls, read: str | None = None, write: str | None = None) -> Grant:
        """From the fields of a key: with neither, everything; with one, exactly it (the
        other grants nothing)."""
        if read is None and write is None:
            return EVERYTHING
        return cls(
            () if read is None else patterns(read),
            () if write is None else patterns(write),
        )

    @property
    def limited(self) -> bool:
        return self != EVERYTHING

    def check(self, batch: Sequence[ops.Op[Any]], changes: bool) -> None:
        """Refuse (ForbiddenError) a transaction with an op outside this grant, before it runs;
        ``changes``: whether the operation running it changes memory."""
        if self.limited:
            for op in batch:
                self.require(reach(op), changes)

    def check_results(
        self, batch: Sequence[ops.Op[Any]], results: Sequence[Any], changes: bool
    ) -> None:
        """Refuse (ForbiddenError, inside the transaction: nothing is kept) what an op found or
        removed outside this grant — an entry read or deleted by its id."""
        if self.limited:
            for op, result in zip(batch, results, strict=True):
                found = found_scopes(op, result)
                if found and not _within(self._allowed(op.writes, changes), Reach(found)):
                    what = "change" if op.writes else "read"  # never where it lies
                    raise ForbiddenError(f"the grant does not allow to {what} an entry named by id")

    def require(self, reach: Reach, changes: bool = False) -> None:
        """Refuse (ForbiddenError) what reaches outside this grant: for what runs no op (the
        server's counters, a session's last extraction)."""
        if not _within(self._allowed(reach.changes, changes), reach):
            raise ForbiddenError(self._refusal(reach))

    def _allowed(self, writes: bool, changes: bool) -> tuple[Pattern, ...] | None:
        """The patterns an op may reach: to write, or to read (in an operation that
        ``changes``, what it may write too)."""
        return self.write if writes else _either(self.read, self.write, changes)

    def _refusal(self, reach: Reach) -> str:
        what = "write" if reach.changes else "read"
        if reach.scopes is None:
            kinds = ", ".join(reach.kinds)
            where = f"every scope of kind {kinds}" if kinds else "every scope"
        else:
            where = ", ".join(sorted(set(reach.scopes)))
        fields = ", ".join(f"{name}={_shown(p)}" for name, p in self.fields() if p is not None)
        return f"the grant ({fields}) does not allow to {what} {where}"

    def fields(self) -> Iterator[tuple[str, tuple[Pattern, ...] | None]]:
        yield "read", self.read
        yield "write", self.write

    def to_dict(self) -> dict[str, list[str] | None]:
        """``{"read": [...], "write": [...]}``; a field is None where it grants everything."""
        return {name: None if p is None else [str(x) for x in p] for name, p in self.fields()}


EVERYTHING = Grant()
"""Every scope of the tenant, to read and to write."""


def _shown(found: tuple[Pattern, ...]) -> str:
    return "|".join(map(str, found)) or "(nothing)"


def _either(
    read: tuple[Pattern, ...] | None, write: tuple[Pattern, ...] | None, changes: bool
) -> tuple[Pattern, ...] | None:
    if read is None or (changes and write is None):
        return None
    return (*read, *write) if changes and write is not None else read


def _within(allowed: tuple[Pattern, ...] | None, reach: Reach) -> bool:
    if allowed is None:
        return True
    if reach.scopes is not None:
        return all(any(p.matches(s) for p in allowed) for s in reach.scopes)
    if not reach.kinds:
        return any(str(p) == EVERY_SCOPE for p in allowed)
    return all(any(p.covers_kind(k) for p in allowed) for k in reach.kinds)


def _of_filter(where: ops.Filter, changes: bool = False) -> Reach:
    if where.scopes is not None:
        return Reach(tuple(map(str, where.scopes)), changes=changes)
    return Reach(None, tuple(where.scope_kinds), changes)


UNSCOPED = (
    ops.GetOp,
    ops.GetManyOp,
    ops.DeleteOp,  # by id: what they find is checked after
    ops.StoredEmbeddingOp,
    ops.EmbeddingInfoOp,  # the store's embedding model
    ops.ForgetCopiesOp,  # a word to every process to drop its caches
    ops.UsesOp,
    ops.RecordUsesOp,  # how often entries found by id were used: never their content
)
"""Ops that name no scope before they run."""


def reach(op: ops.Op[Any]) -> Reach:
    """The scopes ``op`` names before it runs (what it finds by id is checked after)."""
    if isinstance(op, UNSCOPED):
        return NOTHING
    match op:
        case ops.PutOp(entry=entry) | ops.FoldOp(entry=entry) | ops.ReplaceOp(entry=entry):
            return Reach((str(entry.scope),), changes=True)
        case ops.DeleteScopeOp(scope=scope):
            return Reach((str(scope),), changes=True)
        case ops.DeleteMatchingOp(filter=where) | ops.TrimOp(filter=where):
            return _of_filter(where, changes=True)
        case ops.ListOp(filter=where) | ops.CountOp(filter=where) | ops.SurveyOp(filter=where):
            return _of_filter(where)
        case ops.SearchOp(filter=where) | ops.TwinsOp(filter=where):
            return _of_filter(where)
        case ops.AuditOp(query=query):
            if query.scope is not None:
                return Reach((query.scope,))
            return NOTHING if query.entry_ids is not None else EVERY
        case ops.AppendAuditOp(events=events):
            return Reach(tuple(e.scope for e in events if e.scope is not None), changes=True)
        case ops.PendingErasuresOp():
            return EVERY
        case ops.ReachOp(scopes=scopes, changes=changes):
            return Reach(scopes, changes=changes)
        case _:  # every other op reaches the whole tenant (or the store): purge, erasure…
            return Reach(None, changes=op.writes)


def found_scopes(op: ops.Op[Any], result: Any) -> tuple[str, ...]:
    """The scopes of what an op found by id or removed (empty: nothing to check after)."""
    match op:
        case ops.GetOp() if isinstance(result, MemoryEntry):
            return (str(result.scope),)
        case ops.GetManyOp():
            return tuple(str(e.scope) for e in result)
        case ops.DeleteOp():
            return tuple(r.scope for r in result)
        case ops.AuditOp(query=query) if query.scope is None:
            return tuple(_event_scopes(result))
    return ()


def _event_scopes(events: Iterable[AuditEvent]) -> Iterator[str]:
    for event in events:
        yield EVERY_SCOPE if event.scope is None else event.scope
