"""What a hygiene report counts (pure): junk, secrets, stale entries, near-duplicates, and
the report itself (:class:`HygieneReport`, one :class:`ScopeHygiene` per scope).

Each class is decided by a function of what the store holds of an entry (:class:`~memvault.
store.ops.Surveyed`); :func:`survey` applies them to a scope's entries. Reports name ids and
sizes, never content or what a rule matched.

*Near-duplicates* are live entries of one scope whose first chunks' embeddings have a cosine
of at least :data:`NEAR_DUPLICATE_COSINE` — the same fact in other words, both stored because
a write merges only a restatement in the same words (:mod:`memvault.store.duplicates`). Up to
:data:`EXACT_UP_TO` entries every pair is compared. All pairs of 100k entries are too many, so
above that pairs are nominated by sorted signatures (Charikar's random-hyperplane method): the
sign bits of the centred, rotated vectors (as :mod:`memvault.store.coarse` makes them) are
ordered :data:`SORTS` times by 64 of their bits taken in a random order, each entry is compared
with the :data:`WINDOW` after it, a pair is kept when its Hamming distance makes the threshold
plausible, then checked exactly; groups are connected pairs. On 100k clustered 384-d vectors
with 1,000 planted pairs this groups 96 % of the pairs at cosine ~0.91, in ~2 s on 2 cores
(``benchmarks/hygiene.py``); a pair it misses is missed, never a false one reported.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..patterns import lazy
from ..retrieval.filters import is_error_response
from ..store.coarse import rotation_for
from ..store.ops import Surveyed, Use

NEAR_DUPLICATE_COSINE = 0.85
"""Cosine (of first chunks) at or above which two live entries of a scope are reported as
near-duplicates: the merge threshold's default (``Settings.near_duplicate_threshold``), which
merges only the same words; here the words may differ."""
EXACT_UP_TO = 4_000
"""Scopes with at most this many embedded live entries compare every pair exactly."""
SORTS = 40
"""Orderings of the entries by a random 64 of their signature bits (more: better recall)."""
WINDOW = 2
"""Entries after each one, in an ordering, that it is compared with."""
HAMMING_SLACK = 0.05
"""Pairs whose signatures differ in more bits than a cosine this far below the threshold
would make are not compared exactly."""
_SEED = 20261128
JUNK_FLOOR = 4
"""Content with fewer non-space characters is junk, unless ``Settings.min_content_chars``
sets another floor."""
BOILERPLATE = frozenset(
    "ok okay k kk yes no yep nope sure thanks thank you thx ty cool great fine done hi hello "
    "hey bye lol n/a na none null nil undefined test testing todo tbd tba placeholder lorem "
    "ipsum noted got it".split()
) | frozenset({"thank you", "got it", "no problem", "sounds good", "will do", "lorem ipsum"})
"""Whole contents (lower case, punctuation and spaces trimmed) that say nothing to remember."""
IDS_SHOWN = 100
"""Ids listed per class and scope (the count is exact)."""
GROUPS_SHOWN = 50
"""Near-duplicate groups listed per scope."""
LARGEST = 5
"""The biggest entries listed per scope."""

_LONGEST_BOILERPLATE = 24
"""Non-space characters of the longest content that may be boilerplate (with punctuation)."""
_TRIM = lazy(r"^[\W_]+|[\W_]+$")
_SPACES = lazy(r"\s+")


def junk(content: str, floor: int) -> str | None:
    """Why ``content`` is junk — ``error`` (an error output), ``short`` (under ``floor``
    non-space characters), ``boilerplate`` — or None."""
    bare = "".join(content.split())
    if len(bare) < floor:
        return "short"
    if len(bare) <= _LONGEST_BOILERPLATE and _said(content) in BOILERPLATE:
        return "boilerplate"
    if is_error_response(content):
        return "error"
    return None


def _said(content: str) -> str:
    return _SPACES.sub(" ", _TRIM.sub("", content.lower()))


def stale(updated_at: datetime, use: Use | None, before: datetime) -> bool:
    """Neither written nor used since ``before``."""
    last = updated_at if use is None else max(updated_at, use.last_used_at)
    return last < before


def near_duplicate_groups(
    ids: Sequence[str], vectors: npt.NDArray[np.float32], threshold: float
) -> list[list[str]]:
    """Groups of ``ids`` (each with its unit-length row of ``vectors``) linked by a cosine >=
    ``threshold``, as the bands nominate them (see the module); each group sorted, the groups
    largest first. Up to :data:`EXACT_UP_TO` entries every pair is compared."""
    count = len(vectors) if vectors.ndim == 2 else 0
    if count < 2:
        return []
    if count <= EXACT_UP_TO:
        a, b = np.nonzero(np.triu(vectors @ vectors.T >= threshold, k=1))
        return _groups(ids, a.astype(np.int64), b.astype(np.int64))
    return _hashed_groups(ids, vectors, threshold)


def _hashed_groups(
    ids: Sequence[str], vectors: npt.NDArray[np.float32], threshold: float
) -> list[list[str]]:
    """:func:`near_duplicate_groups` of the pairs the sorted signatures nominate."""
    count, dimension = vectors.shape
    rotation = rotation_for(dimension)
    columns = (rotation.T @ (vectors - vectors.mean(axis=0)).T) > 0  # a row per bit
    words = np.zeros((-(-dimension // 64) * 8, count), np.uint8)
    words[: -(-dimension // 8)] = np.packbits(columns, axis=0)
    rows = np.ascontiguousarray(words.T).view(np.uint64)  # each entry's signature
    loosest = math.degrees(math.acos(max(-1.0, threshold - HAMMING_SLACK))) / 180 * dimension
    rng = np.random.default_rng(_SEED)
    lefts, rights = [], []
    for _ in range(SORTS):
        keys = np.zeros(count, np.uint64)
        for byte in words[rng.permutation(dimension // 8)[:8]]:  # 8 bytes of bits, shuffled
            keys = (keys << np.uint64(8)) | byte
        order = np.argsort(keys)
        ordered = rows[order]
        for gap in range(1, min(WINDOW, count - 1) + 1):
            apart = np.bitwise_count(ordered[gap:] ^ ordered[:-gap]).sum(axis=1)
            close = np.flatnonzero(apart <= loosest)
            lefts.append(order[close])
            rights.append(order[close + gap])
    a, b = np.concatenate(lefts), np.concatenate(rights)
    low, high = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
    pairs = np.unique(low * count + high)
    a, b = pairs // count, pairs % count
    cosines = np.empty(len(a), np.float32)
    for start in range(0, len(a), 65_536):
        part = slice(start, start + 65_536)
        cosines[part] = np.einsum("ij,ij->i", vectors[a[part]], vectors[b[part]])
    linked = cosines >= threshold
    return _groups(ids, a[linked], b[linked])


def _groups(
    ids: Sequence[str], a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]
) -> list[list[str]]:
    parent = list(range(len(ids)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    members: dict[int, list[str]] = {}
    for i in {int(x) for x in np.concatenate([a, b]).tolist()}:
        members.setdefault(root(i), []).append(ids[i])
    groups = [sorted(group) for group in members.values() if len(group) > 1]
    return sorted(groups, key=lambda group: (-len(group), group[0]))


@dataclass(frozen=True, slots=True)
class Found:
    """One class of a scope: how many entries, and the first :data:`IDS_SHOWN` ids."""

    count: int = 0
    ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, ids: Iterable[str]) -> Found:
        every = sorted(ids)
        return cls(len(every), tuple(every[:IDS_SHOWN]))

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "ids": list(self.ids)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Found:
        return cls(int(data["count"]), tuple(data["ids"]))


CLASSES = ("near_duplicates", "junk", "stale", "secrets", "superseded", "expired")
"""The classes of a scope's report, in the order it shows them."""


@dataclass(frozen=True, slots=True)
class ScopeHygiene:
    """One scope's hygiene: its entries (stored, expired and superseded ones too), the
    restatements merged into them so far, each class, and its largest entries."""

    scope: str
    entries: int
    merged: int = 0
    near_duplicates: Found = field(default_factory=Found)
    """Entries that restate another of the scope in other words (a group's all but one)."""
    groups: tuple[tuple[str, ...], ...] = ()
    """The near-duplicate groups (the first :data:`GROUPS_SHOWN`)."""
    junk: Found = field(default_factory=Found)
    stale: Found = field(default_factory=Found)
    secrets: Found = field(default_factory=Found)
    superseded: Found = field(default_factory=Found)
    expired: Found = field(default_factory=Found)
    largest: tuple[tuple[str, int], ...] = ()
    """The biggest entries: (id, characters of content), biggest first."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "entries": self.entries,
            "merged": self.merged,
            **{name: getattr(self, name).to_dict() for name in CLASSES},
            "groups": [list(group) for group in self.groups],
            "largest": [{"id": i, "chars": size} for i, size in self.largest],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScopeHygiene:
        return cls(
            data["scope"],
            int(data["entries"]),
            int(data["merged"]),
            groups=tuple(tuple(group) for group in data["groups"]),
            largest=tuple((item["id"], int(item["chars"])) for item in data["largest"]),
            **{name: Found.from_dict(data[name]) for name in CLASSES},
        )


@dataclass(frozen=True, slots=True)
class HygieneReport:
    """A tenant's (or one scope's) hygiene, scope by scope (sorted), at ``at``."""

    tenant: str
    at: datetime
    stale_days: int
    scopes: tuple[ScopeHygiene, ...] = ()
    secrets_checked: bool = True
    """False when ``Settings.redact`` names no rule: no secret was looked for."""

    def total(self, name: str) -> int:
        """Entries of a class (or ``entries``, ``merged``) over every scope."""
        if name in ("entries", "merged"):
            return sum(getattr(s, name) for s in self.scopes)
        return sum(getattr(s, name).count for s in self.scopes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "at": self.at.isoformat(),
            "stale_days": self.stale_days,
            "secrets_checked": self.secrets_checked,
            "scopes": [s.to_dict() for s in self.scopes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HygieneReport:
        return cls(
            data["tenant"],
            datetime.fromisoformat(data["at"]),
            int(data["stale_days"]),
            tuple(ScopeHygiene.from_dict(s) for s in data["scopes"]),
            bool(data["secrets_checked"]),
        )


def survey(
    scope: str,
    rows: Sequence[Surveyed],
    *,
    now: datetime,
    stale_before: datetime,
    floor: int,
    holds_secret: Callable[[str], bool] | None,
    pending: Mapping[str, Use],
    threshold: float = NEAR_DUPLICATE_COSINE,
) -> ScopeHygiene:
    """One scope's hygiene from what the store holds of its entries (``rows``) and the uses
    this process has not stored yet (``pending``); ``holds_secret`` is the redaction rules
    (None: none apply)."""
    expired = [r.id for r in rows if r.expires_at is not None and r.expires_at <= now]
    gone = set(expired)
    superseded = [r.id for r in rows if r.superseded and r.id not in gone]
    live = [r for r in rows if not r.superseded and r.id not in gone]
    junked, old, secrets = _text_classes(
        rows,
        live,
        stale_before=stale_before,
        floor=floor,
        holds_secret=holds_secret,
        pending=pending,
    )
    groups = _grouped(live, threshold)
    largest = sorted(rows, key=lambda r: (-len(r.content), r.id))[:LARGEST]

    return ScopeHygiene(
        scope,
        len(rows),
        sum(_restated(r.use) + _restated(pending.get(r.id)) for r in rows),
        Found.of(i for group in groups for i in group[1:]),
        tuple(tuple(group) for group in groups[:GROUPS_SHOWN]),
        Found.of(junked),
        Found.of(old),
        Found.of(secrets),
        Found.of(superseded),
        Found.of(expired),
        tuple((r.id, len(r.content)) for r in largest),
    )


def _text_classes(
    rows: Sequence[Surveyed],
    live: Sequence[Surveyed],
    *,
    stale_before: datetime,
    floor: int,
    holds_secret: Callable[[str], bool] | None,
    pending: Mapping[str, Use],
) -> tuple[list[str], list[str], list[str]]:
    """The ids of the junk, the stale and the entries holding secrets."""
    junked = [r.id for r in live if junk(r.content, floor) is not None]
    old = [
        r.id for r in live if stale(r.updated_at, _latest(r.use, pending.get(r.id)), stale_before)
    ]
    secrets = [] if holds_secret is None else [r.id for r in rows if holds_secret(r.content)]
    return junked, old, secrets


def _grouped(live: Sequence[Surveyed], threshold: float) -> list[list[str]]:
    """The near-duplicate groups of the live entries embedded (in the dimension of most)."""
    embedded = [r for r in live if r.vector is not None]
    if len(embedded) < 2:
        return []
    dimension = Counter(len(r.vector or b"") for r in embedded).most_common(1)[0][0] // 4
    same = [r for r in embedded if len(r.vector or b"") == dimension * 4]
    matrix = np.frombuffer(b"".join(r.vector or b"" for r in same), np.float32)
    return near_duplicate_groups(
        [r.id for r in same], matrix.reshape(len(same), dimension), threshold
    )


def _latest(stored: Use | None, pending: Use | None) -> Use | None:
    if stored is None or pending is None:
        return stored or pending
    return stored if stored.last_used_at >= pending.last_used_at else pending


def _restated(use: Use | None) -> int:
    return 0 if use is None else use.restated
