"""Precision and recall of the heuristic extractor, and accuracy of the slot rule, on a
hand-labelled set.

Run by hand: ``python benchmarks/extraction.py [--data FILE] [--split S] [--verbose] [--json OUT]``.

``data/extraction_turns.jsonl`` holds two kinds of line, each with ``"split"``: ``dev`` (the
rules were tuned on it) or ``holdout`` (written before the extractor, never looked at while
tuning):

- turns ``{"id", "kind", "text", "expected": [{"category", "fact_contains", "optional"?}],
  "before"?}``: one user turn (after the user turns in ``before``, if any). A candidate from that
  turn matches an expected fact when the categories agree and every ``fact_contains`` string is
  in the candidate's fact (case-insensitive); matching is one-to-one. Matched candidates are true
  positives, unmatched ones false positives, unmatched expected facts false negatives;
  ``optional`` facts count neither way. Lines with ``"expected": []`` are negatives.
- slot pairs ``{"id", "form", "earlier", "later", "supersedes"}``: with ``form`` ``turn`` both are
  user turns, read by the extractor first; with ``fact`` both are facts as written. The rule
  says "supersedes" when a later fact's slot conflicts with an earlier one's.

Per category, a true positive or false negative counts under the expected category, a false
positive under the candidate's.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conditions import load_average, machine

from memvault.extraction.facts import Candidate, FactCategory, Turn
from memvault.extraction.heuristic import extract
from memvault.extraction.slots import conflicts, slot_of

DATA = Path(__file__).parent / "data" / "extraction_turns.jsonl"
SPLITS = ("dev", "holdout")


def load(path: Path = DATA) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def window(row: dict[str, Any]) -> list[Turn]:
    texts = [*row.get("before", []), row["text"]]
    return [Turn(n, "user", text) for n, text in enumerate(texts, 1)]


def candidates(row: dict[str, Any]) -> list[Candidate]:
    """What the extractor proposes from the row's own (last) turn."""
    turns = window(row)
    return [c for c in extract(turns) if c.turn == turns[-1].number]


def _fits(candidate: Candidate, expected: dict[str, Any]) -> bool:
    fact = candidate.fact.casefold()
    return candidate.category == expected["category"] and all(
        word.casefold() in fact for word in expected["fact_contains"]
    )


def matched(found: Sequence[Candidate], expected: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """One-to-one matching: true positives (expected facts met), false positives (candidates),
    false negatives (expected facts missed)."""
    open_ = sorted(expected, key=lambda e: bool(e.get("optional")))
    result: dict[str, list[Any]] = {"tp": [], "fp": [], "fn": []}
    for candidate in found:
        hit = next((e for e in open_ if _fits(candidate, e)), None)
        if hit is None:
            result["fp"].append(candidate)
            continue
        open_.remove(hit)
        if not hit.get("optional"):
            result["tp"].append(hit)
    result["fn"] = [e for e in open_ if not e.get("optional")]
    return result


def _ratios(tp: int, fp: int, fn: int) -> dict[str, Any]:
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall
        else None
    )
    return {
        "precision": None if precision is None else round(precision, 3),
        "recall": None if recall is None else round(recall, 3),
        "f1": None if f1 is None else round(f1, 3),
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def score_turns(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Precision, recall and F1, overall and per category, plus the misses."""
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("tp", "fp", "fn")}
    misses: list[dict[str, Any]] = []
    clean_negatives = 0
    for row in rows:
        found = candidates(row)
        result = matched(found, row["expected"])
        counts["tp"].update(e["category"] for e in result["tp"])
        counts["fp"].update(c.category for c in result["fp"])
        counts["fn"].update(e["category"] for e in result["fn"])
        clean_negatives += not row["expected"] and not found
        if result["fp"] or result["fn"]:
            misses.append(_miss(row, found, result))
    total = {k: sum(c.values()) for k, c in counts.items()}
    negatives = sum(not row["expected"] for row in rows)
    return {
        "turns": len(rows),
        "negatives": negatives,
        **_ratios(total["tp"], total["fp"], total["fn"]),
        "negatives_clean": round(clean_negatives / negatives, 3) if negatives else None,
        "per_category": {
            c.value: _ratios(counts["tp"][c], counts["fp"][c], counts["fn"][c])
            for c in FactCategory
        },
        "misses": misses,
    }


def _miss(
    row: dict[str, Any], found: Sequence[Candidate], result: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": row["id"],
        "kind": row.get("kind"),
        "text": row["text"],
        "got": [f"[{c.category}] {c.fact}" for c in found],
        "false_positives": [f"[{c.category}] {c.fact}" for c in result["fp"]],
        "missed": [f"[{e['category']}] {' + '.join(e['fact_contains'])}" for e in result["fn"]],
    }


def _facts(text: str, form: str) -> list[str]:
    return [c.fact for c in extract([Turn(1, "user", text)])] if form == "turn" else [text]


def supersedes(pair: dict[str, Any]) -> bool:
    """The slot rule's decision: does a fact of ``later`` supersede one of ``earlier``?"""
    earlier = [slot_of(f) for f in _facts(pair["earlier"], pair["form"])]
    later = [slot_of(f) for f in _facts(pair["later"], pair["form"])]
    return any(new and old and conflicts(new, old) for new in later for old in earlier)


def score_pairs(pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    wrong = [p for p in pairs if supersedes(p) != p["supersedes"]]
    return {
        "pairs": len(pairs),
        "accuracy": round(1 - len(wrong) / len(pairs), 3) if pairs else None,
        "misses": [
            {"id": p["id"], "earlier": p["earlier"], "later": p["later"], "truth": p["supersedes"]}
            for p in wrong
        ],
    }


def ms_per_turn(rows: Sequence[dict[str, Any]], repeat: int = 20) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        for row in rows:
            extract(window(row))
    return round((time.perf_counter() - started) * 1000 / (repeat * max(len(rows), 1)), 3)


def evaluate(rows: Sequence[dict[str, Any]], split: str) -> dict[str, Any]:
    """Every figure for one split of the labelled set."""
    turns = [r for r in rows if r["split"] == split and "text" in r]
    pairs = [r for r in rows if r["split"] == split and "earlier" in r]
    return {
        "extraction": score_turns(turns),
        "slots": score_pairs(pairs),
        "ms_per_turn": ms_per_turn(turns),
    }


def _summary(name: str, result: dict[str, Any], verbose: bool) -> None:
    ex, slots = result["extraction"], result["slots"]
    print(
        f"{name}: {ex['turns']} turns ({ex['negatives']} negatives) — precision "
        f"{ex['precision']}, recall {ex['recall']}, F1 {ex['f1']} (tp {ex['tp']}, fp {ex['fp']}, "
        f"fn {ex['fn']}); negatives with nothing extracted {ex['negatives_clean']}"
    )
    for category, r in ex["per_category"].items():
        print(f"  {category:<11} precision {r['precision']}  recall {r['recall']}  F1 {r['f1']}")
    print(f"  slot pairs: {slots['pairs']}, accuracy {slots['accuracy']}")
    print(f"  {result['ms_per_turn']} ms per turn")
    if verbose:
        for miss in ex["misses"]:
            print(f"  MISS {miss['id']} ({miss['kind']}): {miss['text']!r}")
            print(f"       got {miss['got']}; missed {miss['missed']}")
        for miss in slots["misses"]:
            pair = f"{miss['earlier']!r} → {miss['later']!r}"
            print(f"  SLOT {miss['id']}: {pair}, truth {miss['truth']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", help="Only this split (default: every split of the data).")
    parser.add_argument("--data", type=Path, default=DATA, help="Another labelled set (JSONL).")
    parser.add_argument("--verbose", action="store_true", help="List every miss.")
    parser.add_argument("--json", help="Also write the results to this file.")
    args = parser.parse_args()
    rows = load(args.data)
    splits = list(dict.fromkeys(r["split"] for r in rows))
    result: dict[str, Any] = {"machine": machine(), "load_average_before": load_average()}
    for split in [args.split] if args.split else splits:
        result[split] = evaluate(rows, split)
        _summary(split, result[split], args.verbose)
    result["load_average_after"] = load_average()
    print(f"load average {result['load_average_before']} → {result['load_average_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
