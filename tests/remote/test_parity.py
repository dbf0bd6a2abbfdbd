"""The remote client cannot drift from ``Memory`` or from the server: every public member of
``Memory``/``AsyncMemory`` is on the remote client with the same signature (or listed as
local-only with a reason), every parameter of an operation travels in a field the server
reads, and every endpoint the server serves is one the client sends."""

from __future__ import annotations

import inspect

import pytest

from memvault import AsyncMemory, Memory
from memvault.rest import AsyncRemoteMemory, RemoteMemory, endpoints
from memvault.rest.client import ASKED
from memvault.rest.operations import LOCAL_ONLY, OPERATIONS
from memvault.server.app import ROUTES

PAIRS = [(Memory, RemoteMemory), (AsyncMemory, AsyncRemoteMemory)]


def public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


@pytest.mark.parametrize(("local", "remote"), PAIRS)
def test_every_public_member_is_remote_or_local_only(local: type, remote: type) -> None:
    assert set(LOCAL_ONLY) <= public(local)
    assert not set(LOCAL_ONLY) & public(remote)
    for name in public(local) - set(LOCAL_ONLY):
        mine, theirs = getattr(local, name), getattr(remote, name, None)
        assert theirs is not None, f"{remote.__name__} lacks {name}"
        if isinstance(mine, property):
            assert isinstance(theirs, property), name
            continue
        assert inspect.signature(theirs) == inspect.signature(mine), name
        asks = remote is AsyncRemoteMemory and name in ASKED
        awaited = inspect.iscoroutinefunction(theirs)
        assert awaited == (inspect.iscoroutinefunction(mine) or asks), name
    for name in ("__enter__", "__exit__") if local is Memory else ("__aenter__", "__aexit__"):
        assert hasattr(remote, name)


def test_operations_introspect_as_the_local_ones() -> None:
    for local, remote in PAIRS:
        for op in OPERATIONS:
            operation = getattr(remote, op.name)
            assert operation.__doc__ == getattr(local, op.name).__doc__
            assert operation.__qualname__ == f"{remote.__name__}.{op.name}"


def test_every_parameter_travels_in_a_field_the_server_reads() -> None:
    for op in OPERATIONS:
        parameters = list(inspect.signature(op.plan).parameters)[1:]
        fields = {f.keyword or name for name, f in op.endpoint.fields.items()}
        travels = set(op.endpoint.parameters) | fields | set(op.kept) | set(op.refused)
        assert set(parameters) <= travels, op.name
        assert set(op.fixed) <= set(op.endpoint.fields), op.name


def test_every_endpoint_is_served_and_sent() -> None:
    defined = {v for v in vars(endpoints).values() if isinstance(v, endpoints.Endpoint)}
    served = {route.endpoint for route in ROUTES}
    assert served == defined
    sent = {op.endpoint for op in OPERATIONS}
    sent |= {endpoints.TENANT, endpoints.STATS, endpoints.FLUSH, endpoints.LAST_EXTRACTION}
    sent |= {endpoints.COMPACTION_SOURCES}
    unsent = {endpoints.SUPERSEDE}  # one id in the path: SUPERSEDE_MANY takes one or several
    assert sent | unsent == served
