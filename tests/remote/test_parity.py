"""A memory on a server cannot drift from a local one, nor from the server: every operation
of the catalogue is bound on ``Memory`` and ``AsyncMemory`` (and nothing else is), every
parameter of an operation travels in a field the server reads, and every endpoint the server
serves is one the client sends."""

from __future__ import annotations

import inspect

import pytest

from memvault import AsyncMemory, Memory
from memvault.api import CATALOGUE, agents, facilities, learning, store, trust
from memvault.drivers import _signature
from memvault.rest.endpoints import Endpoint
from memvault.server.app import ROUTES

WINGS = (store, facilities, learning, trust, agents)


def _bound(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if getattr(v, "__memvault_operation__", False)}


@pytest.mark.parametrize("cls", [Memory, AsyncMemory])
def test_every_operation_of_the_catalogue_is_bound_once(cls: type) -> None:
    assert _bound(cls) == {op.name for op in CATALOGUE}
    assert len({op.name for op in CATALOGUE}) == len(CATALOGUE)
    for op in CATALOGUE:
        operation = getattr(cls, op.name)
        assert operation.__doc__ == op.plan.__doc__
        assert operation.__qualname__ == f"{cls.__name__}.{op.name}"
        assert inspect.signature(operation) == _signature(op.plan)
        assert inspect.iscoroutinefunction(operation) == (cls is AsyncMemory)


def test_every_parameter_travels_in_a_field_the_server_reads() -> None:
    for op in CATALOGUE:
        if op.endpoint is None:
            assert op.local_only, op.name
            continue
        parameters = list(inspect.signature(op.plan).parameters)[1:]
        fields = {f.keyword or name for name, f in op.endpoint.fields.items()}
        travels = set(op.endpoint.parameters) | fields | set(op.kept) | set(op.refused)
        assert set(parameters) <= travels, op.name
        assert set(op.fixed) <= set(op.endpoint.fields), op.name


def test_every_endpoint_is_served_and_sent() -> None:
    declared = {v for wing in WINGS for v in vars(wing).values() if isinstance(v, Endpoint)}
    declared |= {op.endpoint for op in CATALOGUE if op.endpoint is not None}
    served = {route.endpoint for route in ROUTES}
    assert served == declared
    sent = {op.endpoint for op in CATALOGUE if op.endpoint is not None}
    sent |= {store.TENANT, store.STATS, learning.FLUSH, learning.LAST_EXTRACTION}
    sent |= {store.COMPACTION_SOURCES}
    unsent = {learning.SUPERSEDE_ONE}  # one id in the path: SUPERSEDE takes one or several
    assert sent | unsent == served


def test_a_special_operation_says_why() -> None:
    """An operation without a derived route names the reason its handler is its own."""
    derived = {route.endpoint for route in ROUTES if route.handler.__name__ in _names()}
    for op in CATALOGUE:
        if op.endpoint is not None and not op.derived:
            assert op.special.strip(), op.name
        if op.derived:
            assert op.endpoint in derived, op.name


def _names() -> set[str]:
    return {op.name for op in CATALOGUE}
