"""The heuristic extractor: what each pattern family extracts, and what it must not."""

import importlib.util
import time
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.extraction.english import third_person
from memvault.extraction.facts import FactCategory, Turn
from memvault.extraction.heuristic import extract, shift

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
        "I prefer the 2nd option.",
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
    assert said("My husband is called Marco and he lives in Leeds.") == [
        (F, "The user's husband's name is Marco."),
        (F, "The user's husband lives in Leeds."),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "My brother is a firefighter",  # a relative's job is theirs
        "my friend Jake is a pilot and loves sushi",  # anything of a friend's
        "my boss is vegan",
        "my roommate is vegan and very loud about it",
    ],
)
def test_what_is_someone_elses_is_not_the_users(text: str) -> None:
    assert said(text) == []


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


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # rent and salary
        ("My rent is €1,250.", "€1,250"),
        ("My rent is now €1,300 a month.", "€1,300 a month"),
        ("My monthly rent is 1.250,50 EUR.", "1.250,50 EUR"),
        ("My rent is 1 250 €, which is a lot.", "1 250 €"),
        ("Remember that my rent is CHF 2,400.", "CHF 2,400"),
        ("My salary is $85k.", "$85k"),
        ("I earn 85,000 USD a year.", "85,000 USD a year"),
        ("I make US$120,000.50 a year.", "US$120,000.50 a year"),
        ("My salary is £42.5k before tax.", "£42.5k before tax"),
        ("I earn ₹12,00,000 a year.", "₹12,00,000 a year"),
        ("My hourly rate is $95.50.", "$95.50"),
        # height and weight
        ("I'm 5'11\".", "5'11\""),
        ("I'm 5\u203211\u2033 tall.", "5\u203211\u2033"),
        ("I am 180 cm tall.", "180 cm"),
        ("I'm 1.80 m tall.", "1.80 m"),
        ("I weigh 72.5 kg.", "72.5 kg"),
        ("I weigh 160 lbs.", "160 lbs"),
        ("My target weight is 68,5 kg.", "68,5 kg"),
        # budgets
        ("My budget is €10k \u2013 €20k for the kitchen.", "€10k \u2013 €20k"),
        ("My budget for the trip is $3,500.", "$3,500"),
        ("Our budget is 12,000.75 EUR.", "12,000.75 EUR"),
        ("My budget is $1,500-$2,000.", "$1,500-$2,000"),
        # distances and amounts
        ("I run 10.5 km every morning.", "10.5 km"),
        ("My commute is 12.5 miles each way.", "12.5 miles"),
        ("I cycle 1,200 km a month.", "1,200 km"),
        ("I drink 2.5 litres of water a day.", "2.5 litres"),
        ("I always run 5.5 km before work.", "5.5 km"),
        ("I sleep 7\u20138 hours a night.", "7\u20138 hours"),
        ("I work 37.5 hours a week.", "37.5 hours"),
        ("My screen time is 3.5 hours a day.", "3.5 hours"),
        # temperatures
        ("My thermostat is set to 19.5°C.", "19.5°C"),
        ("I like my room at 68°F.", "68°F"),
        ("I like winter runs at -5 °C.", "-5 °C"),
        # versions and technical sizes
        ("We use Python 3.11.4.", "Python 3.11.4"),
        ("I'm on Python 3.11.4.", "Python 3.11.4"),
        ("We use Node v20.11.1 in production.", "v20.11.1"),
        ("I use Django 4.2.11 for the backend.", "Django 4.2.11"),
        ("We use a 3.5 GB Redis instance.", "3.5 GB"),
        # percentages
        ("I save 20% of my salary.", "20%"),
        ("My tax rate is 42.5%.", "42.5%"),
        # dates and times
        ("My bedtime is 10:30 p.m.", "10:30 p.m"),
        ("My wake-up time is 6:15 a.m. on weekdays.", "6:15 a.m. on weekdays"),
        ("My birthday is on 14.03.1990.", "14.03.1990"),
        ("I was born on 1990-03-14.", "1990-03-14"),
        ("My flight is at 06:45 on 12/03/2027.", "06:45 on 12/03/2027"),
        ("My deadline is 5 p.m. on Friday.", "5 p.m. on Friday"),
        ("My exam is on March 14, 2027.", "March 14, 2027"),
        ("I was born on July 4, 1990, in Ohio.", "July 4, 1990"),
        ("My birthday is on Friday, 14 March.", "Friday, 14 March"),
        # ids that are not redacted
        ("My employee ID is 4410-2231-07.", "4410-2231-07"),
        ("My zip code is 94103-1234.", "94103-1234"),
        ("My phone number is (555) 123-4567.", "(555) 123-4567"),
        # more frames
        ("My rent went up to €1,300.", "€1,300"),
        ("My rent is 1'250 CHF.", "1'250 CHF"),
        ("I take 2.5 mg of melatonin every night.", "2.5 mg"),
        # a value does not end its sentence, and the next sentence is read
        ("I weigh approx. 72.5 kg. I live in Oslo.", "approx. 72.5 kg"),
    ],
)
def test_values_round_trip_exactly(text: str, value: str) -> None:
    facts = [fact for _, fact in said(text)]
    assert any(value in fact for fact in facts), facts


def test_a_value_with_separators_is_one_word() -> None:
    assert said("My rent is €1,250.") == [(F, "The user's rent is €1,250.")]
    assert said("Remember that my rent is €1,250.") == [(F, "The user's rent is €1,250.")]
    assert said("My budget is 1.250,50 EUR for the trip.") == [
        (C, "The user's budget is 1.250,50 EUR for the trip.")
    ]
    assert said("My deadline is 5 p.m. I live in Oslo.") == [
        (C, "The user's deadline is 5 p.m."),
        (F, "The user lives in Oslo."),
    ]
    assert said("I'm 5'11\" and I like tea.") == [
        (F, "The user is 5'11\" tall."),
        (P, "The user likes tea."),
    ]
    assert said("My rent is €1,250.", "Actually, it's €1,300, not €1,250.") == [
        (F, "The user's rent is €1,250."),
        (F, "The user's rent is €1,300."),
    ]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("rent went up to 1,550", "The user's rent is 1,550."),
        ("rent is 1,400 a month", "The user's rent is 1,400 a month."),
        ("commute's 15 minutes now since we moved", "The user's commute is 15 minutes."),
        ("my commute's 40 minutes", "The user's commute is 40 minutes."),
        ("my team's grown to 7", "The user's team has grown to 7."),
        ("my team's shrunk to 3", "The user's team has shrunk to 3."),
    ],
)
def test_a_quantity_of_the_users_with_my_left_out(text: str, fact: str) -> None:
    assert said(text) == [(F, fact)]


@pytest.mark.parametrize(
    "text",
    ["Rent is 1,400 in Porto for a one-bed.", "Salary is 50k for juniors at Google."],
)
def test_a_quantity_of_a_place_or_a_thing_is_not_the_users(text: str) -> None:
    assert not any("The user's" in fact for _, fact in said(text))


def test_hidden_values_come_back_as_written() -> None:
    """Text that merely looks like a hidden value is the user's own and stays as it is."""
    assert said("I like qv31vq and qv0a0avq.") == [(P, "The user likes qv31vq and qv0a0avq.")]
    assert said("I like qvababvq.") == [(P, "The user likes qvababvq.")]


@pytest.mark.parametrize(
    "text",
    [
        "I'm 5 years into my career.",
        "I'm 30 m away.",
        "I'm 100% sure.",
        "I'd rather not say.",
    ],
)
def test_quantity_rules_need_a_quantity(text: str) -> None:
    """No age, height or weight is read from what is not one (the parse may read the clause
    as what it says: "The user is 5 years into their career.")."""
    found = " ".join(fact for _, fact in said(text))
    assert not any(word in found for word in ("years old", "tall", "weighs", "sure")), found


def test_a_habit_without_a_quantity_is_a_habit_not_an_amount() -> None:
    """ "every Sunday" is when, not how much: the parse keeps the habit as the user said it."""
    assert said("I make pasta every Sunday.") == [("fact", "The user makes pasta every Sunday.")]


def _money(whole: int, cents: int, style: str, symbol: str) -> str:
    """An amount as people write it: 1,250.50 / 1.250,50 / 1 250,50 / 1250.50."""
    grouped = f"{whole:,}"
    number = {
        "en": f"{grouped}.{cents:02d}",
        "eu": f"{grouped.replace(',', '.')},{cents:02d}",
        "space": f"{grouped.replace(',', ' ')},{cents:02d}",
        "plain": f"{whole}.{cents:02d}",
    }[style]
    return f"{number}{symbol}" if symbol.startswith(" ") else f"{symbol}{number}"


_AMOUNTS = st.builds(
    _money,
    st.integers(1, 9_999_999),
    st.integers(0, 99),
    st.sampled_from(["en", "eu", "space", "plain"]),
    st.sampled_from(["€", "$", "£", "CHF ", " EUR", " USD", " €"]),
)


@pytest.mark.slow
@given(
    _AMOUNTS,
    st.sampled_from(
        [
            "My rent is {}.",
            "I earn {} a year.",
            "Remember that my salary is {}, and I live in Oslo.",
            "My budget is {} for the trip.",
            "I pay {} in rent; I live in Oslo.",
        ]
    ),
)
def test_any_amount_round_trips(amount: str, frame: str) -> None:
    facts = [fact for _, fact in said(frame.format(amount))]
    assert any(amount in fact for fact in facts), facts


def test_a_long_run_of_digits_is_read_in_linear_time() -> None:
    started = time.perf_counter()
    said("+" + "1" * 20_000 + "x")
    assert time.perf_counter() - started < 2  # was quadratic: minutes


# --- preferences: a comparison, or one preference with where it goes -------------------------


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "I prefer sending invoices to the shared inbox.",
            "The user prefers sending invoices to the shared inbox.",
        ),
        ("I prefer cycling to work.", "The user prefers cycling to work."),
        (
            "I prefer my invoices sent to the shared inbox.",
            "The user prefers their invoices sent to the shared inbox.",
        ),
        (
            "I prefer talking to clients on the phone.",
            "The user prefers talking to clients on the phone.",
        ),
        (
            "I prefer paying suppliers with a card.",
            "The user prefers paying suppliers with a card.",
        ),
        (
            "I'd rather send invoices to the shared inbox.",
            "The user would rather send invoices to the shared inbox.",
        ),
        (
            "I prefer forwarding receipts to accounting over emailing invoices.",
            "The user prefers forwarding receipts to accounting over emailing invoices.",
        ),
        # comparisons
        ("I prefer tea to coffee.", "The user prefers tea over coffee."),
        ("I prefer walking to driving.", "The user prefers walking over driving."),
        ("I prefer spring to autumn.", "The user prefers spring over autumn."),
        (
            "I prefer email to Slack for invoices.",
            "The user prefers email over Slack for invoices.",
        ),
        ("I'd rather walk than drive.", "The user would rather walk than drive."),
    ],
)
def test_prefer_x_to_y_is_read_right(text: str, fact: str) -> None:
    assert said(text) == [(P, fact)]


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


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("I'm a midwife in Leeds — any tips for sleeping after night shifts?", "midwife"),
        ("I drive a 2019 Octavia, should I switch to an EV yet?", "octavia"),
        ("Since I live in Ghent, which cargo bike would you pick?", "ghent"),
        ("I work at Monzo; what's a good volunteering schedule?", "monzo"),
    ],
)
def test_a_statement_before_a_question_is_learned(text: str, word: str) -> None:
    facts = [c.fact.casefold() for c in extract([Turn(1, "user", text)])]
    assert any(word in fact for fact in facts), facts


@pytest.mark.parametrize(
    "text",
    [
        "If I moved to Lisbon, which area should I pick?",
        "Should I move to Lisbon — is it worth it?",
        "Maybe I'll switch to Zed; thoughts?",
    ],
)
def test_a_question_without_a_statement_of_the_users_stays_out(text: str) -> None:
    assert extract([Turn(1, "user", text)]) == []


@pytest.mark.parametrize(
    "text",
    [
        "act as a customer support agent, I'm an angry customer whose package never arrived",
        "rp: I'm a 400-year-old vampire who's scared of garlic, you're my therapist",
        "you are my strict personal trainer and I am a lazy client who skipped leg day",
        "DnD time! I'm Thalia, a half-elf ranger with a wolf named Ash.",
        "testing 1 2 3",
        "I'm toying with the idea of going vegan for a month",
        "I keep going back and forth on whether to learn piano or guitar",
        "I'm looking for a synonym for 'happy' that's a bit more formal",
        "I need 5 name ideas for a fantasy tavern",
        "sure, I'll just move to Mars then, problem solved",
        "yeah I'm basically a professional napper lol",
        "a guy on my team is allergic to peanuts — like, epipen-level allergic",
        "my mate Dan is a nurse on night shifts",
        "my sister's a dentist and hates her job",
        "List three fun facts about octopuses",
        "Convert 72°F to Celsius.",
        "lorem ipsum dolor sit amet, I am a test string",
        "I used to smoke but I might start again",  # the past, then a hedge
        "Learning Rust is hard",  # an "-ing" subject, not a dropped "I'm"
        "working from home is great honestly",
    ],
)
def test_what_is_not_meant_of_the_user_yields_nothing(text: str) -> None:
    """Role play, tests, hedges, requests for something written, jokes, the rest of someone
    else's sentence: nothing of the user's."""
    assert said(text) == []


def test_a_reply_that_turns_something_down_is_no_state_of_the_users() -> None:
    turns = [
        Turn(1, "user", "any diet ideas?"),
        Turn(2, "assistant", "You could try intermittent fasting."),
        Turn(3, "user", "Not intermittent fasting, no. Something else please."),
    ]
    assert extract(turns) == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I drive a 2018 Subaru Outback, if that matters for the tyres", "Subaru Outback"),
        ("I'm vegan (if that helps)", "vegan"),
        ("I'm 34 and training for my first half marathon in October", "34"),  # rules can't
        ("Type 1 diabetic since childhood, on a pump. Tips for eating out?", "diabetic"),
        ("Sixty-three and just retired.", "sixty-three"),
        ("Not a morning person, at all. Help me plan a routine.", "not a morning person"),
        ("I used to live in Berlin but I've been in Munich for 4 years now", "Munich"),
        ("Was a night guard until March, now I do day shifts at a data centre.", "day shifts"),
    ],
)
def test_what_a_rule_cannot_read_or_an_aside_leaves_is_read(text: str, fact: str) -> None:
    assert any(fact in found for _, found in said(text)), said(text)


def test_a_change_read_as_no_fact_is_offered_in_the_users_words_as_an_update_only() -> None:
    """The pipeline stores it only when it updates a memory (tests/integration)."""
    (found,) = extract([Turn(1, "user", "dropped Spanish, doing Italian now")])
    assert found.fact == 'The user said: "dropped Spanish, doing Italian now"'
    assert found.updates_only


@pytest.mark.parametrize(
    "text",
    [
        "my wife switched to Android",  # someone else's change
        "not switching to Android",  # no change
        "switched to Zed last month",  # read as a fact of its own
        "did we switch the standup to Thursdays?",  # asked
    ],
)
def test_no_update_only_offer_for_what_is_not_a_change_of_the_users(text: str) -> None:
    assert not any(c.updates_only for c in extract([Turn(1, "user", text)]))
