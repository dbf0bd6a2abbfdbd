"""Memory and AsyncMemory bind the same operations, each from the planner that does it, and
introspect honestly: the plan's parameters and docstring, its result type, their own names."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from memvault import AsyncMemory, Memory, MemoryEntry, SearchHit, Session, WriteReport
from memvault.context.plans import ContextPlans
from memvault.core import Planner
from memvault.extraction.plans import LearningPlans
from memvault.facilities.notes import NotePlans
from memvault.facilities.sessions import SessionPlans
from memvault.versions import VersionPlans


def operations(cls: type) -> dict[str, Any]:
    return {n: v for n, v in vars(cls).items() if getattr(v, "__memvault_operation__", False)}


def public_plans(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith("_")}


def test_both_drivers_expose_the_same_operations() -> None:
    blocking, awaiting = operations(Memory), operations(AsyncMemory)
    assert blocking.keys() == awaiting.keys()
    assert len(blocking) >= 34
    for name in blocking:
        assert inspect.signature(blocking[name]) == inspect.signature(awaiting[name]), name
        assert inspect.iscoroutinefunction(awaiting[name]) and not inspect.iscoroutinefunction(
            blocking[name]
        )


@pytest.mark.parametrize(
    "planner", [SessionPlans, NotePlans, ContextPlans, VersionPlans, LearningPlans]
)
def test_every_plan_of_a_facility_is_an_operation(planner: type) -> None:
    helpers = {"session_entry", "record_log", "shared_sessions", "search_scopes", "findings_in"}
    helpers |= {"record_entry", "replace_with", "current", "put_learned", "cap_of"}
    helpers |= {"check_learned", "may_leave", "teaches"}
    assert public_plans(planner) - helpers - {"live_notes"} <= operations(Memory).keys()


def test_every_store_operation_is_bound() -> None:
    toolkit = {"now", "for_tenant", "check_embedding", "new_entry", "where", "put", "put_many"}
    toolkit |= {"every"}
    toolkit |= {"events", "forget_texts", "forget_session_files"}
    toolkit |= {"live", "admit", "ranked", "index", "editable"}
    toolkit |= {"twin", "copy_of", "removal", "remove", "relink_evicted", "compaction_sources"}
    toolkit |= {"used", "store_uses", "delete_all"}  # uses counted by other plans; the inspector
    assert public_plans(Planner) - toolkit == {
        n for n in operations(Memory) if n in public_plans(Planner)
    }


@pytest.mark.parametrize(
    ("name", "result"),
    [
        ("write", MemoryEntry),
        ("write_many", WriteReport),
        ("search", list[SearchHit]),
        ("get", MemoryEntry | None),
        ("create_session", Session),
        ("system_prompt", str),
    ],
)
def test_signatures_show_the_result_not_the_plan(name: str, result: object) -> None:
    for cls in (Memory, AsyncMemory):
        operation = getattr(cls, name)
        assert inspect.signature(operation).return_annotation == result
        assert operation.__qualname__ == f"{cls.__name__}.{name}"
        assert operation.__doc__ and operation.__doc__ == operation.__wrapped__.__doc__
        assert next(iter(inspect.signature(operation).parameters)) == "self"


def test_bound_operations_name_their_planner() -> None:
    assert Memory.pin.__wrapped__ is NotePlans.pin  # type: ignore[attr-defined]
    assert Memory.write.__wrapped__ is Planner.write  # type: ignore[attr-defined]
    assert AsyncMemory.recall.__wrapped__ is ContextPlans.recall  # type: ignore[attr-defined]
    assert Memory.records.__wrapped__ is SessionPlans.records  # type: ignore[attr-defined]
