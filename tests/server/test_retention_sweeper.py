"""The retention sweeper of ``memvault serve`` applies each served tenant's policy on its
interval, in the background, and stops with the app."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from memvault import AsyncMemory, Settings
from memvault.server.retention import sweep_retention
from memvault.testing import HashEmbedder, ManualClock


@pytest.mark.slow
def test_the_sweeper_applies_each_tenants_policy(tmp_path: Path) -> None:
    clock = ManualClock()

    def stored(tenant: str) -> int:
        """Rows of the tenant, expired ones too (reads hide those)."""
        with sqlite3.connect(tmp_path / "m.db") as db:
            sql = "SELECT count(*) FROM entries WHERE tenant = ?"
            return int(db.execute(sql, (tenant,)).fetchone()[0])

    settings = Settings(retention="expired=0; globex: expired=off", retention_interval_s=1)

    async def scenario() -> tuple[int, int]:
        memory = AsyncMemory(
            str(tmp_path / "m.db"), settings=settings, embedder=HashEmbedder(), clock=clock
        )
        acme, globex = memory.with_tenant("acme"), memory.with_tenant("globex")
        for view in (acme, globex):
            await view.write("brief", scope="user:a", ttl=timedelta(minutes=1))
        clock.advance(timedelta(minutes=2))
        sweeper = asyncio.create_task(sweep_retention(memory, ["acme", "globex"]))
        for _ in range(100):  # the first run comes after one interval
            await asyncio.sleep(0.1)
            if stored("acme") == 0:
                break
        sweeper.cancel()
        await asyncio.gather(sweeper, return_exceptions=True)
        await memory.aclose()
        return stored("acme"), stored("globex")

    assert asyncio.run(scenario()) == (0, 1)
