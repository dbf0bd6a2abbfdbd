"""Near-duplicates: when a new memory restates one already stored (pure, but for the probe).

A text's *fact key* (:func:`fact_key`) is the same for any two texts one of which restates the
other, so a write's probe reads only the entries of its scope with its key (an index lookup,
whatever the size of the scope), then keeps those with a close embedding. A close embedding
only nominates candidates: "Grace bought green tea on Monday" and "Grace sold
green tea on Monday" are nearly the same vector and different facts. Two texts state the same
fact only if they have the same *content words* — after case, punctuation, contractions,
articles and a few empty intensifiers are normalised away — in the same order, except that one
phrase may have moved ("On Monday, Grace bought tea" restates "Grace bought tea on Monday";
"Bob owes Alice" does not restate "Alice owes Bob"). Numbers, negations, tense and every other
word therefore block a merge. A fact that updates another is not a duplicate either.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..patterns import lazy
from ..types import MemoryEntry
from .ops import Filter, GetManyOp, PutOp, TwinsOp

FILLER = frozenset(
    "a an the is are am really very actually indeed truly quite also basically literally "
    "honestly".split()
)
"""Words whose presence never changes the fact a sentence states (articles, the present
copula — "the build's green" is "the build is green" —, empty intensifiers)."""
_PREAMBLE = lazy(
    r"^\s*(?:fyi|btw|ps|note|reminder|so|just so you know|by the way|for the record|"
    r"remember(?: that)?|please remember(?: that)?)\b[\s,:;.-]*",
    re.IGNORECASE,
)
"""A discourse opener that frames a fact without being part of it ("FYI, …", "Note: …")."""
_TRAILER = lazy(r"[\s,;]+(?:by the way|btw|fyi)[\s.!]*$", re.IGNORECASE)
MAX_MOVED_WORDS = 200
"""Longer texts merge only when their content words are identical in order."""
FACT_KEYS = 1
"""The version of :func:`fact_key`'s rule; a store whose keys were made by another is keyed
again when it opens."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_CONTRACTIONS = (
    (lazy(r"\bwon't\b", re.IGNORECASE), "will not"),
    (lazy(r"\bshan't\b", re.IGNORECASE), "shall not"),
    (lazy(r"\bcan't\b|\bcannot\b", re.IGNORECASE), "can not"),
    (lazy(r"n't\b", re.IGNORECASE), " not"),
    (lazy(r"'re\b", re.IGNORECASE), " are"),
    (lazy(r"'m\b", re.IGNORECASE), " am"),
    (lazy(r"'ve\b", re.IGNORECASE), " have"),
    (lazy(r"'ll\b", re.IGNORECASE), " will"),
    (lazy(r"'d\b", re.IGNORECASE), " would"),
    (
        lazy(r"\b(he|she|it|that|there|what|who|where|here|how|let)'s\b", re.IGNORECASE),
        r"\1 is",
    ),
    (lazy(r"'s\b|(?<=s)'(?!\w)", re.IGNORECASE), ""),  # possessives: the user's, the users'
)
_WORD = lazy(r"\d+(?:[.,]\d+)*|[^\W\d_]+|[^\w\s]")
_THOUSANDS = lazy(r"^\d{1,3}(?:,\d{3})+$")
_SIGN = lazy(r"(?<!\d)-(?=\d)")
"""A minus sign ("-18°C", "UTC-2"), not a hyphen ("2024-03-05", "t-shirt")."""
_ORDINAL = frozenset({"st", "nd", "rd", "th"})
_KEPT_PUNCTUATION = frozenset("%‰#?")
"""Punctuation that carries meaning: percent, number sign, and a question's mark."""


@lru_cache(maxsize=4096)
def content_words(text: str) -> tuple[str, ...]:
    """The words that carry a text's fact, in order: openers ("FYI, …") and filler dropped,
    contractions expanded, case folded (but for mixed-case words: "MBps" is not "Mbps"),
    thousands separators and ordinal suffixes dropped ("1,000" is "1000", "12th" is "12"),
    punctuation dropped — but not signs and symbols: "€450" is not "$450", "-18°C" is not
    "18°C", "C++" is not "C", "> 90%" is not "< 90%", "👍" is not "👎", and a question is not
    a statement."""
    text = _TRAILER.sub("", _PREAMBLE.sub("", unicodedata.normalize("NFKC", text), count=1))
    text = _SIGN.sub("\u2212", text.translate(_APOSTROPHES))
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    words: list[str] = []
    for word in map(_normal, _WORD.findall(text)):
        if word in FILLER or (word in _ORDINAL and words and words[-1][0].isdigit()):
            continue
        if _punctuation(word):
            continue
        words.append(word)
    return tuple(words)


def _punctuation(word: str) -> bool:
    """Punctuation says nothing; symbols (math, currency, arrows, marks, emoji) do."""
    if len(word) != 1 or word.isalnum() or word in _KEPT_PUNCTUATION:
        return False
    return unicodedata.category(word)[0] != "S"


def _normal(word: str) -> str:
    if word[0].isdigit():
        return _number(word)
    if word.islower() or word.isupper() or word.istitle():
        return word.casefold()
    return word


def _number(word: str) -> str:
    """Thousands separators dropped; decimals kept as written ("3.10" is not "3.1")."""
    return word.replace(",", "") if _THOUSANDS.match(word) else word


def restates(a: str, b: str) -> bool:
    """Whether ``b`` states the same fact as ``a``: the same content words in the same order,
    but for one opening phrase of two or more words moved (fronted, or moved to the back: "On
    Monday, Grace bought tea" restates "Grace bought tea on Monday"; "Only admins can delete"
    does not restate "Admins can only delete", nor "users, orders" "orders, users")."""
    x, y = content_words(a), content_words(b)
    if x == y:
        return bool(x) or (bool(a.strip()) and a.strip() == b.strip())
    if len(x) != len(y) or len(x) > MAX_MOVED_WORDS or sorted(x) != sorted(y):
        return False
    start = next(i for i, (p, q) in enumerate(zip(x, y, strict=True)) if p != q)
    end = len(x)
    while x[end - 1] == y[end - 1]:
        end -= 1
    left, right = x[start:end], y[start:end]
    if start > 0 or len(left) < 4:  # not an opening phrase; or two single words swapped
        return False
    moved = (k for k in range(2, len(left) - 1) if right == left[k:] + left[:k])
    return next(moved, None) is not None


def fact_key(text: str) -> int:
    """A signed 64-bit key that two texts share whenever one restates the other: a hash of
    their content words, sorted (:func:`restates` requires the same words, in any order)."""
    words = "\x1f".join(sorted(content_words(text))).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(words, digest_size=8).digest(), "little", signed=True)


def probe_filter(op: PutOp) -> Filter | None:
    """Which entries a new entry's near-duplicate check compares it with, if it is checked:
    its whole scope (vectors are indexed per scope), current and live when it was created (a
    superseded entry is history: restating it makes a new current entry)."""
    if op.duplicate_threshold <= 0 or len(op.chunks) != 1 or op.chunks[0].vector is None:
        return None
    return Filter(op.tenant, (op.entry.scope,), live_at=op.entry.created_at, superseded="hide")


class Reader(Protocol):
    """The handlers of a backend the in-transaction check needs."""

    def op_twins(self, tx: Any, op: TwinsOp) -> list[list[str]]: ...
    def op_get_many(self, tx: Any, op: GetManyOp) -> list[MemoryEntry]: ...


def stored_duplicates(backend: Reader, tx: Any, puts: Sequence[PutOp]) -> list[MemoryEntry | None]:
    """For each put, the live entry its entry restates (same scope and category, cosine at
    least the put's threshold), found and read by ``backend`` inside its write transaction
    ``tx``: each scope probed once for all its puts created at the same instant (the entries
    of their fact keys), and every nominee read at once."""
    nominated = _nominated(backend, tx, puts)
    wanted: dict[str, set[str]] = defaultdict(set)
    for i, ids in nominated.items():
        wanted[puts[i].tenant].update(ids)
    stored = {
        (tenant, entry.id): entry
        for tenant, ids in wanted.items()
        for entry in backend.op_get_many(tx, GetManyOp(tenant, tuple(sorted(ids))))
    }
    return [
        next(
            (
                twin
                for i in nominated.get(n, ())
                if same_fact(twin := stored.get((put.tenant, i)), put.entry)
            ),
            None,
        )
        for n, put in enumerate(puts)
    ]


def _nominated(backend: Reader, tx: Any, puts: Sequence[PutOp]) -> dict[int, list[str]]:
    """The near-duplicate candidates of each checked put, by its position."""
    groups: dict[tuple[Filter, float, int], list[int]] = defaultdict(list)
    for n, put in enumerate(puts):
        where = probe_filter(put)
        if where is not None:
            groups[where, put.duplicate_threshold, len(_vector(put))].append(n)
    nominated: dict[int, list[str]] = {}
    for (where, threshold, _), members in groups.items():
        keys = tuple(fact_key(puts[n].entry.content) for n in members)
        vectors = np.stack([_vector(puts[n]) for n in members])
        twins = TwinsOp(where, keys, vectors, threshold=threshold)
        nominated.update(zip(members, backend.op_twins(tx, twins), strict=True))
    return nominated


def _vector(put: PutOp) -> npt.NDArray[np.float32]:
    vector = put.chunks[0].vector
    assert vector is not None
    return vector


Vector = bytes | npt.NDArray[np.float32]


def twins_among(rows: Iterable[tuple[str, int, Vector]], op: TwinsOp) -> list[list[str]]:
    """:class:`TwinsOp` answered from ``rows`` (entry id, fact key, one of its chunks' vector:
    float32 bytes or an array) of the entries that pass its filter: for each of its rows, the
    entries of its key with a chunk at cosine >= the threshold, closest first (then by id)."""
    of_key: dict[int, list[tuple[str, npt.NDArray[np.float32]]]] = defaultdict(list)
    for entry_id, key, vector in rows:
        chunk = np.frombuffer(vector, np.float32) if isinstance(vector, bytes) else vector
        of_key[key].append((entry_id, chunk))
    found = []
    for key, vector in zip(op.keys, op.vectors, strict=True):
        best: dict[str, float] = {}
        for entry_id, chunk in of_key.get(key, ()):
            cosine = float(chunk @ vector)
            if cosine >= op.threshold and cosine > best.get(entry_id, -np.inf):
                best[entry_id] = cosine
        found.append(sorted(best, key=lambda entry_id: (-best[entry_id], entry_id)))
    return found


def same_fact(existing: MemoryEntry | None, entry: MemoryEntry) -> bool:
    """Whether ``entry`` restates ``existing``, an entry of the same category."""
    return (
        existing is not None
        and existing.category == entry.category
        and restates(existing.content, entry.content)
    )


def earlier_duplicates(
    vectors: npt.NDArray[np.float32],
    texts: Sequence[str],
    groups: Sequence[object],
    eligible: npt.NDArray[np.bool_],
    *,
    threshold: float,
    block: int = 1024,
) -> list[int | None]:
    """Within one batch: for each row, the first earlier eligible row of its group that it
    restates with cosine >= threshold and that is not itself a duplicate (else None)."""
    n = len(vectors)
    twins: list[int | None] = [None] * n
    if threshold <= 0 or n < 2:
        return twins
    for start in range(0, n, block):
        similarity = vectors[start : start + block] @ vectors.T
        for offset, row in enumerate(similarity):
            i = start + offset
            if not eligible[i]:
                continue
            twins[i] = next(
                (
                    j
                    for j in map(int, np.flatnonzero(row[:i] >= threshold))
                    if eligible[j]
                    and twins[j] is None
                    and groups[j] == groups[i]
                    and restates(texts[j], texts[i])
                ),
                None,
            )
    return twins
