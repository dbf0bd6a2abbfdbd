"""Precision and recall of the heuristic extractor, and accuracy of the slot rule, on a
hand-labelled set.

Run by hand: ``python benchmarks/extraction.py [--data FILE] [--split S] [--verbose] [--json OUT]``.

``data/extraction_turns.jsonl`` holds two kinds of line, each with ``"split"``: ``dev`` (the
rules were tuned on it) or ``holdout`` (written before the extractor, never looked at while
tuning):

- turns ``{"id", "kind", "text", "expected": [{"category", "fact_contains", "optional"?}],
  "before"? | "context"?}``: one user turn (after the user turns in ``before``, or the user and
  assistant turns in ``context``: ``[{"role", "text"}]``). A candidate from that
  turn matches an expected fact when the categories agree and every ``fact_contains`` string is
  in the candidate's fact (case-insensitive); matching is one-to-one. Matched candidates are true
  positives, unmatched ones false positives, unmatched expected facts false negatives;
  ``optional`` facts count neither way. Lines with ``"expected": []`` are negatives.
- slot pairs ``{"id", "form", "earlier", "later", "supersedes"}``: with ``form`` ``turn`` both are
  user turns, read by the extractor first; with ``fact`` both are facts as written. The rule
  says "supersedes" when a later fact's slot conflicts with an earlier one's. With
  ``--learned`` a pair is judged end to end instead: the earlier turn learned by a real memory
  (``add_turn``, ``flush``), then the later one in the same session; "supersedes" when a
  memory of the earlier turn is superseded.

Per category, a true positive or false negative counts under the expected category, a false
positive under the candidate's; per kind (``kind`` of the line) likewise.

With ``--learned`` the figures are of what memvault *stores* from the turn, not of what the
heuristic extractor proposes: its candidates go through the same decisions as in ``add_turn``
(whose words, grounding, routing), and a stored fact's category is where it went —
``identity`` for a fact about who the user is, stored in Global Memory. The labelled sets of
issue 29 (``extraction_train.jsonl``, ``extraction_blind2.jsonl``) use these categories.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conditions import load_average, machine

from memvault.extraction import pipeline
from memvault.extraction.facts import Candidate, FactCategory, Turn
from memvault.extraction.heuristic import extract
from memvault.extraction.slots import conflicts, slot_of

DATA = Path(__file__).parent / "data" / "extraction_turns.jsonl"
SPLITS = ("dev", "holdout")


def load(path: Path = DATA) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


CATEGORIES = (*(c.value for c in FactCategory), pipeline.IDENTITY)


def window(row: dict[str, Any]) -> list[Turn]:
    said = [("user", text) for text in row.get("before", [])]
    said += [(t["role"], t["text"]) for t in row.get("context", [])]
    said.append(("user", row["text"]))
    return [Turn(n, role, text) for n, (role, text) in enumerate(said, 1)]  # type: ignore[arg-type]


def candidates(row: dict[str, Any], *, learned: bool = False) -> list[Candidate]:
    """What the extractor proposes from the row's own (last) turn — or, ``LEARNED``, what is
    stored from it: as what (its category, ``identity`` for Global Memory) and in which words."""
    turns = window(row)
    found = [c for c in extract(turns) if c.turn == turns[-1].number]
    if not learned:
        return found
    where = pipeline.situation(pipeline.Window(tuple(turns), (), tuple(range(len(turns)))), [],
                               private=False)  # fmt: skip
    return [
        Candidate(d.category or c.category, d.content, turn=c.turn)
        for c, d in zip(found, pipeline.decide(found, where), strict=True)
        if d.stored
    ]


def _fits(candidate: Candidate, expected: dict[str, Any]) -> bool:
    fact = candidate.fact.casefold()
    category = expected["category"]
    return category in (None, candidate.category) and all(
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


def score_turns(rows: Sequence[dict[str, Any]], *, learned: bool = False) -> dict[str, Any]:
    """Precision, recall and F1, overall, per category and per kind, plus the misses; recall
    also ignoring the category."""
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("tp", "fp", "fn")}
    kinds: dict[str, Counter[str]] = {k: Counter() for k in ("tp", "fp", "fn")}
    misses: list[dict[str, Any]] = []
    clean_negatives = any_category = 0
    for row in rows:
        found = candidates(row, learned=learned)
        result = matched(found, row["expected"])
        counts["tp"].update(e["category"] for e in result["tp"])
        counts["fp"].update(c.category for c in result["fp"])
        counts["fn"].update(e["category"] for e in result["fn"])
        for key, items in result.items():
            kinds[key][row.get("kind", "-")] += len(items)
        any_category += len(matched(found, _any_category(row["expected"]))["tp"])
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
        "recall_any_category": _share(any_category, total["tp"] + total["fn"]),
        "per_category": {
            c: _ratios(counts["tp"][c], counts["fp"][c], counts["fn"][c])
            for c in CATEGORIES
            if counts["tp"][c] + counts["fp"][c] + counts["fn"][c]
        },
        "per_kind": {
            k: _ratios(kinds["tp"][k], kinds["fp"][k], kinds["fn"][k])
            for k in sorted(set().union(*kinds.values()))
        },
        "misses": misses,
    }


def _any_category(expected: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "category": None} for e in expected]


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


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


def _facts(text: str, form: str = "turn") -> list[str]:
    return [c.fact for c in extract([Turn(1, "user", text)])] if form == "turn" else [text]


def supersedes(pair: dict[str, Any]) -> bool:
    """The slot rule's decision: does a fact of ``later`` supersede one of ``earlier``?"""
    earlier = [slot_of(f) for f in _facts(pair["earlier"], pair.get("form", "turn"))]
    later = [slot_of(f) for f in _facts(pair["later"], pair.get("form", "turn"))]
    return any(new and old and conflicts(new, old) for new in later for old in earlier)


def superseded_by_memory(pairs: Sequence[dict[str, Any]], crowd: int = 0) -> list[bool | None]:
    """What memvault does with each pair end to end: the earlier turn learned (``add_turn``,
    ``flush``), then the later one in the same session — does a memory of the earlier turn
    end up superseded? With ``crowd``, the user first said the earlier turns of that many
    other pairs: None where the later turn superseded one of theirs instead (or as well)."""
    from memvault import Memory, Settings
    from memvault.testing import HashEmbedder

    found: list[bool | None] = []
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'pairs.db'}"
        settings = Settings(extraction="heuristic")
        with Memory(url, settings=settings, embedder=HashEmbedder()) as memory:
            for n, pair in enumerate(pairs):
                user = f"u{n}"
                session = memory.create_session(user)
                others = [pairs[(n + k) % len(pairs)]["earlier"] for k in range(1, crowd + 1)]
                crowded = _learned(memory, user, session.id, others, set())
                held = _learned(memory, user, session.id, [pair["earlier"]], crowded)
                left = _learned(memory, user, session.id, [pair["later"]], set()) & (held | crowded)
                found.append(None if crowded - left else bool(held - left))
    return found


def _learned(
    memory: Any, user: str, session: str, said: Sequence[str], before: set[str]
) -> set[str]:
    """Ids of the user's current memories after the user said each of ``said`` (but ``before``)."""
    for text in said:
        memory.add_turn(session, user=text, assistant="Noted.")
        memory.flush(timeout=60)
    return {e.id for e in _current(memory, user, session)} - before


def _current(memory: Any, user: str, session: str) -> list[Any]:
    return [*memory.global_memory(user), *memory.session_memory(session)]


def score_pairs(
    pairs: Sequence[dict[str, Any]], *, learned: bool = False, crowd: int = 0
) -> dict[str, Any]:
    """Accuracy of the slot rule on the pairs' facts — or, ``learned``, of memvault end to
    end (:func:`superseded_by_memory`, among ``crowd`` other memories of the user's: a pair
    that retires one of those is wrong)."""
    said = superseded_by_memory(pairs, crowd) if learned else [supersedes(p) for p in pairs]
    wrong = [p for p, s in zip(pairs, said, strict=True) if s != p["supersedes"]]
    kinds = Counter(p.get("kind", "?") for p in pairs)
    wrong_kinds = Counter(p.get("kind", "?") for p in wrong)
    return {
        "per_kind": {k: round(1 - wrong_kinds[k] / n, 3) for k, n in kinds.items()},
        "pairs": len(pairs),
        "accuracy": round(1 - len(wrong) / len(pairs), 3) if pairs else None,
        "retired_another": sum(s is None for s in said),
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


def evaluate(
    rows: Sequence[dict[str, Any]], split: str, *, learned: bool = False, crowd: int = 0
) -> dict[str, Any]:
    """Every figure for one split of the labelled set."""
    turns = [r for r in rows if r["split"] == split and "text" in r]
    pairs = [r for r in rows if r["split"] == split and "earlier" in r]
    return {
        "extraction": score_turns(turns, learned=learned),
        "slots": score_pairs(pairs, learned=learned, crowd=crowd),
        "ms_per_turn": ms_per_turn(turns),
    }


def _summary(name: str, result: dict[str, Any], verbose: bool) -> None:
    ex, slots = result["extraction"], result["slots"]
    print(
        f"{name}: {ex['turns']} turns ({ex['negatives']} negatives) — precision "
        f"{ex['precision']}, recall {ex['recall']}, F1 {ex['f1']} (tp {ex['tp']}, fp {ex['fp']}, "
        f"fn {ex['fn']}); negatives with nothing extracted {ex['negatives_clean']}"
    )
    print(f"  recall ignoring the category {ex['recall_any_category']}")
    for label, table in (("category", ex["per_category"]), ("kind", ex["per_kind"])):
        for key, r in table.items():
            print(
                f"  {label} {key:<20} precision {r['precision']}  recall {r['recall']}  "
                f"(tp {r['tp']}, fp {r['fp']}, fn {r['fn']})"
            )
    print(
        f"  update pairs: {slots['pairs']}, accuracy {slots['accuracy']} {slots['per_kind']}"
        f"; another memory retired in {slots['retired_another']}"
    )
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
    parser.add_argument(
        "--data", type=Path, nargs="+", default=[DATA], help="Other labelled sets (JSONL)."
    )
    parser.add_argument("--verbose", action="store_true", help="List every miss.")
    parser.add_argument("--json", help="Also write the results to this file.")
    parser.add_argument(
        "--learned", action="store_true", help="Score what is stored, not what is proposed."
    )
    parser.add_argument(
        "--crowd",
        type=int,
        default=0,
        help="With --learned: the user first said the earlier turns of this many other pairs.",
    )
    args = parser.parse_args()
    rows = [row for path in args.data for row in load(path)]
    splits = list(dict.fromkeys(r["split"] for r in rows))
    result: dict[str, Any] = {"machine": machine(), "load_average_before": load_average()}
    for split in [args.split] if args.split else splits:
        result[split] = evaluate(rows, split, learned=args.learned, crowd=args.crowd)
        _summary(split, result[split], args.verbose)
    result["load_average_after"] = load_average()
    print(f"load average {result['load_average_before']} → {result['load_average_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
