"""Pure retrieval logic: text, chunking, scorers, fusion, MMR, filters, BM25, the ranker."""

import itertools

import numpy as np
import pytest

from memvault import ValidationError
from memvault.retrieval import chunking, filters, scoring
from memvault.retrieval.candidates import Candidates
from memvault.retrieval.lexical import LexicalIndex, bm25
from memvault.retrieval.ranker import RankSpec, rank
from memvault.retrieval.text import query_terms, terms
from memvault.store import duplicates
from memvault.store.ops import Filter, TwinsOp


def test_query_terms_drop_stopwords_but_never_everything() -> None:
    assert query_terms("What did Caroline research?") == ["carolin", "research"]
    assert query_terms("Who was it?") == ["who", "wa", "it"]
    assert query_terms("tea tea TEA") == ["tea"]
    assert query_terms("...") == []


def test_terms_fold_case_and_diacritics_and_stem() -> None:
    assert terms("Visited VISITS visiting") == ["visit", "visit", "visit"]
    assert terms("Café naïve_résumé") == ["cafe", "naiv", "resum"]
    assert terms("R2-D2 über") == ["r2", "d2", "uber"]


def test_lexical_index_scores_like_plain_bm25_over_the_shown_documents() -> None:
    documents = ["Alice visited Lisbon", "Bob visits Berlin and visited Lisbon", "nothing", ""]
    index = LexicalIndex.build(documents)
    wanted = query_terms("who visited lisbon?")
    plain = bm25([terms(d) for d in documents], wanted)
    assert np.allclose(index.scores(wanted), plain)
    shown = np.array([True, False, True, True])
    alone = bm25([terms(d) for d in (documents[0], documents[2], documents[3])], wanted)
    assert np.allclose(index.scores(wanted, shown)[shown], alone)
    assert index.scores(wanted, shown)[1] == 0
    assert not index.scores(["absent"]).any()
    assert not LexicalIndex.build([]).scores(wanted).any()


class TestChunking:
    spec = chunking.ChunkSpec(size=10, overlap=3, min_size=4)

    def test_short_content_is_one_chunk(self) -> None:
        assert chunking.split("a few words", self.spec) == (chunking.Chunk(0, 0, 11),)

    def test_long_content_overlaps_and_reassembles(self) -> None:
        text = " ".join(f"w{n}" for n in range(33)) + "."
        chunks = chunking.split(text, self.spec)
        pieces = chunking.texts(text, chunks)
        assert [c.seq for c in chunks] == list(range(len(chunks)))
        assert all(chunking.count_tokens(p) <= self.spec.size for p in pieces[:-1])
        for left, right in itertools.pairwise(pieces):
            assert left.split()[-3:] == right.split()[:3]
        assert chunking.reassemble(list(zip(chunks, pieces, strict=True))[::-1]) == text

    def test_short_tail_joins_the_previous_chunk(self) -> None:
        text = " ".join(f"w{n}" for n in range(12))
        chunks = chunking.split(text, self.spec)
        assert len(chunks) == 1 or chunking.count_tokens(chunking.texts(text, chunks)[-1]) > 7

    def test_defaults_and_ids(self) -> None:
        assert chunking.ChunkSpec() == chunking.ChunkSpec(2000, 200, 100)
        assert chunking.chunk_id("01ABC", 2) == "01ABC:2"
        with pytest.raises(ValidationError):
            chunking.ChunkSpec(size=10, overlap=10)


class TestScoring:
    def test_normalisers(self) -> None:
        s = np.array([2.0, 4.0, 0.0])
        assert scoring.scale_to_max(s).tolist() == [0.5, 1.0, 0.0]
        assert scoring.scale_to_max(np.array([-1.0, 0.0])).tolist() == [0.0, 0.0]

    def test_weighted_sum_and_rrf(self) -> None:
        parts = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
        assert scoring.weighted_sum(parts, {"a": 2.0}).tolist() == [2.0, 0.0]
        fused = scoring.reciprocal_rank_fusion([[0, 1], [1]], 3, k=1)
        assert fused.tolist() == [0.5, 1 / 3 + 1 / 2, 0.0]

    def test_recency_halves_per_half_life(self) -> None:
        now = 10_000_000_000
        ages = np.array([now, now - 3_600_000_000, now - 7_200_000_000])
        assert scoring.recency(ages, now, 3600).round(6).tolist() == [1.0, 0.5, 0.25]

    def test_episodes_split_on_gaps(self) -> None:
        created = np.array([0, 10, 20, 5000, 5010, 99999])
        assert scoring.episodes(created, gap_us=100).tolist() == [0, 0, 0, 1, 1, 2]

    def test_neighbour_smoothing_stays_inside_episodes(self) -> None:
        scores = np.array([0.0, 1.0, 0.0, 0.0])
        episode = np.array([0, 0, 0, 1])
        smoothed = scoring.neighbour_smoothing(scores, np.arange(len(scores)), episode, [0.5, 0.25])
        assert smoothed.tolist() == [0.5, 1.0, 0.5, 0.0]

    def test_episode_boost_adds_the_best_of_the_episode(self) -> None:
        boosted = scoring.episode_boost(np.array([0.2, 0.8, 0.4]), np.array([0, 0, 1]), 0.5)
        assert boosted.round(3).tolist() == [0.6, 1.2, 0.6]

    def test_mmr(self) -> None:
        vectors = np.array([[1, 0], [0.99, 0.14], [0, 1]], np.float32)
        relevance = np.array([1.0, 0.95, 0.6])
        assert scoring.mmr([0, 1, 2], relevance, vectors, 2, diversity=0.0) == [0, 1]
        assert scoring.mmr([0, 1, 2], relevance, vectors, 2, diversity=0.7) == [0, 2]
        assert scoring.mmr([], relevance, vectors, 2, diversity=0.5) == []


def test_bm25_prefers_rare_terms_and_repeats() -> None:
    docs = [["tea", "tea", "cup"], ["tea", "cup"], ["coffee", "cup"], ["cup"]]
    scores = bm25(docs, ["tea"])
    assert scores[0] > scores[1] > 0 == scores[2] == scores[3]
    assert bm25(docs, ["coffee"]).argmax() == 2
    assert bm25(docs, ["absent"]).sum() == 0
    assert bm25([], ["x"]).size == 0


class TestFilters:
    @pytest.mark.parametrize(
        "text",
        [
            "Traceback (most recent call last):",
            "Error: connection refused",
            "ValueError: bad value",
            "HTTP/1.1 500 Internal Server Error",
            '  {"error": {"code": 1}}',
            '{"detail": "Not Found"}',
            "503 Service Unavailable",
            "<html><head><title>502 Bad Gateway</title></head></html>",
            "panic: runtime error: index out of range [3] with length 3",
            "fatal: not a git repository (or any of the parent directories): .git",
            'ERROR:  relation "users" does not exist',
            "TypeError: x is undefined\n    at f (/app/a.js:1:2)\n    at g (/app/b.js:3:4)",
            "Request failed with status code 500",
            "Error code: 429 - {'error': {'message': 'Rate limit reached'}}",
            "Error executing tool search: connection reset by peer",
            "503 Service Temporarily Unavailable",
            "Connection refused",
            "ssh: connect to host x port 22: Connection refused",
            "error: could not read config.yaml",
        ],
    )
    def test_error_responses(self, text: str) -> None:
        assert filters.is_error_response(text)

    @pytest.mark.parametrize(
        "text",
        [
            "The error was mine",
            "No errors today",
            "Errors: none",
            "HTTP/1.1 200 OK",
            "Error: the user said the build failed, remember that",
            "Exception: user is vegetarian except on Fridays",
            "500 Internal Server Error happens when the user uploads a CSV over 10 MB",
            "When the importer prints KeyError: 'sku', re-export the CSV with headers",
            "npm ERR! appears when the user forgets to run npm install",
            '{"preference": "dark mode"} is how the user stores settings',
            "redis: connection timeout is 5 s in prod",
            "auth: tokens expired after 1 hour in staging",
            "ssh: use the bastion at jump.example.com",
            "Error: the invoice for ACME is missing",
            "HTTP/2 403 is returned by the CDN for hotlinked images",
            "npm ERR! code ERESOLVE is what Bob gets with peer deps; use --legacy-peer-deps",
        ],
    )
    def test_not_error_responses(self, text: str) -> None:
        assert not filters.is_error_response(text)

    def test_saliency(self) -> None:
        assert filters.is_too_short("a b", 3)
        assert not filters.is_too_short("a b", 0)

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ("Grace bought tea on Monday.", "On Monday, grace bought the tea"),
            ("User doesn't like tea", "The user does not really like tea"),
            ("It costs 1,000 euros", "it costs 1000 euros!"),
            ("The user's name is Alice", "User name is Alice"),
            ("👍", " 👍 "),
        ],
    )
    def test_restatements(self, a: str, b: str) -> None:
        assert duplicates.restates(a, b) and duplicates.restates(b, a)
        assert duplicates.fact_key(a) == duplicates.fact_key(b)  # the probe looks it up

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ("Grace bought tea on Monday", "Grace sold tea on Monday"),
            ("Alice owes Bob 20 dollars", "Bob owes Alice 20 dollars"),
            ("Flight from Berlin to Paris", "Flight from Paris to Berlin"),
            ("The team won 3 2", "The team won 2 3"),
            ("User likes tea", "User does not like tea"),
            ("Maya is the lead", "Maya was the lead"),
            ("order 12 of 3", "order 3 of 12"),
            ("Alert when CPU usage > 90%.", "Alert when CPU usage < 90%."),
            ("The freezer must stay at -18°C.", "The freezer must stay at 18°C."),
            ("timezone is UTC+2", "timezone is UTC-2"),
            ("writes the engine in C++", "writes the engine in C"),
            ("rated the hotel ★★★★★", "rated the hotel ★"),
            ("x != y", "x == y"),
            ("A → B", "A ← B"),
            ("👍", "👎"),
            ("The cost is €450", "The cost is $450"),
            ("The project requires Python 3.10.", "The project requires Python 3.1."),
            ("Only admins can delete projects.", "Admins can only delete projects."),
            (
                "Migration order: users, orders, payments.",
                "Migration order: orders, payments, users.",
            ),
            ("Is the user vegetarian?", "The user is vegetarian."),
            ("", ""),
            ("!!", "??"),
        ],
    )
    def test_different_facts(self, a: str, b: str) -> None:
        assert not duplicates.restates(a, b)

    def test_fact_keys_tell_different_words_apart(self) -> None:
        keys = {duplicates.fact_key(t) for t in ("Grace bought tea", "Grace sold tea", "", "1")}
        assert len(keys) == 4
        assert duplicates.fact_key("Alice owes Bob") == duplicates.fact_key("Bob owes Alice")
        assert -(2**63) <= duplicates.fact_key("\ud800 lone surrogate") < 2**63

    def test_twins_among_keeps_the_close_entries_of_each_key_closest_first(self) -> None:
        vectors = np.array([[1, 0], [0, 1]], np.float32)
        op = TwinsOp(Filter("t", None), (5, 6), vectors, threshold=0.75)
        near, far = np.array([0.9, 0.436], np.float32), np.array([0.6, 0.8], np.float32)
        rows: list[tuple[str, int, duplicates.Vector]] = [
            ("A", 5, near.tobytes()),
            ("B", 5, np.array([1, 0], np.float32)),
            ("C", 5, far),  # below the threshold
            ("C", 5, np.array([0.95, 0.312], np.float32)),  # another chunk of C: close
            ("D", 6, far),
            ("E", 7, np.array([0, 1], np.float32)),  # another key
            ("F", 6, np.array([0.6, 0.8], np.float32)),  # ties with D: by id
        ]
        assert duplicates.twins_among(rows, op) == [["B", "C", "A"], ["D", "F"]]

    def test_earlier_duplicates(self) -> None:
        vectors = np.array([[1, 0], [1, 0], [0, 1], [1, 0], [1, 0]], np.float32)
        texts = ["a b c", "A b c.", "b", "a b c", "a b c 2"]
        groups: list[object] = ["s", "s", "s", "t", "s"]
        eligible = np.array([True, True, True, True, True])
        found = duplicates.earlier_duplicates(vectors, texts, groups, eligible, threshold=0.95)
        assert found == [None, 0, None, None, None]
        assert (
            duplicates.earlier_duplicates(vectors, texts, groups, eligible, threshold=0)
            == [None] * 5
        )


def candidates(lexical: list[float], dense: list[float], created: list[int]) -> Candidates:
    n = len(lexical)
    ids = np.array([f"e{i}" for i in range(n)], dtype=object)
    vectors = np.eye(n, dtype=np.float32)
    return Candidates(
        ids,
        np.array(created, np.int64),
        np.array(lexical, float),
        np.array(dense, float),
        np.ones(n, bool),
        vectors,
    )


class TestRanker:
    def test_weights_decide(self) -> None:
        c = candidates([10.0, 8.0], [0.1, 0.9], [0, 1])
        assert [r.index for r in rank(c, RankSpec(), 1)] == [1, 0]
        assert [r.index for r in rank(c, RankSpec(lexical_weight=5.0), 1)] == [0, 1]
        top = rank(c, RankSpec(), 1)[0]
        assert top.components == pytest.approx(
            {
                "lexical": 8.0,
                "dense": 0.9,
                "recency": 1.0,
                "fused": 0.85,
                "lexical_share": 0.8,
                "closeness": 0.9,
                "dense_gap": 0.0,
            }
        )
        assert top.score == pytest.approx(0.5 * 0.8 + 0.5 * 0.9)

    def test_rrf_threshold_limit(self) -> None:
        c = candidates([2.0, 3.0, 0.0], [0.5, 0.9, 0.1], [0, 1, 2])
        assert [r.index for r in rank(c, RankSpec(fusion="rrf"), 2)][:2] == [1, 0]
        assert len(rank(c, RankSpec(limit=1), 2)) == 1
        assert all(r.score >= 0.5 for r in rank(c, RankSpec(min_score=0.5), 2))

    def test_conversational_context(self) -> None:
        c = candidates([0.0, 10.0, 0.0, 0.0], [0.2, 0.2, 0.21, 0.3], [0, 1, 2, 10**12])
        plain = [r.index for r in rank(c, RankSpec(), 3)]
        chat = [r.index for r in rank(c, RankSpec(neighbours=(0.5,), episode_weight=0.5), 3)]
        assert plain[0] == chat[0] == 1
        assert 3 in plain[:2]
        assert 3 not in chat[:3]

    def test_empty_and_invalid(self) -> None:
        assert rank(candidates([], [], []), RankSpec(), 0) == []
        with pytest.raises(ValidationError):
            RankSpec(dense_weight=-1)
        with pytest.raises(ValidationError):
            RankSpec(fusion="max")  # type: ignore[arg-type]


def test_postings_in_segments_score_as_one_index_and_merge() -> None:
    from memvault.retrieval.lexical import MOST_SEGMENTS, Postings

    documents = [f"violin lesson {n} {'chess' if n % 3 else 'garden'}" for n in range(40)]
    whole = LexicalIndex.build(documents)
    postings = Postings(documents[:10])
    for start in range(10, 40, 3):
        postings = postings.then(Postings(documents[start : start + 3]))
    wanted = query_terms("violin chess garden 7")
    shown = np.arange(40) % 4 != 0
    assert np.allclose(postings.scores(wanted, shown), whole.scores(wanted, shown))
    assert len(postings.indexes) == 1 and MOST_SEGMENTS < 11  # merged on first use
    merged = postings.indexes[0].words
    assert np.array_equal(merged.keys, whole.keys) and np.array_equal(merged.docs, whole.docs)


def test_rerank_blend_scales_each_stage_and_keeps_a_lone_hit_whole() -> None:
    from memvault.retrieval.rerank import blended, min_max

    assert min_max(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert min_max(np.array([0.7])).tolist() == [1.0]
    assert min_max(np.zeros(0)).tolist() == []
    scores = blended(np.array([1.0, 0.5, 0.0]), np.array([0.0, 10.0, 5.0]))
    assert scores.tolist() == [0.5, 0.75, 0.25]
    assert blended(np.array([0.3]), np.array([0.0])).tolist() == [1.0]


def test_postings_merge_their_newest_segments_and_leave_a_large_old_one_alone() -> None:
    from memvault.retrieval.lexical import MOST_SEGMENTS, Postings

    documents = [f"note {n} {'tea' if n % 5 else 'coffee'} {n % 7}" for n in range(1100)]
    postings = Postings(documents[:1000])
    base = postings.indexes[0]
    wanted = query_terms("coffee tea 3")
    for n in range(1000, 1100):  # one write, then one search, a hundred times
        postings = postings.then(Postings(documents[n : n + 1]))
        scores = postings.scores(wanted)
        assert len(postings.indexes) <= MOST_SEGMENTS and postings.indexes[0] is base
    whole = LexicalIndex.build(documents)
    assert np.allclose(scores, whole.scores(wanted))
    assert sum(len(s) for s in postings.indexes) == 1100


def test_a_possessive_adds_no_empty_term() -> None:
    """Porter stems the ``s`` of "Alice's" to nothing: an empty term matched every possessive
    (a learned failure pattern listed it as recurring, so two words matched anything)."""
    from memvault.agents.failure_rules import learned_from, matching, with_recent
    from memvault.retrieval.text import query_terms, terms

    assert query_terms("Audit Alice's payroll") == ["audit", "alic", "payrol"]
    assert "" not in terms("Bob's and Carol's reports")
    pattern = with_recent(learned_from(None, "Boom"), ["Alice's payroll", "Bob's payroll"])
    assert "" not in pattern.terms
    assert matching("Dan's calendar and the payroll", None, [pattern]) == []
