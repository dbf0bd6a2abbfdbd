"""The backend protocol: one abstract primitive (``batch``) plus declared capabilities."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, ClassVar, assert_never, cast

from ..breaker import Breaker
from ..errors import CapabilityError
from ..retrieval.candidates import Candidates
from ..types import AuditEvent, MemoryEntry
from .audit import DIRECT, Stamp, logged
from .audit_chain import ChainState, Hasher, Link
from .duplicates import probe_filter, stored_duplicates
from .ops import (
    AppendAuditOp,
    AuditLinksOp,
    AuditOp,
    ChainStateOp,
    ChunkPageOp,
    ChunkText,
    CountOp,
    DeleteMatchingOp,
    DeleteOp,
    DeleteScopeOp,
    EmbeddingInfoOp,
    Filter,
    Folded,
    FoldOp,
    ForgetAuditOp,
    ForgetCopiesOp,
    Forgotten,
    GetManyOp,
    GetOp,
    ListOp,
    Op,
    PendErasureOp,
    PendingErasure,
    PendingErasuresOp,
    PurgeExpiredOp,
    PutOp,
    ReachOp,
    RecordUsesOp,
    Removed,
    ReplaceOp,
    SearchOp,
    SetVectorsOp,
    StoredEmbeddingOp,
    Surveyed,
    SurveyOp,
    TrimOp,
    TwinsOp,
    Use,
    UsesOp,
)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do. Code that needs a capability calls :meth:`Backend.require`."""

    persistent: bool = False
    """Data outlives the process (the CLI's one-shot commands require it)."""
    multiprocess: bool = False
    """Several processes may use the same store at once (``serve --workers N`` requires it)."""
    backup: bool = False
    """An online copy of the store, and restoring one (:meth:`Backend.backup`,
    :meth:`Backend.restore`, :meth:`Backend.check_restore`; ``memvault backup``)."""


NEEDED_FOR = {
    "persistent": "persistent (data that outlives the process)",
    "multiprocess": "multiprocess (several processes on one store)",
    "backup": "backup and restore (memvault backup; for PostgreSQL: pg_dump and pg_restore, "
    "docs/reliability.md)",
}
"""Each capability, as an error names what is missing."""


AnyOp = (
    PutOp
    | GetOp
    | GetManyOp
    | ListOp
    | CountOp
    | ReplaceOp
    | FoldOp
    | DeleteOp
    | DeleteScopeOp
    | DeleteMatchingOp
    | TrimOp
    | PurgeExpiredOp
    | SearchOp
    | TwinsOp
    | StoredEmbeddingOp
    | EmbeddingInfoOp
    | ChunkPageOp
    | SetVectorsOp
    | AppendAuditOp
    | AuditOp
    | AuditLinksOp
    | ChainStateOp
    | ForgetAuditOp
    | ForgetCopiesOp
    | PendingErasuresOp
    | PendErasureOp
    | ReachOp
    | UsesOp
    | RecordUsesOp
    | SurveyOp
)
"""Every op a backend must handle."""


class Backend(ABC):
    """Storage engine for one store (all tenants).

    A backend implements :meth:`batch` (one transaction around a sequence of ops, run by
    :meth:`run_batch`) and one handler ``op_<name>(tx, op)`` per op of :data:`AnyOp`; ``tx`` is
    whatever its handlers share inside one transaction (a connection, an undo log).
    """

    name: ClassVar[str]
    capabilities: Capabilities
    chain: Hasher = Hasher()
    """How the audit log's events are chained (the ``audit_key`` setting; set per instance)."""
    """Declared per class, or per instance where the location decides (SQLite ``:memory:``)."""
    breaker: Breaker | None = None
    """The circuit breaker a store reached over a network passes its transactions through (the
    ``breaker_*`` settings; set per instance): while the server is down they fail fast with
    UnavailableError. None for a file or an in-process store, which is never "down" (a locked
    SQLite file or a full disk is the call's error, not an outage)."""

    @abstractmethod
    def batch(self, ops: Sequence[Op[Any]], stamp: Stamp = DIRECT) -> list[Any]:
        """Run ``ops`` in order, in one transaction (:meth:`run_batch`); return their results
        in order. The audit log's events of its changes say ``stamp``.

        If any op raises, nothing of the batch is applied and the error propagates.
        """

    async def abatch(self, ops: Sequence[Op[Any]], stamp: Stamp = DIRECT) -> list[Any]:
        """Async form of :meth:`batch`; by default runs it in a worker thread."""
        return await asyncio.to_thread(self.batch, ops, stamp)

    def run_batch(self, tx: Any, ops: Sequence[Op[Any]], stamp: Stamp) -> list[Any]:
        """Inside the transaction ``tx``: run ``ops``, then append the audit log's events of
        what they changed (:func:`memvault.store.audit.events`). Every op must lie within the
        stamp's grant: checked before the ops run, and what they found or removed after."""
        stamp.grant.check(ops, stamp.changes)
        results: list[Any] = []
        for puts, run in itertools.groupby(ops, lambda op: isinstance(op, PutOp)):
            if puts:
                results += self.put_all(tx, cast(list[PutOp], list(run)))
            else:
                results += [self.execute(tx, op) for op in run]
        stamp.grant.check_results(ops, results, stamp.changes)
        if any(op.writes for op in ops):
            found = logged(stamp, ops, results)
            if found:
                happened, checkpoints = zip(*found, strict=True)
                self.op_append_audit(tx, AppendAuditOp(happened, checkpoints=checkpoints))
        self.heard(self.forgetting_mark(tx))
        return results

    # -- copies of content this process keeps (caches) -----------------------------------------

    def forgetting_mark(self, tx: Any) -> str:
        """The store's forgetting mark (:class:`ForgetCopiesOp` changes it), read in ``tx``."""
        raise NotImplementedError

    def heard(self, mark: str) -> None:
        """Drop this process's copies of content if the store's forgetting ``mark`` moved since
        this backend last read it: every transaction reads it, so what another process erased
        does not outlive this process's next transaction."""
        copies = _copies(self)
        if copies.mark == mark:
            return
        copies.mark = mark
        self.forget_copies()
        for listener in list(copies.listeners):
            forget = listener()
            if forget is not None:
                forget()

    def forget_copies(self) -> None:  # noqa: B027 - a hook: a backend without caches keeps none
        """Drop the copies of content the backend keeps itself (its search indexes)."""

    def hear(self) -> None:
        """Read the store's forgetting mark now (an empty transaction): copies of what any
        process erased since this backend's last transaction are dropped."""
        self.batch(())

    def listen(self, forget: Callable[[], None]) -> Callable[[], None]:
        """Call ``forget`` whenever this process must drop its copies of content (an erasure or
        a session's deletion, by any process); returns what stops it."""
        copies = _copies(self)
        listener = weakref.WeakMethod(forget) if inspect.ismethod(forget) else lambda: forget
        copies.listeners.append(listener)
        return lambda: copies.listeners.remove(listener) if listener in copies.listeners else None

    def put_all(self, tx: Any, puts: Sequence[PutOp]) -> list[MemoryEntry | None]:
        """Run consecutive ``puts``: first their near-duplicate checks, together — their scopes
        locked (in order), each probed once for all of them (:func:`stored_duplicates`) —,
        then the inserts of the others. Each result: None, or the duplicate, as read there."""
        probed = {(p.tenant, str(p.entry.scope)) for p in puts if probe_filter(p) is not None}
        for tenant, scope in sorted(probed):
            self.lock_scope(tx, tenant, scope)
        found = stored_duplicates(self, tx, puts)
        for put, twin in zip(puts, found, strict=True):
            if twin is None:
                self.op_put(tx, put)
        return found

    def fold(self, tx: Any, op: FoldOp) -> Folded:
        """:class:`FoldOp`, composed of the backend's own get, put and replace, its scope
        locked (the one op no backend handles itself)."""
        self.lock_scope(tx, op.tenant, str(op.entry.scope))
        stored = self.op_get(tx, GetOp(op.tenant, op.entry.id))
        if stored is None:
            self.op_put(tx, PutOp(op.tenant, op.entry, chunks=op.chunks))
            return Folded(op.entry, created=True)
        expired = op.live_at is not None and stored.is_expired(op.live_at)
        folded = op.entry if expired else op.fold(stored)
        folded = replace(folded, id=stored.id, revision=stored.revision + 1)
        replaced = ReplaceOp(
            op.tenant, folded, stored.revision, chunks=op.chunks if expired else None
        )
        self.op_replace(tx, replaced)
        return Folded(folded, created=False)

    def lock_scope(self, tx: Any, tenant: str, scope: str) -> None:  # noqa: B027 - a hook
        """Serialise writers of one scope until the transaction ends (a no-op where writers
        are serialised already)."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections and files. Safe to call twice."""

    def backup(self, target: str | Path) -> int:
        """Write a consistent copy of the store to ``target``; its size in bytes (a backend
        that declares the ``backup`` capability implements it)."""
        self.require("backup")
        raise NotImplementedError(f"the {self.name!r} backend declares backup: implement it")

    def restore(self, source: str | Path) -> None:
        """Replace the store's content by the backup at ``source`` (capability ``backup``)."""
        self.require("backup")
        raise NotImplementedError(f"the {self.name!r} backend declares backup: implement it")

    def check_restore(self, source: str | Path) -> None:
        """Refuse (ValidationError) a backup :meth:`restore` would refuse, changing nothing:
        what to check before asking a person to confirm (capability ``backup``)."""
        self.require("backup")
        raise NotImplementedError(f"the {self.name!r} backend declares backup: implement it")

    def residue(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> int | None:
        """Purge what an erasure left (fold logs in, drop stale index files), then count how
        many erased ``ids``, ids of short hashes ``hashed`` (:func:`~memvault.store.residue.
        id_hash`) and ``contents`` the store's storage still holds anywhere — its files, logs
        and indexes where it can read them, else every row — leaving out a content that a live
        entry (of any tenant) also holds; None when this backend cannot tell. Erasure reports
        it on its receipt."""
        return None

    def execute(self, tx: Any, op: Op[Any]) -> Any:  # noqa: PLR0912 - a case per op
        """Run one op inside the transaction ``tx``: the one place an op meets its handler."""
        checked = cast(AnyOp, op)
        match checked:
            case PutOp():
                return self.put_all(tx, [checked])[0]
            case GetOp():
                return self.op_get(tx, checked)
            case GetManyOp():
                return self.op_get_many(tx, checked)
            case ListOp():
                return self.op_list(tx, checked)
            case CountOp():
                return self.op_count(tx, checked)
            case ReplaceOp():
                return self.op_replace(tx, checked)
            case FoldOp():
                return self.fold(tx, checked)
            case DeleteOp():
                return self.op_delete(tx, checked)
            case DeleteScopeOp():
                return self.op_delete_scope(tx, checked)
            case DeleteMatchingOp():
                return self.op_delete_matching(tx, checked)
            case TrimOp():
                return self.op_trim(tx, checked)
            case PurgeExpiredOp():
                return self.op_purge_expired(tx, checked)
            case SearchOp():
                return self.op_search(tx, checked)
            case TwinsOp():
                return self.op_twins(tx, checked)
            case StoredEmbeddingOp():
                return self.op_stored_embedding(tx, checked)
            case EmbeddingInfoOp():
                return self.op_embedding_info(tx, checked)
            case ChunkPageOp():
                return self.op_chunk_page(tx, checked)
            case SetVectorsOp():
                return self.op_set_vectors(tx, checked)
            case AppendAuditOp():
                return self.op_append_audit(tx, checked)
            case AuditOp():
                return self.op_audit(tx, checked)
            case AuditLinksOp():
                return self.op_audit_links(tx, checked)
            case ChainStateOp():
                return self.op_chain_state(tx, checked)
            case ForgetAuditOp():
                return self.op_forget_audit(tx, checked)
            case ForgetCopiesOp():
                return self.op_forget_copies(tx, checked)
            case PendingErasuresOp():
                return self.op_pending_erasures(tx, checked)
            case PendErasureOp():
                return self.op_pend_erasure(tx, checked)
            case ReachOp():
                return None  # a claim: the grant was checked before the batch ran
            case UsesOp():
                return self.op_uses(tx, checked)
            case RecordUsesOp():
                return self.op_record_uses(tx, checked)
            case SurveyOp():
                return self.op_survey(tx, checked)
            case _:
                assert_never(checked)

    @abstractmethod
    def op_put(self, tx: Any, op: PutOp) -> None: ...
    @abstractmethod
    def op_uses(self, tx: Any, op: UsesOp) -> dict[str, Use]: ...
    @abstractmethod
    def op_record_uses(self, tx: Any, op: RecordUsesOp) -> None: ...

    @abstractmethod
    def op_survey(self, tx: Any, op: SurveyOp) -> list[Surveyed]: ...
    @abstractmethod
    def op_get_many(self, tx: Any, op: GetManyOp) -> list[MemoryEntry]: ...
    @abstractmethod
    def op_list(self, tx: Any, op: ListOp) -> list[MemoryEntry]: ...
    @abstractmethod
    def op_count(self, tx: Any, op: CountOp) -> int: ...
    @abstractmethod
    def op_replace(self, tx: Any, op: ReplaceOp) -> None: ...
    @abstractmethod
    def op_delete(self, tx: Any, op: DeleteOp) -> list[Removed]: ...
    @abstractmethod
    def op_delete_matching(self, tx: Any, op: DeleteMatchingOp) -> list[Removed]: ...
    @abstractmethod
    def op_trim(self, tx: Any, op: TrimOp) -> list[Removed]: ...
    @abstractmethod
    def op_purge_expired(self, tx: Any, op: PurgeExpiredOp) -> list[Removed]: ...
    @abstractmethod
    def op_search(self, tx: Any, op: SearchOp) -> Candidates: ...
    @abstractmethod
    def op_twins(self, tx: Any, op: TwinsOp) -> list[list[str]]: ...
    @abstractmethod
    def op_stored_embedding(self, tx: Any, op: StoredEmbeddingOp) -> tuple[str, int] | None: ...
    @abstractmethod
    def op_embedding_info(self, tx: Any, op: EmbeddingInfoOp) -> tuple[str, int]: ...
    @abstractmethod
    def op_chunk_page(self, tx: Any, op: ChunkPageOp) -> list[ChunkText]: ...
    @abstractmethod
    def op_set_vectors(self, tx: Any, op: SetVectorsOp) -> None: ...
    @abstractmethod
    def op_append_audit(self, tx: Any, op: AppendAuditOp) -> None: ...
    @abstractmethod
    def op_audit(self, tx: Any, op: AuditOp) -> list[AuditEvent]: ...
    @abstractmethod
    def op_audit_links(self, tx: Any, op: AuditLinksOp) -> list[Link]: ...
    @abstractmethod
    def op_chain_state(self, tx: Any, op: ChainStateOp) -> ChainState: ...
    @abstractmethod
    def op_forget_audit(self, tx: Any, op: ForgetAuditOp) -> Forgotten: ...
    @abstractmethod
    def op_forget_copies(self, tx: Any, op: ForgetCopiesOp) -> None: ...
    @abstractmethod
    def op_pending_erasures(self, tx: Any, op: PendingErasuresOp) -> list[PendingErasure]: ...
    @abstractmethod
    def op_pend_erasure(self, tx: Any, op: PendErasureOp) -> None: ...

    # -- derived: handlers written with the primitives (a backend may override them) --------

    def op_get(self, tx: Any, op: GetOp) -> MemoryEntry | None:
        """One entry: :meth:`op_get_many` of one id."""
        found = self.op_get_many(tx, GetManyOp(op.tenant, (op.entry_id,)))
        return found[0] if found else None

    def op_delete_scope(self, tx: Any, op: DeleteScopeOp) -> list[Removed]:
        """Every entry of one scope: :meth:`op_delete_matching` of a filter of that scope."""
        return self.op_delete_matching(tx, DeleteMatchingOp(Filter(op.tenant, (op.scope,))))

    def require(self, capability: str) -> None:
        """Raise CapabilityError unless this backend declares ``capability``."""
        names = {f.name for f in fields(Capabilities)}
        if capability not in names:
            raise ValueError(f"unknown capability {capability!r}; known: {sorted(names)}")
        if not getattr(self.capabilities, capability):
            raise CapabilityError(self.name, NEEDED_FOR[capability])


class _Copies:
    """What a backend knows of its process's copies: the forgetting mark it last read, and who
    drops copies when it moves."""

    def __init__(self) -> None:
        self.mark: str | None = None
        self.listeners: list[Callable[[], Callable[[], None] | None]] = []
        """Each gives the function to call (None: its memory is gone: a method is held weakly)."""


_COPIES_LOCK = threading.Lock()


def _copies(backend: Backend) -> _Copies:
    with _COPIES_LOCK:
        found = backend.__dict__.get("_copies")
        if found is None:
            found = backend.__dict__["_copies"] = _Copies()
        return cast(_Copies, found)
