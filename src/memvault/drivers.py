"""Running plans: a plan yields steps and gets each step's result back (or its error, thrown in
at the ``yield``). A step is an :class:`~memvault.core.Invoke` (a callback, an embedding) or
whatever the driver's ``execute`` runs — a tuple of ops for a backend
(:func:`memvault.local.run_blocking`), an HTTP request for a server
(:meth:`memvault.api.Operation.steps`, run by :mod:`memvault.remote`). Only how a step runs
differs: a call, or ``await``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar, cast, get_args

from .core import Invoke
from .errors import ValidationError

T = TypeVar("T")
C = TypeVar("C", bound=type)
Steps = Generator[Any, Any, T]
"""A plan whose steps are Invokes or what its driver's ``execute`` takes."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    value: Any = None
    error: Exception | None = None


@dataclass(frozen=True, slots=True)
class _Finished:
    value: Any


def _resume(plan: Steps[Any], outcome: _Outcome) -> Any:
    """Feed the last step's outcome to the plan; return its next step or its result."""
    try:
        if outcome.error is not None:
            return plan.throw(outcome.error)
        return plan.send(outcome.value)
    except StopIteration as stop:
        return _Finished(stop.value)


def invoke_blocking(step: Invoke) -> Any:
    """Call the step's function; an awaitable result is run to completion (outside an event
    loop only)."""
    result = step.fn(*step.args)
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(result))
    if inspect.iscoroutine(result):
        result.close()
    raise ValidationError(
        "an async callback cannot run inside a running event loop; use AsyncMemory"
    )


SLOW_CALLS = 32
"""Slow calls (an LLM's) that run at once in a process; more wait for a thread of their own."""


@functools.cache
def _slow_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(SLOW_CALLS, thread_name_prefix="memvault-slow")


async def invoke_awaiting(step: Invoke) -> Any:
    """Call the step's function (in a thread if it blocks; a slow one on the slow calls' own
    pool; a pause as ``asyncio.sleep``) and await its result if needed."""
    if step.fn is time.sleep:
        return await asyncio.sleep(*step.args)
    if step.slow:  # with the caller's context (the request id of log records), as to_thread
        running = contextvars.copy_context().run
        value = await asyncio.get_running_loop().run_in_executor(
            _slow_pool(), running, step.fn, *step.args
        )
    elif step.blocking:
        value = await asyncio.to_thread(step.fn, *step.args)
    else:
        value = step.fn(*step.args)
    return await value if inspect.isawaitable(value) else value


async def _awaited(value: Any) -> Any:
    return await value


def drive_blocking(plan: Steps[T], execute: Callable[[Any], Any]) -> T:
    """Run a plan to completion with blocking calls: ``execute`` runs each step but Invokes."""
    step = _resume(plan, _Outcome())
    while not isinstance(step, _Finished):
        try:
            value = invoke_blocking(step) if isinstance(step, Invoke) else execute(step)
            outcome = _Outcome(value)
        except Exception as exc:
            outcome = _Outcome(error=exc)
        step = _resume(plan, outcome)
    return cast(T, step.value)


async def drive_awaiting(plan: Steps[T], execute: Callable[[Any], Awaitable[Any]]) -> T:
    """Run a plan to completion, awaiting ``execute`` (each step but Invokes) and callbacks."""
    step = _resume(plan, _Outcome())
    while not isinstance(step, _Finished):
        try:
            if isinstance(step, Invoke):
                value = await invoke_awaiting(step)
            else:
                value = await execute(step)
            outcome = _Outcome(value)
        except Exception as exc:
            outcome = _Outcome(error=exc)
        step = _resume(plan, outcome)
    return cast(T, step.value)


def described(operation: Callable[..., Any], plan: Callable[..., Any]) -> None:
    """Make an operation bound from a plan introspect as what it is: the plan's parameters and
    docstring, and the plan's result as its return type (not ``Plan[…]``)."""
    operation.__signature__ = _signature(plan)  # type: ignore[attr-defined]
    operation.__memvault_operation__ = True  # type: ignore[attr-defined]


@functools.cache
def _signature(plan: Callable[..., Any]) -> inspect.Signature:
    """The plan's signature with its result as the return type (the drivers bind each plan
    four times: worked out once)."""
    signature = inspect.signature(plan, eval_str=True)
    return signature.replace(return_annotation=get_args(signature.return_annotation)[-1])


def name_operations(cls: C) -> C:
    """Name each bound operation after the class it is bound on (``Memory.write``)."""
    for name, value in vars(cls).items():
        if getattr(value, "__memvault_operation__", False):
            value.__qualname__ = f"{cls.__qualname__}.{name}"
            value.__module__ = cls.__module__
    return cls
