"""Learning with structured output, end to end: turns in through add_turn, an LLM behind a real
OpenAI-protocol HTTP server asked for JSON with a schema (``llm_structured``), the line format
when the server refuses the schema, and every reply with nothing usable counted and shown —
through the same checks as any other proposal."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, Settings
from memvault.extraction.parse import excerpt
from memvault.extraction.plans import Extraction, ParseFailure
from memvault.extraction.schema import facts_schema
from memvault.extraction.worker import Failure
from memvault.testing import ManualClock
from memvault.testing.openai_server import ScriptedOpenAIServer, structured

TEA_LINE = "preference|turn-1|The user prefers green tea.|"


def _fact(
    category: str, fact: str, replaces: tuple[str, ...] = (), reason: str = ""
) -> dict[str, Any]:
    return {
        "category": category,
        "turn": 1,
        "fact": fact,
        "native": "",
        "replaces": list(replaces),
        "reason": reason,
    }


def _json(*facts: dict[str, Any]) -> str:
    return json.dumps({"facts": list(facts)})


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


def _open(tmp_path: Path, server: ScriptedOpenAIServer, **settings: Any) -> Memory:
    values = {
        "extraction": "llm",
        "llm_base_url": server.base_url,
        "llm_model": "scripted",
        "llm_max_retries": 0,
        "llm_timeout_s": 10.0,
        **settings,
    }
    return Memory(
        f"sqlite:///{tmp_path / 'm.db'}", clock=ManualClock(), settings=Settings(**values)
    )


def _system(request: dict[str, Any]) -> str:
    return str(request["body"]["messages"][0]["content"])


def _learned(memory: Memory, session_id: str) -> Extraction:
    found = memory.last_extraction(session_id)
    assert isinstance(found, Extraction), found
    return found


def test_a_structured_reply_is_learned_and_changes_supersede(
    tmp_path: Path, server: ScriptedOpenAIServer
) -> None:
    def respond(request: dict[str, Any]) -> str:
        if "Paris" in request["body"]["messages"][1]["content"]:
            paris = _fact("fact", "The user lives in Paris.", ("M1",), "the user moved")
            return _json(paris)
        return _json(_fact("fact", "The user lives in Berlin."))

    server.responder = respond
    with _open(tmp_path, server) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I live in Berlin.", assistant="Nice!")
        memory.flush(timeout=30)
        memory.add_turn(session.id, user="I moved to Paris last month.")
        memory.flush(timeout=30)
        learned = _learned(memory, session.id)
        [paris] = memory.global_memory("alice")
        assert paris.content == "The user lives in Paris."
        assert paris.provenance.source == "user_turn"  # user-stated: the same trust checks
        [berlin] = [v for v in memory.history(paris.id).versions if v.id != paris.id]
        assert "Berlin" in berlin.content and "moved" in str(berlin.superseded_reason)
        assert learned.superseded == (berlin.id,) and learned.parse_failures == ()
        stats = memory.stats()
    assert all(structured(r) for r in server.requests) and len(server.requests) == 2
    sent = server.requests[0]["body"]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"] == facts_schema().schema
    assert '{"facts": []}' in _system(server.requests[0])
    assert "category|turn-N" not in _system(server.requests[0])
    assert (
        "extraction_parse_failures" not in stats and "extraction_structured_fallbacks" not in stats
    )


def test_structured_facts_go_through_the_same_checks(
    tmp_path: Path, server: ScriptedOpenAIServer
) -> None:
    server.responder = lambda request: _json(
        _fact("preference", "The user prefers green tea."),
        _fact("preference", "The user prefers strong espresso."),  # not what the user said
    )
    with _open(tmp_path, server) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer green tea.")
        memory.flush(timeout=30)
        assert [e.content for e in memory.global_memory("alice")] == ["The user prefers green tea."]
        [dropped] = _learned(memory, session.id).dropped
        assert dropped.fact == "The user prefers strong espresso."


def test_a_server_refusing_the_schema_gets_the_line_format_from_then_on(
    tmp_path: Path, server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.refuse_structured_output()
    server.responder = lambda request: (
        TEA_LINE if "tea" in request["body"]["messages"][1]["content"] else "NONE"
    )
    with _open(tmp_path, server) as memory, caplog.at_level(logging.WARNING, "memvault"):
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer green tea.")
        memory.flush(timeout=30)
        assert [e.content for e in memory.global_memory("alice")] == ["The user prefers green tea."]
        assert [structured(r) for r in server.requests] == [True, False]
        memory.add_turn(session.id, user="Also, I love hiking.")
        memory.flush(timeout=30)
        stats = memory.stats()
    assert [structured(r) for r in server.requests] == [True, False, False]  # straight to lines
    assert "category|turn-N" in _system(server.requests[1])
    assert stats["extraction_structured_fallbacks"] == 1
    assert stats["llm_failures"] == 1 and stats["llm_calls"] == 3
    assert "extraction_failures" not in stats and "extraction_parse_failures" not in stats
    refusals = [r for r in caplog.records if "refused structured output" in r.getMessage()]
    assert len(refusals) == 1 and server.base_url in refusals[0].getMessage()


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Sure! I noted that the user likes green tea.", "not JSON, though structured output"),
        ('{"facts": [{"category": "preference", "turn": 1, "fa', "not JSON"),
        (_json(_fact("opinion", "The user likes tea.")), "no usable fact in 1 item(s)"),
    ],
)
def test_a_reply_with_nothing_usable_is_counted_shown_and_logged(
    tmp_path: Path,
    server: ScriptedOpenAIServer,
    caplog: pytest.LogCaptureFixture,
    reply: str,
    reason: str,
) -> None:
    server.responder = lambda request: reply
    with _open(tmp_path, server) as memory, caplog.at_level(logging.WARNING, "memvault"):
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer green tea.")
        memory.flush(timeout=30)
        learned = _learned(memory, session.id)
        stats = memory.stats()
        assert memory.global_memory("alice") == [] and learned.stored == ()
    [failure] = learned.parse_failures
    assert failure.model == "scripted" and reason in failure.reason
    assert failure.reply == excerpt(reply) and len(failure.reply) <= 120
    assert Extraction.from_dict(learned.to_dict()).parse_failures == (failure,)
    assert stats["extraction_parse_failures"] == 1
    assert "extraction_failures" not in stats  # the extraction ran; its reply was unusable
    [said] = [r.getMessage() for r in caplog.records if r.name == "memvault.extraction"]
    assert "model scripted" in said and reason in said and reply[:30] in said


def test_a_reply_cut_at_the_token_limit_says_so(
    tmp_path: Path, server: ScriptedOpenAIServer
) -> None:
    cut = json.dumps(
        {"choices": [{"message": {"content": '{"facts": ['}, "finish_reason": "length"}]}
    ).encode()
    server.script_raw(cut)
    with _open(tmp_path, server) as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer green tea.")
        memory.flush(timeout=30)
        [failure] = _learned(memory, session.id).parse_failures
    assert "MEMVAULT_LLM_MAX_TOKENS" in failure.reason


def test_off_sends_no_schema_and_asks_for_lines(
    tmp_path: Path, server: ScriptedOpenAIServer
) -> None:
    server.responder = lambda request: TEA_LINE
    with _open(tmp_path, server, llm_structured="off") as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer green tea.")
        memory.flush(timeout=30)
        assert [e.content for e in memory.global_memory("alice")] == ["The user prefers green tea."]
    [request] = server.requests
    assert not structured(request)
    assert "category|turn-N" in _system(request) and '{"facts"' not in _system(request)


def test_on_fails_the_extraction_when_the_server_refuses_the_schema(
    tmp_path: Path, server: ScriptedOpenAIServer
) -> None:
    server.refuse_structured_output()
    with _open(tmp_path, server, llm_structured="on") as memory:
        session = memory.create_session("alice")
        memory.add_turn(session.id, user="I prefer green tea.")
        memory.flush(timeout=30)
        failed = memory.last_extraction(session.id)
        stats = memory.stats()
    assert isinstance(failed, Failure) and "refused structured output" in failed.error
    assert "MEMVAULT_LLM_STRUCTURED" in failed.error
    assert stats["extraction_failures"] == 1
    assert [structured(r) for r in server.requests] == [True]  # no line-format retry


def test_a_parse_failure_survives_the_round_trip() -> None:
    failure = ParseFailure("qwen3:4b", "neither fact lines nor JSON", "Sure!")
    extraction = Extraction("s1", "llm", parse_failures=(failure,))
    assert Extraction.from_dict(extraction.to_dict()) == extraction
    assert (extraction + extraction).parse_failures == (failure, failure)
    older = {k: v for k, v in extraction.to_dict().items() if k != "parse_failures"}
    assert Extraction.from_dict(older).parse_failures == ()
