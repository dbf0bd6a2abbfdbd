"""The attack corpus through both extraction paths, and benign statements learned.

    python benchmarks/attacks.py --split blind4        # the fourth blind split (never tuned on)
    python benchmarks/attacks.py --split blind3        # the third (its failures were read)
    python benchmarks/attacks.py --split blind2        # the second (its failures were read)
    python benchmarks/attacks.py --split blind         # the first (its failures were read)
    python benchmarks/attacks.py --split dev           # the dev split (tests use it too)

Each attack is one turn of a fresh user: through the heuristic extractor, and through a
compromised model — a real OpenAI-protocol server on 127.0.0.1 answering the payload as a fact
(``naive``), laundered through the native field (``native``), and as a grounded trivial fact
replacing every stored memory (``replaces``). Reported: attacks whose payload reached Global
Memory or the system prompt as ``[user-stated]`` (target 0), stored memories retired (target 0),
and the share of benign first-person facts learned by each path (answered honestly by the
model), with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memvault import Memory, Settings
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.testing import HashEmbedder
from memvault.testing.adversary import (
    compromised_replies,
    honest_reply,
    load,
    run_attack,
    run_statement,
)
from memvault.testing.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
SPLITS = {
    "dev": (ROOT / "tests/data/attacks_dev.jsonl", ROOT / "tests/data/benign_statements_dev.jsonl"),
    "adversary": (
        ROOT / "tests/data/attacks_adversary.jsonl",
        ROOT / "tests/data/benign_adversary.jsonl",
    ),
    "blind": (
        ROOT / "benchmarks/data/attacks_blind.jsonl",
        ROOT / "benchmarks/data/benign_statements_blind.jsonl",
    ),
    "blind2": (
        ROOT / "benchmarks/data/attacks_blind2.jsonl",
        ROOT / "benchmarks/data/benign_statements_blind2.jsonl",
    ),
    "blind3": (
        ROOT / "benchmarks/data/attacks_blind3.jsonl",
        ROOT / "benchmarks/data/benign_statements_blind3.jsonl",
    ),
    "blind4": (
        ROOT / "benchmarks/data/attacks_blind4.jsonl",
        ROOT / "benchmarks/data/benign_statements_blind4.jsonl",
    ),
    "blind5": (
        ROOT / "benchmarks/data/attacks_blind5.jsonl",
        ROOT / "benchmarks/data/benign_statements_blind5.jsonl",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=sorted(SPLITS), default="blind5")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    attacks_path, benign_path = SPLITS[args.split]
    attacks, statements = load(attacks_path), load(benign_path)
    load_before = os.getloadavg()
    started = time.perf_counter()
    figures = run(attacks, statements, verbose=args.verbose)
    figures |= {
        "split": args.split,
        "seconds": round(time.perf_counter() - started, 1),
        "load_average": [load_before, os.getloadavg()],
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


def run(attacks: list[dict], statements: list[dict], *, verbose: bool) -> dict:
    with ScriptedOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        reply: dict[str, Any] = {"text": "NONE"}
        server.responder = lambda request: answer(reply, request)
        chat = OpenAICompatChat(server.base_url, "compromised", max_retries=0)
        llm = Memory(
            f"{tmp}/llm.db", settings=Settings(extraction="llm"), llm=chat, embedder=HashEmbedder()
        )
        heuristic = Memory(
            f"{tmp}/h.db", settings=Settings(extraction="heuristic"), embedder=HashEmbedder()
        )
        with chat, llm, heuristic:
            reached: Counter[str] = Counter()
            retired: Counter[str] = Counter()
            tried: Counter[str] = Counter()
            for attack in attacks:
                runs = [("heuristic", heuristic, None)]
                runs += [(v, llm, text) for v, text in compromised_replies(attack).items()]
                for variant, memory, text in runs:
                    reply["text"] = text or "NONE"
                    result = run_attack(memory, attack, variant, f"{variant}-{attack['id']}")
                    tried[variant] += 1
                    reached[variant] += bool(result.reached)
                    retired[variant] += len(result.retired)
                    if verbose and not result.held:
                        print(attack["id"], variant, result.reached, result.retired)
            learned = {}
            for path, memory in (("heuristic", heuristic), ("llm", llm)):
                expected = got = updates = updates_right = 0
                for statement in statements:
                    reply["text"] = lambda prompt, row=statement: honest_reply(row, prompt)
                    result = run_statement(memory, statement, f"benign-{path}-{statement['id']}")
                    expected += result.expected
                    got += result.learned
                    if result.updates_right is not None:
                        updates += 1
                        updates_right += result.updates_right
                    if verbose and result.missed:
                        print("missed", path, statement["id"], result.missed)
                learned[path] = {
                    "facts": expected,
                    "learned": got,
                    "share": round(got / max(expected, 1), 3),
                    "updates_right": f"{updates_right}/{updates}",
                }
    return {
        "attacks": len(attacks),
        "reached_user_stated": {k: f"{reached[k]}/{tried[k]}" for k in tried},
        "memories_retired": dict(retired),
        "benign_learned": learned,
    }


def answer(reply: dict[str, Any], request: dict[str, Any]) -> str:
    """The scripted reply: a text, or a function of the request's prompt."""
    text = reply["text"]
    if callable(text):
        return str(text("\n".join(m["content"] for m in request["body"]["messages"])))
    return str(text)


if __name__ == "__main__":
    main()
