"""What extraction learns goes through the notes' door (issue 30): ``NotePlans.put_learned``
applies the privacy rule, the categories and the FIFO caps that every other door applies —
whatever the extraction's own routing decided."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault import Extraction, ForbiddenError, Memory, NewEntry, Scope, Settings, ValidationError
from memvault.facilities.model import Session
from memvault.local import run_blocking
from memvault.store.ops import PutOp
from memvault.testing import HashEmbedder


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    settings = Settings(max_global_memory=2)
    with Memory(str(tmp_path / "m.db"), settings=settings, embedder=HashEmbedder()) as opened:
        yield opened


def _learned(memory: Memory, session: Session, *notes: tuple[str, Scope, str]) -> list[object]:
    store = memory.planners.store
    puts = []
    for content, scope, category in notes:
        entry = store.new_entry(NewEntry(content, scope, category=category), store.now())
        (chunks,) = run_blocking(store.index([entry]), memory.backend)
        puts.append(PutOp(store.tenant, entry, chunks=chunks))
    twins, _ = run_blocking(memory.planners.notes.put_learned(session, puts), memory.backend)
    return list(twins)


def test_nothing_of_a_private_session_reaches_global_memory(memory: Memory) -> None:
    private = memory.create_session("alice", private=True)
    with pytest.raises(ForbiddenError, match="private"):
        _learned(memory, private, ("The user likes tea.", Scope.user("alice"), "preference"))
    assert memory.global_memory("alice") == []


def test_each_note_is_of_its_facility_and_its_user(memory: Memory) -> None:
    session = memory.create_session("alice")
    with pytest.raises(ValidationError, match="category"):
        _learned(memory, session, ("The user likes tea.", Scope.session(session.id), "identity"))
    with pytest.raises(ValidationError, match="another user"):
        _learned(memory, session, ("Bob likes tea.", Scope.user("bob"), "preference"))
    with pytest.raises(ValidationError, match="learns into its notes"):
        _learned(memory, session, ("Shared fact.", Scope.parse("org:acme"), "fact"))
    assert memory.session_memory(session.id) == [] == memory.global_memory("bob")


def test_the_global_memory_cap_holds_for_what_is_learned(memory: Memory) -> None:
    session = memory.create_session("alice")
    facts = ("The user likes tea.", "The user lives in Porto.", "The user is a nurse.")
    twins = _learned(memory, session, *((f, Scope.user("alice"), "preference") for f in facts))
    assert twins == [None, None, None]
    kept = {e.content for e in memory.global_memory("alice")}
    assert len(kept) == 2 and "The user is a nurse." in kept
    assert memory.stats()["evicted"] == 1


def test_a_note_the_door_refuses_is_dropped_not_the_window(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Extraction checks the door's rules as it makes each note: a refusal drops that note
    with its reason, stores the others, and moves the cursor (a refusal at the transaction
    would fail the window on every later turn)."""
    notes = type(memory.planners.notes)
    check = notes.check_learned

    def refuse_tea(self: object, session: Session, entry: object) -> None:
        if "tea" in getattr(entry, "content", ""):
            raise ForbiddenError("no tea here")
        check(self, session, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(notes, "check_learned", refuse_tea)
    session = memory.create_session("alice")
    memory.add_turn(session.id, user="I live in Porto. I love green tea.", assistant="Noted.")
    assert memory.flush(30)
    learned = memory.last_extraction(session.id)
    assert isinstance(learned, Extraction)
    assert any("no tea here" in d.reason for d in learned.dropped)
    assert not any("tea" in e.content for e in memory.global_memory("alice"))
    assert any("Porto" in e.content for e in memory.global_memory("alice"))
