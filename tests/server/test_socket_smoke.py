"""One smoke test over a real socket (uvicorn in a thread): the rest of the REST suite runs the
same app in-process over ASGI; this checks that nothing differs on the wire."""

from __future__ import annotations

from collections.abc import Callable

from .conftest import Client


def test_the_app_over_a_real_socket(start_real_server: Callable[..., Client]) -> None:
    api = start_real_server()
    status, entry = api("POST", "/v1/memories", {"content": "Maya likes tea", "scope": "user:m"})
    assert status == 201 and entry["duplicate"] is False
    status, body = api("POST", "/v1/search", {"query": "tea", "scope": "user:m"})
    assert status == 200 and [h["id"] for h in body["hits"]] == [entry["id"]]
    status, body = api("POST", "/v1/memories", raw=b"[" * 100_000 + b"]" * 100_000)
    assert (status, body["error"]["type"]) == (400, "NestingTooDeep")
    forged = {"Content-Type": "text/plain", "Origin": "https://evil.example"}
    assert api("POST", "/v1/memories", raw=b"{}", headers=forged)[0] in {403, 415}
    assert api("GET", "/v1/count", headers={"Host": "rebind.evil.example"})[0] == 421
    assert api("GET", "/v1/nowhere")[1]["error"]["type"] == "NotFound"
