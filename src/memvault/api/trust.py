"""Trust's operations, each declared once: erasure with a receipt, retention, the audit log,
and sessions as bundle files (read and written at the caller's, imported at the server)."""

from __future__ import annotations

import base64
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core import Invoke
from ..drivers import Steps
from ..errors import ValidationError
from ..rest.answers import Custom, Whole
from ..rest.codec import decoded, request
from ..rest.endpoints import Endpoint
from ..rest.fields import FLAG, INTEGER, TEXT, TIMESTAMP
from ..trust.audit import AuditPlans
from ..trust.audit_verify import AuditVerification
from ..trust.bundle_file import read_file, write_new_file
from ..trust.bundles import BundlePlans, BundleReport
from ..trust.erasure import ErasurePlans, ErasureReceipt, FinishReport
from ..trust.hygiene import HygienePlans, TidyReport
from ..trust.hygiene_rules import HygieneReport
from ..trust.retention import RetentionPlans, RetentionReport
from ..types import AuditPage
from .facilities import SESSION
from .operation import Operation


def _bundle(body: Any) -> tuple[bytes, BundleReport]:
    return base64.b64decode(body["bundle"], validate=True), BundleReport.from_dict(body["report"])


def _bundled(result: tuple[bytes, BundleReport]) -> Any:
    data, report = result
    return {"bundle": base64.b64encode(data).decode("ascii"), "report": report.to_dict()}


BUNDLED = Custom(_bundled, _bundle)
"""A session's bundle and the report of its making."""
BUNDLE = Endpoint(
    "GET",
    f"{SESSION}/bundle",
    answer="the session's bundle (base64 of the zip) and what it holds (docs/trust.md)",
)
IMPORT = Endpoint(
    "POST",
    "/v1/sessions/import",
    {"bundle": TEXT},
    required=("bundle",),
    status=201,
    answer="what the import stored: the new session's id, counts, events",
)
IMPORTS = "a bundle travels as base64 in JSON, and its file is read at the caller's"


def _export_session(op: Operation[Any, BundleReport], named: dict[str, Any]) -> Steps[Any]:
    """Ask the server for the session's bundle; write it here, at ``path``."""
    path = named.pop("path")
    if not isinstance(path, str | Path) or not str(path):
        raise ValidationError("path must name the bundle file to write")
    asked = request(op.sent_to, named)
    data, report = decoded(BUNDLED.decode, (yield asked), asked)
    written = yield Invoke(write_new_file, (path, data), blocking=True)
    return replace(report, path=written)


def _import_session(op: Operation[Any, BundleReport], named: dict[str, Any]) -> Steps[Any]:
    """Read the bundle file here, at ``path``; the server imports it."""
    path = named["path"]
    if not isinstance(path, str | Path) or not str(path):
        raise ValidationError("path must name the bundle file to read")
    data = yield Invoke(read_file, (path,), blocking=True)
    return (yield from _sent_bundle(op, data))


def _import_bundle(op: Operation[Any, BundleReport], named: dict[str, Any]) -> Steps[Any]:
    data = named["data"]
    if not isinstance(data, bytes | bytearray):
        raise ValidationError("a bundle is bytes")
    return (yield from _sent_bundle(op, bytes(data)))


def _sent_bundle(op: Operation[Any, BundleReport], data: bytes) -> Steps[Any]:
    sent = request(op.sent_to, {"bundle": base64.b64encode(data).decode("ascii")})
    return decoded(op.answer.decode, (yield sent), sent)


ERASE = Operation(
    ErasurePlans.erase,
    Endpoint(
        "POST",
        "/v1/erase",
        {"user": TEXT, "scope": TEXT, "tenant": TEXT},
        answer="the receipt: counts per kind, a hash of the erased ids, residue (0; else 503 "
        "ErasureIncompleteError with the receipt: the erasure is pending)",
    ),
    Whole(ErasureReceipt),
    special="a key erases its own tenant only",
)
FINISH_ERASURES = Operation(
    ErasurePlans.finish_erasures,
    Endpoint(
        "POST",
        "/v1/erase/finish",
        {},
        answer="the tenant's pending erasures finished, and still pending (then 503 "
        "ErasureIncompleteError)",
    ),
    Whole(FinishReport),
)
APPLY_RETENTION = Operation(
    RetentionPlans.apply_retention,
    Endpoint(
        "POST",
        "/v1/retention",
        {"dry_run": FLAG},
        answer="what the tenant's retention policy removed (or would remove), item by item",
    ),
    Whole(RetentionReport),
)
AUDIT = Operation(
    AuditPlans.audit,
    Endpoint(
        "GET",
        "/v1/audit",
        query={
            "entry_id": TEXT,
            "scope": TEXT,
            "actor": TEXT,
            "operation": TEXT,
            "change": TEXT,
            "since": TIMESTAMP,
            "until": TIMESTAMP,
            "order": TEXT,
            "limit": INTEGER,
            "cursor": TEXT,
        },
        answer="events (who changed which entry, how, when; never content) and next_cursor",
    ),
    Whole(AuditPage),
)
VERIFY_AUDIT = Operation(
    AuditPlans.verify_audit,
    Endpoint(
        "GET",
        "/v1/audit/verify",
        answer="the audit log checked against its hash chain: intact (events, erasures, what "
        "they removed, the head), or the first event that does not fit and why",
    ),
    Whole(AuditVerification),
)
HYGIENE = Operation(
    HygienePlans.hygiene,
    Endpoint(
        "GET",
        "/v1/hygiene",
        query={"scope": TEXT, "stale_days": INTEGER},
        answer="per scope: entries, restatements merged, near-duplicates, junk, stale entries, "
        "secrets, superseded and expired entries (counts, ids), the largest entries; never content",
    ),
    Whole(HygieneReport),
)
TIDY = Operation(
    HygienePlans.tidy,
    Endpoint(
        "POST",
        "/v1/hygiene/fix",
        {},
        answer="what the safe fix removed: expired entries purged (count, ids), then what the "
        "tenant's retention policy removed, item by item",
    ),
    Whole(TidyReport),
)
SESSION_BUNDLE = Operation(BundlePlans.session_bundle, BUNDLE, BUNDLED)
EXPORT_SESSION = Operation(
    BundlePlans.export_session,
    BUNDLE,
    BUNDLED,
    run=_export_session,
    kept=("path",),
    special="the route of session_bundle: the file is written at the caller's",
)
IMPORT_SESSION = Operation(
    BundlePlans.import_session,
    IMPORT,
    Whole(BundleReport),
    run=_import_session,
    kept=("path",),
    special=IMPORTS,
)
IMPORT_BUNDLE = Operation(
    BundlePlans.import_bundle,
    IMPORT,
    Whole(BundleReport),
    run=_import_bundle,
    kept=("data",),
    special=IMPORTS,
)

OPERATIONS = (
    ERASE,
    FINISH_ERASURES,
    APPLY_RETENTION,
    AUDIT,
    VERIFY_AUDIT,
    HYGIENE,
    TIDY,
    EXPORT_SESSION,
    IMPORT_SESSION,
    SESSION_BUNDLE,
    IMPORT_BUNDLE,
)
