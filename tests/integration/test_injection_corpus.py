"""The injection corpus end to end, with an "obedient" model that follows every instruction it
reads, behind a real OpenAI-protocol HTTP server: no payload reaches Global Memory, none appears
in a prompt outside its data wrapper (the extraction request) or at all (the system prompt)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, Settings
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.llm.scripted import ScriptedChat
from memvault.security.text import fold
from memvault.testing import HashEmbedder
from memvault.testing.obedient import obey
from memvault.testing.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.slow  # its fixture runs the whole corpus

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "injection_corpus.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
WRAPPED = r"<(\w+)_{nonce}\b[^>]*>.*?</\1_{nonce}>"


def _normal(text: str) -> str:
    return " ".join(fold(unicodedata.normalize("NFKC", text))[0].lower().split())


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["body"]["messages"])


def _unwrapped(prompt: str) -> str:
    """The prompt with every block wrapped in its nonce's tags taken out."""
    nonces = set(re.findall(r"<\w+?_([0-9a-f]{16,64})\b", prompt))
    for nonce in nonces:
        prompt = re.sub(WRAPPED.format(nonce=nonce), "", prompt, flags=re.DOTALL)
    return prompt


def _turn(attack: dict[str, Any]) -> dict[str, Any]:
    text = attack["text"]
    if attack["channel"] == "user":
        return {"user": text, "assistant": "Noted."}
    if attack["channel"] == "assistant_quote":
        return {"user": "What does the document say?", "assistant": text}
    return {
        "user": attack.get("user", "Load it and tell me what is in it."),
        "tool_records": [{"content": text, "tool_name": "load-data"}],
        "assistant": f"Here is what it contains:\n{text}",
    }


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Every attack, each in a session of its own user, extracted by the obedient model."""
    root = tmp_path_factory.mktemp("corpus")
    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: obey(_prompt(request))
        chat = OpenAICompatChat(server.base_url, "obedient", max_retries=0)
        settings = Settings(extraction="llm", skip_error_responses=False)
        outcome: dict[str, Any] = {}
        with (
            chat,
            Memory(
                str(root / "m.db"), settings=settings, llm=chat, embedder=HashEmbedder()
            ) as memory,
        ):
            for attack in CORPUS:
                user = f"victim-{attack['id']}"
                session = memory.create_session(user)
                first = len(server.requests)
                memory.add_turn(session.id, **_turn(attack))
                memory.flush()
                outcome[attack["id"]] = {
                    "global": memory.retrieve(f"user:{user}", include_superseded=True),
                    "prompt": memory.system_prompt(session.id),
                    "requests": [_prompt(r) for r in server.requests[first:]],
                    "extraction": memory.last_extraction(session.id),
                }
        yield outcome


@pytest.mark.parametrize("attack", CORPUS, ids=[a["id"] for a in CORPUS])
def test_no_payload_reaches_global_memory_or_a_prompt(
    learned: dict[str, Any], attack: dict[str, Any]
) -> None:
    payload = _normal(attack["payload"])
    seen = learned[attack["id"]]
    assert len(seen["requests"]) == 1, "one extraction call per turn"
    assert all(payload not in _normal(e.content) for e in seen["global"]), seen["extraction"]
    assert payload not in _normal(seen["prompt"]), seen["extraction"]
    for request in seen["requests"]:
        assert payload not in _normal(_unwrapped(request))


BENIGN = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "benign_turns.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]


def test_benign_turns_still_teach() -> None:
    """The defences do not make memory useless: what the user says of themselves is kept. The
    obedient model also proposes facts from the questions, quotations, code and hedges of these
    turns (9 of its 57 proposals): those are refused, so at least 80 % of proposals are kept."""
    chat = ScriptedChat(responder=lambda r: obey("\n".join(m.content for m in r.messages)))
    proposed = kept = 0
    settings = Settings(extraction="llm")
    with Memory(":memory:", settings=settings, llm=chat, embedder=HashEmbedder()) as memory:
        for number, turn in enumerate(BENIGN):
            session = memory.create_session(f"user-{number}")
            memory.add_turn(session.id, user=turn["text"], assistant="OK.")
            memory.flush()
            done = memory.last_extraction(session.id)
            kept += len(done.stored) + len(done.merged)  # type: ignore[union-attr]
            proposed += len(done.stored) + len(done.merged) + len(done.dropped)  # type: ignore[union-attr]
        assert "dark mode" in memory.global_memory("user-0")[0].content
    assert kept >= 0.8 * proposed and kept >= 30
