"""Opt-in: the seed scenario against a real model behind an OpenAI-compatible server.

Set ``MEMVAULT_TEST_LLM_BASE_URL`` (and ``MEMVAULT_TEST_LLM_MODEL``), e.g. with the small Gemma
model served by llama.cpp (see docs/learning.md, "A real small model"). Prints what the model
taught; asserts what must hold whatever the model says: one call per turn, no failure, every
learned fact grounded in the conversation, nothing from a private session in Global Memory.
"""

from __future__ import annotations

import os

import pytest

from memvault import Memory, Settings
from memvault.extraction.pipeline import content_words
from memvault.llm.openai_compat import OpenAICompatChat

BASE_URL = os.environ.get("MEMVAULT_TEST_LLM_BASE_URL", "")
pytestmark = pytest.mark.skipif(not BASE_URL, reason="set MEMVAULT_TEST_LLM_BASE_URL to run")

TURNS = [
    ("Hi! I'm Alice. I prefer Go over Python for backend work.", "Nice to meet you. Noted: Go."),
    ("We decided to use DuckDB instead of SQLite for the Q1 sales analysis.", "DuckDB it is."),
    ("By the way, I live in Berlin.", "Great city!"),
    ("Actually I moved to Paris last month.", "Congrats on the move!"),
]


def test_the_seed_scenario_with_a_real_model(capsys: pytest.CaptureFixture[str]) -> None:
    model = os.environ.get("MEMVAULT_TEST_LLM_MODEL", "local")
    chat = OpenAICompatChat(BASE_URL, model, timeout_s=300, max_tokens=256)
    said = content_words(" ".join(user for user, _ in TURNS))
    with chat, Memory(":memory:", settings=Settings(extraction="llm"), llm=chat) as memory:
        session = memory.create_session("alice")
        private = memory.create_session("alice", private=True)
        for user, assistant in TURNS:
            memory.add_turn(session.id, user=user, assistant=assistant)
            memory.flush()
            learned = memory.last_extraction(session.id)
            with capsys.disabled():
                print(f"\n{user!r} -> {learned}")
        memory.add_turn(private.id, user="I prefer dark mode.")
        memory.flush()
        stats = memory.stats()
        assert stats["llm_calls"] == len(TURNS) + 1
        assert stats.get("extraction_failures", 0) == 0
        for entry in memory.retrieve("user:alice", include_superseded=True):
            assert content_words(entry.content) & said, entry.content
            assert entry.provenance.created_in_session_id != private.id
