"""The slot rule: reading facts into slots, and which new facts supersede which old ones."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.extraction.facts import Turn
from memvault.extraction.heuristic import extract
from memvault.extraction.slots import (
    MULTI_VALUED,
    Slot,
    conflicts,
    same_value,
    slot_of,
    superseded_by,
)


@pytest.mark.parametrize(
    ("fact", "slot"),
    [
        # the extractor's canonical sentences
        ("The user lives in Paris.", Slot("user", "residence", "Paris")),
        ("The user no longer lives in Berlin.", Slot("user", "residence", "Berlin", True)),
        ("The user's name is Ana.", Slot("user", "name", "Ana")),
        ("The user works at Shopify.", Slot("user", "employer", "Shopify")),
        ("The user is a data engineer.", Slot("user", "occupation", "data engineer")),
        ("The user is a night owl.", Slot("user", "is a", "night owl")),
        ("The user is no longer vegetarian.", Slot("user", "diet", "vegetarian", True)),
        ("The user is 34 years old.", Slot("user", "age", "34")),
        ("The user speaks French.", Slot("user", "speaks", "French")),
        ("The user has a dog.", Slot("user", "has", "a dog")),
        ("The user likes jazz.", Slot("user", "opinion of jazz", "like")),
        ("The user dislikes jazz.", Slot("user", "opinion of jazz", "dislike")),
        ("The user's favourite colour is blue.", Slot("user", "favourite colour", "blue")),
        ("The user prefers Go over Python.", Slot("user", "preference: go vs python", "Go")),
        ("The user's sister lives in Rome.", Slot("user's sister", "residence", "Rome")),
        ("The user's sister's name is Lena.", Slot("user's sister", "name", "Lena")),
        (
            "The user wants the assistant to never use emojis.",
            Slot("user", "instruction: use emojis", "never"),
        ),
        # free-form facts, as people or an LLM write them
        ("User lives in Berlin", Slot("user", "residence", "Berlin")),
        ("Lives in Berlin.", Slot("user", "residence", "Berlin")),
        ("User is based in Munich", Slot("user", "residence", "Munich")),
        ("User moved to Paris", Slot("user", "residence", "Paris")),
        ("the user's name is Ana", Slot("user", "name", "Ana")),
        ("User is called Samuel", Slot("user", "name", "Samuel")),
        ("Works for Acme Corp", Slot("user", "employer", "Acme Corp")),
        ("User prefers tabs over spaces", Slot("user", "preference: spaces vs tabs", "tabs")),
        ("Favourite colour: blue", Slot("user", "favourite colour", "blue")),
        ("User's favorite color is purple", Slot("user", "favourite colour", "purple")),
        ("Location: Berlin", Slot("user", "residence", "Berlin")),
        ("I live in Berlin", Slot("user", "residence", "Berlin")),
        ("My mum lives in Porto", Slot("user's mother", "residence", "Porto")),
        ("User lives in Paris now.", Slot("user", "residence", "Paris")),
        ("Never use emojis", Slot("user", "instruction: use emojis", "never")),
        (
            "Chose DuckDB over SQLite for analysis",
            Slot("user", "choice: duckdb vs sqlite", "DuckDB"),
        ),
        # values, and what a preference with a destination is about
        ("The user's rent is €1,250.", Slot("user", "rent", "€1,250")),
        ("The user's flight is at 10:30.", Slot("user", "flight", "at 10:30")),
        ("The user weighs 72.5 kg.", Slot("user", "weight", "72.5 kg")),
        ("The user is 5'11\" tall.", Slot("user", "height", "5'11\"")),
        ("The user earns $85k a year.", Slot("user", "income", "$85k a year")),
        ("The user's salary is $85k.", Slot("user", "income", "$85k")),
        (
            "The user prefers sending invoices to the shared inbox.",
            Slot("user", "preference: sending invoices", "to the shared inbox"),
        ),
        (
            "The user prefers walking to driving.",
            Slot("user", "preference: driving vs walking", "walking"),
        ),
        ("The user prefers tea to coffee.", Slot("user", "preference: coffee vs tea", "tea")),
    ],
)
def test_slot_of_reads_canonical_and_free_form_facts(fact: str, slot: Slot) -> None:
    assert slot_of(fact) == slot


@pytest.mark.parametrize("fact", ["", "Note: something", "The staging server is slow.", "Hello"])
def test_unreadable_facts_have_no_slot(fact: str) -> None:
    assert slot_of(fact) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user lives in Berlin.", "The user lives in Paris."),
        ("User lives in Berlin", "User moved to Paris"),
        ("Lives in Berlin.", "The user is based in Munich."),
        ("The user lives in Berlin.", "The user no longer lives in Berlin."),
        ("The user is vegetarian.", "The user is no longer vegetarian."),
        ("The user is vegetarian.", "The user is vegan."),
        ("The user works at Google.", "The user works at Meta."),
        ("The user's name is Ana.", "Call me Anna"),
        ("The user is a teacher.", "The user is a software developer."),
        ("The user is 29 years old.", "The user is 30 years old."),
        ("The user likes olives.", "The user hates olives."),
        ("The user likes coffee.", "The user does not like coffee."),
        ("The user prefers tabs over spaces.", "The user prefers spaces over tabs."),
        ("The user prefers tea.", "The user prefers coffee over tea."),
        ("Favourite colour: green", "User's favorite color is purple"),
        ("User uses VS Code for Python", "The user uses PyCharm for Python."),
        ("The user decided to use MySQL.", "The user decided to use PostgreSQL instead of MySQL."),
        ("The user has a dog.", "The user no longer has a dog."),
        ("The user speaks French.", "The user does not speak French."),
        ("The user is a night owl.", "The user is not a night owl."),
        ("The user drinks coffee.", "The user no longer drinks coffee."),
        ("The user always answers emails at once.", "The user never answers emails at once."),
        ("Always use emojis", "The user wants the assistant to never use emojis."),
        # another number is another value
        ("The user's rent is €1,250.", "The user's rent is €1,300."),
        ("The user's rent is €1.", "The user's rent is €1,250."),
        ("The user's salary is $85k.", "The user's salary is $1,250,000."),
        ("The user earns $85k a year.", "The user's salary is $92,000."),
        ("The user weighs 72.5 kg.", "The user weighs 70 kg."),
        ("The user is 5'11\" tall.", "The user is 180 cm tall."),
        ("The user's bedtime is 10:30 p.m.", "The user's bedtime is 11:30 p.m."),
        ("The user uses Python 3.11 for work.", "The user uses Python 3.11.4 for work."),
        ("The user's rent is €1,250.", "The user's rent is $1,250."),
        (
            "The user prefers sending invoices to the shared inbox.",
            "The user prefers sending invoices to accounting.",
        ),
    ],
)
def test_supersedes(old: str, new: str) -> None:
    assert superseded_by(new, [old]) == [0]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a negation retracts only its own value
        ("The user lives in Paris.", "The user no longer lives in Berlin."),
        ("The user no longer lives in Berlin.", "The user lives in Paris."),
        # several values at once
        ("The user speaks French.", "The user speaks German."),
        ("The user has a dog.", "The user has a cat."),
        ("The user is allergic to peanuts.", "The user is allergic to shellfish."),
        ("The user is learning Spanish.", "The user is learning Korean."),
        ("The user is a teacher.", "The user is a night owl."),
        ("The user likes coffee.", "The user likes tea."),
        # other subjects and attributes
        ("The user's sister lives in Rome.", "The user lives in Milan."),
        ("The user works at Google.", "The user lives in Zurich."),
        ("The user's favourite colour is blue.", "The user's favourite food is sushi."),
        # the same value, however written
        ("User works for Acme Corp", "The user works at Acme Corp."),
        ("The user lives in Paris.", "The user lives in Paris, France."),
        ("The user lives in PARIS", "the user lives in paris."),
        ("The user prefers Go over Python.", "The user prefers Go over Python for backend work."),
        ("The user decided to use MySQL.", "The user decided to use MySQL instead of Oracle."),
        # the same number, however written
        ("The user's rent is €1,250.", "The user's rent is 1250 euros."),
        ("The user's rent is €1,250.", "The user's rent is €1,250.00."),
        ("The user's rent is 1.250,50 EUR.", "The user's rent is €1,250.50."),
        ("The user's rent is €1,250.", "The user's rent is €1,250 a month."),
        ("The user earns $85k a year.", "The user earns $85,000 a year."),
        ("The user is 5'11\" tall.", "The user is 5 ft 11 in tall."),
        ("The user's bedtime is 10:30 p.m.", "The user's bedtime is 10:30 pm."),
        # a preference with a destination is not a comparison with it
        ("The user prefers tea over coffee.", "The user prefers sending invoices to the inbox."),
        # nothing readable, nothing superseded
        ("The staging server is slow.", "The staging server is fast."),
    ],
)
def test_does_not_supersede(old: str, new: str) -> None:
    assert superseded_by(new, [old]) == []


def test_superseded_by_returns_every_conflicting_index() -> None:
    old = ["The user lives in Berlin.", "The user speaks German.", "User is based in Hamburg"]
    assert superseded_by("The user moved to Paris.", old) == [0, 2]
    assert superseded_by("Hello there", old) == []


def test_conflicts_needs_the_same_subject_and_attribute() -> None:
    berlin = Slot("user", "residence", "Berlin")
    assert conflicts(Slot("user", "residence", "Paris"), berlin)
    assert not conflicts(Slot("user's sister", "residence", "Paris"), berlin)
    assert not conflicts(Slot("user", "origin", "Paris"), berlin)
    assert not conflicts(Slot("user", "residence", "the berlin"), berlin)
    assert "speaks" in MULTI_VALUED and "residence" not in MULTI_VALUED


def test_values_compare_without_case_articles_punctuation_or_time() -> None:
    assert same_value("The Hague", "the hague.")
    assert same_value("Paris", "Paris, France")
    assert same_value("Fly.io", "fly io")
    assert not same_value("Paris", "Parisville")


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("€1,250", "€1,250.00", True),
        ("€1,250", "1250 euros", True),
        ("1 250 €", "EUR 1,250", True),
        ("$85k", "$85,000", True),
        ("1.2 million", "1,200,000", True),
        ("20%", "20 percent", True),
        ("72 kg", "72kg", True),
        ("14 February", "February 14", True),
        ("March 14, 2027", "14 March 2027", True),
        ("€1", "€1,250", False),
        ("$1,250", "$1,250,000", False),
        ("€1,250", "€1,300", False),
        ("€1,250", "$1,250", False),
        ("Python 3.11", "Python 3.11.4", False),
        ("Python 3.10", "Python 3.1", False),
        ("€1,250 a month", "€1,250 a week", False),
        ("10:30", "10:45", False),
    ],
)
def test_values_with_numbers_compare_by_their_numbers(a: str, b: str, same: bool) -> None:
    assert same_value(a, b) is same
    assert same_value(b, a) is same


def _written(cents: int, style: str, symbol: str) -> str:
    whole, part = divmod(cents, 100)
    grouped = f"{whole:,}"
    number = {
        "en": f"{grouped}.{part:02d}",
        "eu": f"{grouped.replace(',', '.')},{part:02d}",
        "space": f"{grouped.replace(',', ' ')},{part:02d}",
        "plain": f"{whole}.{part:02d}",
    }[style]
    return f"{number}{symbol}" if symbol.startswith(" ") else f"{symbol}{number}"


_STYLE = st.sampled_from(["en", "eu", "space", "plain"])


@given(
    st.integers(100, 10**9),
    _STYLE,
    _STYLE,
    st.sampled_from(["€", " EUR", " euros"]),
    st.integers(1, 10**6),
)
def test_an_amount_is_itself_however_written_and_no_other(
    cents: int, style: str, other_style: str, symbol: str, delta: int
) -> None:
    amount = _written(cents, style, "€")
    assert same_value(amount, _written(cents, other_style, symbol))
    assert not same_value(amount, _written(cents + delta, other_style, symbol))


def test_rent_update_through_the_extractor() -> None:
    def facts(text: str) -> list[str]:
        return [c.fact for c in extract([Turn(1, "user", text)])]

    (old,) = facts("My rent is €1,250.")
    (new,) = facts("My rent is now €1,300.")
    (same,) = facts("My rent is 1250 euros.")
    (risen,) = facts("My rent went up to €1,400.")
    assert old == "The user's rent is €1,250."
    assert superseded_by(new, [old]) == [0]
    assert superseded_by(risen, [old, new]) == [0, 1]
    assert superseded_by(same, [old]) == []


def test_berlin_to_paris_through_the_extractor() -> None:
    def facts(text: str) -> list[str]:
        return [c.fact for c in extract([Turn(1, "user", text)])]

    (berlin,) = facts("I live in Berlin.")
    (paris,) = facts("Big news: I moved to Paris last month!")
    (gone,) = facts("I don't live in Berlin anymore.")
    assert superseded_by(paris, [berlin]) == [0]
    assert superseded_by(gone, [berlin, paris]) == [0]
