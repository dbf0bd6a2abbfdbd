"""``add_turn`` latency while extraction is pending, against appending the same records by hand.

Run by hand: ``python benchmarks/learning.py [--turns 200] [--llm-delay 2.0] [--json OUT]``.

An LLM behind a real OpenAI-protocol HTTP server on localhost answers every extraction after
``--llm-delay`` seconds, so extraction is always pending (running or queued) while turns keep
coming. Measured in the same run, interleaved turn by turn:

- ``baseline``: ``append_record`` of the user message and the answer (two transactions);
- ``add_turn``: the same two records in one call, extraction scheduled in the background.

Reported: p50/p95/p99 of each (ms), the ratio, how many LLM calls the turns caused (at most one
per turn: a turn that arrives while its session's extraction runs is queued, the most recent
wins), and ``os.getloadavg()`` before and after. ``add_turn`` must not include any LLM time.

``--offline`` measures the offline learner instead (``extraction="heuristic"``): a turn's
``add_turn`` and the ``flush`` that learns from it, with the whole learner (rules, the parse,
the judge) against the rules alone (the parse switched off in the same process), interleaved
turn by turn over the labelled turns of ``data/extraction_train.jsonl``; reported the p50 of
each, their difference (what the parse and the judge add to a turn) and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conditions import load_average, machine

from memvault import Memory, Settings
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.testing.openai_server import ScriptedOpenAIServer

SAID = [
    ("I prefer green tea in the morning.", "Noted: green tea."),
    ("We decided to use Postgres for the analytics service.", "Good choice."),
    ("My sister's name is Maria.", "Nice to know."),
    ("I'm working on the Q3 budget today.", "Happy to help with it."),
]


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"p50": at(0.5), "p95": at(0.95), "p99": at(0.99), "mean": statistics.fmean(ordered)}


def run(turns: int, delay_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root, ScriptedOpenAIServer() as server:

        def slow(request: dict[str, Any]) -> str:
            time.sleep(delay_s)
            return "preference|turn-1|The user prefers green tea.|"

        server.responder = slow
        chat = OpenAICompatChat(server.base_url, "bench", timeout_s=delay_s + 30)
        settings = Settings(extraction="llm")
        load_before = load_average()
        with chat, Memory(str(Path(root) / "m.db"), settings=settings, llm=chat) as memory:
            session = memory.create_session("alice")
            by_hand = memory.create_session("bob")
            memory.append_record(by_hand.id, "user", "warm up")  # model loaded, caches warm
            baseline, learning = [], []
            for n in range(turns):
                user, assistant = SAID[n % len(SAID)]
                started = time.perf_counter()
                memory.append_record(by_hand.id, "user", f"{user} ({n})")
                memory.append_record(by_hand.id, "assistant", assistant)
                baseline.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                memory.add_turn(session.id, user=f"{user} ({n})", assistant=assistant)
                learning.append((time.perf_counter() - started) * 1000)
            pending = memory.stats().get("extraction_pending", 0)
        calls = len(server.requests)
        load_after = load_average()
    a, b = percentiles(baseline), percentiles(learning)
    return {
        "turns": turns,
        "llm_delay_s": delay_s,
        "baseline_append_record_ms": a,
        "add_turn_ms": b,
        "ratio_p50": round(b["p50"] / a["p50"], 3),
        "llm_calls": calls,
        "llm_calls_per_turn": round(calls / turns, 3),
        "extraction_pending_at_close": pending,
        "load_before": load_before,
        "load_after": load_after,
        "machine": machine(),
    }


def offline(turns: int) -> dict[str, Any]:
    """What the parse and the judge add to learning a turn offline (see the module's text)."""
    from memvault.extraction import heuristic

    data = Path(__file__).parent / "data" / "extraction_train.jsonl"
    texts = [json.loads(line)["text"] for line in data.read_text("utf-8").splitlines()]
    parsed = heuristic._parsed
    times: dict[str, list[float]] = {"rules": [], "learner": []}
    load_before = load_average()
    with tempfile.TemporaryDirectory() as root:
        settings = Settings(extraction="heuristic")
        with Memory(str(Path(root) / "m.db"), settings=settings) as memory:
            warm = memory.create_session("warm")
            memory.add_turn(warm.id, user="I'm a farrier in Cork.", assistant="Noted.")
            memory.flush(timeout=60)  # parser, judge and embedder loaded
            for n in range(turns):
                text = texts[n % len(texts)]
                for mode in ("rules", "learner") if n % 2 else ("learner", "rules"):
                    heuristic._parsed = parsed if mode == "learner" else (lambda _: [])  # type: ignore[assignment]
                    session = memory.create_session(f"{mode}-{n}")
                    started = time.perf_counter()
                    memory.add_turn(session.id, user=text, assistant="Noted.")
                    memory.flush(timeout=60)
                    times[mode].append((time.perf_counter() - started) * 1000)
            heuristic._parsed = parsed  # type: ignore[assignment]
    rules, learner = percentiles(times["rules"]), percentiles(times["learner"])
    return {
        "turns": turns,
        "rules_only_ms": rules,
        "learner_ms": learner,
        "added_p50_ms": round(learner["p50"] - rules["p50"], 3),
        "ratio_p50": round(learner["p50"] / rules["p50"], 3),
        "load_before": load_before,
        "load_after": load_average(),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--llm-delay", type=float, default=2.0)
    parser.add_argument("--offline", action="store_true", help="The offline learner's cost.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = offline(args.turns) if args.offline else run(args.turns, args.llm_delay)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text)
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
