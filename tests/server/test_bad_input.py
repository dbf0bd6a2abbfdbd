"""The bad-input table of docs/reliability.md, row by row: each malformed input gets the error
the table says, and nothing is written (no entry, no audit event)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import BundleError, InvalidScopeError, Memory, NewEntry, ValidationError
from memvault.testing import HashEmbedder

from ..bundle_cases import BAD, bomb, bundle_of
from .conftest import Client

DOC = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"


def table_rows() -> dict[str, str]:
    """Case id → the answer the table gives it."""
    section = DOC.read_text(encoding="utf-8").split("## Bad input", 1)[1]
    rows = re.findall(r"^\| `([a-z-]+)` \|.*\| ([^|]+) \|$", section, re.M)
    return {case: answer.strip() for case, answer in rows}


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(str(tmp_path / "api.db"), embedder=HashEmbedder()) as opened:
        yield opened


def _raises(kind: type[Exception], call: Callable[[], Any]) -> None:
    with pytest.raises(kind):
        call()


PY: dict[str, Callable[[Memory], None]] = {
    "py-empty": lambda m: _raises(ValidationError, lambda: m.write("", scope="user:a")),
    "py-too-long": lambda m: _raises(
        ValidationError, lambda: m.write("x" * 100_001, scope="user:a")
    ),
    "py-surrogate": lambda m: _raises(ValidationError, lambda: m.write("\ud800", scope="user:a")),
    "py-nan-ttl": lambda m: _raises(
        ValidationError, lambda: m.write("x", scope="user:a", ttl=float("nan"))
    ),
    "py-bad-scope": lambda m: _raises(InvalidScopeError, lambda: m.write("x", scope="user:")),
    "py-deep": lambda m: _raises(
        ValidationError, lambda: m.write("x", scope="user:a", metadata=_deep(40))
    ),
    "py-batch-strict": lambda m: _raises(
        ValidationError,
        lambda: m.write_many([NewEntry("fine", "user:a"), NewEntry("", "user:a")], strict=True),
    ),
    "py-erase-two": lambda m: _raises(ValidationError, lambda: m.erase(user="a", scope="user:a")),
    "py-actor": lambda m: _raises(
        ValidationError, lambda: m.as_actor("").write("x", scope="user:a")
    ),
    "py-import-junk": lambda m: _raises(BundleError, lambda: m.import_bundle(b"junk")),
}


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"k": value}
    return value


CLI: dict[str, tuple[str, ...]] = {
    "cli-scope": ("write", "x", "--scope", "nope"),
    "cli-metadata": ("write", "x", "--scope", "user:a", "--metadata", "[1]"),
    "cli-ttl": ("write", "x", "--scope", "user:a", "--ttl", "-1"),
    "cli-erase": ("erase", "--yes"),
    "cli-import": ("import-session", "{junk}"),
}

NESTED = "[" * 100 + "]" * 100
REST: dict[str, tuple[bytes, dict[str, str]]] = {
    "rest-json": (b"not json", {}),
    "rest-nan": (b'{"content": "x", "scope": "user:a", "ttl": NaN}', {}),
    "rest-unknown": (b'{"content": "x", "scope": "user:a", "colour": "red"}', {}),
    "rest-type": (b'{"content": 5, "scope": "user:a"}', {}),
    "rest-twice": (b'{"content": "x", "content": "y", "scope": "user:a"}', {}),
    "rest-deep": (f'{{"content": "x", "scope": "user:a", "metadata": {NESTED}}}'.encode(), {}),
    "rest-size": (b'{"content": "' + b"x" * (16 * 1024 * 1024) + b'", "scope": "user:a"}', {}),
    "rest-agent": (b'{"content": "x", "scope": "user:a"}', {"X-Memvault-Agent": "a" * 65}),
}

BUNDLES: dict[str, Callable[[bytes], bytes]] = {
    "bundle-truncated": BAD["truncated"],
    "bundle-tampered": BAD["tampered"],
    "bundle-version": BAD["wrong version"],
    "bundle-traversal": BAD["path traversal"],
    "bundle-symlink": BAD["symlink"],
    "bundle-bomb": lambda good: bomb(),
    "bundle-forged": BAD["two sessions"],
}


def test_every_row_of_the_table_has_a_case_and_every_case_a_row() -> None:
    cases = {*PY, *CLI, *REST, *BUNDLES, "rest-bundle"}
    assert set(table_rows()) == cases


def _nothing_written(memory: Memory) -> None:
    assert memory.count(include_superseded=True) == 0
    assert memory.audit().events == ()


@pytest.mark.parametrize("case", sorted(PY))
def test_python_api_rows(memory: Memory, case: str) -> None:
    PY[case](memory)
    _nothing_written(memory)


@pytest.mark.parametrize("case", sorted(CLI))
def test_cli_rows(run: Any, tmp_path: Path, case: str) -> None:
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"junk")
    args = tuple(a.replace("{junk}", str(junk)) for a in CLI[case])
    assert table_rows()[case] == "exit 2"
    run(*args, code=2)
    with Memory(str(tmp_path / "cli.db"), embedder=HashEmbedder(), check_embedding=False) as memory:
        _nothing_written(memory)


def _rest_nothing_written(api: Client) -> None:
    assert api("GET", "/v1/count") == (200, {"count": 0})
    assert api("GET", "/v1/audit") == (200, {"events": [], "next_cursor": None})


@pytest.mark.parametrize("case", sorted(REST))
def test_rest_rows(start_server: Callable[..., Client], case: str) -> None:
    api = start_server()
    body, headers = REST[case]
    status, answer = api("POST", "/v1/memories", raw=body, headers=headers)
    want_status, want_type = table_rows()[case].strip("`").split(" `")
    assert (status, answer["error"]["type"]) == (int(want_status), want_type.strip("`"))
    _rest_nothing_written(api)


def test_rest_bundle_row(start_server: Callable[..., Client]) -> None:
    api = start_server()
    status, answer = api("POST", "/v1/sessions/import", {"bundle": "not base64!"})
    assert (status, answer["error"]["type"]) == (400, "ValidationError")
    _rest_nothing_written(api)


@pytest.mark.parametrize("case", sorted(BUNDLES))
def test_bundle_rows(memory: Memory, tmp_path: Path, case: str) -> None:
    with Memory(str(tmp_path / "source.db"), embedder=HashEmbedder()) as source:
        good = bundle_of(source, tmp_path)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(BUNDLES[case](good))
    with pytest.raises(BundleError):
        memory.import_session(bad)
    _nothing_written(memory)
    assert json.dumps(table_rows()[case]).startswith('"`BundleError`')
