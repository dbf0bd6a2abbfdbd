"""What a short user turn means in its dialogue: an accepted suggestion ("fine, Fly.io then"
after the assistant proposed it) or a correction ("*Deloitte, typo", "sorry, 43 not 34").

Pure functions over text. The user's own words carry the content either way: an accepted
option is the one the user names (the assistant's turn only tells that it was proposed), a
correction's new value is the user's and its fact the user stated earlier in the window.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.retrieval.text import STOPWORDS

from ..patterns import lazy

_REFUSED = lazy(
    r"\b(?:no|nope|nah|not|neither|never|don't|do not|rather not|instead of|hate|skip)\b|\?", re.I
)
"""A reply that turns a suggestion down, or asks about it, accepts nothing."""
_CUE_WORDS = frozenset(
    """ok okay sure fine yes yeah yep yup agreed deal done go let's lets let us then it is
    sounds good great perfect right works for me love like that one the a an with i'll we'll
    definitely thanks cool nice""".split()
)
_STATES = lazy(r"\s*(?:I|we)\b(?!'ll|\s+will)", re.I)
"""A reply that opens with "I" or "we" is a statement, read as one ("I use Postgres" answers a
question; "I'll take the Kobo" takes a suggestion)."""
_PROPOSES = lazy(
    r"\b(?:or|options?|how about|you could|try|consider|suggest\w*|picks?|choices?|"
    r"recommend\w*|maybe|ideas?)\b|\?|:",
    re.I,
)
"""An assistant's turn that offers something to take."""
_LEADING = frozenset("went go going let's lets say take pick choose with then".split())
_WORD = lazy(r"[\w][\w.+#/&:'-]*[\w+#]|\w")
MAX_WORDS = 14
"""A reply longer than this is a statement of its own, not an acceptance."""


def accepted(reply: str, proposal: str) -> str | None:
    """The option of the assistant's ``proposal`` that the user's ``reply`` takes, in the
    user's words ("zustand sounds right, go" → "zustand"); ``None`` when it takes none."""
    return None if _REFUSED.search(reply) else _named_option(reply, proposal)


def refused(reply: str, proposal: str) -> bool:
    """Whether the user's short ``reply`` turns down, or asks about, an option the assistant's
    ``proposal`` offered ("Not intermittent fasting, no."): the reply states nothing then."""
    return bool(_REFUSED.search(reply)) and _named_option(reply, proposal) is not None


def _named_option(reply: str, proposal: str) -> str | None:
    """The option of ``proposal`` a short reply that is no statement of its own names."""
    words = _WORD.findall(reply)
    if not words or len(words) > MAX_WORDS or _STATES.match(reply):
        return None
    if not _PROPOSES.search(proposal):
        return None
    lowered = proposal.casefold()
    for size in (4, 3, 2, 1):
        for start in _openings(words):
            phrase = words[start : start + size]
            if len(phrase) == size and _named(phrase) and _proposed(" ".join(phrase), lowered):
                return " ".join(phrase)
    return None


def choice(option: str) -> str:
    """The fact an accepted option makes: the user's decision."""
    return f"The user chose {option}."


def _openings(words: Sequence[str]) -> list[int]:
    """Where the option may start: the reply's first word past its cue words ("ok, go with
    the …"), and the first past a short cue clause ("buttons sold me, the Libra it is")."""
    starts = []
    for at, word in enumerate(words):
        lower = word.casefold()
        if lower not in _CUE_WORDS and lower not in _LEADING and lower not in STOPWORDS:
            starts.append(at)
            break
    return starts + [i for i in range(len(words)) if i not in starts and i <= 4]


def _named(phrase: Sequence[str]) -> bool:
    """A phrase that names something: its ends are not cue or function words."""
    ends = (phrase[0].casefold(), phrase[-1].casefold())
    return not any(end in _CUE_WORDS or end in STOPWORDS for end in ends)


def _proposed(phrase: str, proposal: str) -> bool:
    """Whether the assistant's words name ``phrase`` ("Cliftons" for "Hoka Clifton", "10:30"
    for "10:30pm")."""
    stem = re.escape(phrase.casefold().removesuffix("s"))
    return re.search(rf"(?<![\w]){stem}(?:s|es|[a-z]{{0,2}})?(?![\w])", proposal) is not None


@dataclass(frozen=True, slots=True)
class Corrected:
    """A corrected fact: which earlier fact, the value it had and has, and the fact as it
    should be."""

    index: int
    wrong: str
    right: str
    fact: str


_CORRECTING = lazy(
    r"^\s*\*|\b(?:typo|I meant|sorry|actually|correction|make that|wait|my bad|autocorrect|"
    r"to be precise|fat fingers|missed a|scratch that|oops|technically|not)\b",
    re.I,
)
_NOT_VALUES = frozenset(
    """i i'm sorry typo wait oops actually correction update no nope well technically make
    scratch my it it's that's fat missed autocorrect lol ok okay""".split()
)
_VALUE = lazy(r"\d[\w:.,/-]*|[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*")
_NOT = lazy(r"\bnot\s+(?:a |an |the )?(?P<wrong>[\w:.'/-]+(?:\s+[A-Z][\w'-]*)*)", re.I)


def corrected(reply: str, earlier: Sequence[str]) -> Corrected | None:
    """The earlier fact (latest first) that ``reply`` corrects, with the new value in place of
    the old: the one it names after "not", else one whose value the new one nearly spells (a
    typo) or is a number like it."""
    if not _CORRECTING.search(reply) or len(_WORD.findall(reply)) > MAX_WORDS:
        return None
    named = _NOT.search(reply)
    taken_back = named["wrong"].rstrip(".,;:!") if named else None
    right = _new_value(reply, taken_back)
    if right is None:
        return None
    for index in range(len(earlier) - 1, -1, -1):
        fact = earlier[index]
        wrong = _replaced(fact, right, taken_back)
        if wrong is not None and wrong.casefold() != right.casefold():
            pattern = rf"(?<!\w){re.escape(wrong)}(?!\w)"
            fixed = re.sub(pattern, lambda _: right, fact, count=1)
            return Corrected(index, wrong, right, fixed)
    return None


def _new_value(reply: str, wrong: str | None) -> str | None:
    """The first value of the reply (a number, a name) that is not the wrong one."""
    for found in _VALUE.finditer(reply.lstrip("* ")):
        value = found[0].rstrip(".,")
        fresh = wrong is None or value.casefold() != wrong.casefold()
        if fresh and value.casefold() not in _NOT_VALUES:
            return value
    return None


def _replaced(fact: str, right: str, wrong: str | None) -> str | None:
    """The value of ``fact`` that ``right`` replaces."""
    if wrong is not None:
        found = re.search(rf"(?<!\w){re.escape(wrong)}(?!\w)", fact, re.I)
        return found[0] if found else None
    values = [v[0].rstrip(".,") for v in _VALUE.finditer(fact) if v[0] not in ("The",)]
    for value in reversed(values):
        typo = difflib.SequenceMatcher(None, value.casefold(), right.casefold()).ratio() >= 0.75
        number = value[:1].isdigit() and right[:1].isdigit()
        if typo or number:
            return value
    return None
