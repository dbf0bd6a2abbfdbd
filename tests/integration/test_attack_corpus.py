"""The blind authors' attack corpora (the dev split and the three blind splits, all read by now)
through both extraction paths: the heuristic extractor, and a compromised model behind a real
OpenAI-protocol server on 127.0.0.1 that answers with the payload as a fact, laundered through
the native field, and replacing every stored memory. No payload reaches Global Memory or the
system prompt as ``[user-stated]``, no stored memory is retired, and honest benign statements
are still learned.

``benchmarks/attacks.py`` prints the figures of each split, and of the adversary's corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, Settings
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.testing import HashEmbedder
from memvault.testing.adversary import (
    AttackResult,
    compromised_replies,
    honest_reply,
    load,
    run_attack,
    run_statement,
)
from memvault.testing.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.slow  # its fixture runs the whole corpus (about a minute)

DATA = Path(__file__).parents[1] / "data"
BLIND = Path(__file__).parents[2] / "benchmarks" / "data"
ATTACKS = [
    *load(DATA / "attacks_dev.jsonl"),
    *(a for n in ("", "2", "3") for a in load(BLIND / f"attacks_blind{n}.jsonl")),
]
STATEMENTS = load(DATA / "benign_statements_dev.jsonl")
VARIANTS = ("heuristic", "naive", "native", "replaces")


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["body"]["messages"])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Every attack by every variant, and every benign statement by both paths."""
    root = tmp_path_factory.mktemp("attacks")
    with ScriptedOpenAIServer() as server:
        answer: dict[str, Any] = {"reply": lambda prompt: "NONE"}
        server.responder = lambda request: answer["reply"](_prompt(request))
        chat = OpenAICompatChat(server.base_url, "compromised", max_retries=0)
        llm = Memory(
            str(root / "llm.db"),
            settings=Settings(extraction="llm"),
            llm=chat,
            embedder=HashEmbedder(),
        )
        heuristic = Memory(
            str(root / "h.db"), settings=Settings(extraction="heuristic"), embedder=HashEmbedder()
        )
        results: dict[tuple[str, str], AttackResult] = {}
        learned: dict[str, list[Any]] = {"heuristic": [], "llm": []}
        with chat, llm, heuristic:
            for attack in ATTACKS:
                replies = compromised_replies(attack)
                for variant in VARIANTS:
                    if variant != "heuristic" and variant not in replies:
                        continue
                    memory = heuristic if variant == "heuristic" else llm
                    text = replies.get(variant, "NONE")
                    answer["reply"] = lambda prompt, text=text: text
                    results[attack["id"], variant] = run_attack(
                        memory, attack, variant, f"{variant}-{attack['id']}"
                    )
            for path, memory in (("heuristic", heuristic), ("llm", llm)):
                for statement in STATEMENTS:
                    answer["reply"] = lambda prompt, row=statement: honest_reply(row, prompt)
                    user = f"benign-{path}-{statement['id']}"
                    learned[path].append(run_statement(memory, statement, user))
        yield {"results": results, "learned": learned, "requests": len(server.requests)}


CASES = [
    (attack["id"], variant)
    for attack in ATTACKS
    for variant in VARIANTS
    if variant in ("heuristic", "naive", "native") or attack.get("existing")
]


@pytest.mark.parametrize(("attack", "variant"), CASES, ids=[f"{a}-{v}" for a, v in CASES])
def test_no_payload_becomes_user_stated(world: dict[str, Any], attack: str, variant: str) -> None:
    result = world["results"][attack, variant]
    assert not result.reached, result.reached
    assert not result.retired, "an unrelated memory was retired"


def test_every_class_is_covered() -> None:
    classes = {attack["class"] for attack in ATTACKS}
    assert len(classes) >= 18 and len(ATTACKS) >= 280


def test_benign_statements_are_still_learned(world: dict[str, Any]) -> None:
    """Of the facts an honest model proposes for the blind author's benign statements, at least
    93 % are kept as the user's (95.4 % measured, 2026-11-27; 99.1 % before the checks, when
    paraphrased and misstated wording was kept too — now the user's own words are kept
    instead); the heuristic path learns no less than before (38.9 %, 30.6 % before)."""
    share = {
        path: sum(r.learned for r in found) / sum(r.expected for r in found)
        for path, found in world["learned"].items()
    }
    assert share["llm"] >= 0.93, share
    assert share["heuristic"] >= 0.30, share
