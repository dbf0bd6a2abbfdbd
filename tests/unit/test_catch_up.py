"""A kept scope index brought up to date by the audit log's changes: what a rebuild from the
rows as they are now would give, without sharing anything with the tables before it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pytest

from memvault.store.catch_up import Delta, caught_up
from memvault.store.scope_index import GONE, ChunkTable
from memvault.store.spare import COLUMNS


class Rows:
    """Entries ``n`` (1 to 3 chunks each, created in the order of ``n``) as a database holds
    them: each with its expiry, validity and chunk keys, which a test changes."""

    def __init__(self, numbers: Iterable[int]) -> None:
        self.entries = {n: {"expires": None, "valid_to": None, "keys": 0} for n in numbers}

    def rows(self, numbers: Iterable[int]) -> list[tuple[object, ...]]:
        rows: list[tuple[object, ...]] = []
        for n in sorted(numbers):
            entry = self.entries[n]
            for seq in range(n % 3 + 1):
                vector = np.random.default_rng(n * 10 + seq).normal(size=64).astype(np.float32)
                key = n * 10 + seq + 100_000 * int(entry["keys"] or 0)
                texts = f"word{n} shared"
                rows.append(
                    (
                        key,
                        f"E{n:05d}",
                        n,
                        entry["expires"],
                        n,
                        entry["valid_to"],
                        vector.tobytes(),
                        texts,
                    )
                )
        return rows

    def table(self, numbers: Iterable[int] | None = None) -> ChunkTable:
        return ChunkTable.from_rows(self.rows(self.entries if numbers is None else numbers), 64)

    def read(self, ids: Sequence[str]) -> ChunkTable:
        wanted = {int(i[1:]) for i in ids}
        return self.table([n for n in self.entries if n in wanted])


def _ids(numbers: Iterable[int]) -> tuple[str, ...]:
    return tuple(f"E{n:05d}" for n in numbers)


def _visible(table: ChunkTable) -> ChunkTable:
    return table.compacted()


def _same(table: ChunkTable, want: ChunkTable) -> None:
    for name in COLUMNS:
        np.testing.assert_array_equal(getattr(table, name), getattr(want, name), err_msg=name)
    assert table.lexical is not None and want.lexical is not None
    for word in ("word3", "shared", "word40"):
        np.testing.assert_allclose(table.lexical.scores([word]), want.lexical.scores([word]))


def test_a_delta_follows_each_entry_to_its_last_change() -> None:
    delta = Delta.of(
        [
            ("a", "created"),
            ("b", "changed"),
            ("a", "changed"),
            ("c", "deleted"),
            ("d", "created"),
            ("d", "deleted"),
            ("b", "changed"),
        ]
    )
    assert delta == Delta(created=("a",), changed=("b",), deleted=("c", "d"))
    assert len(delta) == 4
    assert Delta.of([("a", "erased")]) is None


def test_deleted_and_changed_entries_are_applied_as_a_rebuild_would() -> None:
    db = Rows(range(40))
    table = db.table(range(39)).appended(db.table([39]))  # with spare room, as a grown one
    assert table is not None
    before = {name: getattr(table, name).copy() for name in COLUMNS}
    db.entries[5]["expires"] = 7
    db.entries[9]["valid_to"] = 12
    for n in (3, 20):
        del db.entries[n]
    db.entries.update({n: {"expires": None, "valid_to": None, "keys": 0} for n in (40, 41)})
    delta = Delta(created=_ids([40, 41]), changed=_ids([9, 5]), deleted=_ids([20, 3, 99]))
    result = caught_up(table, delta, db.read, in_place=True)
    assert result is not None and result.gone == 2
    assert list(result.expires_us[[3, 20]]) == [GONE, GONE]
    _same(_visible(result), db.table())
    for name, column in before.items():  # the table it came from is as it was
        np.testing.assert_array_equal(getattr(table, name), column, err_msg=name)


def test_the_spare_room_passes_to_the_patched_table_only() -> None:
    db = Rows(range(30))
    table = db.table(range(29)).appended(db.table([29]))
    assert table is not None and table.spare is not None
    db.entries[4]["expires"] = 1
    patched = caught_up(table, Delta(changed=_ids([4])), db.read, in_place=True)
    assert patched is not None and patched.spare is not None
    assert patched.matrix.base is table.matrix.base  # vectors shared, not copied
    db.entries[30] = {"expires": None, "valid_to": None, "keys": 0}
    grown = caught_up(patched, Delta(created=_ids([30])), db.read, in_place=True)
    assert grown is not None and grown.matrix.base is table.matrix.base  # in the spare room
    db.entries[31] = {"expires": None, "valid_to": None, "keys": 0}
    branch = table.appended(db.table([31]))  # the older table: copies, never writes there
    assert branch is not None and branch.matrix.base is not table.matrix.base
    _same(grown, db.table(range(31)))


def test_new_chunks_an_entry_it_lacks_or_a_deletion_it_cannot_see_ask_for_a_rebuild() -> None:
    db = Rows(range(10))
    table = db.table()
    db.entries[2]["keys"] = 1  # the content changed: new chunks
    assert caught_up(table, Delta(changed=_ids([2])), db.read, in_place=False) is None
    db.entries[12] = {"expires": None, "valid_to": None, "keys": 0}
    assert caught_up(table, Delta(changed=_ids([12])), db.read, in_place=False) is None
    assert caught_up(table, Delta(deleted=_ids([4])), db.read, in_place=False) is None  # there


@pytest.mark.parametrize("deleted", [1, 10, 11])
def test_a_table_mostly_gone_is_compacted(deleted: int) -> None:
    db = Rows(range(40))
    table = db.table().with_coarse_pass(least=10)
    for n in range(0, 3 * deleted, 3):
        del db.entries[n]
    result = caught_up(
        table, Delta(deleted=_ids(range(0, 3 * deleted, 3))), db.read, in_place=False
    )
    assert result is not None
    assert result.gone == (0 if deleted * 4 > 40 else deleted)
    _same(_visible(result), db.table())
    assert result.coarse is not None and result.coarse.bits.shape[1] == len(result.chunk_keys)
