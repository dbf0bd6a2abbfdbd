"""Learning over the REST API (in-process): turns in, the versions of a fact, tenancy."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memvault import AsyncMemory
from memvault.local import Local
from memvault.server import create_app
from memvault.testing import HashEmbedder, ManualClock

from .conftest import Client, uvicorn_threads

KEY_A, KEY_B = "a-key-0123456789abcdef", "b-key-0123456789abcdef"


@pytest.fixture
def api(start_server: Callable[..., Client]) -> Client:
    return start_server()


def ok(answer: tuple[int, Any], status: int = 200) -> Any:
    assert answer[0] == status, answer[1]
    return answer[1]


def _session(api: Client, user: str = "alice") -> str:
    return str(ok(api("POST", "/v1/sessions", {"user_id": user}), 201)["id"])


def test_a_turn_in_and_what_it_taught(api: Client) -> None:
    sid = _session(api)
    body = {"user": "I live in Berlin.", "assistant": "Nice!", "tool_records": ["ok"]}
    turn = ok(api("POST", f"/v1/sessions/{sid}/turns", {**body, "wait": True}), 201)
    assert [r["role"] for r in turn["records"]] == ["user", "tool", "assistant"]
    assert turn["extraction"] == "scheduled"
    learned = turn["learned"]
    assert learned["extractor"] == "heuristic"
    assert [e["content"] for e in learned["stored"]] == ["The user lives in Berlin."]
    moved = {"user": "I moved to Paris.", "wait": True}
    learned = ok(api("POST", f"/v1/sessions/{sid}/turns", moved), 201)["learned"]
    assert len(learned["superseded"]) == 1
    berlin = learned["superseded"][0]
    chain = ok(api("GET", f"/v1/memories/{berlin}/history"))["versions"]
    assert [e["content"] for e in chain] == [
        "The user lives in Berlin.",
        "The user lives in Paris.",
    ]
    review = ok(api("GET", "/v1/superseded?scope=user:alice"))["supersessions"]
    assert review[0]["entry"]["id"] == berlin and review[0]["reason"]
    current = ok(api("POST", "/v1/retrieve", {"scope": "user:alice"}))["entries"]
    assert [e["content"] for e in current] == ["The user lives in Paris."]
    every = ok(api("POST", "/v1/retrieve", {"scope": "user:alice", "include_superseded": True}))
    assert len(every["entries"]) == 2
    restored = ok(api("POST", f"/v1/memories/{berlin}/restore", {}))
    assert restored["superseded_by"] is None


def test_a_turn_without_wait_is_accepted_and_extraction_can_be_asked_for(api: Client) -> None:
    sid = _session(api)
    turn = ok(api("POST", f"/v1/sessions/{sid}/turns", {"user": "My name is Ana."}), 202)
    assert turn["extraction"] in ("scheduled", "queued") and "learned" not in turn
    done = ok(api("POST", f"/v1/sessions/{sid}/extract", {}))
    assert done["extractor"] == "heuristic"


def test_supersede_by_hand_and_bad_input(api: Client) -> None:
    entry = ok(api("POST", "/v1/memories", {"content": "Uses MySQL", "scope": "user:bob"}), 201)
    path = f"/v1/memories/{entry['id']}"
    new = ok(
        api("POST", f"{path}/supersede", {"content": "Uses Postgres", "reason": "migrated"}), 201
    )
    assert new["supersedes"] == [entry["id"]]
    status, body = api("POST", f"{path}/supersede", {"content": "Uses Oracle"})
    assert (status, body["error"]["type"]) == (409, "ConflictError")
    assert f"supersede {new['id']}" in body["error"]["message"]
    status, body = api("POST", f"{path}/restore", {"keep_successor": "yes"})
    assert status == 400
    status, body = api("POST", "/v1/sessions/nope/turns", {"user": "hi"})
    assert (status, body["error"]["type"]) == (404, "SessionNotFoundError")
    sid = _session(api)
    status, body = api("POST", f"/v1/sessions/{sid}/turns", {})
    assert (status, body["error"]["type"]) == (400, "ValidationError")
    status, _ = api("POST", f"/v1/sessions/{sid}/turns", {"user": "hi", "tool_records": [5]})
    assert status == 400


def test_tenants_learn_apart(start_server: Callable[..., Client]) -> None:
    api = start_server(api_keys=f"a:{KEY_A},b:{KEY_B}")
    a, b = api.with_key(KEY_A), api.with_key(KEY_B)
    sid = _session(a)
    ok(a("POST", f"/v1/sessions/{sid}/turns", {"user": "I prefer tea.", "wait": True}), 201)
    status, _ = b("POST", f"/v1/sessions/{sid}/turns", {"user": "I prefer coffee."})
    assert status == 404
    assert ok(b("GET", "/v1/users/alice/global"))["entries"] == []
    assert len(ok(a("GET", "/v1/users/alice/global"))["entries"]) == 1


def test_waiting_flushes_do_not_starve_the_server(tmp_path: Path) -> None:
    """Tenant a's requests waiting on a slow extraction (more of them than the default
    thread-pool has threads) leave the server answering tenant b, and its readiness probe."""
    memory = AsyncMemory(str(tmp_path / "m.db"), embedder=HashEmbedder(), clock=ManualClock())
    release = threading.Event()
    assert isinstance(memory._at, Local)
    memory._at.learner.schedule(("a", "s-slow"), lambda: release.wait(60))
    app = create_app(memory, api_keys=f"a:{KEY_A},b:{KEY_B}", owns_memory=True)
    with uvicorn_threads() as serve, ThreadPoolExecutor(16) as pool:
        api = Client(serve(app))
        try:
            flushes = [
                pool.submit(api.with_key(KEY_A), "POST", "/v1/flush", {"timeout": 60})
                for _ in range(12)
            ]
            time.sleep(0.5)  # the flushes are all waiting now
            counted = pool.submit(api.with_key(KEY_B), "GET", "/v1/count")
            assert counted.result(10) == (200, {"count": 0})
            assert pool.submit(api, "GET", "/readyz").result(10)[0] == 200
            other = pool.submit(api.with_key(KEY_B), "POST", "/v1/flush", {"timeout": 5})
            assert ok(other.result(10)) == {"done": True}  # b's flush waits for b's work only
            assert not any(flush.done() for flush in flushes)
        finally:
            release.set()
        assert [ok(flush.result(30)) for flush in flushes] == [{"done": True}] * 12
