# ruff: noqa: RUF001, RUF002  (Cyrillic, Greek and Turkish letters, named)
"""Untrusted text made plain (pure): what a model or a scanner should see of it.

:func:`normalise` is the text a model is shown — NFKC, without the invisible characters that hide
words from a human reviewer (zero-width, bidi controls, soft hyphen, tag characters) and without
control characters. :func:`fold` is the coarser view the injection scanner matches on: also
without accents and with Cyrillic/Greek look-alikes mapped to Latin, and with, for each of its
characters, the index in the original text it came from, so that a match can be reported where
it is in the text the caller holds. :func:`fold_pattern` spells a pattern written in a language's
own letters the way :func:`fold` spells text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from ..patterns import lazy

INVISIBLE = lazy(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)
"""Characters that render as nothing (or reorder what is around them): they can split a word so
that a filter misses it, or hide a whole instruction (tag characters spell ASCII invisibly)."""
TAG_CHARACTERS = lazy("[\U000e0000-\U000e007f]+")
_CONTROL = lazy("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = lazy("[\ud800-\udfff]")
_SEPARATOR = lazy("[\u2028\u2029\x85]")

CONFUSABLES = str.maketrans(
    # Cyrillic
    "аеорсухіјѕԁһӏԛԝкАВЕКМНОРСТХІЈЅԜӀ"
    # Greek
    "αεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
    # Latin variants, curly apostrophes
    "ıȷɡɑℓ\u2019\u2018\u02bc",
    "aeopcyxijsdhlqwkABEKMHOPCTXIJSWIaeikvoptuxABEZHIKMNOPTYXijgal'''",
)
"""Cyrillic and Greek letters that look like Latin ones (NFKC leaves them), mapped to the Latin
letter a reader sees (Cyrillic i, o and e spell ``ignore`` to a model); curly apostrophes
become ``'``."""


def normalise(text: str) -> str:
    """NFKC without invisible and control characters; line and paragraph separators become
    newlines and lone surrogates U+FFFD."""
    text = _SURROGATE.sub("\ufffd", text)
    text = _SEPARATOR.sub("\n", text)
    return unicodedata.normalize("NFKC", _CONTROL.sub("", INVISIBLE.sub("", text)))


def fold(text: str) -> tuple[str, Sequence[int]]:
    """The scanning view of ``text`` and, for each of its characters, the index in ``text`` it
    came from: normalised, without accents, look-alike letters mapped to Latin."""
    if text.isascii() and not _CONTROL.search(text):
        return text, range(len(text))
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(normalise_char(c) for c in text):
        chars.append(char)
        origin.extend([index] * len(char))
    return "".join(chars), origin


@lru_cache(maxsize=8192)
def normalise_char(char: str) -> str:
    """One character's contribution to :func:`fold` (possibly empty, possibly several)."""
    if _SEPARATOR.match(char):
        return "\n"
    if INVISIBLE.match(char) or _CONTROL.match(char):
        return ""
    if _SURROGATE.match(char):
        return "\ufffd"
    decomposed = unicodedata.normalize("NFKD", char)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return plain.translate(CONFUSABLES)


_OWN_LETTERS = frozenset("\u0131")
"""Letters :data:`CONFUSABLES` maps that are ordinary letters of a Latin alphabet: the dotless
ı of Turkish and Azerbaijani ("Anahtarlarımı") is folded to ``i`` for matching, but a word
holding it is no homoglyph."""


def fold_pattern(pattern: str) -> str:
    """A regular expression written in a language's own letters (ASCII letters in lower case),
    spelled as :func:`fold` spells text, in lower case: each letter as it folds in both cases (a
    capital Cyrillic Т folds to Latin T, a small т stays), so hangul becomes jamo and dakuten
    fall away; match it on lowered folded text. A character outside ASCII that folds to
    something else may not stand in a character class or carry a quantifier of its own."""
    spelled: list[str] = []
    in_class = escaped = False
    for index, char in enumerate(pattern):
        if escaped or char.isascii():
            if not escaped:
                in_class = char == "[" or (in_class and char != "]")
                if char.isupper():
                    raise ValueError(f"{char!r} in upper case: {pattern!r}")
            escaped = not escaped and char == "\\"
            spelled.append(char)
            continue
        forms = list(dict.fromkeys(normalise_char(c).lower() for c in (char.lower(), char.upper())))
        following = pattern[index + 1 : index + 2]
        if (in_class or (following and following in "?*+{")) and forms != [char]:
            raise ValueError(f"{char!r} in a class or quantified alone: {pattern!r}")
        spelled.append(forms[0] if len(forms) == 1 else f"(?:{'|'.join(forms)})")
    return "".join(spelled)


def mixes_scripts(word: str) -> bool:
    """Whether a word mixes Latin letters with Cyrillic or Greek look-alikes (a homoglyph)."""
    latin = any("a" <= c.lower() <= "z" for c in word)
    return latin and any(
        c.isalpha() and not c.isascii() and c not in _OWN_LETTERS and c.translate(CONFUSABLES) != c
        for c in word
    )


def decode_tag_characters(run: str) -> str:
    """The ASCII a run of tag characters spells (U+E0020 to U+E007E are space to tilde)."""
    return "".join(chr(ord(c) - 0xE0000) for c in run if 0xE0020 <= ord(c) <= 0xE007E)


_UNSHOWABLE = lazy(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""Control characters (all but tab and line feed), line and paragraph separators, and
bidirectional marks and overrides: a terminal obeys them (escape sequences set titles, move the
cursor, write the clipboard; separators break lines unseen; overrides reorder what is shown)."""


def visible(text: str) -> str:
    """``text`` safe to print on a terminal: each control character and bidirectional override
    written out as an escape (``\\x1b``, ``\\u202e``), nothing else changed."""
    return _UNSHOWABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
