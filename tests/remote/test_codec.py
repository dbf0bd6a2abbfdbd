"""The remote client's pure parts: arguments → requests, answers and errors → values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from memvault import (
    BackendError,
    CapabilityError,
    CompactionError,
    ConfigError,
    FilteredError,
    NotFoundError,
    Scope,
    SessionNotFoundError,
    ValidationError,
)
from memvault.api import facilities, store
from memvault.errors import details, restated
from memvault.rest.codec import Request, answer, error_of, request, shown, wire

SENT = Request("GET", "/v1/count")


def body_of(error: Exception) -> dict[str, Any]:
    """What the server answers for ``error`` (server/app.py)."""
    assert isinstance(error, FilteredError | NotFoundError | CompactionError | ValidationError)
    return {"error": {"type": type(error).__name__, "message": str(error), **details(error)}}


@pytest.mark.parametrize(
    "raised",
    [
        FilteredError("too_short", "content is shorter than 10 characters"),
        NotFoundError("01ABC"),
        SessionNotFoundError("s-1"),
        CompactionError(["a", "b"], "the callback raised RuntimeError: down"),
        restated(ValidationError("content must not be empty"), "item 3", 3),
    ],
)
def test_a_server_error_comes_back_as_it_was_raised(raised: Exception) -> None:
    again = error_of(SENT, 400, body_of(raised), "http://h")
    assert type(again) is type(raised) and str(again) == str(raised)
    assert vars(again) == vars(raised)


@pytest.mark.parametrize(
    ("kind", "status", "raised"),
    [
        ("Unauthorized", 401, ConfigError),
        ("InvalidJSON", 400, ValidationError),
        ("PayloadTooLarge", 413, ValidationError),
        ("MisdirectedRequest", 421, ConfigError),
        ("NotFound", 404, CapabilityError),
        ("InternalError", 500, BackendError),
        ("SomethingNew", 502, BackendError),
        ("SomethingNew", 418, ValidationError),
    ],
)
def test_http_refusals_mean_what_they_mean_here(kind: str, status: int, raised: type) -> None:
    body = {"error": {"type": kind, "message": "no"}}
    assert type(error_of(SENT, status, body, "http://h")) is raised


def test_an_answer_that_is_no_memvault_error_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="not JSON"):
        answer(SENT, 200, b"<html>", "http://h")
    with pytest.raises(BackendError, match="answered GET /v1/count with 502"):
        answer(SENT, 502, b"<html>bad gateway</html>", "http://h")
    assert answer(SENT, 200, b'{"count": 2}', "http://h") == {"count": 2}


def test_arguments_fill_the_path_the_query_and_the_body() -> None:
    since = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    counted = request(
        store.COUNT.sent_to, {"scope": Scope.user("a b"), "tags": ("x", "y"), "since": since}
    )
    assert counted.query == (
        ("scope", "user:a b"),
        ("tag", "x"),
        ("tag", "y"),
        ("since", "2026-01-02T03:04:00+00:00"),
    )
    assert (counted.body, counted.idempotent) == (None, True)
    deleted = request(store.DELETE_BY_SCOPE.sent_to, {"scope": "object:doc:a/b?"})
    assert deleted.path == "/v1/scopes/object:doc:a/b%3F"
    searched = request(
        store.SEARCH.sent_to,
        {"query": "q", "scope": "user:a", "recency_half_life": timedelta(days=1)},
    )
    assert searched.body == {"query": "q", "scope": "user:a", "recency_half_life": 86400.0}
    assert searched.idempotent and not request(store.WRITE.sent_to, {"content": "x"}).idempotent
    loaded = request(facilities.CHANGE_SESSION, {"session_id": "s 1", "loaded": False})
    assert (loaded.path, loaded.body) == ("/v1/sessions/s%201", {"has_data": False})


def test_what_json_cannot_carry_is_refused_before_sending() -> None:
    with pytest.raises(ValidationError, match="text must be of JSON type string, got int"):
        request(facilities.FINDINGS.sent_to, {"session_id": "s", "text": 7})
    with pytest.raises(ValidationError, match="cannot be sent in a URL path"):
        request(store.GET.sent_to, {"entry_id": "a/b"})
    with pytest.raises(ValidationError, match="JSON-serialisable: a set is not"):
        wire({"bad": {1, 2}}, "metadata")
    when = datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError, match="JSON-serialisable: a datetime is not"):
        wire({"at": when}, "metadata")  # nothing inside an object is converted, as locally
    assert wire([when], "times") == [when.isoformat()]
    with pytest.raises(ValidationError, match="only IANA time zones"):
        wire(timezone(timedelta(hours=2)), "tz")
    assert wire(ZoneInfo("Europe/Paris"), "tz") == "Europe/Paris"
    assert wire(timezone(timedelta(0)), "tz") == wire(UTC, "tz") == "UTC"
    assert wire({"t", "u"} - {"u"}, "tags") == ["t"]  # an argument may be any iterable


def test_urls_are_shown_without_credentials() -> None:
    assert shown("https://me:secret@host:8443/base/") == "https://host:8443/base"
    assert shown("http://[::1]:8765") == "http://[::1]:8765"
