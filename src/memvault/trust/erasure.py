"""Erasure: every trace of a user, a scope or a tenant removed, and a receipt that says what
went — counts and a hash of the ids, never content.

What belongs to a user: their scope (``user:ID``: Global Memory and facts), every session of
theirs with all it holds (the session, records, summaries, Session Memory, findings), every
entry whose metadata names them as its ``user_id`` (agent memory's executions and
decompositions of their requests; the aggregates stay — strategy statistics and learned failure
patterns hold counts and redacted names, no request text), and what
was made from any of it anywhere in the tenant — entries created in those sessions (objects,
workspace and org entries whose provenance names one), copies promoted from an erased entry
and compactions of one, to any depth. A scope's erasure takes the scope and what was made from
it the same way; a tenant's takes everything of the tenant. Supersession chains that run
through erased entries are mended (:mod:`memvault.store.chains`), the erased texts are dropped
from the embedding caches first, and the whole set is deleted in one transaction: all or
nothing. The selection (:func:`erased`) is pure; :class:`ErasurePlans` runs it on the store.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from ..core import Plan, Planner, call, retried
from ..errors import ValidationError
from ..facilities.model import SESSION
from ..retrieval import chunking
from ..store.ops import Filter, ForgetAuditOp
from ..types import MemoryEntry, Scope, ScopeKind

Kind = Literal["user", "scope", "tenant"]


@dataclass(frozen=True, slots=True)
class Subject:
    """What an erasure is of: a user id, a scope, or a whole tenant."""

    kind: Kind
    value: str

    @classmethod
    def of(cls, user: str | None, scope: Scope | str | None, tenant: str | None) -> Subject:
        given = [(k, v) for k, v in (("user", user), ("scope", scope), ("tenant", tenant)) if v]
        if len(given) != 1:
            raise ValidationError("erase what? give exactly one of user=, scope= or tenant=")
        kind, value = given[0]
        if kind == "user":
            Scope.user(str(value))  # a valid user id
        if kind == "scope":
            value = str(Scope.coerce(value))
        if not isinstance(value, str):
            raise ValidationError(f"{kind} must be a string")
        return cls(kind, value)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"


def erased(entries: Iterable[MemoryEntry], subject: Subject) -> list[MemoryEntry]:
    """Which of a tenant's ``entries`` (all of them, superseded and expired included) an
    erasure of ``subject`` removes (pure)."""
    every = list(entries)
    if subject.kind == "tenant":
        return every
    roots = _roots(every, subject)
    sessions = {e.scope.id for e in roots if e.scope.kind is ScopeKind.SESSION}
    gone = {e.id for e in roots}
    grew = True
    while grew:  # what was made from what goes, to any depth
        made = {e.id for e in every if e.id not in gone and _made_from(e, gone, sessions)}
        gone |= made
        grew = bool(made)
    return [e for e in every if e.id in gone]


def _roots(entries: Sequence[MemoryEntry], subject: Subject) -> list[MemoryEntry]:
    if subject.kind == "scope":
        return [e for e in entries if str(e.scope) == subject.value]
    theirs = {
        e.scope.id
        for e in entries
        if e.category == SESSION
        and e.scope.kind is ScopeKind.SESSION
        and e.metadata.get("user_id") == subject.value
    }
    user = Scope.user(subject.value)
    return [
        e
        for e in entries
        if e.scope == user
        or (e.scope.kind is ScopeKind.SESSION and e.scope.id in theirs)
        or e.metadata.get("user_id") == subject.value
    ]


def _made_from(entry: MemoryEntry, gone: set[str], sessions: set[str]) -> bool:
    return (
        entry.promoted_from_id in gone
        or not gone.isdisjoint(entry.compacted_from_ids)
        or entry.provenance.created_in_session_id in sessions
    )


def texts_of(entries: Iterable[MemoryEntry], spec: chunking.ChunkSpec) -> list[str]:
    """Every text the store embedded for ``entries`` (each content and its chunks): what the
    embedding caches may hold vectors of."""
    texts: dict[str, None] = {}
    for entry in entries:
        texts[entry.content] = None
        layout = chunking.split(entry.content, spec)
        texts.update(dict.fromkeys(chunking.texts(entry.content, layout)))
    return list(texts)


def needles(entries: Iterable[MemoryEntry]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What must not be found in the store after ``entries`` are erased: every id, and the
    longest contents (up to :data:`CONTENT_NEEDLES`; the store leaves out those another live
    entry also holds)."""
    gone = list(entries)
    long_enough = {e.content for e in gone if len(e.content) >= MIN_NEEDLE}
    contents = sorted(long_enough, key=lambda text: (-len(text), text))[:CONTENT_NEEDLES]
    return tuple(e.id for e in gone), tuple(contents)


MIN_NEEDLE = 12
"""Contents shorter than this are not looked for in the store's files (any file holds "ok")."""
CONTENT_NEEDLES = 32
"""How many erased contents (the longest) a scan looks for: each costs a pass over the files,
while every id is looked for in one pass."""


def ids_digest(ids: Iterable[str]) -> str:
    """The SHA-256 of the sorted erased ids, one a line: it proves which ids a receipt covers
    to whoever holds them, and tells nobody else anything."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """What an erasure removed: counts per kind (category), a hash of the ids, when — never
    the content. ``residue`` is how many erased ids and contents a scan of the store still
    found afterwards (0; None where the store cannot be scanned)."""

    subject: str
    tenant: str
    erased_at: datetime
    counts: Mapping[str, int] = field(default_factory=dict)
    ids_sha256: str = ""
    residue: int | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "tenant": self.tenant,
            "erased_at": self.erased_at.isoformat(),
            "counts": dict(self.counts),
            "total": self.total,
            "ids_sha256": self.ids_sha256,
            "residue": self.residue,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ErasureReceipt:
        return cls(
            data["subject"],
            data["tenant"],
            datetime.fromisoformat(data["erased_at"]),
            dict(data["counts"]),
            data["ids_sha256"],
            data["residue"],
        )


@dataclass(frozen=True, slots=True)
class _Erasure:
    """An erasure done: its receipt, and what a scan of the store should no longer find."""

    receipt: ErasureReceipt
    ids: tuple[str, ...]
    contents: tuple[str, ...]


Residue = Callable[[Sequence[str], Sequence[str]], "int | None"]
"""The store's scan for what should be gone (:meth:`memvault.store.Backend.residue`)."""


def counts_by_kind(entries: Iterable[MemoryEntry]) -> dict[str, int]:
    """How many ``entries`` of each kind (category; ``uncategorised``), sorted by kind: what
    a receipt or a bundle says instead of what the entries hold."""
    return dict(sorted(Counter(e.category or "uncategorised" for e in entries).items()))


class ErasurePlans:
    """Erasure as plans on the store planner."""

    def __init__(self, store: Planner, residue: Residue | None = None) -> None:
        self.store = store
        self.residue: Residue = residue or (lambda ids, contents: None)

    def erase(
        self,
        *,
        user: str | None = None,
        scope: Scope | str | None = None,
        tenant: str | None = None,
    ) -> Plan[ErasureReceipt]:
        """Remove every trace of a user (their scope, their sessions and all they hold, and
        what was made from any of it), of a scope (and what was made from it), or of a whole
        tenant; one transaction. The receipt counts what went per kind and hashes the ids, and
        ``residue`` says how many erased ids and contents a scan of the store then still found
        (0; None if the store cannot be scanned)."""
        subject = Subject.of(user, scope, tenant)
        store = self.store.for_tenant(subject.value) if subject.kind == "tenant" else self.store
        done = yield from retried(lambda: _erase(store, subject), f"the erasure of {subject}")
        residue = yield from call(self.residue, done.ids, done.contents, blocking=True)
        return replace(done.receipt, residue=residue)


def _erase(store: Planner, subject: Subject) -> Plan[_Erasure]:
    every = yield from store.every(Filter(store.tenant, None))
    gone = erased(every, subject)
    spec = chunking.ChunkSpec(
        store.settings.chunk_tokens, store.settings.chunk_overlap, store.settings.chunk_min_tokens
    )
    yield from call(store.embedder.forget, texts_of(gone, spec), blocking=True)
    ids = {e.id for e in gone}
    receipt = ErasureReceipt(
        str(subject),
        store.tenant,
        store.now(),
        counts_by_kind(gone),
        ids_digest(ids),
    )
    yield from store.remove(gone, also=[forget_audit(subject, gone, receipt)])
    return _Erasure(receipt, *needles(gone))


def forget_audit(subject: Subject, gone: Sequence[MemoryEntry], receipt: ErasureReceipt) -> Any:
    """The op that drops the audit log's events of what an erasure removes — those of its
    entries, and of the erased scopes (the user's and their sessions') — leaving one event:
    that an erasure of a user, a scope or a tenant happened, with its counts and id hash
    (never the user id or the scope)."""
    scopes = {str(e.scope) for e in gone if e.scope.kind in (ScopeKind.USER, ScopeKind.SESSION)}
    if subject.kind == "user":
        scopes.add(str(Scope.user(subject.value)))
    elif subject.kind == "scope":
        scopes.add(subject.value)
    note = f"{subject.kind} erased: {receipt.total} entries, ids sha256 {receipt.ids_sha256}"
    return ForgetAuditOp(
        receipt.tenant,
        frozenset(e.id for e in gone),
        frozenset(scopes),
        everything=subject.kind == "tenant",
        note=note,
    )
