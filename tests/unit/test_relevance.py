"""The learned relevance: models, calibrators, features (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memvault.errors import ConfigError
from memvault.retrieval import relevance
from memvault.retrieval.relevance import Forest, Model
from memvault.retrieval.text import coverage, query_terms
from memvault.retrieval.traits import traits, wanted
from memvault.types import MemoryEntry, Scope, SearchHit


def test_a_model_is_a_logistic_regression_over_named_features() -> None:
    model = Model({"a": 2.0, "b": -1.0}, bias=-1.0)
    found = model.probability({"a": np.array([0.0, 1.0]), "b": np.array([0.0, 0.0])})
    assert found == pytest.approx([1 / (1 + np.e), 1 / (1 + np.exp(-1.0))])
    assert model.probability({"a": np.array([1.0])}) == pytest.approx([1 / (1 + np.exp(-1.0))])


def test_a_forest_walks_each_tree_to_a_leaf_and_sums_their_outputs() -> None:
    """Two trees over ``a`` and ``b``: the first splits on a <= 0.5 (leaves 1 and 3), the
    second on b <= 0 and then a <= 2 (leaves -1, 0.5 and 2); a leaf points to itself."""
    forest = Forest(
        ("a", "b"),
        feature=np.array([0, 0, 0, 1, 0, 0, 0, 0]),
        threshold=np.array([0.5, 0, 0, 0.0, 0, 2.0, 0, 0]),
        left=np.array([1, 1, 2, 4, 4, 6, 6, 7]),
        right=np.array([2, 1, 2, 5, 4, 7, 6, 7]),
        value=np.array([0, 1.0, 3.0, 0, -1.0, 0, 0.5, 2.0]),
        roots=np.array([0, 3]),
        depth=2,
        scale=2.0,
        bias=-1.0,
    )
    a, b = np.array([0.5, 0.6, 3.0, 0.0]), np.array([0.0, 1.0, 1.0, -2.0])
    assert forest.output({"a": a, "b": b}) == pytest.approx([1 - 1, 3 + 0.5, 3 + 2, 1 - 1])
    assert forest.output({"a": a}) == pytest.approx([0, 2, 2, 0])  # b absent counts 0
    output = np.array([0, 3.5, 5, 0])
    assert forest.probability({"a": a, "b": b}) == pytest.approx(1 / (1 + np.exp(1 - 2 * output)))


def test_a_forest_gives_what_lightgbm_gives_for_its_trees() -> None:
    """The shipped forests are LightGBM's dumped trees walked in numpy
    (``benchmarks/fit_relevance.py``): on data they were not fitted on, the outputs agree."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(7)
    x = rng.normal(size=(600, 3))
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(0, 0.3, 600) > 0.4).astype(int)
    data = lightgbm.Dataset(x, y)
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "seed": 3}
    booster = lightgbm.train(params | {"verbose": -1}, data, num_boost_round=30)
    trees = [t["tree_structure"] for t in booster.dump_model()["tree_info"]]
    forest = Forest.from_trees(("a", "b", "c"), trees)
    unseen = rng.normal(size=(200, 3))
    found = forest.output({n: unseen[:, i] for i, n in enumerate("abc")})
    assert found == pytest.approx(booster.predict(unseen, raw_score=True), abs=1e-9)


def test_a_forest_refuses_a_split_it_cannot_walk() -> None:
    """A categorical split (``==``) is not a threshold: reading it as one would rank wrong."""
    leaf = {"leaf_value": 1.0}
    split = {"decision_type": "==", "split_feature": 0, "threshold": "1||2"}
    with pytest.raises(ConfigError, match="not supported"):
        Forest.from_trees(("a",), [split | {"left_child": leaf, "right_child": leaf}])


def test_the_shipped_models_read_the_features_the_ranker_gives() -> None:
    """Every weight names a feature the ranker or the reranker computes (a misspelt name
    would silently count 0)."""
    base = {n: np.ones(3) for n in ("lexical_share", "closeness", "dense_gap", "fused")}
    features = relevance.conversational_features(
        base,
        near=(np.ones(3), np.ones(3)),
        episode_best=np.ones(3),
        named={n: np.ones(3) for n in ("speaker", "entity", "linked", "episode_lexical")},
        traits=np.ones((3, 7)),
    )
    for name, model in relevance.models().items():
        known = set(features) | ({"sparse"} if name.endswith("+sparse") else set())
        assert set(model.weights) <= known, name
    components = [{"closeness": 0.5, "sparse": 2.0}]
    hits = relevance.hit_inputs("tea?", ["tea"], components, np.array([0.5]))
    search = relevance.search_inputs("tea?", ["tea"], hits)
    kinds = {
        relevance.kind(m, reranked) for m in (None, "conversational") for reranked in (False, True)
    }
    assert set(relevance.calibrators()) == set(relevance.gates()) == kinds
    for name in kinds:
        assert set(relevance.calibrators()[name].weights) <= set(hits), name
        assert set(relevance.gates()[name].weights) <= set(search), name
    assert 0 < relevance.threshold() < 1


def test_relevance_is_a_probability_for_every_kind_of_search() -> None:
    components = [{"closeness": c, "lexical_share": c, "dense_gap": c - 1} for c in (0, 0.5, 1)]
    texts = ["Maya lives in Lisbon", "Maya drinks coffee", "Maya drinks green tea"]
    scores = np.array([0.01, 0.5, 0.99])
    for kind in relevance.calibrators():
        found = relevance.relevances("Which tea does Maya drink?", texts, components, scores, kind)
        assert ((found > 0) & (found < 1)).all()
        assert list(found) == sorted(found), kind  # closer and more covered: more relevant
    assert len(relevance.relevances("tea", [], [], np.zeros(0), "plain")) == 0


def test_the_best_hit_carries_the_gate_and_a_weak_search_is_weak_throughout() -> None:
    """A hit's relevance is the gate's probability that the search found anything, scaled
    by its own evidence probability as a share of the best's: the hits of a search whose
    best is far from the query and covers none of it are all weak."""
    query, found, unrelated = "green tea?", ["Maya drinks green tea"], ["Maya plays the cello"]

    def relevance_of(best: float, texts: list[str]) -> np.ndarray:
        """Two hits, best first: the second half as close as the best."""
        second = {"closeness": best / 2, "dense_gap": -best / 2}
        components = [{"closeness": best, "dense_gap": 0.0}, second]
        texts = [*texts, "Maya lives in Lisbon"]
        return relevance.relevances(query, texts, components, np.ones(2) / 2, "plain")

    strong, weak = relevance_of(0.8, found), relevance_of(0.1, unrelated)
    components = [{"closeness": 0.8, "dense_gap": 0.0}, {"closeness": 0.4, "dense_gap": -0.4}]
    hits = relevance.hit_inputs(query, [*found, "Maya lives in Lisbon"], components, np.ones(2) / 2)
    search = relevance.search_inputs(query, [*found, "Maya lives in Lisbon"], hits)
    assert strong[0] == pytest.approx(relevance.gates()["plain"].probability(search)[0])
    assert strong[0] > relevance.threshold() > weak.max()
    assert strong[1] < strong[0] and weak[1] < weak[0]


def test_shares_are_of_the_best_ten_and_a_lone_hit_has_no_second() -> None:
    """What follows the first ``SEARCHED`` hits changes nothing before them, and one hit is
    not its own second best."""
    evidence = np.r_[np.linspace(0.5, 0.1, relevance.SEARCHED), [0.9, 0.2]]
    found = relevance.combined(0.8, evidence, spread=1.0)
    assert found[0] == pytest.approx(0.8) and found[relevance.SEARCHED] == pytest.approx(0.8)
    assert list(found[: relevance.SEARCHED]) == list(
        relevance.combined(0.8, evidence[: relevance.SEARCHED], spread=1.0)
    )
    assert list(relevance.head_share(np.array([-1.0, 0.0]))) == [0.0, 0.0]
    hits = relevance.hit_inputs("tea?", ["tea"], [{"closeness": 0.7}], np.array([0.5]))
    search = relevance.search_inputs("tea?", ["tea"], hits)
    assert search["best_closeness"][0] == pytest.approx(0.7) and search["second_closeness"][0] == 0


def test_a_stronger_hit_ranked_after_the_tenth_changes_nothing_before_it() -> None:
    """Hits past the first ``SEARCHED`` (the reranker's 50, recall's 30) neither lower the
    others' shares nor the gate: a search gives the same relevance whatever its limit."""
    texts = [f"Maya mentioned item {n}" for n in range(10)] + ["Maya drinks green tea daily"]
    components = [{"closeness": 0.3, "dense_gap": -0.5, "sparse": 1.0}] * 10
    components += [{"closeness": 0.8, "lexical_share": 1.0, "sparse": 9.0}]
    scores = np.full(11, 0.5)
    for kind in relevance.calibrators():
        whole = relevance.relevances("green tea?", texts, components, scores, kind)
        head = relevance.relevances("green tea?", texts[:10], components[:10], scores[:10], kind)
        assert list(whole[:10]) == pytest.approx(list(head)), kind


def test_coverage_is_the_share_of_query_terms_a_text_has() -> None:
    wanted_terms = query_terms("Which tea does Maya drink?")
    assert coverage(wanted_terms, "Maya drinks green tea") == 1.0
    assert coverage(wanted_terms, "Maya lives in Lisbon") == pytest.approx(1 / 3)
    assert coverage([], "anything") == 0.0
    texts = ["Nadia: I love music", "Nadia: the opera was long", "Which opera"]
    assert list(relevance.coverage("What is Nadia's favourite opera?", texts)) == [0, 0.5, 0.5]
    assert list(relevance.coverage("Nadia", texts)) == [1, 1, 0]  # nothing but a name


def test_traits_read_what_a_line_says_not_its_header() -> None:
    header = traits("1:56 pm on 8 May, 2023 Ann: Hi!")
    assert header[1:] == (0.0, 0.0, 0.0, 0.0, 0.0)  # the time stamp is the header's
    said = traits("Ann: I flew to Lisbon with 3 friends last week?")
    assert said[1:] == (1.0, 1 / 3, 1.0, 1.0, 1.0)
    assert wanted("When did Ann fly?") == ("time",)
    assert wanted("How many friends came along?") == ("number",)
    assert wanted("Which cities has Ann visited?") == ("place",)
    assert wanted("What does Ann like?") == ()


def test_a_hit_carries_its_relevance_over_the_wire() -> None:
    now = datetime.now(UTC)
    entry = MemoryEntry(
        id="01J0000000000000000000000A",
        scope=Scope.user("maya"),
        content="Maya drinks tea",
        created_at=now,
        updated_at=now,
        valid_from=now,
    )
    hit = SearchHit(entry, 0.7, {"lexical": 1.0}, relevance=0.42)
    assert SearchHit.from_dict(hit.to_dict()) == hit
    older = {k: v for k, v in hit.to_dict().items() if k != "relevance"}
    assert SearchHit.from_dict(older).relevance == 0.0
