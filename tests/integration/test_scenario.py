"""Seed 002's scenario end to end on the async API, a SQLite file and the packaged model."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memvault import AsyncMemory


def test_preference_findings_pin_and_a_new_session(tmp_path: Path) -> None:
    async def scenario() -> tuple[str, str, int]:
        async with AsyncMemory(str(tmp_path / "agent.db")) as memory:
            first = await memory.create_session("alice", title="Q1 sales")
            await memory.append_record(
                first.id, "user", "I prefer Go over Python. Please analyse the Q1 sales CSV."
            )
            await memory.add_global_memory(
                "alice", "User prefers Go over Python", source="user_turn", session_id=first.id
            )
            await memory.add_session_memory(
                first.id, "User is analysing Q1 sales data", category="context"
            )
            await memory.append_record(
                first.id, "tool", "loaded table sales (1,204 rows)", tool_name="load-data"
            )
            await memory.set_data_loaded(first.id)
            spike_text = "Osaka Widget-C sold 1850 units in week 10, 50x its weekly average"
            spike = await memory.add_finding(first.id, spike_text, tags=["critical"])
            repeat = await memory.add_finding(first.id, spike_text.replace(",", " —") + "!")
            await memory.add_finding(first.id, "Tokyo Widget-A is flat at 130 units a week")
            assert repeat.duplicate and repeat.id == spike.id
            await memory.pin(spike.entry_id)
            second = await memory.create_session("alice", title="Planning")
            prompt = await memory.system_prompt(second.id, base="You are an analyst.")
            again = await memory.system_prompt(second.id, base="You are an analyst.")
            return prompt, again, len(await memory.findings(first.id))

    prompt, again, findings = asyncio.run(scenario())
    assert prompt == again and findings == 2
    assert "- [user-stated] [decision] Osaka Widget-C sold 1850 units" in prompt
    assert "- [user-stated] [preference] User prefers Go over Python (learned " in prompt
    assert "Q1 sales data" not in prompt and "Tokyo" not in prompt
    assert "Notes about the current session" not in prompt
