"""The entity reader and the entity postings (pure)."""

from __future__ import annotations

import numpy as np
import pytest

from memvault.retrieval.entities import entity_keys, query_entity_keys, speaker
from memvault.retrieval.lexical import Postings, TextIndex


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline: I went to a pottery class.", "Caroline"),
        ("1:56 pm on 8 May, 2023 Caroline: hi", "Caroline"),
        ("Dr Jane Smith: the results are in", "Dr Jane Smith"),
        ("note: lower case is not a speaker", None),
        ("Thanks: a common word is not a speaker", None),
        ("Meeting at 10:30: bring snacks", None),
        ("No colon here at all", None),
    ],
)
def test_a_transcript_line_names_its_speaker(text: str, expected: str | None) -> None:
    assert speaker(text) == expected


def test_names_speakers_and_phrases_are_keyed() -> None:
    keys = entity_keys("Melanie: Wow, Caroline! I signed up for a pottery class yesterday.")
    assert "s:melani" in keys  # the speaker
    assert "n:carolin" in keys  # a name inside the text
    assert "p:potteri class" in keys  # two content words side by side
    assert not any(k in keys for k in ("n:wow", "n:i", "p:class yesterday"))


def test_keys_are_normalised_like_terms() -> None:
    """Case, plurals, possessives and curly apostrophes give one key."""
    assert "n:charlott web" in entity_keys("I loved \u201cCharlotte\u2019s Web\u201d as a kid.")
    assert "n:charlott web" in entity_keys("CHARLOTTE'S WEB is a book")
    assert "p:pottery class" not in entity_keys("pottery classes")
    assert entity_keys("pottery classes") == entity_keys("a pottery class")


def test_a_full_name_is_found_by_each_of_its_words() -> None:
    keys = entity_keys("I met Jonathan Reyes at the conference.")
    assert {"n:jonathan rey", "n:jonathan", "n:rey"} <= set(keys)
    assert "n:jonathan" in query_entity_keys("What did Jonathan say?")


def test_a_sentence_opening_word_is_a_name_only_if_capitalised_elsewhere() -> None:
    assert "n:research" not in entity_keys("Researching adoption agencies is hard.")
    keys = entity_keys("Lisbon was lovely. We loved Lisbon.")
    assert keys.count("n:lisbon") == 2
    assert "n:new york" in entity_keys("New York was fun.")  # a run of two words


def test_punctuation_breaks_names_and_phrases() -> None:
    keys = entity_keys("We saw Max. Daisy stayed home, garden party later")
    assert "n:max daisi" not in keys
    assert "p:home garden" not in keys
    assert "p:garden parti" in keys


def test_a_query_names_speakers_too() -> None:
    keys = query_entity_keys("What activities does Melanie do with Caroline?")
    assert {"n:melani", "s:melani", "n:carolin", "s:carolin"} <= set(keys)
    assert len(keys) == len(set(keys))


def test_entity_postings_weigh_rare_keys_and_ignore_length() -> None:
    texts = [
        "Caroline: I adopted a dog named Max.",
        "Melanie: Oh, Max is adorable! Caroline, Bob and Dana went to Lisbon with friends.",
        "Caroline: The weather is fine.",
        "Melanie: I went camping.",
    ]
    postings = Postings(texts)
    scores = postings.entity_scores(["n:max"])
    assert scores[0] == pytest.approx(scores[1])  # long or short: no length penalty
    assert scores[2] == scores[3] == 0
    said = postings.entity_scores(["s:carolin"])
    assert list(np.flatnonzero(said)) == [0, 2]


def test_linked_scores_follow_the_rare_keys_of_the_sources() -> None:
    texts = [
        "Evan: My new Prius broke down again.",
        "Sam: Sorry to hear that.",
        "Evan: I sold the old Prius last spring.",
        "Sam: Sorry, I have to go.",
        "Evan: Sorry, I was late.",
    ] + [f"Sam: filler line number {n}" for n in range(40)]
    postings = Postings(texts)
    linked = postings.linked_scores(np.array([0]), skip=[], least_idf=1.0)
    assert linked[2] > 0  # shares "Prius" with the source
    assert linked[1] == linked[3] == 0
    skipped = postings.linked_scores(np.array([0]), skip=["n:priu", "s:evan"], least_idf=1.0)
    assert skipped[2] == 0


def test_text_index_segments_merge_and_shrink_alike() -> None:
    first = TextIndex.build(["Alice: I visited Lisbon.", "Bob: Berlin is cold."])
    second = TextIndex.build(["Alice: Lisbon again!"])
    merged = Postings.of([TextIndex.merged([first, second])])
    apart = Postings.of([first, second])
    for keys in (["n:lisbon"], ["s:alic"], ["n:berlin"]):
        assert list(merged.entity_scores(keys)) == pytest.approx(list(apart.entity_scores(keys)))
    kept = merged.without(np.array([True, False, True]))
    assert list(kept.entity_scores(["n:lisbon"])) == pytest.approx(
        list(
            Postings(["Alice: I visited Lisbon.", "Alice: Lisbon again!"]).entity_scores(
                ["n:lisbon"]
            )
        )
    )
    assert list(np.sort(merged.indexes[0].keys_of(np.array([1])))) == list(
        np.sort(TextIndex.build(["Bob: Berlin is cold."]).keys_of(np.array([0])))
    )
