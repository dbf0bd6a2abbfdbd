"""Finding erased ids and contents in a store's bytes: whole ids even where values touch."""

from __future__ import annotations

from memvault.store.residue import found_in

ID = "01M845Y28H4DYX5G91NPFGBNA5"
OTHER = "01M845Y28H4DYX5G91NPFGBNA6"


def test_ids_are_found_where_values_touch_and_nowhere_else() -> None:
    packed = b"\x00\x17" + ID.encode() + b"ACMEuser:bob" + b"\x01"  # columns side by side
    assert found_in([packed], [ID], []) == 1
    assert found_in([b"X" + ID.encode() + b"Z"], [ID], []) == 1
    assert found_in([packed], [OTHER], []) == 0
    assert found_in([ID[:-1].encode()], [ID], []) == 0


def test_other_ids_and_contents_are_substrings() -> None:
    image = "xx s-01m845 yy the erased secret phrase zz café".encode()
    assert found_in([image], ["s-01m845", "lg_abc123"], ["the erased secret phrase"]) == 2
    assert found_in([b"a", image], [], ["café"]) == 1
    assert found_in([], [ID], ["anything"]) == 0
