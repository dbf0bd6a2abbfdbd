"""Many writers on one store at once, on either driver (for the conformance suite's races)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any


def all_at_once(
    make_memory: Callable[[], Any],
    memory: Any,
    threads: int,
    each: int,
    call: Callable[[Any, int, int], Any],
) -> None:
    """``call(m, thread, n)`` for every thread and n, all at once: on the async driver as many
    tasks gathered on ``memory``'s loop; on the blocking one, a memory per thread (opened here:
    a memory is not thread-safe), the threads released together. Raises what any call raised."""
    if hasattr(memory, "_runner"):  # the async driver
        inner = memory._memory

        async def gathered() -> None:
            await asyncio.gather(*(call(inner, t, n) for t in range(threads) for n in range(each)))

        memory._runner.run(gathered())
        return
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []
    memories = [make_memory() for _ in range(threads)]

    def worker(thread: int) -> None:
        try:
            barrier.wait(timeout=30)
            for n in range(each):
                call(memories[thread], thread, n)
        except BaseException as exc:
            errors.append(exc)

    running = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    assert errors == [], errors
