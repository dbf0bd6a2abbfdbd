"""What is public is declared: the packages users and plugin authors import export what they
need, every name they export exists, and a backend author finds every op it must handle."""

from __future__ import annotations

import importlib
import typing

import pytest

import memvault.store
from memvault.store.base import AnyOp

PUBLIC = ["memvault", "memvault.store", "memvault.embeddings", "memvault.testing", "memvault.api"]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_exported_name_exists(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__, name
    for exported in module.__all__:
        assert getattr(module, exported) is not None, f"{name}.{exported}"


def test_every_op_a_backend_handles_is_exported() -> None:
    ops = {op.__name__ for op in typing.get_args(AnyOp)}
    assert ops <= set(memvault.store.__all__)
    handlers = {n for n in dir(memvault.store.Backend) if n.startswith("op_")}
    composed = {"FoldOp", "ReachOp"}  # Backend.fold: its get, put and replace; a claim: nothing
    assert len(handlers) == len(ops - composed)
    derived = {"op_get", "op_delete_scope"}  # written with op_get_many, op_delete_matching
    assert handlers - memvault.store.Backend.__abstractmethods__ == derived


def _memvault_types(annotation: object) -> set[type]:
    """The classes of memvault a result annotation names (inside lists, tuples, unions)."""
    found: set[type] = set()
    if isinstance(annotation, type) and annotation.__module__.startswith("memvault"):
        found.add(annotation)
    for argument in typing.get_args(annotation):
        found |= _memvault_types(argument)
    return found


def test_every_operations_result_type_is_exported() -> None:
    """What an operation of ``Memory`` returns, a user can name: ``from memvault import …``."""
    import memvault
    from memvault.api import CATALOGUE

    results: set[type] = set()
    for operation in CATALOGUE:
        plan = typing.get_type_hints(operation.plan)["return"]  # Plan[T]: a generator of T
        results |= _memvault_types(typing.get_args(plan)[2])
    results |= _memvault_types(typing.get_type_hints(memvault.Memory.last_extraction)["return"])
    assert results, "no result type found"
    missing = sorted(t.__name__ for t in results if t.__name__ not in memvault.__all__)
    assert not missing, f"not exported from memvault: {missing}"
    assert all(getattr(memvault, t.__name__) is t for t in results)
