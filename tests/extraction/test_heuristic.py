"""The heuristic extractor: what each pattern family extracts, and what it must not."""

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from memvault.extraction.facts import FactCategory, Turn
from memvault.extraction.heuristic import extract, shift, third_person

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

P, D, F, C = "preference", "decision", "fact", "context"


def said(*texts: str) -> list[tuple[str, str]]:
    """(category, fact) of everything extracted from a window of user turns."""
    turns = [Turn(n, "user", text) for n, text in enumerate(texts, 1)]
    return [(c.category, c.fact) for c in extract(turns)]


@pytest.mark.parametrize(
    ("text", "category", "fact"),
    [
        # preferences
        ("I prefer Go over Python.", P, "The user prefers Go over Python."),
        ("i prefer tea to coffee lol", P, "The user prefers tea over coffee."),
        (
            "I'd rather have short answers than long ones.",
            P,
            "The user would rather have short answers than long ones.",
        ),
        ("I really like Tailwind.", P, "The user likes Tailwind."),
        ("I love hiking, especially in autumn.", P, "The user likes hiking."),
        ("I'm a big fan of functional programming.", P, "The user likes functional programming."),
        ("I don't like meetings before 10am.", P, "The user dislikes meetings before 10am."),
        ("I hate YAML.", P, "The user dislikes YAML."),
        ("I can't stand cilantro.", P, "The user dislikes cilantro."),
        ("My favourite editor is Helix.", P, "The user's favourite editor is Helix."),
        ("My favorite color is teal", P, "The user's favourite color is teal."),
        ("I use Neovim for everything.", P, "The user uses Neovim for everything."),
        ("I always write tests first.", P, "The user always writes tests first."),
        ("I never eat pork.", P, "The user never eats pork."),
        ("I don't drink alcohol.", P, "The user does not drink alcohol."),
        # standing instructions
        (
            "Please always answer in bullet points.",
            P,
            "The user wants the assistant to always answer in bullet points.",
        ),
        (
            "Never use emojis in your answers.",
            P,
            "The user wants the assistant to never use emojis in its answers.",
        ),
        (
            "From now on, answer in Spanish.",
            P,
            "The user wants the assistant to always answer in Spanish.",
        ),
        (
            "please don't ever suggest jQuery to me",
            P,
            "The user wants the assistant to never suggest jQuery to the user.",
        ),
        (
            "When you write SQL, always use uppercase.",
            P,
            "The user wants the assistant to always use uppercase when the assistant writes SQL.",
        ),
        # decisions
        (
            "We decided to use PostgreSQL instead of MySQL.",
            D,
            "The user decided to use PostgreSQL instead of MySQL.",
        ),
        ("Let's go with FastAPI.", D, "The user decided to go with FastAPI."),
        (
            "We'll use Celery for background jobs.",
            D,
            "The user decided to use Celery for background jobs.",
        ),
        ("I chose DuckDB over SQLite.", D, "The user chose DuckDB over SQLite."),
        (
            "We're going with Stripe rather than PayPal.",
            D,
            "The user decided to go with Stripe rather than PayPal.",
        ),
        (
            "We migrated from Heroku to Fly.io last month.",
            D,
            "The user switched from Heroku to Fly.io.",
        ),
        ("We moved to Kubernetes last year.", D, "The user switched to Kubernetes."),
        ("We decided not to support IE11.", D, "The user decided not to support IE11."),
        # identity and durable facts
        ("My name is Ana.", F, "The user's name is Ana."),
        ("Call me Jo, everyone does.", F, "The user's name is Jo."),
        ("Hi, I'm Tomasz, nice to meet you.", F, "The user's name is Tomasz."),
        ("I'm a data engineer.", F, "The user is a data engineer."),
        ("I work at Shopify.", F, "The user works at Shopify."),
        ("I work for Siemens.", F, "The user works at Siemens."),
        ("I live in Berlin.", F, "The user lives in Berlin."),
        ("I moved to Lisbon in March.", F, "The user lives in Lisbon."),
        ("I'm originally from Chile.", F, "The user is from Chile."),
        ("My sister's name is Lena.", F, "The user's sister's name is Lena."),
        ("My mom lives in Porto.", F, "The user's mom lives in Porto."),
        ("I have a cat named Miso.", F, "The user has a cat named Miso."),
        ("I have two kids, 4 and 7.", F, "The user has two kids."),
        ("My birthday is on 14 February.", F, "The user's birthday is 14 February."),
        ("I'm allergic to peanuts.", F, "The user is allergic to peanuts."),
        ("I'm vegetarian.", F, "The user is vegetarian."),
        ("I'm 34 years old.", F, "The user is 34 years old."),
        (
            "I speak Portuguese and a bit of French.",
            F,
            "The user speaks Portuguese and a bit of French.",
        ),
        ("I'm learning Japanese.", F, "The user is learning Japanese."),
        ("I'm on macOS Sonoma.", F, "The user is on macOS Sonoma."),
        ("We use Jira at work.", F, "The user uses Jira at work."),
        # explicit memory requests: the category of what follows
        ("Remember that I'm allergic to shellfish.", F, "The user is allergic to shellfish."),
        ("Remember: I prefer pnpm over yarn.", P, "The user prefers pnpm over yarn."),
        (
            "Can you remember that our staging server is staging.acme.io?",
            F,
            "The user's staging server is staging.acme.io.",
        ),
        ("For the record, I'm left-handed.", F, "The user is left-handed."),
        ("remember that we deploy on Tuesdays", F, "The user and their team deploy on Tuesdays."),
        # negations and updates
        ("I no longer live in London.", F, "The user no longer lives in London."),
        ("I don't use Vim anymore.", P, "The user no longer uses Vim."),
        ("I stopped using Notion.", P, "The user no longer uses Notion."),
        ("I'm not vegetarian any more.", F, "The user is no longer vegetarian."),
        ("I don't like spicy food anymore.", P, "The user no longer likes spicy food."),
        ("I quit my job at Amazon last week.", F, "The user no longer works at Amazon."),
        ("I no longer have a car.", F, "The user no longer has a car."),
        # session context
        ("I'm working on the Q1 report.", C, "The user is working on the Q1 report."),
        ("Today I'm debugging the login bug.", C, "The user is debugging the login bug."),
        ("Currently studying for the AWS exam.", C, "The user is studying for the AWS exam."),
        (
            "My deadline for the thesis is next Friday.",
            C,
            "The user's deadline for the thesis is next Friday.",
        ),
    ],
)
def test_pattern_families(text: str, category: str, fact: str) -> None:
    assert said(text) == [(category, fact)]


@pytest.mark.parametrize(
    "text",
    [
        # questions
        "Do I prefer tabs or spaces?",
        "What's my name?",
        "should we use Postgres or MySQL for this",
        # hypotheticals and hedges
        "If I lived in Paris, I would visit the Louvre every week.",
        "I would prefer Kotlin if the team knew it.",
        "Imagine I'm a beginner and explain recursion.",
        "Maybe we'll use Redis, not sure yet.",
        "I'm thinking about switching to Linux.",
        "I used to live in Madrid when I was a kid.",
        # reported speech
        "My boss said he prefers Java over Kotlin.",
        "Sarah told me she lives in Dublin now.",
        "He lives in Berlin and works at SAP.",
        # quoted material
        'Can you proofread this: "My name is John and I work at a bakery."',
        "> I prefer tabs over spaces\nIs this a common opinion?",
        "```\n# we decided to use Redis for caching\n```\nIs this comment accurate?",
        "Write a cover letter that starts with 'I am a passionate engineer'.",
        # sarcasm and jokes
        "Oh great, I just love waiting 20 minutes for CI. /s",
        "Yeah right, like I enjoy writing YAML all day.",
        "I love it when npm breaks for no reason",
        "I'm a genius, obviously \U0001f602",
        # one-off choices and feedback about the conversation
        "I prefer the second option.",
        "Let's go with the first one.",
        "I like that, let's keep it.",
        "I love this version!",
        "I like how you structured the README.",
        "Let's use a dictionary here instead.",
        # instructions about the current task, small talk, idioms
        "Rewrite this function to use a list comprehension.",
        "Never do that again please.",
        "Thanks so much, this is really helpful!",
        "I have a question about decorators.",
        "I'm a little lost with this API.",
        "I like to think of it as a cache.",
        "Sorry, I joined the call late.",
        "Call me when you're done.",
        # other languages
        "Ich wohne in Hamburg und arbeite bei Airbus.",
        "J'habite à Lyon et j'adore le fromage.",
        "\u79c1\u306f\u6771\u4eac\u306b\u4f4f\u3093\u3067\u3044\u307e\u3059\u3002",
    ],
)
def test_what_is_not_extracted(text: str) -> None:
    assert said(text) == []


def test_a_turn_can_say_several_things() -> None:
    text = "My name's Dev, I'm a frontend developer at Canva and I live in Sydney."
    assert said(text) == [
        (F, "The user's name is Dev."),
        (F, "The user is a frontend developer."),
        (F, "The user works at Canva."),
        (F, "The user lives in Sydney."),
    ]


def test_a_role_and_its_employer_are_two_facts() -> None:
    assert said("I work for the NHS as a nurse.") == [
        (F, "The user works at the NHS."),
        (F, "The user is a nurse."),
    ]
    assert said("I'm a senior SRE at Datadog.") == [
        (F, "The user is a senior SRE."),
        (F, "The user works at Datadog."),
    ]
    assert said("I'm a beginner at Python.") == [(F, "The user is a beginner at Python.")]


def test_elliptic_clauses_keep_their_subject() -> None:
    assert said("My brother lives in Toronto and works at RBC.") == [
        (F, "The user's brother lives in Toronto."),
        (F, "The user's brother works at RBC."),
    ]
    assert said("My husband is called Marco and he's a chef.") == [
        (F, "The user's husband's name is Marco."),
        (F, "The user's husband is a chef."),
    ]


def test_only_user_turns_are_read_and_turns_are_cited() -> None:
    turns = [
        Turn(1, "assistant", "I live in Berlin and I prefer Go."),
        Turn(2, "user", "I live in Paris."),
        Turn(3, "user", "I live in Paris."),
    ]
    (candidate,) = extract(turns)
    assert (candidate.fact, candidate.turn, candidate.replaces) == (
        "The user lives in Paris.",
        2,
        (),
    )
    assert candidate.category == FactCategory.FACT


def test_a_correction_rewrites_the_earlier_fact_it_names() -> None:
    assert said("I live in Berlin.", "Actually, it's Munich, not Berlin.") == [
        (F, "The user lives in Berlin."),
        (F, "The user lives in Munich."),
    ]
    assert said("Sorry, I meant Rust, not Go.") == []


def test_objects_are_in_the_third_person() -> None:
    assert said("I like my coffee black.") == [(P, "The user likes their coffee black.")]
    assert shift("tell me when you are unsure") == "tell the user when the assistant is unsure"
    assert [third_person(v) for v in ("write", "go", "fix", "try", "play", "will")] == [
        "writes",
        "goes",
        "fixes",
        "tries",
        "plays",
        "will",
    ]


def _benchmark(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(
        "extraction_benchmark", BENCHMARKS / "extraction.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labelled_dev_split_keeps_its_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _benchmark(monkeypatch)
    turns = [r for r in bench.load() if r["split"] == "dev" and "text" in r]
    result = bench.score_turns(turns)
    assert len(turns) >= 180
    assert result["precision"] >= 0.9, result["misses"]
    assert result["recall"] >= 0.85, result["misses"]
    assert result["negatives_clean"] >= 0.95, result["misses"]
