"""memvault as a LangGraph store: :class:`MemvaultStore`, a ``langgraph.store.base.BaseStore``.

A LangGraph app swaps its store in one line (``InMemoryStore()`` →
``MemvaultStore("sqlite:///app.db")``) and its items become memvault entries: found by hybrid
search, carrying provenance, really deleted by ``delete`` and by memvault's erasure
(``delete_by_scope``). The mapping, in full in ``docs/langgraph.md``:

- an item is one entry of category ``langgraph`` whose id is derived from (tenant, namespace,
  key): one (namespace, key) holds one item, and a put replaces it (``created_at`` kept);
- the first two labels of a namespace pick the scope: ``("users", ID, …)`` → ``user:ID`` (and
  ``sessions``, ``workspaces``, ``orgs``; singular too), any other ``(TYPE, ID, …)`` →
  ``object:TYPE:ID``, a one-label ``(NAME,)`` → ``object:langgraph:NAME``. The tenant is the
  store's, never the namespace's;
- the value (a JSON object) is kept whole in the entry's metadata with the namespace, the key
  and the TTL; the content is the text of the indexed fields, each chunked and embedded on its
  own (so the best-matching field stands for the item, as in LangGraph), or the value as JSON.

Every operation is a plan on the store planner (:mod:`memvault.core`): ``batch`` runs it with
blocking calls, ``abatch`` with ``await``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import json
import logging
import math
import numbers
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeGuard

from .. import validation as check
from ..closing import Closing
from ..core import Plan, Planner, retried, run, run_all
from ..errors import (
    BackendError,
    ConfigError,
    ConflictError,
    InvalidScopeError,
    ValidationError,
    extra_needed,
    restated,
)
from ..local import run_awaiting, run_blocking
from ..memory import AsyncMemory, Memory
from ..rest.codec import is_server_url
from ..retrieval.ranker import RankSpec
from ..store import ops as mv
from ..types import MemoryEntry, NewEntry, Provenance, Scope, ScopeKind

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        get_text_at_path,
    )
except ImportError as missing:  # pragma: no cover - exercised without the extra
    raise extra_needed(missing, "langgraph", "the LangGraph store") from None

log = logging.getLogger("memvault.langgraph")

CATEGORY = "langgraph"
"""The category of every entry that holds a LangGraph item."""
ROOT_TYPE = "langgraph"
"""The object type of one-label namespaces, and of namespaces whose labels make no valid scope."""
DEFAULT_FIELDS = ("$",)
SWEEP_MINUTES = 5
"""How often the TTL sweeper deletes expired items when nothing says otherwise."""
MAX_SWEEP_MINUTES = 525_600
"""The longest sweep interval: a year."""
MAX_TTL_MINUTES = 52_596_000
"""The longest TTL of an item: a century."""
MAX_LABELS = 32
"""The most labels a namespace has (an item carries a tag per prefix; 64 tags at most)."""
RETAG_PAGE = 500
"""Items given their prefix tags per transaction, when a store written before them opens."""
MAX_END = 2**31 - 1
"""The furthest item a search pages to (offset + limit)."""
"""What is indexed unless the store's ``index`` or a put says otherwise: the whole value."""
_KINDS = {
    label: kind
    for kind in (ScopeKind.USER, ScopeKind.SESSION, ScopeKind.WORKSPACE, ScopeKind.ORG)
    for label in (str(kind), f"{kind}s")
}
Namespace = tuple[str, ...]


class NamespaceError(InvalidScopeError, InvalidNamespaceError):
    """A namespace that cannot name items: memvault's InvalidScopeError and LangGraph's
    InvalidNamespaceError at once."""


# -- namespaces and scopes (pure) -------------------------------------------------------------


def scope_of(namespace: Sequence[str]) -> Scope:
    """The scope that holds the items of ``namespace``: its first two labels decide."""
    labels = tuple(namespace[:2])
    if not labels:
        raise NamespaceError("a namespace needs at least one label")
    if len(labels) == 1:
        scope = _scope(ScopeKind.OBJECT, labels[0], ROOT_TYPE)
    elif (kind := _KINDS.get(labels[0])) is not None:
        scope = _scope(kind, labels[1])
    else:
        scope = _scope(ScopeKind.OBJECT, labels[1], labels[0])
    return scope or Scope.object(ROOT_TYPE, "#" + _digest(*labels))


def _scope(kind: ScopeKind, scope_id: str, object_type: str | None = None) -> Scope | None:
    """That scope, or None if the labels make no valid one (a ':' in a type, a newline…)."""
    try:
        return Scope(kind, scope_id, object_type)
    except InvalidScopeError:
        return None


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def item_id(tenant: str, namespace: Sequence[str], key: str) -> str:
    """The id of the entry that holds item ``key`` of ``namespace`` in ``tenant``."""
    return "lg_" + _digest(tenant, list(namespace), key)


TAGGED = "lg:tagged"
"""The tag of an item that carries the tags of its namespace's prefixes."""


def prefix_tags(namespace: Namespace) -> tuple[str, ...]:
    """The tags that let the store select an item by any prefix of its namespace (a digest of
    each prefix: short, and any label fits), and :data:`TAGGED`."""
    return (TAGGED, *(_prefix_tag(namespace[:n]) for n in range(1, len(namespace) + 1)))


def _prefix_tag(prefix: Namespace) -> str:
    return "lg:" + _digest(*prefix)[:24]


def _tags_of(entry: MemoryEntry) -> tuple[str, ...]:
    """The tags an entry that holds an item carries (:data:`TAGGED` alone: it holds none)."""
    stored = _Stored.of(entry)
    return (TAGGED,) if stored is None else prefix_tags(stored.namespace)


def _selection(tenant: str, prefix: Namespace, now: datetime) -> mv.Filter:
    """The live items under ``prefix``, as the store selects them: the scope its first labels
    lead to (the one scope of a prefix of two labels or more, the scope kinds its one label
    leads to, or every scope of the tenant), and the tag of the prefix."""
    tags = (_prefix_tag(prefix),) if prefix else ()
    if len(prefix) > 1:
        scopes: tuple[Scope, ...] | None = (scope_of(prefix),)
        kinds: tuple[str, ...] = ()
    else:
        kind = _KINDS.get(prefix[0]) if prefix else None
        scopes = None
        kinds = () if not prefix else ("object",) if kind is None else (str(kind), "object")
    return mv.Filter(
        tenant, scopes, tags=tags, categories=(CATEGORY,), scope_kinds=kinds, live_at=now
    )


def _matches(condition: MatchCondition, namespace: Namespace) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with the condition's path,
    where ``*`` stands for any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)]
    if condition.match_type == "suffix":
        part = namespace[len(namespace) - len(path) :]
    return all(wanted in ("*", label) for wanted, label in zip(path, part, strict=True))


def _literal_prefix(conditions: Sequence[MatchCondition]) -> Namespace:
    """The labels every match must start with: the first prefix condition's, up to a ``*``."""
    for condition in conditions:
        if condition.match_type == "prefix":
            path = tuple(condition.path)
            return path[: path.index("*")] if "*" in path else path
    return ()


# -- checking what a batch asks for (pure) ----------------------------------------------------


def _labels(namespace: object) -> Namespace:
    """``namespace`` as a tuple of labels: non-empty strings without '.' or NUL, at most
    :data:`MAX_LABELS` of them."""
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise NamespaceError(f"a namespace must be a tuple of strings, got {namespace!r}")
    if len(namespace) > MAX_LABELS:
        raise NamespaceError(
            f"a namespace has at most {MAX_LABELS} labels (each is a tag of its items), "
            f"got {len(namespace)}"
        )
    for label in namespace:
        if not _is_label(label):
            raise NamespaceError(
                f"invalid label {label!r} in namespace {tuple(namespace)!r}: labels are "
                "non-empty strings without '.' or NUL"
            )
    return tuple(namespace)


def _is_label(label: object) -> bool:
    return (
        isinstance(label, str)
        and bool(label)
        and check.encodable(label)
        and "." not in label
        and "\x00" not in label
    )


def _key(key: object) -> str:
    if not isinstance(key, str) or not check.encodable(key):
        raise ValidationError(f"an item key must be a string, got {key!r}")
    return key


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{name} must be a non-negative integer, got {value!r}")
    return value


def _ttl(minutes: object) -> float | None:
    """A TTL in minutes: None (no expiry) or a positive finite number."""
    if minutes is None:
        return None
    value = check.finite("ttl", minutes)
    if not 0 < value <= MAX_TTL_MINUTES:
        raise ValidationError(
            f"ttl must be a positive number of minutes, at most {MAX_TTL_MINUTES} (a century), "
            f"got {minutes!r}"
        )
    return value


def _value(value: object, subject: str) -> dict[str, Any]:
    """``value`` as the JSON object it is stored as (tuples become lists)."""
    if not isinstance(value, Mapping):
        raise ValidationError(
            f"{subject}: a value must be a dict (a JSON object), got {type(value).__name__}"
        )
    try:
        check.arguments({"value": value})
        _string_keys(value)
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValidationError as exc:
        raise restated(exc, subject) from None
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{subject}: the value is not JSON: {exc}") from None
    stored: dict[str, Any] = json.loads(encoded)
    return stored


def _string_keys(value: object) -> None:
    """Refuse keys JSON would turn into strings (``{1: …}`` would come back as ``{"1": …}``)."""
    if isinstance(value, Mapping):
        odd = next((key for key in value if not isinstance(key, str)), None)
        if odd is not None:
            raise ValidationError(f"the keys of a value must be strings, got {odd!r}")
        children: Iterable[object] = value.values()
    elif isinstance(value, list | tuple):
        children = value
    else:
        return
    for child in children:
        _string_keys(child)


def _texts(value: Mapping[str, Any], paths: Sequence[str]) -> tuple[str, ...]:
    """The texts at ``paths`` (LangGraph's path syntax) to index, without NULs or blank ones."""
    found = (piece.replace("\x00", "") for path in paths for piece in get_text_at_path(value, path))
    return tuple(piece for piece in found if piece.strip())


def _layout(texts: Sequence[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The content that holds ``texts``, one after the other on lines of their own, and where
    each of them lies in it."""
    spans, start = [], 0
    for piece in texts:
        spans.append((start, start + len(piece)))
        start += len(piece) + 1
    return "\n".join(texts), tuple(spans)


# -- filters on values (pure) -----------------------------------------------------------------


def _number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _comparable(left: object, right: object) -> bool:
    """Numbers with numbers, strings with strings; anything else never compares."""
    return (_number(left) and _number(right)) or (isinstance(left, str) and isinstance(right, str))


def _same(actual: Any, expected: Any) -> bool:
    """JSON equality (``true`` is not ``1``); a dict matches on its own keys, each a condition."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            _holds(actual.get(key), condition) for key, condition in expected.items()
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(map(_same, actual, expected))
        )
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    return bool(actual == expected)


def _ordering(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda actual, operand: _comparable(actual, operand) and compare(actual, operand)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": _same,
    "$ne": lambda actual, operand: not _same(actual, operand),
    "$gt": _ordering(operator.gt),
    "$gte": _ordering(operator.ge),
    "$lt": _ordering(operator.lt),
    "$lte": _ordering(operator.le),
}


def _is_operation(condition: object) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(condition, Mapping) and any(str(key).startswith("$") for key in condition)


def _holds(actual: Any, condition: Any) -> bool:
    """Whether a field's value meets a condition: operators, or a value to equal."""
    if _is_operation(condition):
        return all(_OPERATORS[name](actual, operand) for name, operand in condition.items())
    return _same(actual, condition)


def _field(value: Mapping[str, Any], key: str) -> Any:
    """A field of a value: its top-level key, else a dotted path (None when absent)."""
    if key in value:
        return value[key]
    node: Any = value
    for part in key.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _passes(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    return all(_holds(_field(value, key), c) for key, c in (conditions or {}).items())


def _check_filter(conditions: object) -> None:
    if conditions is None:
        return
    if not isinstance(conditions, Mapping) or not all(isinstance(k, str) for k in conditions):
        raise ValidationError(f"a search filter must map field names to conditions: {conditions!r}")
    for condition in conditions.values():
        _check_condition(condition)


def _check_condition(condition: object) -> None:
    """Refuse unknown operators anywhere in a condition (before any of it is evaluated)."""
    if isinstance(condition, list | tuple):
        nested: Iterable[object] = condition
    elif _is_operation(condition):
        unknown = [name for name in condition if name not in _OPERATORS]
        if unknown:
            raise ValidationError(
                f"unsupported filter operator {unknown[0]!r}; use {', '.join(_OPERATORS)}"
            )
        return
    elif isinstance(condition, Mapping):
        nested = condition.values()
    else:
        return
    for part in nested:
        _check_condition(part)


def _check_read(op: object) -> None:
    """Check a get, search or namespace listing (ValidationError, NamespaceError)."""
    if isinstance(op, GetOp):
        _labels(op.namespace)
        _key(op.key)
    elif isinstance(op, SearchOp):
        _labels(op.namespace_prefix)
        _check_filter(op.filter)
        _count("limit", op.limit)
        _count("offset", op.offset)
        if op.query is not None and not isinstance(op.query, str):
            raise ValidationError(f"a search query must be a string, got {op.query!r}")
        if op.query and op.query.strip():
            check.query(op.query)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            if condition.match_type not in ("prefix", "suffix"):
                raise ValidationError(f"match_type must be 'prefix' or 'suffix': {condition!r}")
            _labels(condition.path)
        if op.max_depth is not None and _count("max_depth", op.max_depth) == 0:
            raise ValidationError("max_depth must be positive")
        _count("limit", op.limit)
        _count("offset", op.offset)
    else:
        raise ValidationError(f"not an operation of a LangGraph store: {op!r}")


# -- entries and items ------------------------------------------------------------------------


_METADATA = ("namespace", "key", "value", "ttl_minutes")
"""The metadata of an entry that holds an item."""


@dataclass(frozen=True, slots=True)
class _Stored:
    """The item an entry holds, as its metadata: namespace, key, value and TTL (minutes)."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    ttl: float | None

    def metadata(self) -> dict[str, Any]:
        return dict(
            zip(_METADATA, (list(self.namespace), self.key, self.value, self.ttl), strict=True)
        )

    @classmethod
    def of(cls, entry: MemoryEntry | None) -> _Stored | None:
        """The item ``entry`` holds; None if it holds none."""
        if entry is None or entry.category != CATEGORY:
            return None
        meta = entry.metadata
        namespace, key, value, ttl = (meta.get(name) for name in _METADATA)
        if not (isinstance(namespace, list) and isinstance(key, str) and isinstance(value, dict)):
            return None
        minutes = float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) else None
        return cls(tuple(namespace), key, value, minutes)

    def under(self, prefix: Namespace) -> bool:
        return self.namespace[: len(prefix)] == prefix

    def item(self, entry: MemoryEntry) -> Item:
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
        )


@dataclass(frozen=True, slots=True)
class _Write:
    """One put of a batch, checked: the entry to store (None: delete the item) and the texts
    to index in it."""

    id: str
    entry: MemoryEntry | None
    texts: tuple[str, ...] = ()


def _chosen(
    found: Iterable[MemoryEntry], prefix: Namespace, conditions: Mapping[str, Any] | None
) -> list[tuple[MemoryEntry, _Stored]]:
    """The items among ``found`` under ``prefix`` that pass the filter, most recently updated
    first."""
    chosen = [
        (entry, stored)
        for entry in found
        if (stored := _Stored.of(entry)) is not None
        and stored.under(prefix)
        and _passes(stored.value, conditions)
    ]
    return sorted(chosen, key=lambda pair: (pair[0].updated_at, pair[0].id), reverse=True)


def _replacing(old: MemoryEntry, new: MemoryEntry) -> MemoryEntry:
    """``old`` with ``new``'s content, tags, metadata, expiry and update time (the rest is kept:
    created_at, scope, provenance, version links)."""
    return replace(
        old,
        content=new.content,
        tags=new.tags,
        metadata=new.metadata,
        expires_at=new.expires_at,
        updated_at=new.updated_at,
        revision=old.revision + 1,
    )


class ItemPlans:
    """The plans of LangGraph batches on one tenant's store, composed on its store planner."""

    def __init__(self, store: Planner, fields: Sequence[str], provenance: Provenance) -> None:
        self.store = store
        self.fields = tuple(fields)
        self.provenance = provenance
        self._tagged = False
        """Whether every item of the tenant carries its prefix tags (checked once)."""

    @property
    def tenant(self) -> str:
        return self.store.tenant

    def batch(self, ops: Sequence[Op]) -> Plan[list[Result]]:
        """Run a batch as LangGraph's own stores do: every op is checked first (bad input
        changes nothing), the reads run in order, then every put in one transaction (the last
        put of an item wins). Results come in the order of the ops."""
        writes = self._checked(ops)
        results: list[Result] = []
        for op in ops:
            results.append((yield from self._read(op)))
        if writes:
            yield from self.put(writes)
        return results

    def _checked(self, ops: Sequence[Op]) -> list[_Write]:
        now = self.store.now()
        writes: dict[str, _Write] = {}
        for op in ops:
            if not isinstance(op, PutOp):
                _check_read(op)
                continue
            write = self._write(op, now)
            writes.pop(write.id, None)
            writes[write.id] = write
        return list(writes.values())

    def _read(self, op: Op) -> Plan[Result]:
        if isinstance(op, GetOp):
            return (yield from self.get(op))
        if isinstance(op, SearchOp):
            return (yield from self.search(op))
        if isinstance(op, ListNamespacesOp):
            return (yield from self.list_namespaces(op))
        return None

    # -- puts -----------------------------------------------------------------------------

    def _write(self, op: PutOp, now: datetime) -> _Write:
        """A put, checked: its entry built and validated, with the texts to index."""
        namespace, key = _labels(op.namespace), _key(op.key)
        if not namespace:
            raise NamespaceError("a namespace needs at least one label")
        entry_id = item_id(self.tenant, namespace, key)
        if op.value is None:
            return _Write(entry_id, None)
        subject = f"item {key!r} of {namespace!r}"
        stored = _Stored(namespace, key, _value(op.value, subject), _ttl(op.ttl))
        self._check_size(stored, subject)
        texts = _texts(stored.value, self._paths(op.index))
        return _Write(entry_id, self._entry(entry_id, stored, texts, now, subject), texts)

    def _paths(self, index: object) -> tuple[str, ...]:
        if index is None:
            return self.fields
        if index is False:
            return ()
        if isinstance(index, list | tuple) and all(isinstance(path, str) for path in index):
            return tuple(index)
        raise ValidationError(f"index must be None, False or a list of field paths: {index!r}")

    def _check_size(self, stored: _Stored, subject: str) -> None:
        size = len(json.dumps(stored.metadata(), ensure_ascii=False).encode())
        limit = self.store.settings.max_metadata_bytes
        if size > limit:
            raise ValidationError(
                f"{subject} is {size:,} bytes as JSON with its namespace and key; memvault "
                f"keeps at most {limit:,} (MEMVAULT_MAX_METADATA_BYTES)"
            )

    def _entry(
        self, entry_id: str, stored: _Stored, texts: Sequence[str], now: datetime, subject: str
    ) -> MemoryEntry:
        """The entry that holds ``stored``: its content the texts to index, else the value as
        JSON (searchable then by filters only)."""
        content = _layout(texts)[0] if texts else json.dumps(stored.value, ensure_ascii=False)
        request = NewEntry(
            content,
            scope_of(stored.namespace),
            tags=prefix_tags(stored.namespace),
            category=CATEGORY,
            metadata=stored.metadata(),
            provenance=self.provenance,
        )
        ttl = None if stored.ttl is None else timedelta(minutes=stored.ttl)
        try:
            return replace(self.store.new_entry(request, now, ttl), id=entry_id)
        except ValidationError as exc:
            raise restated(exc, subject) from None

    def put(self, writes: Sequence[_Write]) -> Plan[None]:
        """Store and delete items in one transaction. A put replaces its item whole; each text
        to index is chunked and embedded on its own, so the best-matching one ranks the item."""
        chunks = yield from self._chunks([w for w in writes if w.entry is not None])
        yield from retried(lambda: self._apply(writes, chunks), "the items of a LangGraph batch")

    def _chunks(self, writes: Sequence[_Write]) -> Plan[dict[str, tuple[mv.ChunkRecord, ...]]]:
        """Each entry's chunks, every text of it chunked on its own, all embedded in one step."""
        spans = {w.id: _layout(w.texts)[1] for w in writes}
        # The store planner chunks and embeds entries; give it one stand-in entry per text.
        pieces = [
            replace(w.entry, content=w.entry.content[start:end])
            for w in writes
            if w.entry is not None
            for start, end in spans[w.id]
        ]
        chunked: Iterator[tuple[mv.ChunkRecord, ...]] = iter(())
        if pieces:
            chunked = iter((yield from self.store.index(pieces)))
        result = {}
        for entry_id, layout in spans.items():
            records: list[mv.ChunkRecord] = []
            for start, _ in layout:
                for chunk in next(chunked):
                    seq, first, last = len(records), start + chunk.start, start + chunk.end
                    records.append(mv.ChunkRecord(seq, first, last, chunk.vector))
            result[entry_id] = tuple(records)
        return result

    def _apply(
        self, writes: Sequence[_Write], chunks: Mapping[str, tuple[mv.ChunkRecord, ...]]
    ) -> Plan[None]:
        """One attempt: read the items as they are, then write them all in one transaction. A
        put replaces a live item (its ``created_at`` kept) and makes an expired one anew."""
        found = yield from run_all(mv.GetOp(self.tenant, w.id) for w in writes)
        now = self.store.now()
        current = {entry.id: entry for entry in found if entry is not None}
        live = {i: entry for i, entry in current.items() if not entry.is_expired(now)}
        gone = [
            current[w.id]
            for w in writes
            if w.id in current and (w.entry is None or w.id not in live)
        ]
        writing: list[mv.Op[Any]] = []
        if gone:
            _, writing = yield from self.store.removal(gone)
        for w in writes:
            if w.entry is None:
                continue
            old, records = live.get(w.id), chunks[w.id]
            if old is None:
                writing.append(mv.PutOp(self.tenant, w.entry, chunks=records))
            else:
                new = _replacing(old, w.entry)
                writing.append(mv.ReplaceOp(self.tenant, new, old.revision, chunks=records))
        fresh = [w.id for w in writes if w.entry is not None and w.id not in current]
        if writing:
            yield from self._write_all(writing, fresh)

    def _write_all(self, writing: Sequence[mv.Op[Any]], fresh: Sequence[str]) -> Plan[None]:
        """Run the writes; a new item another writer stored first is a conflict (retried)."""
        try:
            yield from run_all(writing)
        except BackendError:
            if not fresh:
                raise
            taken = yield from run_all(mv.GetOp(self.tenant, i) for i in fresh)
            if any(entry is not None for entry in taken):
                raise ConflictError("another writer stored one of these items first") from None
            raise

    # -- reads ----------------------------------------------------------------------------

    def get(self, op: GetOp) -> Plan[Item | None]:
        """The item, or None (missing or expired); reading it restarts its TTL if asked."""
        namespace = tuple(op.namespace)
        entry = yield from self.store.get(item_id(self.tenant, namespace, op.key))
        stored = _Stored.of(entry)
        if entry is None or stored is None or (stored.namespace, stored.key) != (namespace, op.key):
            return None
        if op.refresh_ttl:
            yield from self.refresh([entry])
        return stored.item(entry)

    def search(self, op: SearchOp) -> Plan[list[SearchItem]]:
        """The items under the prefix that pass the filter, a page of them: best first for a
        query (hybrid search; items with nothing indexed come after, with no score), else the
        most recently updated first. The store selects the prefix's items and, without a
        filter of values, reads only the page's (a filter of values is applied here)."""
        if not op.limit:
            return []
        yield from self.tagged()
        prefix, end = tuple(op.namespace_prefix), op.offset + op.limit
        where = _selection(self.tenant, prefix, self.store.now())
        query = op.query if op.query and op.query.strip() and op.limit else None
        if op.filter:
            page, scores = yield from self._filtered(where, prefix, op, query)
        else:
            page, scores = yield from self._paged(where, prefix, end, query)
        page = page[op.offset : end]
        if op.refresh_ttl:
            yield from self.refresh([entry for entry, _ in page])
        return [
            SearchItem(s.namespace, s.key, s.value, e.created_at, e.updated_at, scores.get(e.id))
            for e, s in page
        ]

    def _filtered(
        self, where: mv.Filter, prefix: Namespace, op: SearchOp, query: str | None
    ) -> Plan[tuple[list[tuple[MemoryEntry, _Stored]], dict[str, float]]]:
        """Every item under the prefix whose value passes the filter, best first for a query
        (ranked among those only), else the most recently updated first."""
        chosen = _chosen((yield from self.store.every(where)), prefix, op.filter)
        scores: dict[str, float] = {}
        if query is not None and chosen:
            allowed = {entry.id for entry, _ in chosen}
            scores = yield from self._scores(query, where, op.offset + op.limit, allowed)
        chosen.sort(key=lambda pair: -scores.get(pair[0].id, -math.inf))
        return chosen, scores

    def _paged(
        self, where: mv.Filter, prefix: Namespace, end: int, query: str | None
    ) -> Plan[tuple[list[tuple[MemoryEntry, _Stored]], dict[str, float]]]:
        """The first ``end`` items under the prefix: the query's best (ranked by the store
        planner), then — if the page needs more — the most recently updated others."""
        end = min(end, MAX_END)
        scores: dict[str, float] = {}
        paged: list[tuple[MemoryEntry, _Stored]] = []
        if query is not None:
            now = self.store.now()
            hits = yield from self.store.ranked(query, where, RankSpec(limit=end), now)
            scores = {hit.entry.id: hit.score for hit in hits}
            paged = _chosen((hit.entry for hit in hits), prefix, None)  # ties: latest first
            paged.sort(key=lambda pair: -scores[pair[0].id])
        if len(paged) < end:
            latest = yield from run(mv.ListOp(where, end, order="updated"))
            paged += [pair for pair in _chosen(latest, prefix, None) if pair[0].id not in scores]
        return paged[:end], scores

    def _scores(
        self, query: str, where: mv.Filter, wanted: int, allowed: set[str]
    ) -> Plan[dict[str, float]]:
        """The fused scores of the ``wanted`` best ``allowed`` entries for ``query``: the store
        planner's hybrid search and ranking, as ``Memory.search`` ranks."""
        spec = RankSpec(limit=wanted)
        hits = yield from self.store.ranked(query, where, spec, self.store.now(), only=allowed)
        return {hit.entry.id: hit.score for hit in hits}

    def tagged(self) -> Plan[None]:
        """Give the items a store written before prefix tags holds their tags (once: a
        count of the tenant's items and of those tagged tells whether any lacks them)."""
        if self._tagged:
            return
        items = mv.Filter(self.tenant, None, categories=(CATEGORY,))
        total = yield from run(mv.CountOp(items))
        marked = yield from run(mv.CountOp(replace(items, tags=(TAGGED,))))
        after = None
        while marked < total:  # one pass, page by page
            page = yield from run(mv.ListOp(items, RETAG_PAGE, order="oldest", after=after))
            ids = tuple(e.id for e in page if TAGGED not in e.tags)
            if ids:
                retag = functools.partial(self._retag, ids)
                marked += yield from retried(retag, "the tags of LangGraph items")
            if len(page) < RETAG_PAGE:
                break
            after = (page[-1].created_at, page[-1].id)
        self._tagged = True

    def _retag(self, ids: tuple[str, ...]) -> Plan[int]:
        """The untagged items of ``ids`` tagged, in one transaction; how many (an entry that
        holds no readable item gets :data:`TAGGED` only: it is never found, as before)."""
        found = yield from run(mv.GetManyOp(self.tenant, ids))
        ops = [
            mv.ReplaceOp(
                self.tenant,
                replace(e, tags=(*e.tags, *_tags_of(e)), revision=e.revision + 1),
                e.revision,
            )
            for e in found
            if TAGGED not in e.tags
        ]
        if ops:
            yield from run_all(ops)
        return len(ops)

    def list_namespaces(self, op: ListNamespacesOp) -> Plan[list[Namespace]]:
        """The namespaces holding items that meet every condition, cut to ``max_depth``,
        sorted, a page of them."""
        yield from self.tagged()
        conditions = tuple(op.match_conditions or ())
        where = _selection(self.tenant, _literal_prefix(conditions), self.store.now())
        found = yield from self.store.every(where)
        namespaces = {stored.namespace for entry in found if (stored := _Stored.of(entry))}
        matched = {
            namespace[: op.max_depth] if op.max_depth is not None else namespace
            for namespace in namespaces
            if all(_matches(condition, namespace) for condition in conditions)
        }
        return sorted(matched)[op.offset : op.offset + op.limit]

    def refresh(self, entries: Sequence[MemoryEntry]) -> Plan[None]:
        """Restart the TTL of those ``entries`` that have one (LangGraph's refresh on read)."""
        ids = [e.id for e in entries if (stored := _Stored.of(e)) and stored.ttl is not None]
        if ids:
            yield from retried(lambda: self._refreshed(ids), "a TTL refresh")

    def _refreshed(self, ids: Sequence[str]) -> Plan[None]:
        found = yield from run_all(mv.GetOp(self.tenant, i) for i in ids)
        now = self.store.now()
        prolonged = [op for entry in found if (op := self._prolonged(entry, now)) is not None]
        if prolonged:
            yield from run_all(prolonged)

    def _prolonged(self, entry: MemoryEntry | None, now: datetime) -> mv.ReplaceOp | None:
        """The write that makes a live item with a TTL expire that long after ``now``."""
        stored = _Stored.of(entry)
        if entry is None or stored is None or stored.ttl is None or entry.is_expired(now):
            return None
        expires_at = now + timedelta(minutes=stored.ttl)
        fresh = replace(entry, expires_at=expires_at, revision=entry.revision + 1)
        return mv.ReplaceOp(self.tenant, fresh, entry.revision)


# -- the store --------------------------------------------------------------------------------


def _opened(
    store: str | Memory | AsyncMemory | None, tenant: str | None
) -> tuple[Memory | AsyncMemory, bool]:
    """The memory to keep items in, and whether the store owns (and closes) it."""
    if is_server_url(store) or getattr(store, "server", None) is not None:
        raise ConfigError(
            "a LangGraph store keeps its items in a local store (a file or a database URL): "
            "give MemvaultStore the store URL the memvault server uses, not the server's"
        )
    if store is None or isinstance(store, str):
        return Memory(store, tenant=tenant), True
    if isinstance(store, Memory | AsyncMemory):
        return (store if tenant is None else store.with_tenant(tenant)), False
    raise ValidationError(
        f"store must be a store URL, a Memory or an AsyncMemory, got {type(store).__name__}"
    )


def _fields(index: Mapping[str, Any] | None, dimension: int) -> tuple[str, ...]:
    """The fields indexed by default, from a LangGraph ``IndexConfig``: ``fields`` applies (and
    ``dims`` if it is memvault's); memvault embeds with its own model."""
    config = dict(index or {})
    if "embed" in config:
        raise ConfigError(
            "memvault embeds with its own model (the packaged one, or an OpenAI-compatible "
            "server: memvault.embeddings.OpenAIEmbedder); leave 'embed' out of index"
        )
    dims = config.pop("dims", dimension)
    if dims != dimension:
        raise ConfigError(f"index dims {dims!r}: memvault's embedding model has {dimension}")
    fields = config.pop("fields", None)
    if config:
        raise ConfigError(f"unknown index settings: {', '.join(sorted(config))}")
    if fields is None:
        return DEFAULT_FIELDS
    if isinstance(fields, str) or not all(isinstance(path, str) for path in fields):
        raise ConfigError(f"index fields must be a list of field paths, got {fields!r}")
    return tuple(fields)


def _ttl_config(ttl: Mapping[str, Any] | None) -> TTLConfig | None:
    """A LangGraph ``TTLConfig``, checked: memvault hides expired items at once (so
    ``omit_expired`` is always true) and deletes them on :meth:`MemvaultStore.sweep_ttl`."""
    if ttl is None:
        return None
    config = dict(ttl)
    known = {"refresh_on_read", "default_ttl", "omit_expired", "sweep_interval_minutes"}
    if set(config) - known:
        raise ConfigError(f"unknown ttl settings: {', '.join(sorted(set(config) - known))}")
    if config.get("omit_expired", True) is not True:
        raise ConfigError("memvault always omits expired items: omit_expired must be true")
    refresh = config.get("refresh_on_read", True)
    if not isinstance(refresh, bool):
        raise ConfigError(f"refresh_on_read must be true or false, got {refresh!r}")
    try:
        default = _ttl(config.get("default_ttl"))
    except ValidationError as exc:
        raise ConfigError(f"default_ttl: {exc}") from None
    interval = config.get("sweep_interval_minutes")
    ttl = TTLConfig(refresh_on_read=refresh, default_ttl=default, omit_expired=True)
    if interval is not None:
        ttl["sweep_interval_minutes"] = _interval(interval, ConfigError)
    return ttl


def _interval(minutes: object, error: type[ValidationError | ConfigError]) -> Any:
    """A sweep interval in minutes: a positive finite number."""
    try:
        value = check.finite("sweep_interval_minutes", minutes, 0, MAX_SWEEP_MINUTES)
    except ValidationError as exc:
        raise error(str(exc)) from None
    if value == 0:
        raise error("sweep_interval_minutes must be positive, got 0")
    return minutes


class MemvaultStore(BaseStore, Closing):
    """A LangGraph store kept by memvault: ``MemvaultStore("sqlite:///app.db")``.

    ``store`` is a store URL (None: the default SQLite file), a :class:`~memvault.Memory` or an
    :class:`~memvault.AsyncMemory` (shared, not closed by the store); ``tenant`` the tenant its
    items live in (default: the memory's). ``index`` is LangGraph's ``IndexConfig``: its
    ``fields`` say what is indexed (default ``["$"]``, the whole value). ``ttl`` is LangGraph's
    ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``). ``provenance`` is recorded on
    every item (default ``source="langgraph"``). Both ``batch`` and ``abatch`` work whichever
    memory is given. Values that cannot be stored raise :class:`~memvault.ValidationError`.
    """

    supports_ttl = True

    def __init__(
        self,
        store: str | Memory | AsyncMemory | None = None,
        *,
        tenant: str | None = None,
        index: Mapping[str, Any] | None = None,
        ttl: Mapping[str, Any] | None = None,
        provenance: Provenance | Mapping[str, Any] | None = None,
    ) -> None:
        memory, owned = _opened(store, tenant)
        try:
            self.ttl_config = _ttl_config(ttl)
            fields = _fields(index, memory.embedder.dimension)
            source = Provenance.coerce(provenance or {"source": "langgraph"})
        except BaseException:
            if owned:
                memory.close()
            raise
        self._memory, self._owned = memory, owned
        self._plans = ItemPlans(memory.planners.store, fields, source)
        self._sweeping = threading.Lock()
        self._sweeper: _Sweeper | None = None

    @property
    def memory(self) -> Memory | AsyncMemory:
        """The memory that keeps the items: search them with their component scores, see their
        provenance, erase a scope (``delete_by_scope``)."""
        return self._memory

    @staticmethod
    def scope_of(namespace: Sequence[str]) -> Scope:
        """The memvault scope that holds the items of ``namespace``."""
        return scope_of(_labels(namespace))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = self._plans.batch(list(ops))
        return run_blocking(plan, self._memory.backend, self._memory.stamp("langgraph.batch"))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        plan = self._plans.batch(list(ops))
        stamp = self._memory.stamp("langgraph.batch")
        return await run_awaiting(plan, self._memory.backend, stamp)

    def sweep_ttl(self) -> int:
        """Really delete the tenant's expired entries (memvault's ``purge_expired``); they are
        hidden from every read already. Returns how many."""
        plan = self._plans.store.purge_expired()
        return run_blocking(plan, self._memory.backend, self._memory.stamp("langgraph.sweep_ttl"))

    async def asweep_ttl(self) -> int:
        """:meth:`sweep_ttl`, awaited."""
        plan = self._plans.store.purge_expired()
        stamp = self._memory.stamp("langgraph.sweep_ttl")
        return await run_awaiting(plan, self._memory.backend, stamp)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Delete expired items in the background (:meth:`sweep_ttl`) every
        ``sweep_interval_minutes`` (default: the ``TTLConfig``'s, else 5) until
        :meth:`stop_ttl_sweeper` or :meth:`close`; the future is done when the sweeper stops.
        A sweeper already running is returned as it is."""
        given = sweep_interval_minutes
        if given is None:
            given = (self.ttl_config or {}).get("sweep_interval_minutes") or SWEEP_MINUTES
        minutes = _interval(given, ValidationError)
        with self._sweeping:
            if self._sweeper is None or self._sweeper.done.done():
                self._sweeper = _Sweeper(self.sweep_ttl, float(minutes) * 60)
            return self._sweeper.done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper; False if it was still sweeping when ``timeout``
        (seconds) ran out."""
        with self._sweeping:
            sweeper, self._sweeper = self._sweeper, None
        return sweeper is None or sweeper.stop(timeout)

    def close(self) -> None:
        """Stop the TTL sweeper; close the memory if the store opened it (from a URL)."""
        self.stop_ttl_sweeper()
        if self._owned:
            self._memory.close()


class _Sweeper:
    """A thread that calls ``sweep`` every ``seconds`` until stopped (a failed sweep is
    logged, and the next one tried)."""

    def __init__(self, sweep: Callable[[], int], seconds: float) -> None:
        self.done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(sweep, seconds), name="memvault-ttl-sweeper", daemon=True
        )
        self._thread.start()

    def _run(self, sweep: Callable[[], int], seconds: float) -> None:
        try:
            while not self._stopping.wait(seconds):
                try:
                    swept = sweep()
                except Exception as exc:  # logged; the sweeper goes on with the next sweep
                    log.warning("TTL sweep failed: %s: %s", type(exc).__name__, exc)
                else:
                    log.debug("TTL sweep deleted %d expired items", swept)
        finally:
            self.done.set_result(None)

    def stop(self, timeout: float | None) -> bool:
        self._stopping.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()


__all__ = ["CATEGORY", "MemvaultStore", "NamespaceError", "item_id", "scope_of"]
