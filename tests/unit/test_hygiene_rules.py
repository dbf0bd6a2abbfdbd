"""The hygiene report's classes (pure): junk, staleness, near-duplicate groups (and the recall of
their hashing shortcut), the redaction rules' fast check, the report's JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memvault.security.redact import Redactor
from memvault.store.ops import Use
from memvault.trust import hygiene_rules as rules
from memvault.trust.hygiene_rules import (
    Found,
    HygieneReport,
    ScopeHygiene,
    junk,
    near_duplicate_groups,
    stale,
)
from tests.security.test_redact import FOUND, HIDDEN, SURVIVES

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("", "short"),
        ("   \n ", "short"),
        ("ok", "short"),
        ("Thanks!", "boilerplate"),
        ("  N/A ", "short"),
        ("  None. ", "boilerplate"),
        ("Sounds good.", "boilerplate"),
        ("Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'", "error"),
        ("Bob is 7", None),
        ("thanks to Bob the build is green", None),
        ("KeyError: 'user' means the CSV lacks headers", None),
    ],
)
def test_junk(content: str, why: str | None) -> None:
    assert junk(content, rules.JUNK_FLOOR) == why


def test_the_saliency_floor_is_the_settings_when_set() -> None:
    assert junk("Bob is 7", 10) == "short"


def test_stale_is_neither_written_nor_used_since() -> None:
    before = NOW - timedelta(days=90)
    old = NOW - timedelta(days=100)
    assert stale(old, None, before)
    assert not stale(old, Use("x", NOW - timedelta(days=1)), before)
    assert not stale(NOW, None, before)
    assert stale(old, Use("x", old), before)


@pytest.mark.parametrize("text", [t for t, _, _ in FOUND] + [t for t, _, _ in HIDDEN] + SURVIVES)
def test_finds_agrees_with_redact(text: str) -> None:
    redactor = Redactor()
    assert redactor.finds(text) == (redactor.redact(text).total > 0)


def test_finds_with_no_rule_finds_nothing() -> None:
    assert not Redactor(()).finds("mail ann@example.org")


def _unit(rows: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _planted(count: int, pairs: int, noise: float, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(200, 384))
    base = _unit(centres[rng.integers(0, 200, count)] + 0.6 * rng.normal(size=(count, 384)))
    for k in range(pairs):
        base[count - 1 - k] = _unit(base[k : k + 1] + noise * _unit(rng.normal(size=(1, 384))))[0]
    return base


def test_exact_groups_in_a_small_scope() -> None:
    vectors = _planted(300, 10, 0.45)
    ids = [f"e{i:04d}" for i in range(300)]
    groups = near_duplicate_groups(ids, vectors, rules.NEAR_DUPLICATE_COSINE)
    expected = sorted(([f"e{k:04d}", f"e{299 - k:04d}"] for k in range(10)), key=lambda g: g[0])
    assert sorted(groups) == expected
    assert near_duplicate_groups(ids[:1], vectors[:1], 0.85) == []


def test_the_hashing_shortcut_finds_most_planted_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall of the bands on 6,000 clustered vectors with 300 planted pairs (cosine ~0.9 and
    ~0.86): every group it reports holds, and it finds at least 95 % and 80 % of them."""
    monkeypatch.setattr(rules, "EXACT_UP_TO", 100)
    for noise, least in ((0.45, 0.95), (0.55, 0.8)):
        vectors = _planted(6_000, 300, noise)
        ids = [str(i) for i in range(6_000)]
        cosines = np.einsum("ij,ij->i", vectors[:300], vectors[::-1][:300])
        groups = near_duplicate_groups(ids, vectors, rules.NEAR_DUPLICATE_COSINE)
        group_of = {i: n for n, g in enumerate(groups) for i in g}
        planted = [(str(k), str(5_999 - k)) for k in range(300) if cosines[k] >= 0.85]
        found = sum(1 for a, b in planted if a in group_of and group_of[a] == group_of.get(b))
        assert found / len(planted) >= least, (noise, found, len(planted))
        for group in groups:
            rows = vectors[[int(i) for i in group]]
            assert (rows @ rows.T).max(axis=0).min() >= 0  # each member is a real vector
            best = (rows @ rows.T - 2 * np.eye(len(rows))).max(axis=1)
            assert (best >= rules.NEAR_DUPLICATE_COSINE - 1e-6).all()


def test_the_report_round_trips_as_json() -> None:
    scope = ScopeHygiene(
        "user:a",
        3,
        1,
        near_duplicates=Found.of(["b"]),
        groups=(("a", "b"),),
        junk=Found.of(["c"]),
        largest=(("a", 10), ("b", 3)),
    )
    report = HygieneReport("t", NOW, 90, (scope,))
    assert HygieneReport.from_dict(report.to_dict()) == report
    assert report.total("junk") == 1 and report.total("entries") == 3


def test_ids_are_capped_and_the_count_is_exact() -> None:
    found = Found.of(str(i) for i in range(rules.IDS_SHOWN + 50))
    assert found.count == rules.IDS_SHOWN + 50 and len(found.ids) == rules.IDS_SHOWN
