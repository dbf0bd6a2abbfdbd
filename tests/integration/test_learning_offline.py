"""The offline learner end to end, one class of sentence at a time: turns in through
``add_turn``, learned by ``flush`` with no LLM, memories out where they belong — and updates
through ``history()``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memvault import Memory, MemoryEntry, Settings
from memvault.embeddings.base import Embedder, Vectors
from memvault.embeddings.local import MODEL_NAME, shared_model
from memvault.testing import HashEmbedder, ManualClock

Said = list[tuple[str, str]]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    path = Path(tmp_path_factory.mktemp("offline")) / "m.db"
    settings = Settings(extraction="heuristic")
    with Memory(f"sqlite:///{path}", settings=settings, embedder=HashEmbedder()) as opened:
        yield opened


def _learn(memory: Memory, user: str, said: Said) -> tuple[list[str], list[str]]:
    """What Global Memory and Session Memory hold after each turn of ``said`` is learned."""
    session = memory.create_session(user)
    _say(memory, session.id, said)
    global_memory = [f"{e.category}: {e.content}" for e in memory.global_memory(user)]
    session_memory = [f"{e.category}: {e.content}" for e in memory.session_memory(session.id)]
    return global_memory, session_memory


def _say(memory: Memory, session: str, said: Said) -> None:
    for text, answer in said:
        memory.add_turn(session, user=text, assistant=answer)
        assert memory.flush(timeout=60)


@pytest.mark.parametrize(
    ("kind", "said", "learned"),
    [
        ("unlisted verb", [("I swear by pytest-style fixtures", "Noted.")], "pytest-style"),
        ("we", [("we've settled on ClickHouse for analytics", "Good.")], "ClickHouse"),
        ("dropped subject", [("living in Porto at the moment", "Nice.")], "Porto"),
        ("in a question", [("Being a night-shift paramedic, how do I sleep?", "Ok.")], "paramedic"),
        ("memory request", [("please remember my dentist is on the 3rd", "Sure.")], "3rd"),
        (
            "routing",
            [("I have an axolotl named Gus", "Cute!")],
            "identity: The user has an axolotl",
        ),
        (
            "accepted suggestion",
            [
                ("which e-reader?", "Try the Kindle Paperwhite or the Kobo Clara."),
                ("kobo then", "Ok."),
            ],
            "decision: The user chose kobo.",
        ),
    ],
)
def test_each_class_is_learned(memory: Memory, kind: str, said: Said, learned: str) -> None:
    global_memory, session_memory = _learn(memory, kind.replace(" ", "-"), said)
    assert any(learned in m for m in global_memory + session_memory), (
        global_memory,
        session_memory,
    )


def test_a_sentence_with_several_facts_gives_each(memory: Memory) -> None:
    said = [("I'm Hana, I'm Czech, I live in Vienna and I work as a translator", "Hi!")]
    global_memory, _ = _learn(memory, "hana", said)
    for part in ("Hana", "Czech", "Vienna", "translator"):
        assert any(part in m for m in global_memory), global_memory


@pytest.mark.parametrize(
    "said",
    [
        "I used to smoke",  # the past
        "If I were a teacher, how would I grade this essay?",  # a hypothetical question
        "yes I'm totally a professional chef, that's why I burnt the rice",  # sarcasm
        "sure, because I'm a millionaire",
        "My brother is a firefighter in Phoenix",  # someone else's
        "I'll take option B",  # points at the chat
        "lol ok",
    ],
)
def test_what_is_not_learned(memory: Memory, said: str) -> None:
    assert _learn(memory, f"none-{abs(hash(said))}", [(said, "Ok.")]) == ([], [])


def test_a_move_supersedes_the_old_home_with_history(tmp_path: Path) -> None:
    with _fresh(tmp_path) as memory:
        _learn(memory, "mover", [("I live in Bristol", "Nice."), ("we moved to Cardiff", "Wow.")])
        (home,) = memory.global_memory("mover")
        assert "Cardiff" in home.content
        (old,) = [v for v in memory.history(home.id).versions if "Bristol" in v.content]
        assert old.superseded_by == home.id


def test_a_correction_replaces_the_fact_it_corrects(tmp_path: Path) -> None:
    with _fresh(tmp_path) as memory:
        said = [("I work at Deloite as an auditor.", "Ok."), ("*Deloitte, typo", "Noted.")]
        global_memory, _ = _learn(memory, "auditor", said)
        assert any("Deloitte" in m for m in global_memory)
        assert not any("Deloite " in f"{m} " or "Deloite." in m for m in global_memory)


def test_a_correction_retires_only_the_statement_it_corrects(tmp_path: Path) -> None:
    with _fresh(tmp_path) as memory:
        said = [
            ("I run 34 km a week.", "Nice."),
            ("I'm 34, what health screenings should I get?", "At 34, blood pressure."),
            ("sorry, 43 not 34", "Noted."),
        ]
        global_memory, session_memory = _learn(memory, "runner", said)
        assert any("34 km" in m for m in global_memory + session_memory)
        assert any("43" in m for m in global_memory + session_memory)


def test_two_pets_coexist(tmp_path: Path) -> None:
    with _fresh(tmp_path) as memory:
        said = [("I have a dog named Rex", "Nice."), ("we also got a cat named Luna", "Cute.")]
        global_memory, _ = _learn(memory, "pets", said)
        assert any("Rex" in m for m in global_memory) and any("Luna" in m for m in global_memory)


@pytest.mark.parametrize(
    ("earlier", "later", "old", "new"),
    [
        ("we use Jira for tickets", "we ditched Jira for Linear", "Jira for tickets", "Linear"),
        ("I weigh 92 kg", "down to 84 kg!", "92 kg", "84 kg"),
        ("I drink like 4 coffees a day", "quit coffee completely two weeks ago", "4", "quit"),
        ("my budget for the sofa is £800", "bumped the sofa budget to £1,000", "£800", "£1,000"),
        ("I use VS Code for everything", "switched to Zed last month", "VS Code", "Zed"),
        ("using Poetry for deps", "moved all my projects to uv", "Poetry", "uv"),
        ("rent is 1,400 a month", "rent went up to 1,550", "1,400", "1,550"),
        (
            "I'm learning Spanish on Duolingo",
            "dropped Spanish, doing Italian now",
            "Duo",
            "Italian",
        ),
    ],
)
def test_a_stated_change_supersedes_what_it_changes(
    tmp_path: Path, earlier: str, later: str, old: str, new: str
) -> None:
    """Among the user's other memories, the one the change is about is superseded by the new
    fact, kept in its history; the others stay."""
    others = [("I have a dog named Rex", "Nice."), ("I live in Bristol", "Nice.")]
    with _fresh(tmp_path) as memory:
        session = memory.create_session("changer").id
        _say(memory, session, [*others, (earlier, "Noted."), (later, "Noted.")])
        current = _held(memory, "changer", session)
        (updated,) = [e for e in current if new in e.content]
        assert not any(old in e.content for e in current if e is not updated), current
        (was,) = [v for v in memory.history(updated.id).versions if old in v.content]
        assert was.superseded_by == updated.id
        assert all(any(name in e.content for e in current) for name in ("Rex", "Bristol"))


@pytest.mark.parametrize(
    "said",
    [
        [("I decided to go car-free from next month", "Ok."), ("Quit vaping six months ago", "!")],
        [
            ("we're both night-shift nurses", "Ok."),
            ("Coffee after 2pm wrecks my sleep. What's a good pick-me-up instead?", "Tea."),
        ],
        [
            ("vegetarian for 8 years now", "Ok."),
            ("I live with epilepsy, seizure-free for two years now.", "Good."),
        ],
        [("I speak French", "Ok."), ("I'm learning Japanese too", "Nice.")],
    ],
)
def test_what_is_no_change_retires_nothing(tmp_path: Path, said: Said) -> None:
    with _fresh(tmp_path) as memory:
        session = memory.create_session("steady").id
        _say(memory, session, said[:1])
        before = {e.id for e in _held(memory, "steady", session)}
        assert before
        _say(memory, session, said[1:])
        assert before <= {e.id for e in _held(memory, "steady", session)}


def test_a_change_that_updates_nothing_held_stores_nothing(tmp_path: Path) -> None:
    """The user's words of a change no fact was read from are kept only as an update."""
    with _fresh(tmp_path) as memory:
        session = memory.create_session("newcomer").id
        _say(memory, session, [("dropped Spanish, doing Italian now", "Nice.")])
        assert _held(memory, "newcomer", session) == []


def _held(memory: Memory, user: str, session: str) -> list[MemoryEntry]:
    return [*memory.global_memory(user), *memory.session_memory(session)]


class _Watched(Embedder):
    """The packaged model, noting every text it is asked to embed."""

    name, dimension = MODEL_NAME, 384

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return shared_model().embed_batch(texts)


def test_a_judged_fact_is_stored_with_the_judges_embedding(tmp_path: Path) -> None:
    """The judge embedded the statement with the store's model: it is not embedded twice, and
    it is found by what it says."""
    watched = _Watched()
    settings = Settings(extraction="heuristic")
    with Memory(f"sqlite:///{tmp_path}/m.db", settings=settings, embedder=watched) as memory:
        session = memory.create_session("judged").id
        _say(memory, session, [("I swear by pytest-style fixtures", "Noted.")])
        (fact,) = [e for e in _held(memory, "judged", session) if "pytest" in e.content]
        assert fact.content not in watched.texts
        (hit, *_) = memory.search("what does the user think of pytest fixtures", fact.scope)
        assert hit.entry.id == fact.id


def _fresh(folder: Path) -> Memory:
    settings = Settings(extraction="heuristic")
    return Memory(
        f"sqlite:///{folder}/m.db", settings=settings, embedder=HashEmbedder(), clock=ManualClock()
    )
