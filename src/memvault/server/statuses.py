"""The HTTP status of each memvault error (pure): what the API and the inspector answer."""

from __future__ import annotations

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
    (BackendError, 503),
)


def status_of(error: MemvaultError) -> int:
    return next((code for kind, code in STATUS_BY_ERROR if isinstance(error, kind)), 500)
