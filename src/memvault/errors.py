"""The one error hierarchy of memvault.

Every error memvault raises on purpose derives from :class:`MemvaultError`; the edges translate
these *types* (never their message text) into HTTP statuses and CLI messages::

    MemvaultError
    ├── ValidationError            bad input; nothing was changed            (also a ValueError)
    │   ├── InvalidScopeError      malformed scope string, unknown scope kind
    │   └── FilteredError          a write-time filter refused the content (too short, an error)
    ├── NotFoundError              no live entry with that id in this tenant  (also a KeyError)
    │   └── SessionNotFoundError   no session with that id in this tenant
    ├── ForbiddenError             not allowed: a record altered, a private session pinned, a gate
    ├── InvalidScopePromotionError promotion that is not narrow → broad
    ├── CompactionError            a compaction callback or summariser failed; nothing was changed
    ├── ConflictError              a concurrent change won; retry the operation
    ├── ClosedError                the Memory was closed
    ├── AbortedError               the person declined to go on (a CLI confirmation)
    ├── GuardError                 untrusted text could not be wrapped safely; nothing was sent
    ├── LLMError                   the language model could not be used
    │   ├── LLMUnavailableError    unreachable, timed out, or refused after every retry
    │   └── LLMResponseError       it answered, but not with anything usable
    ├── ConfigError                a setting is unknown or has a bad value
    │   ├── EmbeddingMismatchError the store was embedded with another model; re-embed it
    │   ├── AuditKeyError          the store's audit log is chained with another audit key
    │   └── LocalOnlyError         asked of a server's memory, what only a local store has
    └── BackendError               the storage engine failed
        ├── CapabilityError        the backend does not support this (also a NotImplementedError)
        ├── SchemaError            the store's schema is newer, altered, or unreadable
        ├── ErasureIncompleteError an erasure was done, but its purge left traces: finish it
        └── UnavailableError       the store or server cannot be reached now (down, refusing,
                                   timing out), or calls fail fast while its breaker is open
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar


class MemvaultError(Exception):
    """Root of every error memvault raises on purpose."""

    item: int | None = None
    """For an error about one item of a batch: its position in the batch."""


class ValidationError(MemvaultError, ValueError):
    """Input was rejected before anything was changed."""


class InvalidScopeError(ValidationError):
    """A scope string or scope value is malformed."""


class BundleError(ValidationError):
    """A session bundle that cannot be imported: corrupt, truncated, oversize, tampered with,
    of another format version, or holding what a bundle never holds. Nothing was imported."""


class FilteredError(ValidationError):
    """A write-time filter refused the content; ``reason`` says which."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


class NotFoundError(MemvaultError, KeyError):
    """No live (existing, unexpired) entry has this id in this tenant."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(entry_id)
        self.entry_id = entry_id

    def __str__(self) -> str:
        return f"memory entry not found: {self.entry_id} (it may have expired or been deleted)"


class SessionNotFoundError(NotFoundError):
    """No session has this id in this tenant."""

    def __str__(self) -> str:
        return f"session not found: {self.entry_id}"


class ForbiddenError(MemvaultError):
    """The operation is not allowed: records are immutable, a private session never reaches
    Global Memory, a finding needs loaded data. Nothing was changed."""


class InvalidScopePromotionError(MemvaultError):
    """Promotion may only go from a narrower scope to a broader one."""


class CompactionError(MemvaultError):
    """A compaction callback or a summariser failed or returned no usable content; nothing was
    changed."""

    def __init__(self, source_entry_ids: Sequence[str], reason: str) -> None:
        self.source_entry_ids = tuple(source_entry_ids)
        super().__init__(
            f"compaction failed for entries [{', '.join(self.source_entry_ids)}]: {reason}"
        )


class ConflictError(MemvaultError):
    """Another writer changed or removed the entry first; re-read and retry."""


class AbortedError(MemvaultError):
    """The person asked declined to go on (a confirmation answered no, or interrupted); nothing
    was changed."""


class GuardError(MemvaultError):
    """Untrusted text could not be wrapped as data (fail closed): nothing was sent to a model."""


class LLMError(MemvaultError):
    """The language model could not be used."""


class LLMUnavailableError(LLMError):
    """The LLM server could not be reached, timed out, or kept refusing (429/5xx) after every
    retry."""


class LLMResponseError(LLMError):
    """The LLM server answered, but not with anything usable (bad status, malformed body)."""


class StructuredOutputError(LLMResponseError):
    """The LLM server refused the JSON schema a request asked its reply to follow (its
    ``response_format``); the client asks without one from then on."""


class ClosedError(MemvaultError):
    """The Memory was closed: it takes no more work."""


class ConfigError(MemvaultError):
    """A configuration key is unknown or its value is invalid."""


class EmbeddingMismatchError(ConfigError):
    """The store's vectors come from another embedding model than the one in use."""


class AuditKeyError(ConfigError):
    """The store's audit log is chained with another key (or none) than the ``audit_key``
    setting gives: a write would break the chain, so it is refused."""


class LocalOnlyError(ConfigError, AttributeError):
    """What only a local store has (its backend, its settings, re-embedding), asked of a
    memory on a memvault server (also an AttributeError: ``hasattr`` says it has none)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"a memvault server's memory has no {name}: {why}")
        self.name = name


class BackendError(MemvaultError):
    """The storage engine failed."""


class CapabilityError(BackendError, NotImplementedError):
    """The backend does not support the requested capability."""

    def __init__(self, backend: str, capability: str) -> None:
        self.backend = backend
        self.capability = capability
        super().__init__(
            f"the {backend!r} backend does not support {capability}; "
            "use a backend that declares it (see memvault.store.Capabilities)"
        )


class SchemaError(BackendError):
    """The store's schema cannot be used by this version of memvault."""


class ErasureIncompleteError(BackendError):
    """An erasure removed its entries, but the purge that follows (folding and truncating a
    log, removing index files) still found ``residue`` erased ids or contents in the store's
    files after every retry — another process held them. It is recorded as pending: finish it
    later (``finish_erasures()``, ``memvault erase --finish``). ``receipt`` is the erasure's
    receipt as a dict (None for a finish)."""

    residue: int = 0
    receipt: dict[str, Any] | None = None

    def __init__(self, message: str, residue: int, receipt: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.residue = residue
        self.receipt = None if receipt is None else dict(receipt)


class UnavailableError(BackendError):
    """The store (or the memvault server) cannot be reached now: it is down, refuses
    connections, does not answer in time or is shutting down — or it failed so often that calls
    fail fast without reaching it until its circuit breaker tries it again
    (``docs/reliability.md``). Retry later: ``retry_after`` is the seconds until the next try
    (None: not known). The HTTP server answers it as 503 with ``Retry-After``."""

    retry_after: float | None = None

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


E = TypeVar("E", bound=MemvaultError)


def shown(value: object, most: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``most`` characters (an error never echoes a
    megabyte of input)."""
    text = repr(value)
    return text if len(text) <= most else f"{text[: most - 1]}… ({len(text):,} characters)"


def extra_needed(missing: ImportError, extra: str, what: str) -> ImportError | ConfigError:
    """What to raise when importing an optional extra's package failed: a ConfigError that
    names the extra to install — or the ImportError itself, when the missing module is
    memvault's own (a fault, not a missing extra)."""
    if (missing.name or "").partition(".")[0] == "memvault":
        return missing
    return ConfigError(
        f"{what} needs the '{extra}' extra: python -m pip install 'memvault[{extra}]' "
        f"(missing: {missing.name})"
    )


def restated(error: E, subject: str, item: int | None = None) -> E:
    """``error`` again — the same type, reason and data — its message prefixed with what it is
    about (``item 3: …``, ``line 7: …``); ``item`` records the batch position."""
    again = type(error).__new__(type(error))
    again.__dict__.update(error.__dict__)
    again.args = (f"{subject}: {error}",)
    again.item = item
    return again


DETAILS = (
    "reason",
    "entry_id",
    "source_entry_ids",
    "item",
    "backend",
    "capability",
    "residue",
    "receipt",
    "retry_after",
)
"""What an error may carry besides its message (the REST server sends it along)."""


def details(error: MemvaultError) -> dict[str, Any]:
    """The data ``error`` carries besides its message, JSON-ready."""
    found = {name: getattr(error, name, None) for name in DETAILS}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in found.items() if v is not None}


def named(kind: str) -> type[MemvaultError] | None:
    """The error class of this module called ``kind`` (None: no such class)."""
    found = globals().get(kind)
    is_error = isinstance(found, type) and issubclass(found, MemvaultError)
    return found if is_error else None


def rebuilt(kind: type[E], message: str, data: Mapping[str, Any] | None = None) -> E:
    """An error of type ``kind`` saying ``message`` with the data of :func:`details`: the
    error as it was raised where it was sent from."""
    error = kind.__new__(kind)
    error.args = (message,)
    data = data or {}
    if issubclass(kind, NotFoundError):
        setattr(error, "entry_id", data.get("entry_id", ""))  # noqa: B010 (E has none)
    for name in DETAILS:
        if name in data:
            value = data[name]
            setattr(error, name, tuple(value) if isinstance(value, list) else value)
    return error
