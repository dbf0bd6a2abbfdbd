"""Mending supersession chains when entries leave them: pure, no store."""

from datetime import UTC, datetime
from typing import Any

from memvault import MemoryEntry, Scope
from memvault.store.chains import neighbour_ids, orphaned, unlink

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def entry(entry_id: str, *, by: str | None = None, replaced: tuple[str, ...] = ()) -> MemoryEntry:
    return MemoryEntry(
        id=entry_id,
        scope=Scope.user("u"),
        content=entry_id,
        created_at=NOW,
        updated_at=NOW,
        valid_from=NOW,
        valid_to=NOW if by is not None else None,
        superseded_by=by,
        superseded_reason="moved" if by is not None else None,
        supersedes=replaced,
    )


BERLIN = entry("berlin", by="paris")
PARIS = entry("paris", by="rome", replaced=("berlin",))
ROME = entry("rome", replaced=("paris",))


def links(changed: dict[str, MemoryEntry]) -> dict[str, Any]:
    return {i: (e.superseded_by, e.supersedes) for i, e in changed.items()}


def test_neighbours_are_the_linked_entries_that_stay() -> None:
    assert neighbour_ids([PARIS]) == {"berlin", "rome"}
    assert neighbour_ids([BERLIN, PARIS]) == {"rome"}


def test_deleting_a_middle_version_links_its_neighbours() -> None:
    changed = unlink([PARIS], [BERLIN, ROME])
    assert links(changed) == {"berlin": ("rome", ()), "rome": (None, ("berlin",))}
    assert changed["berlin"].valid_to == NOW and changed["berlin"].superseded_reason == "moved"


def test_deleting_the_current_version_leaves_its_predecessors_superseded() -> None:
    changed = unlink([ROME], [PARIS])
    assert links(changed) == {"paris": (None, ("berlin",))}
    assert changed["paris"].superseded


def test_deleting_the_first_version_drops_it_from_its_successor() -> None:
    assert links(unlink([BERLIN], [PARIS])) == {"paris": ("rome", ())}


def test_deleting_neighbours_together() -> None:
    assert links(unlink([BERLIN, PARIS], [ROME])) == {"rome": (None, ())}
    assert links(unlink([PARIS, ROME], [BERLIN])) == {"berlin": (None, ())}


def test_missing_neighbours_and_unclaimed_links_are_left_alone() -> None:
    assert links(unlink([PARIS], [ROME])) == {"rome": (None, ())}
    restored = entry("berlin", replaced=("paris",))  # restore: paris now points back at it
    retired = entry("paris", by="berlin", replaced=("berlin",))
    assert links(unlink([retired], [restored])) == {"berlin": (None, ())}
    assert links(unlink([restored], [retired])) == {"paris": (None, ("berlin",))}


def test_an_heir_takes_the_place_of_a_moved_entry() -> None:
    copy = entry("copy")
    changed = unlink([ROME], [PARIS], copy)
    assert links(changed) == {"paris": ("copy", ("berlin",)), "copy": (None, ("paris",))}
    assert unlink([entry("alone")], [], copy) == {}


def test_entries_a_cap_evicted_leave_no_successor() -> None:
    assert links({e.id: e for e in orphaned([BERLIN, PARIS], ["rome"])}) == {
        "paris": (None, ("berlin",))
    }
