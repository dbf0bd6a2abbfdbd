"""The HTTP status of each memvault error (pure): what the API and the inspector answer, and
the headers that go with it (``Retry-After`` for a store that cannot be reached now)."""

from __future__ import annotations

import math

from ..errors import (
    BackendError,
    CapabilityError,
    ClosedError,
    CompactionError,
    ConfigError,
    ConflictError,
    FilteredError,
    ForbiddenError,
    GuardError,
    InvalidScopePromotionError,
    LLMError,
    LLMUnavailableError,
    MemvaultError,
    NotFoundError,
    UnavailableError,
    ValidationError,
)

STATUS_BY_ERROR: tuple[tuple[type[MemvaultError], int], ...] = (
    (NotFoundError, 404),
    (ForbiddenError, 403),
    (FilteredError, 422),
    (ValidationError, 400),
    (InvalidScopePromotionError, 400),
    (ConfigError, 400),
    (ConflictError, 409),
    (ClosedError, 503),
    (CompactionError, 502),
    (GuardError, 422),
    (LLMUnavailableError, 503),
    (LLMError, 502),
    (CapabilityError, 501),
    (UnavailableError, 503),
    (BackendError, 503),
)


def status_of(error: MemvaultError) -> int:
    return next((code for kind, code in STATUS_BY_ERROR if isinstance(error, kind)), 500)


def headers_of(error: MemvaultError) -> dict[str, str]:
    """The headers of an error's answer: ``Retry-After`` (whole seconds, at least 1) for an
    :class:`~memvault.errors.UnavailableError` — when the store's breaker tries it again."""
    if not isinstance(error, UnavailableError):
        return {}
    wait = error.retry_after
    seconds = 1 if wait is None or not math.isfinite(wait) else max(1, math.ceil(wait))
    return {"Retry-After": str(seconds)}
