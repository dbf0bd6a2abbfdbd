"""Request ids and the server's log lines: text or JSON, one per record (``docs/operations.md``).

Every request gets an id — the caller's ``X-Request-ID`` if it is short and plain, else a new
one — which the answer echoes and every record logged while the request runs carries
(:class:`RequestIdFilter`). Records never hold content, keys or raw paths (which name scopes
and ids): the request line has the route template.
"""

from __future__ import annotations

import json
import logging
import secrets
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from ..patterns import lazy

REQUEST_ID_HEADER = "x-request-id"
REQUEST_ID: ContextVar[str | None] = ContextVar("memvault_request_id", default=None)
"""The id of the request being served (None outside a request)."""

FIELDS = ("request_id", "method", "route", "status", "duration_ms")
"""The structured fields a JSON line may carry besides time, level, logger and message."""

_ACCEPTED_ID = lazy(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def request_id(incoming: str | None) -> str:
    """The caller's id if well-formed (letters, digits, ``._:-``, at most 64), else a new one."""
    if incoming is not None and _ACCEPTED_ID.fullmatch(incoming):
        return incoming
    return secrets.token_hex(16)


class RequestIdFilter(logging.Filter):
    """Stamps each record with the id of the request it was logged in (if any)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time (UTC), level, logger, message, the :data:`FIELDS` it
    has, and the traceback of an error."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line |= {name: getattr(record, name, None) for name in FIELDS}
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps({k: v for k, v in line.items() if v is not None}, default=str)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger message [request id]``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        found = getattr(record, "request_id", None)
        return f"{line} [{found}]" if found else line


FORMATTERS = {"json": JsonFormatter, "text": TextFormatter}


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    """The ``logging.dictConfig`` of ``memvault serve`` (uvicorn applies it in every worker):
    memvault's and uvicorn's records on stderr in ``log_format``; uvicorn's access log off
    (memvault logs each request once, see :mod:`.observe`)."""
    formatter = FORMATTERS[log_format]
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": f"{__name__}.RequestIdFilter"}},
        "formatters": {"memvault": {"()": f"{__name__}.{formatter.__name__}"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "memvault",
                "filters": ["request_id"],
            }
        },
        "loggers": {
            name: {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
            for name in ("memvault", "uvicorn")
        }
        | {"uvicorn.access": {"handlers": [], "propagate": False}},
    }
