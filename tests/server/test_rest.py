"""The REST API (in-process over ASGI): every operation, error translation, tenancy by key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memvault.testing import HashEmbedder, ManualClock

from .conftest import Client

KEY_A, KEY_B = "a-key-0123456789abcdef", "b-key-0123456789abcdef"


@pytest.fixture
def api(start_server: Callable[..., Client]) -> Client:
    return start_server()


def write(api: Client, content: str, scope: str = "user:alice", **fields: Any) -> dict[str, Any]:
    status, body = api("POST", "/v1/memories", {"content": content, "scope": scope, **fields})
    assert status == 201, body
    assert body.pop("duplicate") is False
    return body  # type: ignore[no-any-return]


def test_write_get_update_delete_round_trip(api: Client) -> None:
    entry = write(
        api,
        "Alice prefers dark mode",
        tags=["ui"],
        category="preference",
        metadata={"k": 1},
        provenance={"source": "chat", "confidence": 0.9},
    )
    assert entry["scope"] == "user:alice" and entry["tags"] == ["ui"]
    assert entry["provenance"]["source"] == "chat"
    assert api("GET", f"/v1/memories/{entry['id']}") == (200, entry)

    status, updated = api("PATCH", f"/v1/memories/{entry['id']}", {"content": "Alice: light"})
    assert status == 200
    assert (updated["content"], updated["revision"], updated["tags"]) == ("Alice: light", 2, ["ui"])
    assert updated["provenance"] == entry["provenance"]

    assert api("DELETE", f"/v1/memories/{entry['id']}") == (200, {"deleted": True})
    assert api("DELETE", f"/v1/memories/{entry['id']}") == (200, {"deleted": False})
    status, body = api("GET", f"/v1/memories/{entry['id']}")
    assert (status, body["error"]["type"]) == (404, "NotFoundError")


def test_list_pages_filters_and_count(api: Client) -> None:
    ids = [
        write(api, f"note number {i}", tags=["even"] if i % 2 == 0 else [])["id"] for i in range(5)
    ]
    write(api, "elsewhere", scope="user:bob")
    status, first = api("GET", "/v1/memories?scope=user:alice&limit=2&order=oldest")
    assert status == 200 and [e["id"] for e in first["entries"]] == ids[:2]
    cursor = first["next_cursor"]
    _, second = api("GET", f"/v1/memories?scope=user:alice&limit=10&order=oldest&cursor={cursor}")
    assert [e["id"] for e in second["entries"]] == ids[2:] and second["next_cursor"] is None
    _, tagged = api("GET", "/v1/memories?scope=user:alice&tag=even")
    assert len(tagged["entries"]) == 3
    assert api("GET", "/v1/count?scope=user:alice") == (200, {"count": 5})
    assert api("GET", "/v1/count?scope=user:alice&tag=even") == (200, {"count": 3})
    assert api("GET", "/v1/count") == (200, {"count": 6})


def test_search_and_retrieve(api: Client) -> None:
    write(api, "the deploy pipeline uses blue green releases", tags=["ops"])
    write(api, "lunch is at noon on fridays")
    status, body = api(
        "POST", "/v1/search", {"query": "blue green deploy", "scope": "user:alice", "limit": 1}
    )
    assert status == 200 and len(body["hits"]) == 1
    hit = body["hits"][0]
    assert "blue green" in hit["content"] and set(hit["components"]) >= {"lexical", "dense"}
    _, none = api(
        "POST", "/v1/search", {"query": "deploy", "scope": "user:alice", "tags": ["missing"]}
    )
    assert none == {"hits": []}
    status, body = api("POST", "/v1/retrieve", {"scope": "user:alice", "tags": ["ops"]})
    assert status == 200 and [e["tags"] for e in body["entries"]] == [["ops"]]


def test_batch_reports_stored_merged_and_refused(api: Client) -> None:
    items = [
        {"content": "Grace bought green tea downtown on Monday", "scope": "user:alice"},
        {"content": "two", "scope": "nope"},
        {"content": "x"},
        {"content": "Grace bought green tea downtown on Monday", "scope": "user:alice"},
        {"content": "Grace sold green tea downtown on Monday", "scope": "user:alice"},
        {"content": "Traceback (most recent call last):\n  File x", "scope": "user:alice"},
    ]
    status, body = api("POST", "/v1/memories/batch", {"items": items})
    assert status == 201
    assert (body["stored"], body["merged"], body["refused"]) == (2, 1, 3)
    outcomes = [(i["index"], i["outcome"]) for i in body["items"]]
    assert outcomes == [
        (0, "stored"),
        (1, "refused"),
        (2, "refused"),
        (3, "merged"),
        (4, "stored"),
        (5, "refused"),
    ]
    first = body["items"][0]["entry"]["id"]
    assert body["items"][3]["merged_into"] == first == body["items"][3]["entry"]["id"]
    errors = [body["items"][i]["error"] for i in (1, 2, 5)]
    assert errors == ["InvalidScopeError", "ValidationError", "FilteredError"]
    assert body["items"][2]["reason"].startswith("missing required field")
    assert api("GET", "/v1/count") == (200, {"count": 2})


def test_batch_strict_is_all_or_nothing_and_batches_are_capped(api: Client) -> None:
    items = [{"content": "one fact", "scope": "user:alice"}, {"content": "two", "scope": "nope"}]
    status, body = api("POST", "/v1/memories/batch", {"items": items, "strict": True})
    assert status == 400 and "item 1" in body["error"]["message"]
    assert api("GET", "/v1/count") == (200, {"count": 0})
    status, body = api("POST", "/v1/memories/batch", {"items": [{"content": "x"}], "strict": True})
    assert status == 400 and body["error"]["message"].startswith("items[0]: missing")
    too_many = [{"content": f"fact {n}", "scope": "user:alice"} for n in range(1001)]
    status, body = api("POST", "/v1/memories/batch", {"items": too_many})
    assert status == 400 and "at most 1,000 items" in body["error"]["message"]
    status, body = api("POST", "/v1/memories/batch", {"items": []})
    assert status == 200 and body == {"stored": 0, "merged": 0, "refused": 0, "items": []}


def test_a_restatement_answers_200_with_the_existing_entry(api: Client) -> None:
    first = write(api, "Maya is allergic to peanuts")
    restated = {"content": "Maya is allergic to peanuts", "scope": "user:alice"}
    status, again = api("POST", "/v1/memories", restated)
    assert status == 200 and again["duplicate"] and again["id"] == first["id"]


def test_promote_and_delete_scope(api: Client) -> None:
    note = write(api, "use the staging cluster", scope="session:s1")
    status, promoted = api("POST", f"/v1/memories/{note['id']}/promote", {"to": "user:alice"})
    assert status == 201 and promoted["promoted_from_id"] == note["id"]
    status, body = api("POST", f"/v1/memories/{promoted['id']}/promote", {"to": "session:s2"})
    assert (status, body["error"]["type"]) == (400, "InvalidScopePromotionError")
    write(api, "second note", scope="session:s1")
    assert api("DELETE", "/v1/scopes/session:s1") == (200, {"deleted": 2})
    assert api("GET", "/v1/count") == (200, {"count": 1})


def test_expiry_and_purge(start_server: Callable[..., Client]) -> None:
    clock = ManualClock()
    api = start_server(clock=clock)
    entry = write(api, "temporary code 1234", ttl=60)
    clock.advance(seconds=61)
    assert api("GET", f"/v1/memories/{entry['id']}")[0] == 404
    assert api("POST", "/v1/purge-expired") == (200, {"purged": 1})


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "kind"),
    [
        ("POST", "/v1/memories", {"contnt": "x", "scope": "user:a"}, 400, "ValidationError"),
        ("POST", "/v1/memories", {"content": "x"}, 400, "ValidationError"),
        ("POST", "/v1/memories", {"content": "x", "scope": "bogus"}, 400, "InvalidScopeError"),
        ("POST", "/v1/memories", ["not", "an", "object"], 400, "ValidationError"),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "expires_at": "tomorrow"},
            400,
            "ValidationError",
        ),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "expires_at": "2030-01-01T00:00:00"},
            400,
            "ValidationError",
        ),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "ttl": -1},
            400,
            "ValidationError",
        ),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "ttl": 1e300},
            400,
            "ValidationError",
        ),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "provenance": "me"},
            400,
            "ValidationError",
        ),
        ("POST", "/v1/search", {"query": " ", "scope": "user:a"}, 400, "ValidationError"),
        (
            "POST",
            "/v1/search",
            {"query": "q", "scope": "user:a", "limit": "ten"},
            400,
            "ValidationError",
        ),
        (
            "POST",
            "/v1/search",
            {"query": "q", "scope": "user:a", "fusion": "magic"},
            400,
            "ValidationError",
        ),
        ("PATCH", "/v1/memories/01ABC", {}, 400, "ValidationError"),
        ("PATCH", "/v1/memories/01ABC", {"content": "new"}, 404, "NotFoundError"),
        ("GET", "/v1/memories?scope=user:a&scope=user:b", None, 400, "ValidationError"),
        ("GET", "/v1/memories?limit=0", None, 400, "ValidationError"),
        ("GET", "/v1/memories?cursor=garbage", None, 400, "ValidationError"),
    ],
)
def test_bad_input_gets_a_clear_error(  # noqa: PLR0917  (one parameter per column)
    api: Client, method: str, path: str, body: Any, status: int, kind: str
) -> None:
    got_status, got = api(method, path, body)
    assert (got_status, got["error"]["type"]) == (status, kind), got
    assert got["error"]["message"]


def test_filtered_content_is_422_with_its_reason(api: Client) -> None:
    trace = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom'
    status, body = api("POST", "/v1/memories", {"content": trace, "scope": "user:a"})
    assert status == 422 and body["error"]["reason"] == "error_response"


def test_malformed_and_oversized_bodies(start_server: Callable[..., Client]) -> None:
    api = start_server(max_request_bytes=1000)
    status, body = api("POST", "/v1/memories", raw=b"{not json")
    assert (status, body["error"]["type"]) == (400, "InvalidJSON")
    status, body = api("POST", "/v1/memories", {"content": "x" * 2000, "scope": "user:a"})
    assert (status, body["error"]["type"]) == (413, "PayloadTooLarge")
    assert api("GET", "/v1/count") == (200, {"count": 0})


def test_api_keys_choose_the_tenant_and_isolate_it(start_server: Callable[..., Client]) -> None:
    api = start_server(api_keys=f"acme:{KEY_A}, globex:{KEY_B}")
    assert api("GET", "/health")[0] == 200
    status, body = api("GET", "/v1/count")
    assert (status, body["error"]["type"]) == (401, "Unauthorized")
    assert api.with_key("not-a-key-0123456789")("GET", "/v1/count")[0] == 401
    acme, globex = api.with_key(KEY_A), api.with_key(KEY_B)
    secret = write(acme, "acme launch date is march 3", scope="org:shared")
    assert globex("GET", f"/v1/memories/{secret['id']}")[0] == 404
    assert globex("GET", "/v1/count") == (200, {"count": 0})
    assert globex("POST", "/v1/search", {"query": "launch", "scope": "org:shared"}) == (
        200,
        {"hits": []},
    )
    assert globex("DELETE", f"/v1/memories/{secret['id']}") == (200, {"deleted": False})
    assert globex("DELETE", "/v1/scopes/org:shared") == (200, {"deleted": 0})
    assert acme("GET", f"/v1/memories/{secret['id']}")[1]["content"] == secret["content"]


def test_an_unexpected_failure_is_a_500_that_leaks_nothing(
    start_server: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = start_server()

    def explode(self: HashEmbedder, texts: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(HashEmbedder, "embed_batch", explode)
    status, body = api("POST", "/v1/search", {"query": "q", "scope": "user:a"})
    assert (status, body["error"]["type"]) == (500, "InternalError")
    assert "secret" not in str(body)


EDGE = "0001-01-01T00:00:00+14:00"
HUGE = int("9" * 400)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/memories", {"content": "x", "scope": "user:a", "created_at": EDGE}),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "expires_at": "9999-12-31T23:59:59-05:00"},
        ),
        (
            "POST",
            "/v1/memories",
            {"content": "x", "scope": "user:a", "provenance": {"confidence": HUGE}},
        ),
        ("POST", "/v1/search", {"query": "x", "scope": "user:a", "metadata": {"k": 2**63}}),
        ("POST", "/v1/search", {"query": "x", "scope": "user:a", "lexical_weight": HUGE}),
        ("GET", "/v1/count?since=0001-01-01T00:00:00%2B14:00", None),
        (
            "GET",
            "/v1/memories?cursor=WyIwMDAxLTAxLTAxVDAwOjAwOjAwKzE0OjAwIiwgIngiLCAibmV3ZXN0Il0",
            None,
        ),
    ],
)
def test_values_at_the_edge_of_their_type_are_400_not_500(
    api: Client, method: str, path: str, body: Any
) -> None:
    status, answer = api(method, path, body)
    assert (status, answer["error"]["type"]) == (400, "ValidationError"), answer


def test_erasure_over_rest_stays_in_the_keys_tenant(
    start_server: Callable[..., Client],
) -> None:
    api = start_server(api_keys=f"a:{'a' * 16},b:{'b' * 16}")
    a, b = api.with_key("a" * 16), api.with_key("b" * 16)
    for client in (a, b):
        assert (
            client("POST", "/v1/memories", {"content": "Bob drinks tea", "scope": "user:bob"})[0]
            == 201
        )
    status, receipt = a("POST", "/v1/erase", {"user": "bob"})
    assert status == 200 and receipt["total"] == 1 and receipt["tenant"] == "a"
    assert receipt["residue"] == 0 and "tea" not in str(receipt)
    assert b("GET", "/v1/count?scope=user:bob")[1] == {"count": 1}  # the other tenant's bob
    status, refused = a("POST", "/v1/erase", {"tenant": "b"})
    assert status == 403 and refused["error"]["type"] == "ForbiddenError"
    assert b("GET", "/v1/count?scope=user:bob")[1] == {"count": 1}
    assert a("POST", "/v1/erase", {"user": "bob", "scope": "user:bob"})[0] == 400


def test_the_audit_log_names_the_key_and_the_agent_and_stays_in_the_tenant(
    start_server: Callable[..., Client],
) -> None:
    api = start_server(api_keys=f"a:{'a' * 16} planner, a:{'c' * 16}, b:{'b' * 16} other")
    planner, unnamed, b = (api.with_key(k * 16) for k in "acb")
    written = write(planner, "Bob drinks tea", scope="user:bob")
    agent = {"X-Memvault-Agent": "triage-7"}
    status, _ = unnamed("PATCH", f"/v1/memories/{written['id']}", {"tags": ["x"]}, headers=agent)
    assert status == 200
    status, page = planner("GET", f"/v1/audit?entry_id={written['id']}&order=oldest")
    assert status == 200 and page["next_cursor"] is None
    assert [(e["change"], e["operation"], e["actor"]) for e in page["events"]] == [
        ("created", "write", "planner"),
        ("changed", "update", "key-2/triage-7"),
    ]
    assert "tea" not in str(page)
    assert planner("GET", "/v1/tenant")[1] == {
        "tenant": "a",
        "actor": "planner",
        "grant": {"read": None, "write": None},
    }
    assert b("GET", "/v1/audit")[1] == {"events": [], "next_cursor": None}
    status, verified = planner("GET", "/v1/audit/verify")
    assert status == 200 and verified["intact"] and verified["tenant"] == "a"
    assert (verified["events"], verified["first_bad_seq"], len(verified["head"])) == (2, None, 64)
    assert b("GET", "/v1/audit/verify")[1]["events"] == 0  # its tenant's chain only
    assert b("GET", f"/v1/memories/{written['id']}/history")[0] == 404
    status, history = planner("GET", f"/v1/memories/{written['id']}/history")
    assert [v["id"] for v in history["versions"]] == [written["id"]]
    assert len(history["events"]) == 2
    for bad in ("", "x" * 65):
        status, body = planner("GET", "/v1/count", headers={"X-Memvault-Agent": bad})
        assert (status, body["error"]["type"]) == (400, "ValidationError"), bad
    for query in ("change=burnt", "cursor=99999999999999999999", "since=2020-01-01T00:00:00"):
        status, body = planner("GET", f"/v1/audit?{query}")
        assert (status, body["error"]["type"]) == (400, "ValidationError"), query
