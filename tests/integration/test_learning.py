"""Learning from conversations end to end: turns in through add_turn, extraction in the
background (heuristic, or an LLM behind a real OpenAI-protocol HTTP server), memories out —
routed, trusted, superseded on change, never half-written."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, Settings
from memvault.errors import ConfigError
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.testing import ManualClock
from memvault.testing.openai_server import ScriptedOpenAIServer

WHERE = "where does the user live"


def _open(tmp_path: Path, clock: ManualClock, llm: Any = None, **settings: Any) -> Memory:
    values = {"extraction": "heuristic" if llm is None else "llm", **settings}
    return Memory(
        f"sqlite:///{tmp_path / 'm.db'}",
        clock=clock,
        settings=Settings(**values),
        llm=llm,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


@pytest.fixture
def chat(server: ScriptedOpenAIServer) -> Iterator[OpenAICompatChat]:
    with OpenAICompatChat(server.base_url, "scripted", timeout_s=5.0, max_retries=0) as client:
        yield client


def _lines(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["body"]["messages"])


def test_knowledge_update_without_an_llm(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path, clock) as memory:
        first = memory.create_session("alice")
        turn = memory.add_turn(first.id, user="I live in Berlin.", assistant="Nice city!")
        assert turn.extraction == "scheduled" and len(turn.records) == 2
        assert memory.flush(timeout=30)
        before = clock()
        clock.advance(days=40)
        later = memory.create_session("alice")
        memory.add_turn(later.id, user="I moved to Paris last month.", assistant="Congrats!")
        assert memory.flush(timeout=30)

        hits = memory.search(WHERE, "user:alice")
        assert "Paris" in hits[0].entry.content
        paris = hits[0].entry
        assert paris.category == "identity" and paris.provenance.source == "user_turn"
        history = memory.history(paris.id)
        berlin = history[0]
        assert "Berlin" in berlin.content and berlin.superseded_by == paris.id
        assert berlin.superseded_reason
        assert all("Berlin" not in h.entry.content for h in memory.search(WHERE, "user:alice"))
        assert "Berlin" in memory.retrieve("user:alice", as_of=before)[0].content
        assert [s.entry.id for s in memory.superseded("user:alice")] == [berlin.id]
        memory.restore(berlin.id)
        assert "Berlin" in memory.search(WHERE, "user:alice")[0].entry.content
        third = memory.create_session("alice")
        assert "Berlin" in memory.system_prompt(third.id)


def test_knowledge_update_with_an_llm(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    def respond(request: dict[str, Any]) -> str:
        conversation = request["body"]["messages"][1]["content"]
        if "Paris" in conversation:
            return "fact|turn-1|The user lives in Paris.||replaces M1: the user moved"
        return "fact|turn-1|The user lives in Berlin.||"

    server.responder = respond
    with _open(tmp_path, clock, llm=chat) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="Ich wohne in Berlin.", assistant="Schön!")
        memory.flush(timeout=30)
        clock.advance(days=3)
        memory.add_turn(session.id, user="Je viens de déménager à Paris.", assistant="Super !")
        memory.flush(timeout=30)
        learned = memory.last_extraction(session.id)
        assert learned is not None and learned.superseded  # type: ignore[union-attr]
        current = memory.global_memory("alice")
        assert [e.content for e in current] == ["The user lives in Paris."]
        assert len(server.requests) == 2  # one LLM call per turn
        stats = memory.stats()
        assert stats["llm_calls"] == 2 and stats["llm_prompt_tokens"] > 0
        assert learned.reply is not None and learned.reply.latency_ms >= 0  # type: ignore[union-attr]


def test_add_turn_does_not_wait_for_the_llm(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    answered = threading.Event()

    def slow(request: dict[str, Any]) -> str:
        answered.wait(10)
        return "preference|turn-1|The user prefers green tea.|"

    server.responder = slow
    with _open(tmp_path, clock, llm=chat) as memory:
        session = memory.create_session("alice")
        turn = memory.add_turn(session.id, user="I prefer green tea.")
        assert turn.extraction == "scheduled"
        second = memory.add_turn(session.id, user="Also, I love hiking.")
        third = memory.add_turn(session.id, user="And I live in Oslo.")
        assert (second.extraction, third.extraction) == ("queued", "queued")
        assert memory.global_memory("alice") == []  # nothing learned yet, and we got here
        answered.set()
    # close() waited: the first run and one queued run (the most recent wins), no more
    assert len(server.requests) == 2


def test_a_failed_extraction_writes_nothing_and_is_counted(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    server.script_status(500)
    with _open(tmp_path, clock, llm=chat) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer tea.")
        memory.flush(timeout=30)
        assert memory.stats()["extraction_failures"] == 1
        assert memory.global_memory("alice") == []
        assert len(memory.records(session.id)) == 1  # the turn itself is kept


def test_private_sessions_never_reach_global_memory(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path, clock) as memory:
        session = memory.create_session("alice", private=True)
        memory.add_turn(session.id, user="I prefer dark mode. My name is Alice.")
        memory.flush(timeout=30)
        assert memory.global_memory("alice") == []
        notes = memory.session_memory(session.id)
        assert any("dark mode" in n.content for n in notes)


def test_pii_is_redacted_before_extraction_and_storage(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    server.responder = lambda request: "fact|turn-1|The user's email is alice@example.com.|"
    with _open(tmp_path, clock, llm=chat) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="Mail me at alice@example.com about order 12345.")
        memory.flush(timeout=30)
        assert "alice@example.com" not in _lines(server.requests[0])
        assert "12345" in _lines(server.requests[0])
        stored = [n.content for n in memory.session_memory(session.id)]
        assert stored and all("alice@example.com" not in s for s in stored)
        assert memory.stats()["redacted_email"] >= 1
        assert "alice@example.com" in memory.records(session.id)[0].content  # records: off


def test_extraction_off_and_llm_without_a_server(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path, clock, extraction="off") as memory:
        session = memory.create_session("alice")
        assert memory.add_turn(session.id, user="I prefer tea.").extraction == "off"
    with pytest.raises(ConfigError, match="needs an LLM"):
        Memory(":memory:", settings=Settings(extraction="llm"))


def test_a_change_within_one_window_supersedes_too(tmp_path: Path, clock: ManualClock) -> None:
    """Turns that arrive before their extraction runs are read together: the later turn's fact
    still supersedes the earlier one, and as_of sees each when it held."""
    with _open(tmp_path, clock) as memory:
        session = memory.create_session("alice")
        memory.append_record(session.id, "user", "I live in Berlin.")
        between = clock()
        clock.advance(hours=1)
        memory.append_record(session.id, "user", "I moved to Paris.")
        learned = memory.extract(session.id)
        assert len(learned.stored) == 2 and not learned.superseded
        berlin, paris = sorted(learned.stored, key=lambda e: e.valid_from)
        assert berlin.superseded_by == paris.id and paris.supersedes == (berlin.id,)
        assert [e.content for e in memory.global_memory("alice")] == [paris.content]
        assert [e.content for e in memory.retrieve("user:alice", as_of=between)] == [berlin.content]
        again = memory.extract(session.id)  # the same window again: nothing new, nothing lost
        assert not again.stored and [e.content for e in memory.global_memory("alice")] == [
            paris.content
        ]
