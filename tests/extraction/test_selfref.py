"""Self-referential facts — about the assistant and the machinery — against facts about the user."""

from __future__ import annotations

import pytest

from memvault.extraction.selfref import is_self_referential

TOOLS = ("web_search", "load-data", "search")


@pytest.mark.parametrize(
    "fact",
    [
        "The assistant will remember the user's name.",
        "The AI's system prompt says to be concise.",
        "The model uses the search tool.",
        "User asked the assistant a question.",
        "The user greeted the assistant.",
        "The user thanked the AI for help.",
        "<think>The user wants tea</think>",
        "The system prompt tells the assistant to be brief.",
        "The user wants the AI to remember their birthday.",
        "I will keep that in mind.",
        "The assistant's name is Max.",
        "The assistant is using Global Memory.",
        "The user's message was cited as turn-2.",
        "In this conversation the user asked about Python.",
        "The web_search tool returned three results.",
        "The assistant called load-data on sales.csv.",
        "The user asked for the `search` results.",
        "The tool call failed with a timeout.",
        "Its reasoning was that the user is tired.",
        "The chatbot answered the user's question about taxes.",
        "The conversation is about cooking.",
        "Memvault stores the user's preferences.",
        "The data was inside <user_data_0123456789abcdef> tags.",
    ],
)
def test_facts_about_the_assistant_or_the_machinery(fact: str) -> None:
    assert is_self_referential(fact, TOOLS)


@pytest.mark.parametrize(
    "fact",
    [
        "The user is building an AI assistant.",
        "The user prefers the assistant to answer in French.",
        "The user asked the assistant to always reply briefly.",
        "The user wants the AI to use metric units.",
        "The user lives in Paris.",
        "The user's chatbot has a long system prompt.",
        "The user is writing a system prompt for their support bot.",
        "The model has 7 billion parameters.",
        "The user dislikes the assistant's verbose answers.",
        "The user works on LLM safety research.",
        "AI safety is the user's research area.",
        "The user's company builds chatbots.",
        "The user uses the pen tool in Figma.",
        "The user will search for flats in Berlin.",
        "The user had a conversation with their boss about a raise.",
        "The user decided to use Postgres.",
        "The user's assistant at work is called Maria.",
        "The user prefers short answers with code examples.",
        "Le user préfère le thé.",
    ],
)
def test_facts_about_the_user_or_the_world(fact: str) -> None:
    assert not is_self_referential(fact, TOOLS)


def test_plain_word_tools_count_only_as_tools() -> None:
    assert is_self_referential("The assistant ran search() twice.", ["search"])
    assert is_self_referential("Results came from the search tool.", ["search"])
    assert not is_self_referential("The user will search for a flat.", ["search"])
    assert not is_self_referential("The user likes web search engines.", ["web_search"])
    assert is_self_referential("The user likes web_search.", ["web_search"])
    assert not is_self_referential("The user likes tea.", ["", "  "])


def test_whatever_it_is_given_it_answers() -> None:
    assert not is_self_referential("")
    assert not is_self_referential(None)  # type: ignore[arg-type]
