"""Erasure beyond the rows, on every backend: the copies of content a process keeps (the last
extraction results, embedding vectors, search indexes, the redaction's cached windows) go with
an erasure or a session's deletion — in the process that erased, and in another process at its
next transaction (another backend on the same store stands for it: the ``reopen`` fixture) —
and a pending erasure is finished later. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ..embeddings import CachedEmbedder
from ..errors import ErasureIncompleteError
from ..memory import Memory
from ..security import redact
from ..store.base import Backend
from ..store.ops import PendErasureOp, PendingErasure
from ..store.residue import id_hash
from ..trust import erasure
from ..trust.erasure import FinishReport
from . import HashEmbedder

TURN = "I am allergic to penicillin, my phone is +44 20 7946 0958."
FACT = "The user is allergic to penicillin."


def _learned(memory: Any, user: str) -> str:
    """A session of ``user`` with one turn learned from (in the background); its id."""
    session = memory.create_session(user)
    memory.add_turn(session.id, user=TURN, assistant="Noted.")
    assert memory.flush(30)
    learned = memory.last_extraction(session.id)
    assert learned is not None and FACT in repr(learned)
    return str(session.id)


def _kept_indexes(backend: Backend) -> list[Any]:
    """The scope indexes the backend keeps in memory (none for a backend without them)."""
    cache = getattr(backend, "_cache", None)
    return [] if cache is None else list(cache.scopes())


class ErasureConformance:
    """Caches are copies: erased with what they copied, in every process."""

    @pytest.fixture
    def reopen(self) -> Callable[[], Backend]:
        """Another backend on the same store (another process); skipped where none can be."""
        pytest.skip("this backend serves one process")

    def test_an_erased_or_deleted_sessions_last_extraction_is_gone(self, memory: Any) -> None:
        erased, deleted, kept = (_learned(memory, user) for user in ("bob", "ann", "cy"))
        memory.erase(user="bob")
        assert memory.last_extraction(erased) is None
        assert memory.last_extraction(deleted) is None  # every kept result went
        memory.add_turn(kept, user="I prefer aisle seats.", assistant="Noted.")
        assert memory.flush(30) and memory.last_extraction(kept) is not None
        memory.delete_session(deleted)
        assert memory.last_extraction(kept) is None
        assert memory.last_extraction("s-never-seen") is None

    def test_an_erasure_drops_the_copies_this_process_keeps(
        self, make_memory: Callable[..., Any], backend: Backend
    ) -> None:
        embedder = CachedEmbedder(HashEmbedder())
        memory = make_memory(embedder=embedder)
        _learned(memory, "bob")
        memory.search("penicillin", "user:bob")
        assert embedder.holding([FACT]) == 1
        assert redact._cached_numbers_in.cache_info().currsize > 0
        assert memory.erase(user="bob").residue in (0, None)
        assert embedder.holding([FACT]) == 0 and _kept_indexes(backend) == []
        assert redact._cached_numbers_in.cache_info().currsize == 0

    def test_another_process_drops_its_copies_at_its_next_transaction(
        self, make_memory: Callable[..., Any], reopen: Callable[[], Backend]
    ) -> None:
        other_backend = reopen()
        embedder = CachedEmbedder(HashEmbedder())
        other = Memory(other_backend, embedder=embedder)

        def eraser() -> Any:
            return make_memory(embedder=CachedEmbedder(HashEmbedder()))

        try:
            erased, deleted = _learned(other, "bob"), _learned(other, "ann")
            other.search("penicillin", "user:bob")
            assert embedder.holding([FACT]) == 1 and _kept_indexes(other_backend) != []
            eraser().erase(user="bob")
            assert embedder.holding([FACT]) == 1  # held until the other reads the store
            assert other.last_extraction(erased) is None
            assert embedder.holding([FACT]) == 0 and _kept_indexes(other_backend) == []
            again = _learned(other, "cy")
            eraser().delete_session(deleted)
            assert other.count("user:cy") > 0  # any transaction: the copies go
            assert other.last_extraction(again) is None
        finally:
            other.close()
            other_backend.close()

    def test_a_pending_erasure_is_finished_later(
        self, memory: Any, backend: Backend, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(erasure, "PURGE_ATTEMPTS", 2)
        held = memory.write("bob's locker code is 5521", scope="user:bob")
        pending = PendingErasure("a" * 64, (id_hash(held.id),))
        backend.batch([PendErasureOp(memory.tenant, pending)])
        with pytest.raises(ErasureIncompleteError) as raised:
            memory.finish_erasures()  # the store still holds the id
        assert raised.value.residue == 1 and raised.value.receipt is None
        assert memory.erase(user="bob").residue in (0, None)
        assert memory.finish_erasures() == FinishReport(finished=(pending.ids_sha256,))
        assert memory.finish_erasures() == FinishReport()  # idempotent
