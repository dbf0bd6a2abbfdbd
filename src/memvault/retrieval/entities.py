"""Text → entity keys (pure): the names, speakers and noun phrases an entry is about.

No model: a rule reader that costs microseconds a text, so a scope of a million entries is
indexed in the time its words are (spaCy's tagger costs 5 ms a text: docs/benchmarks.md).

- **Names** (``n:``): runs of capitalised words ("Charlotte's Web", "LGBTQ", "Jonathan
  Reyes"), a sentence's first word too unless it is a common word ("Thanks", "Yesterday").
  A name of several words is also keyed by each word, so "Jonathan" finds "Jonathan Reyes".
- **Speakers** (``s:``): the name before the colon that opens a transcript line
  ("Caroline: I went…", also after a time stamp), by each of its words.
- **Phrases** (``p:``): two content words side by side ("pottery class", "homeless
  shelter").

Keys are normalised like lexical terms (case, diacritics, possessives, Porter stems: plurals
and "visited"/"visits" are one) so a question's keys meet an entry's whatever their form. How
rare a key is in the scope weighs it (BM25 over the keys:
:class:`memvault.retrieval.lexical.LexicalIndex`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..patterns import lazy
from .text import STOPWORDS, stems, tokens

ENTITY_ANALYZER = "entities-1"
"""Names the rules; an index built by other rules is rebuilt."""

_APOSTROPHES = "'\u2019"
_WORD = lazy(rf"[^\W\d_][^\W_]*(?:[{_APOSTROPHES}][^\W\d_]+)*", re.UNICODE)
_NAME_WORD = rf"[^\W\d_][\w{_APOSTROPHES}-]*"
_SPEAKER = lazy(rf"\A(?:[^\n:]|:(?=\S)){{0,40}}?\b({_NAME_WORD}(?: {_NAME_WORD}){{0,2}}):\s")
_OPENS = frozenset('.!?:;\n"“”(')
COMMON = STOPWORDS | frozenset(
    """also although anyway anything aw awesome bye cheers congrats congratulations cool
    definitely everyone everything glad good great haha hello hey hi hmm honestly however
    i'd i'll i'm i've it's let's lol maybe nice no oh ok okay oops please really right so
    sorry sounds still sure thank thanks that's there's though today tomorrow totally
    well what's wow yay yeah yep yes yesterday yup""".split()
)
"""Words that open sentences without naming anything, and what is too common to be a
phrase's half."""


def _plain(word: str) -> str:
    """The word folded, without a possessive ending."""
    folded = word.casefold()
    return folded[:-2] if folded.endswith(("'s", "\u2019s")) else folded


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A folded word's terms (one, or several for "o'neil"), space-separated."""
    return " ".join(stems(tokens(word)))


def _opens(text: str, at: int) -> bool:
    """Whether the word at ``at`` opens the text or a sentence."""
    before = text[max(0, at - 8) : at].rstrip()
    if before:
        return before[-1] in _OPENS
    return not text[:at].strip()


def _names(text: str, words: list[re.Match[str]], plain: list[str]) -> list[list[int]]:
    """Runs of capitalised words (their indexes) joined by single spaces, common words left
    out. A run of one word that opens a sentence ("Researching adoption agencies…") counts
    only if the text also capitalises it elsewhere."""
    runs: list[tuple[bool, list[int]]] = []
    previous_end = -1
    for i, match in enumerate(words):
        if not match.group()[0].isupper() or plain[i] in COMMON:
            previous_end = -1
            continue
        if previous_end >= 0 and text[previous_end : match.start()] == " ":
            runs[-1][1].append(i)
        else:
            runs.append((_opens(text, match.start()), [i]))
        previous_end = match.end()
    inside = {plain[run[0]] for opens, run in runs if not opens and len(run) == 1}
    return [
        run
        for opens, run in runs
        if not opens or len(run) > 1 or plain[run[0]] in inside or _called(text, words[run[0]])
    ]


def _called(text: str, word: re.Match[str]) -> bool:
    """Whether the word is followed by a comma, as a name one calls someone by is
    ("Caroline, that's great!")."""
    return text[word.end() : word.end() + 1] == ","


def speaker(text: str) -> str | None:
    """The name that opens a transcript line ("…Caroline: text"), if any."""
    return line(text)[0]


def line(text: str) -> tuple[str | None, str]:
    """The speaker of a transcript line and what it says after its header (a time stamp,
    the name and a colon); None and the text when it is not one."""
    match = _SPEAKER.search(text)
    if match is None or not match[1][0].isupper() or _plain(match[1].split()[0]) in COMMON:
        return None, text
    return match[1], text[match.end() :]


def entity_keys(text: str) -> list[str]:
    """The entity keys of a text, in order of appearance (repeats kept)."""
    said_by, body = line(text)
    result = [] if said_by is None else [f"s:{k}" for k in stems(tokens(said_by))]
    words = list(_WORD.finditer(body))
    plain = [_plain(m.group()) for m in words]
    stemmed = [_stem(w) for w in plain]
    for run in _names(body, words, plain):
        parts = [stemmed[i] for i in run if stemmed[i]]
        if parts:
            result.append("n:" + " ".join(parts))
            if len(parts) > 1:
                result += [f"n:{p}" for p in parts]
    content = [
        len(w) > 2 and w not in COMMON and " " not in s for w, s in zip(plain, stemmed, strict=True)
    ]
    for i in range(len(words) - 1):
        if content[i] and content[i + 1] and _adjacent(body, words[i], words[i + 1]):
            result.append(f"p:{stemmed[i]} {stemmed[i + 1]}")
    return result


def _adjacent(text: str, first: re.Match[str], second: re.Match[str]) -> bool:
    """Only a space or a hyphen between two words (punctuation breaks a phrase)."""
    return text[first.end() : second.start()] in (" ", "-")


def query_entity_keys(query: str) -> list[str]:
    """A query's keys: its names, also as speakers ("What did Caroline say" finds the lines
    Caroline spoke), and its phrases; distinct, in order."""
    keys = entity_keys(query)
    names = [k[2:] for k in keys if k.startswith("n:") and " " not in k[2:]]
    return list(dict.fromkeys([*keys, *(f"s:{n}" for n in names)]))
