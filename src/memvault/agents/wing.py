"""What every wing of agent memory shares: its scope of the tenant, redaction of the text
agents and tools wrote, the lookups by similarity, and the checks of the values it keeps.

Everything agent memory keeps lives in one scope (``settings.agent_scope``, or the ``scope`` a
call names) as entries: the store's search, retention (each entry expires ``agent_*_days``
after its last use), erasure and audit log apply. Text that came from agents and tools is
redacted like learned facts and kept as derived data, never as instructions.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ..core import Plan, Planner
from ..errors import ConfigError, InvalidScopeError, ValidationError
from ..security.redact import Redactor
from ..store.ops import Filter
from ..types import MemoryEntry, Provenance, Scope, SearchHit
from .model import EXECUTION, SOURCE

MAX_LABEL_CHARS = 256
"""Longest workflow, agent, task, strategy, kind, model, role or error class name."""
SIMILAR = 0.8
"""Cosine at which a past request counts as similar (decomposition reuse, request kinds)."""
SEARCH_DEPTH = 50
"""Past requests a similarity lookup ranks."""
MAX_AMOUNT = 10**12
"""Largest cost, duration (ms) or token count of one run: sums of them stay finite (and
64-bit)."""


class AgentWing:
    """A wing of agent memory, composed on the store planner."""

    def __init__(self, store: Planner) -> None:
        self.store = store
        self.redactor = Redactor.from_settings(store.settings)
        try:
            self.default_scope = Scope.parse(store.settings.agent_scope)
        except InvalidScopeError as exc:
            raise ConfigError(f"setting agent_scope: {exc}") from None

    def scope(self, scope: Scope | str | None) -> Scope:
        """The scope a call names, else agent memory's."""
        return self.default_scope if scope is None else Scope.coerce(scope)

    def where(self, scope: Scope | str | None, category: str) -> Filter:
        """The live entries of ``category`` in the scope."""
        return Filter(
            self.store.tenant,
            (self.scope(scope),),
            categories=(category,),
            live_at=self.store.now(),
        )

    def search(
        self,
        query: str,
        scope: Scope | str | None,
        category: str,
        limit: int,
        equal: Mapping[str, Any],
    ) -> Plan[builtins.list[SearchHit]]:
        """Hybrid search over the entries of ``category`` holding the metadata ``equal``."""
        hits = yield from self.store.search(
            query,
            self.scope(scope),
            limit=limit,
            categories=(category,),
            metadata=dict(equal) or None,
        )
        return hits

    def kind_of(self, query: str, scope: Scope | str | None) -> Plan[str | None]:
        """The commonest kind of the past requests similar to ``query`` (None: none)."""
        hits = yield from self.search(query, scope, EXECUTION, SEARCH_DEPTH, {})
        kinds = Counter(
            hit.entry.metadata.get("kind")
            for hit in hits
            if hit.components.get("dense", 0.0) >= SIMILAR and hit.entry.metadata.get("kind")
        )
        return kinds.most_common(1)[0][0] if kinds else None

    def redacted(self, text: str) -> str:
        """``text`` with what the ``redact`` setting finds replaced (counted in the stats)."""
        redaction = self.redactor.redact(text)
        for rule, n in redaction.counts.items():
            self.store.stats.add(f"redacted_{rule}", n)
        return redaction.text

    def redacted_label(self, name: str, value: object) -> str | None:
        """An optional name that aggregates keep (strategy, kind, error class), redacted."""
        name_ = label(name, value, optional=True)
        return None if name_ is None else self.redacted(name_)


def owned(  # noqa: PLR0917 - one per field an agent-memory entry sets
    entry_id: str,
    scope: Scope,
    content: str,
    category: str,
    now: datetime,
    expires: datetime | None,
    metadata: dict[str, Any],
    provenance: Provenance | None = None,
) -> MemoryEntry:
    """An entry of agent memory, created ``now``."""
    return MemoryEntry(
        id=entry_id,
        scope=scope,
        content=content,
        category=category,
        created_at=now,
        updated_at=now,
        valid_from=now,
        expires_at=expires,
        metadata=metadata,
        provenance=provenance or Provenance(source=SOURCE),
    )


def expiry(now: datetime, days: int) -> datetime | None:
    """When an entry used ``now`` expires (None: ``days`` <= 0, never)."""
    return None if days <= 0 else now + timedelta(days=days)


def label(name: str, value: object, *, optional: bool = False) -> Any:
    """A name (workflow, agent, strategy…): 1 to 256 printable characters."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_LABEL_CHARS:
        raise ValidationError(
            f"{name} must be a non-empty string of at most {MAX_LABEL_CHARS} characters"
        )
    if not value.isprintable():
        raise ValidationError(
            f"{name} must be printable (no control, format or separator characters)"
        )
    return value


def text(name: str, value: object) -> str:
    """A string without NUL characters."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise ValidationError(f"{name} must not contain NUL characters")
    return value


def count(name: str, value: object) -> int:
    """A count of one run (tokens): 0 to 10¹², so that sums of them stay 64-bit."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_AMOUNT:
        raise ValidationError(f"{name} must be an integer from 0 to 10**12, got {value!r}")
    return value


def listed(name: str, values: object) -> list[Any]:
    """A list given as any iterable but a string, bytes or a mapping."""
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise ValidationError(f"{name} must be a list, got {type(values).__name__}")
    return list(values)


def seeded(seed: object) -> int | None:
    """A draw's seed: an integer, or None."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValidationError(f"seed must be an integer, got {type(seed).__name__}")
    return seed
