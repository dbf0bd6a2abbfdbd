"""The retention sweeper of ``memvault serve``: every ``retention_interval_s`` seconds it applies
each served tenant's retention policy (the ``retention`` setting); a failed run is logged and
the next one tried. One per worker: runs of several workers meet in the store's transactions
(what one removed, the next finds gone)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from ..config import retention_policy
from ..errors import MemvaultError
from ..memory import AsyncMemory
from .auth import actor_of

log = logging.getLogger("memvault.retention")
SWEEPER = "retention-sweeper"
"""The agent the audit log names for what the sweeper removes (after the server's actor)."""


async def sweep_retention(memory: AsyncMemory, tenants: Iterable[str]) -> None:
    """Apply retention for ``tenants`` now, then every interval, until cancelled."""
    interval = memory.settings.retention_interval_s
    served = [t for t in tenants if retention_policy(memory.settings.retention, t)]
    if not interval or not served:
        return
    while True:
        await asyncio.sleep(interval)
        for tenant in served:
            try:
                sweeper = memory.with_tenant(tenant).as_actor(actor_of(memory.actor, SWEEPER))
                report = await sweeper.apply_retention()
            except MemvaultError as exc:
                log.warning("retention run failed: %s: %s", type(exc).__name__, exc)
                continue
            if report.items:
                log.info("retention removed %d entries: %s", len(report.items), report.counts)
