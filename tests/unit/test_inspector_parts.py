"""The web inspector's pure parts: signed visits, CSRF tokens, key ids, revocations, the
guard's rules for its pages, and what the pages show."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import tomllib
from datetime import UTC, datetime
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from memvault import ConfigError
from memvault.facilities.model import Finding
from memvault.server.auth import Key
from memvault.server.guard import Guard
from memvault.server.ui import page_origin
from memvault.server.ui.tokens import LIFETIME, MAX_REVOKED, OPEN, Revocations, Signer, Visit
from memvault.server.ui.view import filter_tags, notice, session_url, severity_of

NOW = 1_800_000_000.0
SIGNER = Signer(b"s" * 32)
KEYS = (
    Key(hashlib.sha256(b"acme-key").digest(), "acme", "a"),
    Key(hashlib.sha256(b"globex").digest(), "gx", "g"),
)


def test_a_sealed_visit_opens_until_it_expires() -> None:
    visit = SIGNER.visit(NOW, "kid")
    assert visit.expires == int(NOW) + LIFETIME and len(visit.nonce) == 32
    sealed = SIGNER.seal(visit)
    assert SIGNER.open(sealed, NOW) == visit
    assert SIGNER.open(sealed, visit.expires) is None
    assert SIGNER.visit(NOW).nonce != visit.nonce


def _forge(payload: object) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"v1.{body}.AAAA"


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "garbage",
        "v1..",
        "v1.é.é",
        "v2.e30.AAAA",
        _forge(["n", 2_000_000_000, "kid"]),  # a payload with a made-up signature
    ],
)
def test_a_forged_or_malformed_cookie_opens_no_visit(value: str | None) -> None:
    assert SIGNER.open(value, NOW) is None


def test_a_changed_field_or_another_secret_breaks_the_seal() -> None:
    sealed = SIGNER.seal(Visit("n" * 32, int(NOW) + 60, "kid"))
    version, payload, signature = sealed.split(".")
    longer = SIGNER.seal(Visit("n" * 32, int(NOW) + 10**9, "kid")).split(".")[1]
    assert SIGNER.open(f"{version}.{longer}.{signature}", NOW) is None
    assert Signer(b"t" * 32).open(sealed, NOW) is None
    flipped = ("B" if signature[0] == "A" else "A") + signature[1:]
    assert SIGNER.open(f"{version}.{payload}.{flipped}", NOW) is None


def _signed(payload: object) -> str:
    """``payload`` sealed as :class:`Signer` seals visits, with SIGNER's secret."""
    signed = _forge(payload).rpartition(".")[0]
    mac = hmac.new(b"s" * 32, b"visit\0" + signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def test_signed_fields_of_the_wrong_type_open_no_visit() -> None:
    assert SIGNER.open(_signed(["n", 2_000_000_000, "kid"]), NOW) == Visit(
        "n", 2_000_000_000, "kid"
    )
    assert SIGNER.open(_signed(["n", 2_000_000_000, 7]), NOW) == Visit("n", 2_000_000_000, None)
    for payload in ([1, 2, 3], ["n", "soon", None], ["n", True, None], {"a": 1}, ["n", 2e9, None]):
        assert SIGNER.open(_signed(payload), NOW) is None


def test_the_csrf_token_belongs_to_one_visit() -> None:
    visit, other = SIGNER.visit(NOW), SIGNER.visit(NOW)
    token = SIGNER.csrf(visit)
    assert SIGNER.csrf_ok(visit, token) and token == SIGNER.csrf(visit)
    assert not SIGNER.csrf_ok(other, token)
    assert not SIGNER.csrf_ok(visit, None) and not SIGNER.csrf_ok(visit, "")
    assert Signer(b"t" * 32).csrf(visit) != token


def test_a_key_id_names_a_key_without_revealing_it() -> None:
    digest = KEYS[0].digest
    key_id = SIGNER.key_id(digest)
    assert "acme" not in key_id and digest.hex() not in key_id
    assert base64.urlsafe_b64encode(digest).decode().rstrip("=") != key_id
    assert SIGNER.key(Visit("n", 0, key_id), KEYS) == KEYS[0]
    assert SIGNER.key(Visit("n", 0, key_id), KEYS[1:]) is None  # the key was removed
    assert SIGNER.key(Visit("n", 0, None), KEYS) is None
    assert SIGNER.key(Visit("n", 0, OPEN), KEYS) is None
    assert Signer(b"t" * 32).key(Visit("n", 0, key_id), KEYS) is None


def test_the_secret_is_long_or_random() -> None:
    assert Signer.from_text(None).secret != Signer.from_text(None).secret
    assert Signer.from_text("x" * 32).secret == b"x" * 32
    with pytest.raises(ConfigError, match="at least 32"):
        Signer.from_text("short")


def test_revoked_visits_are_remembered_up_to_a_bound() -> None:
    revoked = Revocations()
    early, late = Visit("a", int(NOW) + 10), Visit("b", int(NOW) + 1000)
    revoked.revoke(early, NOW)
    revoked.revoke(late, NOW)
    assert early in revoked and late in revoked and Visit("c", 0) not in revoked
    for number in range(MAX_REVOKED - 1):  # one over the bound: early has expired by then
        revoked.revoke(Visit(f"n{number}", int(NOW) + 1000), NOW + 100)
    assert early not in revoked and late in revoked and len(revoked.ends) == MAX_REVOKED
    for number in range(5):  # none has expired: the oldest go first
        revoked.revoke(Visit(f"m{number}", int(NOW) + 1000), NOW + 100)
    assert late not in revoked and Visit("m4", 0) in revoked
    assert len(revoked.ends) == MAX_REVOKED


OWN = "http://127.0.0.1:8765"
FORM = {"host": "127.0.0.1:8765", "content-type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({**FORM, "origin": OWN}, None),
        ({**FORM, "origin": OWN, "sec-fetch-site": "same-origin"}, None),
        (FORM, None),  # no browser: the CSRF token still has to match
        ({**FORM, "content-type": "application/x-www-form-urlencoded; charset=UTF-8"}, None),
        ({**FORM, "origin": "http://127.0.0.1:9999"}, 403),  # same site, other origin
        ({**FORM, "origin": "https://127.0.0.1:8765"}, 403),
        ({**FORM, "origin": "null"}, 403),
        ({**FORM, "sec-fetch-site": "same-site"}, 403),
        ({**FORM, "origin": OWN, "host": "rebound.example:8765"}, 421),
        ({**FORM, "origin": OWN, "content-type": "application/json"}, 415),
        ({**FORM, "origin": OWN, "content-type": "multipart/form-data; boundary=x"}, 415),
        ({**FORM, "content-type": "application/x-www-form-urlencoded; charset=latin-1"}, 415),
        ({"host": "127.0.0.1:8765", "origin": OWN}, 415),
    ],
)
def test_inspector_forms_come_from_its_own_origin(
    headers: dict[str, str], status: int | None
) -> None:
    refusal = Guard().refusal("POST", headers, OWN)
    assert (refusal and refusal.status) == status


def test_the_api_keeps_its_rules() -> None:
    refusal = Guard().refusal("POST", {**FORM, "origin": OWN})
    assert refusal is not None and refusal.status == 403
    refusal = Guard().refusal("POST", FORM)
    assert refusal is not None and refusal.status == 415
    assert Guard().refusal("GET", {"host": "127.0.0.1:8765"}, OWN) is None


def _scope(
    path: str, host: bytes | None = b"127.0.0.1:8765", scheme: str = "http"
) -> dict[str, Any]:
    headers = [] if host is None else [(b"host", host)]
    return {"type": "http", "path": path, "scheme": scheme, "headers": headers}


def test_page_origin_marks_inspector_requests_only() -> None:
    assert page_origin(_scope("/ui")) == OWN
    assert page_origin(_scope("/ui/sessions/s1")) == OWN
    assert page_origin(_scope("/ui/x", b"LOCALHOST:443", "https")) == "https://localhost"
    assert page_origin(_scope("/ui/login", None)) == ""
    assert page_origin(_scope("/ui/login", b"host/path")) == ""
    for path in ("/v1/memories", "/uix", "/health", "/"):
        assert page_origin(_scope(path)) is None


def _finding(tags: tuple[str, ...]) -> Finding:
    now = datetime(2026, 5, 3, tzinfo=UTC)
    return Finding("f-1", "e1", "s1", "c", tags, now, "analyze_data")


def test_severities_and_filter_choices() -> None:
    assert severity_of(["sales", "low", "critical"]) == "critical"
    assert severity_of(["sales"]) is None
    found = [_finding(("high", "sales")), _finding(("q1",))]
    assert filter_tags(found) == ["critical", "high", "medium", "low", "info", "q1", "sales"]


def test_notices_are_only_the_known_ones() -> None:
    assert notice({"done": "pinned"}) == "Pinned to Global Memory."
    assert notice({"done": "deleted", "n": "3"}) == "Deleted (3 entries)."
    assert notice({"done": "deleted", "n": "<b>"}) == "Deleted."
    assert notice({"done": "<script>"}) is None and notice({}) is None


def test_session_urls_stay_inside_the_inspector() -> None:
    assert session_url("s-1", done="pinned") == "/ui/sessions/s-1?done=pinned"
    assert session_url("../../v1/x?y#z") == "/ui/sessions/..%2F..%2Fv1%2Fx%3Fy%23z"
    assert session_url("//evil.example") == "/ui/sessions/%2F%2Fevil.example"
    assert session_url(None, done="deleted", n="2") == "/ui?done=deleted&n=2"


def test_templates_and_static_files_are_packaged() -> None:
    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["memvault"]
    package = root / "src" / "memvault"
    shipped = [
        path.relative_to(package).as_posix()
        for path in (package / "server" / "ui").rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"}
    ]
    assert shipped
    for name in shipped:
        assert any(fnmatch(name, pattern) for pattern in patterns), name
