"""The audit log's hash chain and its verification, pure: links, checkpoints of erasures'
gaps, and the walk that says where a log stops fitting."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from memvault.errors import AuditKeyError
from memvault.store.audit_chain import (
    Checkpoint,
    Hasher,
    Head,
    Link,
    by_tenant,
    canonical,
    chained,
    check_key,
    checkpoint,
)
from memvault.trust.audit_verify import AuditVerification, Walk
from memvault.types import AuditEvent

AT = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
KEY = "k" * 16


def _event(n: int, tenant: str = "t", **changes: object) -> AuditEvent:
    event = AuditEvent(tenant, AT, "local", "write", "created", f"e{n}", "user:a", None, n)
    return dataclasses.replace(event, **changes)  # type: ignore[arg-type]


def _chain(count: int, hasher: Hasher | None = None) -> list[Link]:
    return chained(
        hasher or Hasher(), "t", None, [_event(n) for n in range(1, count + 1)], [None] * count
    )


def _verify(
    links: list[Link], hasher: Hasher | None = None, head: Head | None = None, chain_from: int = 0
) -> AuditVerification:
    last = next((link for link in reversed(links) if link.hash), None)
    if head is None and last is not None:
        head = Head(last.event.seq, str(last.hash))
    hasher = hasher or Hasher()
    state = hasher.state("t", head, hasher.fingerprint, chain_from)
    read = [hasher.checked(link) for link in links]  # as a store reads them
    walk = Walk("t", state)
    walk.learn(link for link in read if link.checkpoint)
    walk.step(read)
    return walk.result(state)


def test_canonical_bytes_cover_every_field_but_seq() -> None:
    base = _event(1)
    assert canonical(base) == canonical(dataclasses.replace(base, seq=99))
    for field, value in [
        ("tenant", "u"),
        ("at", AT.replace(microsecond=1)),
        ("actor", "x"),
        ("operation", "pin"),
        ("change", "deleted"),
        ("entry_id", None),
        ("scope", "user:b"),
        ("note", ""),
    ]:
        changed: dict[str, Any] = {field: value}
        assert canonical(dataclasses.replace(base, **changed)) != canonical(base), field
    assert canonical(base, "{}") != canonical(base)
    split = dataclasses.replace(base, actor='a","b')  # a field cannot pass for two
    assert canonical(split) != canonical(dataclasses.replace(base, actor="a"))


def test_keyed_and_unkeyed_hashes_differ_and_keys_are_named_not_shown() -> None:
    plain, keyed = Hasher(), Hasher(KEY)
    assert (plain.keyed, keyed.keyed) == (False, True)
    assert plain.algorithm == "SHA-256" and keyed.algorithm == "HMAC-SHA256"
    assert plain.fingerprint == "none" and len(keyed.fingerprint) == 16
    assert KEY not in keyed.fingerprint and keyed.fingerprint != Hasher(KEY + "x").fingerprint
    assert plain.genesis("t") != keyed.genesis("t") != keyed.genesis("u")
    assert plain.link("0" * 64, _event(1)) != keyed.link("0" * 64, _event(1))


def test_links_chain_each_event_to_the_one_before() -> None:
    hasher = Hasher()
    links = _chain(3, hasher)
    assert links[0].prev == hasher.genesis("t")
    for before, link in itertools.pairwise(links):
        assert link.prev == before.hash
    assert all(link.hash == hasher.link(str(link.prev), link.event) for link in links)
    after = chained(hasher, "t", Head(3, str(links[-1].hash)), [_event(4)], [None])
    assert after[0].prev == links[-1].hash


def test_events_are_grouped_by_tenant_in_order() -> None:
    events = [_event(1, "b"), _event(2, "a"), _event(3, "b")]
    grouped = by_tenant(events, [None, "{}", None])
    assert [(t, [e.seq for e in es], cps) for t, es, cps in grouped] == [
        ("a", [2], ["{}"]),
        ("b", [1, 3], [None, None]),
    ]


def test_a_write_with_another_key_than_the_stores_is_refused() -> None:
    check_key(Hasher(KEY), None)  # a store with no chain yet takes any
    check_key(Hasher(KEY), Hasher(KEY).fingerprint)
    for recorded in ("none", Hasher(KEY + "x").fingerprint):
        with pytest.raises(AuditKeyError, match="audit_key"):
            check_key(Hasher(KEY), recorded)


def _erase(links: list[Link], seqs: set[int], hasher: Hasher | None = None) -> list[Link]:
    """What an erasure of the events ``seqs`` leaves: the rest, and its own event with the
    checkpoint of the gaps, appended after the head."""
    hasher = hasher or Hasher()
    head = Head(links[-1].event.seq, str(links[-1].hash))
    left = [link for link in links if link.event.seq not in seqs]
    by_seq = {link.event.seq: link for link in left}
    order = sorted(by_seq)

    def before(seq: int) -> str | None:
        earlier = [s for s in order if s < seq]
        return by_seq[earlier[-1]].hash if earlier else None

    def after(seq: int) -> tuple[int, str | None] | None:
        later = [s for s in order if s > seq]
        return (later[0], by_seq[later[0]].prev) if later else None

    made = checkpoint(sorted(seqs), before, after, head, hasher.genesis("t"))
    erased = _event(head.seq + 1, change="erased", entry_id=None, scope=None, note="erased")
    return left + chained(hasher, "t", head, [erased], [made.to_text()])


def test_a_whole_chain_is_intact() -> None:
    found = _verify(_chain(5))
    assert found.intact and found.summary() == "intact, 5 events"
    assert found.head_seq == 5 and found.head == _chain(5)[-1].hash
    assert AuditVerification.from_dict(found.to_dict()) == found


@pytest.mark.parametrize("gone", [{1}, {3}, {2, 3}, {2, 4}, {5}, {4, 5}, {1, 2, 3, 4, 5}])
def test_an_erasure_is_bridged_by_its_checkpoint(gone: set[int]) -> None:
    left = _erase(_chain(5), gone)
    found = _verify(left)
    assert found.intact, found.reason
    assert (found.erasures, found.removed, found.events) == (1, len(gone), 6 - len(gone))


def test_erasures_compose() -> None:
    first = _erase(_chain(6), {2, 3})
    second = _erase(first, {4, 7})  # the survivor after the first gap, and the first checkpoint
    found = _verify(second)
    assert found.intact, found.reason
    assert (found.erasures, found.removed) == (1, 2)  # the first erasure's event went too
    assert Checkpoint.parse(str(second[-1].checkpoint)).removed == 2


def test_a_gap_no_checkpoint_bridges_is_found_at_the_next_event() -> None:
    links = _chain(5)
    found = _verify([link for link in links if link.event.seq != 3])
    assert not found.intact and found.first_bad_seq == 4
    erased = _erase(links, {2})
    found = _verify([link for link in erased if link.event.seq != 4])  # a second gap
    assert not found.intact and found.first_bad_seq == 5


def test_a_checkpoint_bridges_no_gap_after_its_own_event() -> None:
    """An erasure's event cannot excuse a deletion made after it."""
    erased = _erase(_chain(3), {2})
    more = chained(
        Hasher(), "t", Head(4, str(erased[-1].hash)), [_event(5), _event(6)], [None, None]
    )
    later = [*erased, *more]
    assert _verify(later).intact
    assert not _verify([link for link in later if link.event.seq != 5]).intact


def test_an_edit_a_swap_and_a_truncation_are_found() -> None:
    links = _chain(5)
    edited = [dataclasses.replace(links[2], event=_event(3, actor="mallory")), *links[3:]]
    found = _verify([*links[:2], *edited])
    assert not found.intact and found.first_bad_seq == 3
    swapped = [
        *links[:1],
        dataclasses.replace(links[2], event=dataclasses.replace(links[2].event, seq=2)),
        dataclasses.replace(links[1], event=dataclasses.replace(links[1].event, seq=3)),
        *links[3:],
    ]
    found = _verify(swapped)
    assert not found.intact and found.first_bad_seq == 2
    head = Head(5, str(links[-1].hash))
    found = _verify(links[:4], head=head)
    assert not found.intact and found.first_bad_seq == 5 and "newest" in found.reason


def test_hashes_before_the_chain_began_are_counted_apart() -> None:
    old = [Link(_event(n), None, None) for n in (1, 2)]
    new = chained(Hasher(), "t", None, [_event(3), _event(4)], [None, None])
    found = _verify([*old, *new], chain_from=2)
    assert found.intact and (found.events, found.unchained) == (4, 2)
    nulled = [*old, Link(new[0].event, None, None), new[1]]
    assert _verify(nulled, chain_from=2).first_bad_seq == 3  # written after the chain began
    late = [*old, *new, Link(_event(5), None, None)]
    assert _verify(late, chain_from=2).first_bad_seq == 5


def test_the_wrong_key_fails_at_the_first_event() -> None:
    links = _chain(3, Hasher(KEY))
    assert _verify(links, Hasher(KEY)).intact
    for other in (Hasher(), Hasher(KEY + "x")):
        state = other.state("t", Head(3, str(links[-1].hash)), Hasher(KEY).fingerprint)
        walk = Walk("t", state)
        walk.step(other.checked(link) for link in links)
        found = walk.result(state)
        assert not found.intact and found.first_bad_seq == 1
        assert "not the chain's" in found.reason


def test_a_head_without_a_chain_or_a_chain_without_a_head_is_not_intact() -> None:
    nothing = Hasher().state("t", None, None)
    walk = Walk("t", nothing)
    walk.step(_chain(2))
    assert not walk.result(nothing).intact
    assert Walk("t", nothing).result(nothing).summary() == "intact, 0 events"
    headed = Hasher().state("t", Head(2, "ab" * 32), "none")
    found = Walk("t", headed).result(headed)
    assert not found.intact and found.first_bad_seq == 2
