"""Parsing an extraction model's reply: every shape small models emit, and nothing ever raises."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.extraction.facts import Candidate, FactCategory
from memvault.extraction.parse import (
    MAX_FACT_CHARS,
    MAX_FACTS,
    ParsedReply,
    excerpt,
    parse_reply,
)

TEA = Candidate("preference", "The user prefers tea", turn=2)
TEA_LINE = "preference|turn-2|The user prefers tea|"
TEA_JSON = '{"category": "preference", "turn": 2, "fact": "The user prefers tea"}'


def _facts(reply: str, window: int = 4) -> list[Candidate]:
    return list(parse_reply(reply, window=window).candidates)


def _reasons(reply: str, window: int = 4) -> list[str]:
    return [r.reason for r in parse_reply(reply, window=window).rejected]


# -- the line format ------------------------------------------------------------------------------


def test_the_seed_line_format() -> None:
    assert _facts("preference|turn-2|The user prefers tea|") == [TEA]
    assert _facts("preference|turn-2|The user prefers tea") == [TEA]
    assert _facts("fact|turn-1|The user lives in Paris|J'habite à Paris") == [
        Candidate("fact", "The user lives in Paris", native="J'habite à Paris", turn=1)
    ]


@pytest.mark.parametrize(
    "line",
    [
        "  preference | turn-2 |  The user prefers tea  |  ",
        "- preference|turn-2|The user prefers tea|",
        "* preference|turn-2|The user prefers tea|",
        "1. preference|turn-2|The user prefers tea|",
        "2) preference|turn-2|The user prefers tea|",
        "\u2022 preference|turn-2|The user prefers tea|",
        "PREFERENCE|Turn-2|The user prefers tea|",
        "**preference**|turn-2|The user prefers tea|",
        "`preference`|turn 2|The user prefers tea|-",
        "preference|turn_2|The user prefers tea|n/a",
        "preference|2|The user prefers tea|none",
        "preference|[turn-2]|The user prefers tea|The user prefers tea",
        "| preference | turn-2 | The user prefers tea | |",
        'preference|turn-2|"The user prefers tea"|',
        "preference|turn-2|The   user\tprefers tea|||",
    ],
)
def test_line_variants(line: str) -> None:
    assert _facts(line) == [TEA]


def test_the_replaces_field() -> None:
    (fact,) = _facts(
        "decision|turn-3|The user moved to Berlin|Ich wohne in Berlin|replaces M2, M3: moved"
    )
    assert fact.replaces == ("M2", "M3") and fact.reason == "moved"
    assert fact.native == "Ich wohne in Berlin"
    (fact,) = _facts("decision|turn-3|The user moved to Berlin|replaces M1")
    assert fact.replaces == ("M1",) and fact.reason is None and fact.native is None
    (fact,) = _facts("fact|turn-1|x y|-|Replaces m4 m5 \u2014 changed jobs")
    assert fact.replaces == ("M4", "M5") and fact.reason == "changed jobs"


def test_the_turn_field_may_be_left_out() -> None:
    assert _facts("preference|The user prefers tea") == [
        Candidate("preference", "The user prefers tea")
    ]
    assert _facts("fact|The user lives in Rome|Vivo a Roma") == [
        Candidate("fact", "The user lives in Rome", native="Vivo a Roma")
    ]


def test_turns_outside_the_window_are_kept_without_a_turn() -> None:
    assert [f.turn for f in _facts("fact|turn-9|a|\nfact|turn-0|b|\nfact|turn-4|c|")] == [
        None,
        None,
        4,
    ]
    assert [f.turn for f in _facts("fact|turn-1|a|", window=0)] == [None]


def test_prose_around_the_answer_is_ignored() -> None:
    reply = "Sure! Here are the facts:\n\npreference|turn-2|The user prefers tea|\n\nLet me know!"
    assert parse_reply(reply, window=4) == ParsedReply((TEA,), ())


def test_a_markdown_table() -> None:
    reply = (
        "| category | turn | fact | native |\n|---|---|---|---|\n"
        "| preference | turn-2 | The user prefers tea | |"
    )
    assert _facts(reply) == [TEA]


@pytest.mark.parametrize(
    "reply", ["", "NONE", "none", "None.", "No facts.", "N/A", "```\nNONE\n```", "  \n\n"]
)
def test_nothing(reply: str) -> None:
    assert parse_reply(reply, window=4) == ParsedReply()


# -- wrappers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "<think>The user said tea. fact|turn-1|draft|</think>\n" + TEA_LINE,
        "<thinking>\nhmm\n</thinking>preference|turn-2|The user prefers tea|",
        "reasoning the template opened... </think>\npreference|turn-2|The user prefers tea|",
        TEA_LINE + "\n<think>and now a truncated thought fact|turn-1|x|",
        "```\npreference|turn-2|The user prefers tea|\n```",
        "```text\npreference|turn-2|The user prefers tea|\n```\nDone.",
        f"Here:\n```json\n[{TEA_JSON}]\n```",
        "~~~\npreference|turn-2|The user prefers tea|",
    ],
)
def test_reasoning_and_fences(reply: str) -> None:
    assert _facts(reply) == [TEA]


def test_an_unclosed_reasoning_block_at_the_start_is_no_answer() -> None:
    assert _facts("<think>The user prefers tea so preference|turn-2|The user prefers tea|") == []


# -- JSON -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        '{"facts": [{"category": "preference", "turn": "turn-2", "fact": "The user prefers tea"}]}',
        '[{"category": "preference", "turn": 2, "fact": "The user prefers tea"}]',
        '{"category": "preference", "turn": "2", "fact": "The user prefers tea", "native": null}',
        '{"memories": [{"type": "Preference", "turn": 2, "text": "The user prefers tea"},]}',
        "[{'category': 'preference', 'turn': 2, 'fact': 'The user prefers tea', 'native': None}]",
        TEA_JSON + '\n{"category": "nope", "fact": "x"}',
        'Sure: {"facts": ["preference|turn-2|The user prefers tea|"]} hope it helps',
    ],
)
def test_json_shapes(reply: str) -> None:
    assert _facts(reply) == [TEA]


def test_json_replaces_and_reason() -> None:
    reply = json.dumps(
        [
            {"category": "fact", "turn": 1, "fact": "a", "replaces": ["M1", "m2"], "reason": "r"},
            {"category": "fact", "turn": 1, "fact": "b", "replaces": "M3, M4"},
            {"category": "fact", "turn": 1, "fact": "c", "replaces": "the old one"},
        ]
    )
    parsed = parse_reply(reply, window=2)
    assert [(c.fact, c.replaces, c.reason) for c in parsed.candidates] == [
        ("a", ("M1", "M2"), "r"),
        ("b", ("M3", "M4"), None),
    ]
    assert [r.reason for r in parsed.rejected] == ["malformed replaces: expected handles like M2"]


def test_json_items_that_are_not_objects_are_rejected() -> None:
    parsed = parse_reply('[1, null, ["x"], {"category": "fact", "fact": "ok"}]', window=1)
    assert [c.fact for c in parsed.candidates] == ["ok"]
    assert len(parsed.rejected) == 3


# -- what is refused ------------------------------------------------------------------------------


def test_unknown_categories_are_rejected_with_a_reason() -> None:
    parsed = parse_reply("opinion|turn-1|The user is cool|\nidentity|turn-1|x|", window=2)
    assert parsed.candidates == ()
    assert [r.line for r in parsed.rejected] == [
        "opinion|turn-1|The user is cool|",
        "identity|turn-1|x|",
    ]
    assert all("unknown category" in r.reason for r in parsed.rejected)


def test_categories_are_the_four() -> None:
    reply = "\n".join(f"{c.value.upper()}|turn-1|fact {c.value}|" for c in FactCategory)
    assert [c.category for c in _facts(reply)] == [c.value for c in FactCategory]


def test_empty_long_and_formula_facts_are_rejected() -> None:
    reply = "\n".join(
        [
            "fact|turn-1||",
            "fact|turn-1|   |",
            f"fact|turn-1|{'x' * (MAX_FACT_CHARS + 1)}|",
            "fact|turn-1|=cmd|' /C calc'!A0|",
            "fact|turn-1|@SUM(A1:A2)|",
            'fact|turn-1|+HYPERLINK("http://x")|',
            f"fact|turn-1|{'y' * MAX_FACT_CHARS}|",
            "fact|turn-1|+33 1 23 45 67 89 is the user's number|",
        ]
    )
    parsed = parse_reply(reply, window=1)
    assert [len(c.fact) for c in parsed.candidates] == [MAX_FACT_CHARS, 38]
    assert [r.reason for r in parsed.rejected] == [
        "empty fact",
        "empty fact",
        f"fact longer than {MAX_FACT_CHARS} characters",
        "the fact reads as a spreadsheet formula",
        "the fact reads as a spreadsheet formula",
        "the fact reads as a spreadsheet formula",
    ]


def test_lines_with_too_many_fields_are_rejected() -> None:
    (rejected,) = parse_reply("fact|turn-1|a|b|c|d|e", window=1).rejected
    assert "fields" in rejected.reason
    assert _reasons("fact|turn-1|a|b|c") == ["too many fields: a fact may not contain |"]


def test_duplicates_are_collapsed() -> None:
    parsed = parse_reply(
        f"{TEA_LINE}\nfact|turn-1|the user prefers TEA.|\n{TEA_LINE}",
        window=4,
    )
    assert parsed.candidates == (TEA,)
    assert [r.reason for r in parsed.rejected] == ["duplicate of an earlier fact"] * 2


def test_the_number_of_facts_is_capped() -> None:
    reply = "\n".join(f"fact|turn-1|fact number {n}|" for n in range(MAX_FACTS + 5))
    parsed = parse_reply(reply, window=1)
    assert len(parsed.candidates) == MAX_FACTS
    assert len(parsed.rejected) == 5


@pytest.mark.parametrize(
    "reply",
    [
        None,
        42,
        b"preference|turn-1|x|",
        "{" * 10_000,
        "[" * 100_000 + "]" * 100_000,
        '{"facts": {"nested": [' * 500,
        "|" * 10_000,
        "preference|turn-99999999999999999999|x|",
        '[{"category": "fact", "fact": "x", "turn": 1e999}]',
        '[{"category": {"a": 1}, "fact": ["x"]}]',
        "\x00\ud800|\U0010ffff|turn-1|",
        "preference|turn-1|" + "a|" * 5000,
    ],
)
def test_adversarial_replies_never_raise(reply: object) -> None:
    parsed = parse_reply(reply, window=4)  # type: ignore[arg-type]
    assert isinstance(parsed, ParsedReply)


_CATEGORY = st.sampled_from(["preference", "decision", "fact", "context", "Opinion", "", "FACT"])
_TURN = st.one_of(st.integers(-3, 9).map(lambda n: f"turn-{n}"), st.text(max_size=8))
_LINE = st.builds(
    lambda *fields: "|".join(fields), _CATEGORY, _TURN, st.text(max_size=60), st.text(max_size=20)
)


@pytest.mark.slow
@given(st.one_of(st.text(), st.lists(_LINE, max_size=8).map("\n".join)), st.integers(-2, 6))
def test_any_reply_parses_to_valid_candidates(reply: str, window: int) -> None:
    parsed = parse_reply(reply, window=window)
    facts = [c.fact.casefold().rstrip(".!").strip() for c in parsed.candidates]
    assert len(facts) == len(set(facts)) <= MAX_FACTS
    for candidate in parsed.candidates:
        assert candidate.category in {c.value for c in FactCategory}
        assert 0 < len(candidate.fact) <= MAX_FACT_CHARS
        assert candidate.turn is None or 1 <= candidate.turn <= window
        assert all(h.startswith("M") for h in candidate.replaces)


# -- parse failures: a reply that says something and proposes nothing usable -----------------------


@pytest.mark.parametrize(
    ("reply", "structured", "failure"),
    [
        ("Sure! The user seems to like tea.", False, "neither fact lines nor JSON"),
        ("Sure! The user seems to like tea.", True, "not JSON, though structured output asked"),
        ("", True, "an empty reply, not JSON"),
        ("<think>The user prefers tea, so I will", False, "a reasoning block never closed"),
        ("opinion|turn-1|The user is cool|", False, "no usable fact in 1 line(s): unknown"),
        ('{"facts": [{"category": "mood", "turn": 1, "fact": "x"}]}', True, "in 1 item(s)"),
        ('{"answer": "nothing to remember"}', True, "neither a fact nor a category"),
        ('{"facts": [{"category": "fact", "tu', True, "not JSON"),
    ],
)
def test_a_reply_with_nothing_usable_is_a_parse_failure(
    reply: str, structured: bool, failure: str
) -> None:
    parsed = parse_reply(reply, window=2, structured=structured)
    assert parsed.candidates == ()
    assert parsed.failure is not None and failure in parsed.failure


@pytest.mark.parametrize(
    ("reply", "structured"),
    [
        ("", False),
        ("NONE", False),
        ("- None.", True),
        ('{"facts": []}', True),
        ("```json\n[]\n```", True),
        ("<think>nothing here</think>", False),
    ],
)
def test_saying_there_is_nothing_is_no_failure(reply: str, structured: bool) -> None:
    assert parse_reply(reply, window=2, structured=structured) == ParsedReply()


def test_a_usable_reply_is_no_failure_even_in_the_line_format_under_structured_output() -> None:
    """A server may ignore the schema (Ollama before 0.5, llama.cpp with some templates)."""
    parsed = parse_reply(TEA_LINE + "\nopinion|turn-1|x|", window=4, structured=True)
    assert (parsed.candidates, parsed.failure) == ((TEA,), None)
    assert len(parsed.rejected) == 1


def test_json_cut_off_at_the_token_limit_keeps_its_complete_facts() -> None:
    """vLLM and llama.cpp may pad a constrained reply with whitespace until max_tokens."""
    padded = '{"facts": [' + TEA_JSON + ",\n  " + " \n" * 300
    cut = '{"facts": [' + TEA_JSON + ', {"category": "decision", "turn": 1, "fact": "The us'
    for reply in (padded, cut):
        parsed = parse_reply(reply, window=4, structured=True)
        assert (parsed.candidates, parsed.failure) == ((TEA,), None)


def test_an_excerpt_is_one_short_line() -> None:
    assert excerpt("a\n\tb\x00c  d") == "a b c d"
    long = excerpt("word " * 100, most=40)
    assert len(long) == 40 and long.endswith("\u2026")
