"""The facilities over the REST API (in-process): the seed scenario, refusals as 403, tenancy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import Client

KEY_A, KEY_B = "a-key-0123456789abcdef", "b-key-0123456789abcdef"


@pytest.fixture
def api(start_server: Callable[..., Client]) -> Client:
    return start_server()


def ok(answer: tuple[int, Any], status: int = 200) -> Any:
    assert answer[0] == status, answer[1]
    return answer[1]


def test_the_seed_scenario_over_http(api: Client) -> None:
    session = ok(api("POST", "/v1/sessions", {"user_id": "alice", "title": "Q1"}), 201)
    sid = session["id"]
    base = f"/v1/sessions/{sid}"
    ok(api("POST", f"{base}/records", {"role": "user", "content": "I prefer Go. Load sales."}), 201)
    ok(
        api(
            "POST",
            "/v1/users/alice/global",
            {"fact": "User prefers Go", "source": "user_turn", "session_id": sid},
        ),
        201,
    )
    ok(api("POST", f"{base}/notes", {"fact": "User analyses Q1 sales", "category": "context"}), 201)
    status, body = api("POST", f"{base}/findings", {"content": "Osaka spiked in week 10"})
    assert (status, body["error"]["type"]) == (403, "ForbiddenError")
    assert "source manual" in body["error"]["message"]  # the way through
    ok(api("PATCH", base, {"has_data": True}))
    first = ok(
        api(
            "POST", f"{base}/findings", {"content": "Osaka spiked in week 10", "tags": ["critical"]}
        ),
        201,
    )
    again = ok(api("POST", f"{base}/findings", {"content": "osaka spiked, in week 10!"}))
    assert again["duplicate"] and again["id"] == first["id"]
    assert len(ok(api("GET", f"{base}/findings?tag=critical"))["findings"]) == 1
    pinned = ok(api("POST", f"/v1/memories/{first['entry_id']}/pin", {}), 201)
    assert pinned["provenance"]["source"] == "promoted_from_finding"

    other = ok(api("POST", "/v1/sessions", {"user_id": "alice"}), 201)["id"]
    prompt = ok(api("POST", f"/v1/sessions/{other}/prompt", {"base": "Be brief."}))["prompt"]
    assert "(promoted from Finding, " in prompt and "User analyses" not in prompt
    window = ok(api("POST", f"{base}/context", {"budget": 400}))
    assert window["verbatim"] == 1 and window["messages"][0]["role"] == "user"
    recalled = ok(api("POST", f"/v1/sessions/{other}/context", {"budget": 800, "query": "Osaka"}))
    assert any("Osaka" in hit["content"] for hit in recalled["relevant"])
    hits = ok(api("POST", "/v1/records/search", {"query": "sales", "user_id": "alice"}))["hits"]
    assert [h["scope"] for h in hits] == [f"session:{sid}"]
    assert ok(api("DELETE", base))["deleted"] == 4
    assert api("GET", base)[0] == 404


def test_a_caller_that_says_manual_needs_no_loaded_data(api: Client) -> None:
    sid = ok(api("POST", "/v1/sessions", {"user_id": "alice"}), 201)["id"]
    mine = {"content": "Nagoya's CSV is missing March", "source": "manual"}
    found = ok(api("POST", f"/v1/sessions/{sid}/findings", mine), 201)
    assert (found["source"], found["tool_originated"]) == ("manual", False)
    status, body = api("POST", f"/v1/sessions/{sid}/findings", {**mine, "tool_originated": True})
    assert (status, body["error"]["type"]) == (400, "ValidationError")


def test_records_cannot_be_altered_over_http(api: Client) -> None:
    sid = ok(api("POST", "/v1/sessions", {"user_id": "bob", "private": True}), 201)["id"]
    record = ok(
        api("POST", f"/v1/sessions/{sid}/records", {"role": "user", "content": "original"}), 201
    )
    for method, body in (("PATCH", {"content": "rewritten"}), ("DELETE", None)):
        status, answer = api(method, f"/v1/memories/{record['id']}", body)
        assert (status, answer["error"]["type"]) == (403, "ForbiddenError")
    note = ok(api("POST", f"/v1/sessions/{sid}/notes", {"fact": "code name Falcon"}), 201)
    assert api("POST", f"/v1/memories/{note['id']}/pin", {})[0] == 403
    records = ok(api("GET", f"/v1/sessions/{sid}/records"))["records"]
    assert [r["content"] for r in records] == ["original"]


def test_sessions_are_confined_to_the_key_tenant(start_server: Callable[..., Client]) -> None:
    server = start_server(api_keys=f"acme:{KEY_A},globex:{KEY_B}")
    acme, globex = server.with_key(KEY_A), server.with_key(KEY_B)
    sid = ok(acme("POST", "/v1/sessions", {"user_id": "alice"}), 201)["id"]
    assert globex("GET", f"/v1/sessions/{sid}")[0] == 404
    assert ok(globex("GET", "/v1/sessions")) == {"sessions": []}
    assert globex("POST", f"/v1/sessions/{sid}/records", {"role": "user", "content": "x"})[0] == 404
    assert ok(globex("DELETE", f"/v1/sessions/{sid}")) == {"deleted": 0}
    assert ok(acme("GET", f"/v1/sessions/{sid}"))["id"] == sid


def test_a_session_bundle_goes_out_and_comes_back_in_the_keys_tenant(
    start_server: Callable[..., Client],
) -> None:
    server = start_server(api_keys=f"acme:{KEY_A},globex:{KEY_B}")
    acme, globex = server.with_key(KEY_A), server.with_key(KEY_B)
    sid = ok(acme("POST", "/v1/sessions", {"user_id": "alice", "private": True}), 201)["id"]
    ok(acme("POST", f"/v1/sessions/{sid}/records", {"role": "user", "content": "hello"}), 201)
    assert globex("GET", f"/v1/sessions/{sid}/bundle")[0] == 404
    out = ok(acme("GET", f"/v1/sessions/{sid}/bundle"))
    assert out["report"]["session_id"] == sid and out["report"]["total"] == 2
    into = ok(globex("POST", "/v1/sessions/import", {"bundle": out["bundle"]}), 201)
    assert into["source_session_id"] == sid and into["total"] == 2
    copied = ok(globex("GET", f"/v1/sessions/{into['session_id']}"))
    assert copied["private"] is True and copied["user_id"] == "alice"
    assert acme("GET", f"/v1/sessions/{into['session_id']}")[0] == 404
    status, body = globex("POST", "/v1/sessions/import", {"bundle": "not base64!"})
    assert (status, body["error"]["type"]) == (400, "ValidationError")
    status, body = globex("POST", "/v1/sessions/import", {"bundle": "aGVsbG8="})
    assert (status, body["error"]["type"]) == (400, "BundleError")
    assert (
        ok(globex("GET", "/v1/sessions?user_id=alice"))["sessions"][0]["id"] == into["session_id"]
    )


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/context", {"budget": 0}),
        ("/context", {"budget": 100, "tz": "Mars/Olympus"}),
        ("/context", {"budget": 100, "limit": 3}),
        ("/records", {"role": "narrator", "content": "x"}),
        ("", {}),
        ("/notes", {"fact": "x", "category": "preference"}),
    ],
)
def test_bad_facility_input_is_400(api: Client, path: str, body: Any) -> None:
    sid = ok(api("POST", "/v1/sessions", {"user_id": "alice"}), 201)["id"]
    method = "PATCH" if path == "" else "POST"
    status, answer = api(method, f"/v1/sessions/{sid}{path}", body)
    assert (status, answer["error"]["type"]) == (400, "ValidationError"), answer
