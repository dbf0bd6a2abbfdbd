"""What is public is declared: the packages users and plugin authors import export what they
need, every name they export exists, and a backend author finds every op it must handle."""

from __future__ import annotations

import importlib
import typing

import pytest

import memvault.store
from memvault.store.base import AnyOp

PUBLIC = ["memvault", "memvault.store", "memvault.embeddings", "memvault.testing", "memvault.rest"]


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
    composed = {"FoldOp"}  # Backend.fold: the backend's own get, put and replace
    assert len(handlers) == len(ops - composed)
    assert handlers <= memvault.store.Backend.__abstractmethods__
