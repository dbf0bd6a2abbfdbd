"""Learning from conversations end to end: turns in through add_turn, extraction in the
background (heuristic, or an LLM behind a real OpenAI-protocol HTTP server), memories out —
routed, trusted, superseded on change, never half-written."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, Settings
from memvault.errors import ConfigError, ValidationError
from memvault.extraction.worker import Failure
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.llm.scripted import ScriptedChat
from memvault.testing import ManualClock
from memvault.testing.obedient import obey
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
        history = memory.history(paris.id).versions
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
        assert [r.latency_ms >= 0 for r in learned.replies] == [True]  # type: ignore[union-attr]


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


def test_an_unreachable_llm_is_one_readable_line(
    tmp_path: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    with ScriptedOpenAIServer() as gone:  # a real server, closed: its port now refuses
        url = gone.base_url
    with (
        OpenAICompatChat(url, "m", max_retries=0) as chat,
        _open(tmp_path, clock, llm=chat) as memory,
    ):
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer tea.")
        memory.flush(timeout=30)
        failure = memory.last_extraction(session.id)
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "memvault.extraction"]
    assert logged.startswith(f"extraction of session {session.id} (tenant default) failed: ")
    assert isinstance(failure, Failure) and failure.error in logged
    assert url in failure.error and "could not connect" in failure.error  # where, and why
    assert "MEMVAULT_LLM_BASE_URL" in failure.error  # what to change


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"llm_model": "qwen3:4b"}, "MEMVAULT_LLM_MODEL is set but MEMVAULT_LLM_BASE_URL is empty"),
        ({"llm_api_key": "sk-secret-0123"}, "MEMVAULT_LLM_API_KEY is set"),
        ({"llm_base_url": "http://127.0.0.1:9/v1"}, "set MEMVAULT_LLM_MODEL"),
    ],
)
def test_a_partial_llm_configuration_is_refused(given: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named) as refused:
        Memory(":memory:", settings=Settings.from_mapping(given))
    assert "sk-secret" not in str(refused.value)


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


def test_an_undo_holds_through_the_next_turns(tmp_path: Path, clock: ManualClock) -> None:
    """Only turns no extraction has read teach: a restore, a manual supersede or a delete is
    not undone by the next turn re-reading the old ones."""
    with _open(tmp_path, clock) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I live in Berlin.", assistant="Nice!")
        memory.flush(timeout=30)
        clock.advance(minutes=5)
        memory.add_turn(session.id, user="I moved to Paris.", assistant="Congrats!")
        memory.flush(timeout=30)
        berlin = memory.history(memory.global_memory("alice")[0].id).versions[0]
        memory.restore(berlin.id)
        memory.add_turn(session.id, user="What should I cook tonight?", assistant="Pasta?")
        memory.flush(timeout=30)
        assert [e.content for e in memory.global_memory("alice")] == [berlin.content]
        rome = memory.supersede(berlin.id, "The user lives in Rome.", reason="told me by phone")
        memory.add_turn(session.id, user="Thanks!", assistant="You're welcome.")
        memory.flush(timeout=30)
        assert [e.id for e in memory.global_memory("alice")] == [rome.id]
        memory.delete(rome.id)
        memory.add_turn(session.id, user="Bye.", assistant="Bye!")
        memory.flush(timeout=30)
        assert memory.global_memory("alice") == []
        assert memory.extract(session.id).turns == 0  # everything read already


def test_turns_queued_behind_a_slow_extraction_are_all_learned(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    answered = threading.Event()

    def slow(request: dict[str, Any]) -> str:
        answered.wait(10)
        return obey(_lines(request))

    server.responder = slow
    liked = ["green tea", "jazz", "cats", "linux", "sailing"]
    with _open(tmp_path, clock, llm=chat) as memory:
        session = memory.create_session("alice")
        for thing in liked:
            memory.add_turn(session.id, user=f"I prefer {thing}.", assistant="Noted.")
            clock.advance(seconds=1)
        answered.set()
        assert memory.flush(timeout=30)
        learned = " ".join(e.content for e in memory.global_memory("alice"))
        assert all(thing in learned for thing in liked), learned
        assert len(server.requests) <= len(liked)  # never more than one call per turn


def test_two_sessions_learning_at_once_keep_one_current_version(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer
) -> None:
    """Two sessions of one user change the same fact at the same time: the second to write
    replaces what the first wrote (it follows the chain), no two versions stay current."""
    release = {"Paris": threading.Event(), "Rome": threading.Event()}

    def respond(request: dict[str, Any]) -> str:
        text = request["body"]["messages"][1]["content"]
        for city, event in release.items():
            if city in text:
                event.wait(10)
                return f"fact|turn-1|The user lives in {city}.||replaces M1: the user moved"
        return "fact|turn-1|The user lives in Berlin.||"

    server.responder = respond
    with (
        OpenAICompatChat(server.base_url, "scripted", timeout_s=20, max_retries=0) as chat,
        _open(tmp_path, clock, llm=chat) as memory,
    ):
        home = memory.create_session("alice")
        memory.add_turn(home.id, user="I live in Berlin.")
        memory.flush(timeout=30)
        first, second = memory.create_session("alice"), memory.create_session("alice")
        clock.advance(days=1)
        memory.add_turn(first.id, user="I moved to Paris.")
        memory.add_turn(second.id, user="Actually I moved to Rome.")
        while len(server.requests) < 3:  # both extractions asked, with Berlin as M1
            time.sleep(0.01)
        release["Paris"].set()
        while memory.last_extraction(first.id) is None:  # Paris written, Rome still asking
            time.sleep(0.01)
        release["Rome"].set()
        assert memory.flush(timeout=30)
        current = memory.global_memory("alice")
        assert [e.content for e in current] == ["The user lives in Rome."]
        chain = [e.content.split()[-1] for e in memory.history(current[0].id).versions]
        assert chain == ["Berlin.", "Paris.", "Rome."]


@pytest.mark.parametrize(
    "said",
    [
        "Translate this into French: I prefer tea over coffee.",
        "Fix the grammar: I prefers tea over coffee.",
        "Can you translate to German: I prefer tea over coffee.",
        'Translate "I prefer tea over coffee" into Spanish.',
        "Make this more formal:\nI prefer tea over coffee.",
        "Proofread\nI prefer tea over coffee.",
    ],
)
@pytest.mark.parametrize("extractor", ["heuristic", "llm"])
def test_text_handed_over_for_a_task_is_not_the_users_own_words(
    tmp_path: Path, clock: ManualClock, said: str, extractor: str
) -> None:
    llm = ScriptedChat(responder=lambda r: obey("\n".join(m.content for m in r.messages)))
    with _open(tmp_path, clock, llm=llm if extractor == "llm" else None) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user=said, assistant="Voilà.")
        memory.flush(timeout=30)
        assert memory.global_memory("alice") == []


def test_the_reason_for_a_change_is_redacted_and_capped(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    reason = "the user moved; mail bob@example.com " + "x" * 2000

    def respond(request: dict[str, Any]) -> str:
        if "Paris" in request["body"]["messages"][1]["content"]:
            return f"fact|turn-1|The user lives in Paris.||replaces M1: {reason}"
        return "fact|turn-1|The user lives in Berlin.||"

    server.responder = respond
    with _open(tmp_path, clock, llm=chat) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I live in Berlin.")
        memory.flush(timeout=30)
        memory.add_turn(session.id, user="I moved to Paris.")
        memory.flush(timeout=30)
        (change,) = memory.superseded("user:alice")
        assert change.reason and len(change.reason) <= 500
        assert "bob@example.com" not in change.reason and "[EMAIL]" in change.reason


@pytest.mark.parametrize("tools", [None, (), iter(["ran ls"])])
def test_tool_records_may_be_none_or_any_iterable(
    tmp_path: Path, clock: ManualClock, tools: Any
) -> None:
    with _open(tmp_path, clock) as memory:
        session = memory.create_session("alice")
        turn = memory.add_turn(session.id, user="Hi.", tool_records=tools)
        assert len(turn.records) == 1 + (tools is not None and not isinstance(tools, tuple))


@pytest.mark.parametrize("tools", [5, "ran ls", {"content": "x"}, b"bytes"])
def test_tool_records_of_another_type_are_refused(
    tmp_path: Path, clock: ManualClock, tools: Any
) -> None:
    with _open(tmp_path, clock) as memory:
        session = memory.create_session("alice")
        with pytest.raises(ValidationError, match="tool_records"):
            memory.add_turn(session.id, user="Hi.", tool_records=tools)


@pytest.mark.slow
def test_a_window_too_big_for_one_request_is_cut_to_fit(
    tmp_path: Path, clock: ManualClock, server: ScriptedOpenAIServer, chat: OpenAICompatChat
) -> None:
    server.responder = lambda request: obey(_lines(request))
    long_turn = "I prefer green tea. " + "Here is my diary, day by day. " * 2000
    with _open(tmp_path, clock, llm=chat, llm_max_request_bytes=20_000) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user=long_turn, assistant="That is long.")
        memory.flush(timeout=30)
        assert memory.stats().get("extraction_failures", 0) == 0
        assert len(json.dumps(server.requests[0]["body"])) <= 20_000
        assert "green tea" in memory.global_memory("alice")[0].content


def test_restoring_back_and_forth_keeps_each_link_once(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path, clock) as memory:
        berlin = memory.write("The user lives in Berlin.", scope="user:alice", category="identity")
        paris = memory.supersede(berlin.id, "The user lives in Paris.", reason="moved")
        for entry in (berlin, paris, berlin, paris):
            restored = memory.restore(entry.id)
            assert len(set(restored.supersedes)) == len(restored.supersedes)
        assert [e.id for e in memory.retrieve("user:alice")] == [paris.id]
