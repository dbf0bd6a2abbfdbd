"""Near-duplicates: when a new memory restates one already stored (pure, but for the probe).

A close embedding only nominates candidates: "Grace bought green tea on Monday" and "Grace sold
green tea on Monday" are nearly the same vector and different facts. Two texts state the same
fact only if they have the same *content words* — after case, punctuation, contractions,
articles and a few empty intensifiers are normalised away — in the same order, except that one
phrase may have moved ("On Monday, Grace bought tea" restates "Grace bought tea on Monday";
"Bob owes Alice" does not restate "Alice owes Bob"). Numbers, negations, tense and every other
word therefore block a merge. A fact that updates another is not a duplicate either.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ..retrieval.candidates import Candidates
from ..types import MemoryEntry
from .ops import Filter, PutOp, SearchOp

FILLER = frozenset("a an the really very actually indeed truly quite also".split())
"""Words whose presence never changes the fact a sentence states."""
MAX_MOVED_WORDS = 200
"""Longer texts merge only when their content words are identical in order."""
CANDIDATES = 16
"""Most near-duplicate candidates a write compares (same scope; then same category)."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_CONTRACTIONS = (
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"\bcan't\b|\bcannot\b"), "can not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"'m\b"), " am"),
    (re.compile(r"'ve\b"), " have"),
    (re.compile(r"'ll\b"), " will"),
    (re.compile(r"'d\b"), " would"),
    (re.compile(r"\b(he|she|it|that|there|what|who|where|here|how|let)'s\b"), r"\1 is"),
    (re.compile(r"'s\b|(?<=s)'(?!\w)"), ""),  # possessives: the user's, the users'
)
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")


@lru_cache(maxsize=4096)
def content_words(text: str) -> tuple[str, ...]:
    """The words that carry a text's fact, in order: case-folded, contractions expanded,
    thousands separators dropped, filler words removed."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    for pattern, replacement in _CONTRACTIONS:
        folded = pattern.sub(replacement, folded)
    words = (w.replace(",", "") if _THOUSANDS.match(w) else w for w in _WORD.findall(folded))
    return tuple(w for w in words if w not in FILLER)


def restates(a: str, b: str) -> bool:
    """Whether ``b`` states the same fact as ``a``: the same content words, at most one phrase
    moved (after the common start and end, one middle of three or more words is a rotation of
    the other)."""
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
    if len(left) < 3:  # two swapped words are a different fact ("won 3 2", "won 2 3")
        return False
    return any(right == left[k:] + left[:k] for k in range(1, len(left)))


def probe(op: PutOp) -> SearchOp | None:
    """The search that nominates near-duplicates of a new entry, if they should be looked for:
    the entry's whole scope (its vectors are cached per scope), live when it was created."""
    if op.duplicate_threshold <= 0 or len(op.chunks) != 1 or op.chunks[0].vector is None:
        return None
    where = Filter(op.tenant, (op.entry.scope,), live_at=op.entry.created_at)
    return SearchOp(where, None, (), op.chunks[0].vector)


def stored_duplicate(
    op: PutOp,
    search: Callable[[SearchOp], Candidates],
    get: Callable[[str], MemoryEntry | None],
) -> str | None:
    """The id of a live entry that ``op.entry`` restates (same scope and category, cosine at
    least the op's threshold), found inside the backend's write transaction; else None."""
    nominate = probe(op)
    if nominate is None:
        return None
    candidates = search(nominate)
    above = np.flatnonzero(candidates.dense >= op.duplicate_threshold)
    best = above[np.argsort(-candidates.dense[above], kind="stable")][:CANDIDATES]
    for entry_id in (str(candidates.entry_ids[i]) for i in best):
        existing = get(entry_id)
        if (
            existing is not None
            and existing.category == op.entry.category
            and restates(existing.content, op.entry.content)
        ):
            return entry_id
    return None


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
