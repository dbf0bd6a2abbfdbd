"""API keys limited by ``read=`` and ``write=``: every REST route, asked for something outside a
key's grant, answers 403 and changes nothing (what the tenant isolation tests do for tenants,
here for grants); inside the grant the same routes work."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from memvault.server.app import ROUTES

from .conftest import Client

ADMIN, READER, WRITER = "k-admin-0123456789", "k-reader-012345678", "k-writer-012345678"
BOTH = "k-both-0123456789"
KEYS = ", ".join(
    [
        f"t:{ADMIN} admin",
        f"t:{READER} reader read=user:alice|session:sa",
        f"t:{WRITER} writer write=user:alice|session:sa",
        f"t:{BOTH} both read=user:alice|session:sa write=user:alice|session:sa",
    ]
)
Kind = Literal["read", "change", "either", "beyond", "free"]
"""What a case asks: to read its target, to change it, to read it for a change (allowed with
either), something beyond any limited key here (the whole tenant, every session, a scope no
key but the admin's has), or nothing of a scope."""


@dataclass(frozen=True)
class Case:
    method: str
    path: str
    kind: Kind
    body: Callable[[dict[str, str]], Any] | None = None

    def request(self, target: dict[str, str]) -> tuple[str, str, Any]:
        path = self.path.format(**target)
        return self.method, path, None if self.body is None else self.body(target)


def _execution(t: dict[str, str]) -> dict[str, Any]:
    return {"workflow_id": "w", "agent_id": "a", "input": "plan it", "success": True} | {
        "scope": t["scope"]
    }


CASES = [
    Case("POST", "/v1/memories/batch", "change",
         lambda t: {"items": [{"content": "likes rain", "scope": t["scope"]}]}),
    Case("POST", "/v1/memories/compact/sources", "read", lambda t: {"ids": [t["e1"], t["e2"]]}),
    Case("POST", "/v1/memories/compact", "change",
         lambda t: {"ids": [t["e1"], t["e2"]], "content": "merged"}),
    Case("GET", "/v1/memories/{e1}", "read"),
    Case("GET", "/v1/tenant", "free"),
    Case("GET", "/v1/stats", "beyond"),
    Case("POST", "/v1/erase", "beyond", lambda t: {"user": t["user"]}),
    Case("PATCH", "/v1/sessions/{sid}", "change", lambda t: {"title": "renamed"}),
    Case("POST", "/v1/sessions/import", "beyond", lambda t: {"bundle": t["bundle"]}),
    Case("POST", "/v1/sessions/{sid}/context", "read", lambda t: {"budget": 400}),
    Case("POST", "/v1/sessions/{sid}/context", "beyond",  # the user's other sessions too
         lambda t: {"budget": 400, "recall": True, "query": "tea"}),
    Case("POST", "/v1/sessions/{sid}/turns", "change", lambda t: {"user": "I like oolong."}),
    Case("GET", "/v1/sessions/{sid}/extraction", "either"),
    Case("POST", "/v1/sessions/{sid}/turns", "change",
         lambda t: {"user": "I like sencha.", "wait": True}),
    Case("POST", "/v1/flush", "free", lambda t: {"timeout": 5}),
    Case("POST", "/v1/memories/{e1}/supersede", "change", lambda t: {"content": "likes coffee"}),
    Case("POST", "/v1/memories/supersede", "change",
         lambda t: {"ids": [t["e1"]], "content": "likes coffee"}),
    Case("POST", "/v1/memories", "change",
         lambda t: {"content": "likes snow", "scope": t["scope"]}),
    Case("POST", "/v1/retrieve", "read", lambda t: {"scope": t["scope"]}),
    Case("PATCH", "/v1/memories/{e1}", "change", lambda t: {"tags": ["checked"]}),
    Case("POST", "/v1/memories/{note}/pin", "change", lambda t: {}),
    Case("POST", "/v1/memories/{pinned}/demote", "change", lambda t: {"session_id": t["sid"]}),
    Case("GET", "/v1/memories/{e1}/history", "read"),
    Case("POST", "/v1/memories/{old}/restore", "change", lambda t: {}),
    Case("POST", "/v1/memories/{e1}/promote", "beyond", lambda t: {"to": "workspace:w"}),
    Case("GET", "/v1/count?scope={scope}", "read"),
    Case("GET", "/v1/memories?scope={scope}", "read"),
    Case("GET", "/v1/memories", "beyond"),
    Case("POST", "/v1/purge-expired", "beyond", lambda t: {}),
    Case("POST", "/v1/search", "read", lambda t: {"query": "tea", "scope": t["scope"]}),
    Case("POST", "/v1/search", "read",
         lambda t: {"query": "tea", "scope": t["scope"], "decay": True}),
    Case("POST", "/v1/memories/reinforce", "either", lambda t: {"ids": [t["e1"]]}),
    Case("POST", "/v1/search", "beyond",
         lambda t: {"query": "tea", "scope": t["scope"], "include_narrower": True,
                    "session_id": "other"}),
    Case("POST", "/v1/sessions", "beyond", lambda t: {"user_id": t["user"], "session_id": "new"}),
    Case("GET", "/v1/sessions/{sid}", "read"),
    Case("GET", "/v1/sessions?user_id={user}", "beyond"),
    Case("POST", "/v1/sessions/{sid}/records", "change",
         lambda t: {"role": "user", "content": "hello"}),
    Case("GET", "/v1/sessions/{sid}/records", "read"),
    Case("POST", "/v1/records/search", "read", lambda t: {"query": "tea", "session_id": t["sid"]}),
    Case("POST", "/v1/sessions/search", "beyond", lambda t: {"query": "tea", "user_id": t["user"]}),
    Case("POST", "/v1/sessions/{sid}/notes", "change", lambda t: {"fact": "likes jasmine"}),
    Case("GET", "/v1/sessions/{sid}/notes", "read"),
    Case("POST", "/v1/sessions/{sid}/findings", "change", lambda t: {"content": "sales rose"}),
    Case("GET", "/v1/sessions/{sid}/findings", "read"),
    Case("POST", "/v1/users/{user}/global", "change", lambda t: {"fact": "likes puer"}),
    Case("GET", "/v1/users/{user}/global", "read"),
    Case("POST", "/v1/sessions/{sid}/prompt", "read", lambda t: {}),
    Case("POST", "/v1/sessions/{sid}/extract", "change", lambda t: {}),
    Case("GET", "/v1/superseded?scope={scope}", "read"),
    Case("POST", "/v1/erase/finish", "beyond", lambda t: {}),
    Case("POST", "/v1/retention", "beyond", lambda t: {"dry_run": True}),
    Case("GET", "/v1/audit?scope={scope}", "read"),
    Case("GET", "/v1/audit?entry_id={e1}", "read"),
    Case("GET", "/v1/audit", "beyond"),
    Case("GET", "/v1/audit/verify", "beyond"),
    Case("GET", "/v1/hygiene?scope={scope}", "read"),
    Case("GET", "/v1/hygiene?scope={scope}&stale_days=30", "read"),
    Case("GET", "/v1/hygiene", "beyond"),
    Case("POST", "/v1/hygiene/fix", "beyond", lambda t: {}),
    Case("GET", "/v1/sessions/{sid}/bundle", "beyond"),  # every object scope
    Case("POST", "/v1/agents/executions", "change", _execution),
    Case("GET", "/v1/agents/executions?scope={scope}", "read"),
    Case("POST", "/v1/agents/executions/search", "read",
         lambda t: {"query": "plan", "scope": t["scope"]}),
    Case("GET", "/v1/agents/strategies?scope={scope}", "read"),
    Case("POST", "/v1/agents/strategies/choose", "read",
         lambda t: {"candidates": ["a", "b"], "scope": t["scope"]}),
    Case("POST", "/v1/agents/teams", "change",
         lambda t: {"kind": "trip", "agents": [{"role": "r", "agent_id": "a"}],
                    "success": True, "scope": t["scope"]}),
    Case("GET", "/v1/agents/teams?scope={scope}", "read"),
    Case("POST", "/v1/agents/teams/suggest", "read",
         lambda t: {"kind": "trip", "scope": t["scope"]}),
    Case("GET", "/v1/agents/users/{user}/preferences", "read"),
    Case("POST", "/v1/agents/users/{user}/preferences/remember", "change",
         lambda t: {"remember": True}),
    Case("POST", "/v1/agents/decompositions", "change",
         lambda t: {"query": "plan a trip", "subtasks": ["book"], "scope": t["scope"]}),
    Case("POST", "/v1/agents/decompositions/suggest", "read",
         lambda t: {"query": "plan a trip", "scope": t["scope"]}),
    Case("GET", "/v1/agents/failures?scope={scope}", "read"),
    Case("POST", "/v1/agents/failures/check", "read",
         lambda t: {"query": "plan a trip", "scope": t["scope"]}),
    Case("DELETE", "/v1/memories/{e1}", "change"),
    Case("DELETE", "/v1/sessions/{sid}", "beyond"),  # and what it made in object scopes
    Case("DELETE", "/v1/scopes/{scope}", "change"),
]  # fmt: skip
"""A request of every route (the deleting ones last: inside a grant they change the target)."""


def test_every_route_has_a_case() -> None:
    import re

    def shape(path: str) -> str:
        return re.sub(r"{[^}]+}", "{}", path.split("?", maxsplit=1)[0])

    asked = {(case.method, shape(case.path)) for case in CASES}
    served = {(route.method, shape(route.path)) for route in ROUTES}
    assert served <= asked, served - asked


def _snapshot(path: Path) -> tuple[Any, ...]:
    """Every entry (id, revision, content, tags) and the audit log's length."""
    with sqlite3.connect(path) as db:
        entries = db.execute(
            "SELECT id, revision, content, tags, expires_at FROM entries ORDER BY id"
        ).fetchall()
        (events,) = db.execute("SELECT count(*) FROM audit_log").fetchone()
    return tuple(entries), events


def _target(admin: Client, user: str, sid: str) -> dict[str, str]:
    """A user's memories, a session with data, records, notes, a pinned entry, an execution."""
    scope = f"user:{user}"
    assert admin("POST", "/v1/sessions", {"user_id": user, "session_id": sid})[0] == 201
    assert admin("PATCH", f"/v1/sessions/{sid}", {"has_data": True})[0] == 200
    ids = [
        admin("POST", "/v1/memories", {"content": f"{user} likes {drink}", "scope": scope})[1]["id"]
        for drink in ("green tea", "black tea")
    ]
    admin("POST", f"/v1/sessions/{sid}/records", {"role": "user", "content": "tea please"})
    note = admin("POST", f"/v1/sessions/{sid}/notes", {"fact": f"{user} likes tea"})[1]["id"]
    other = admin("POST", f"/v1/sessions/{sid}/notes", {"fact": f"{user} likes rain"})[1]["id"]
    pinned = admin("POST", f"/v1/memories/{other}/pin", {})[1]["id"]
    old = admin("POST", "/v1/memories", {"content": f"{user} lives in Rome", "scope": scope})[1]
    admin("POST", f"/v1/memories/{old['id']}/supersede", {"content": f"{user} lives in Oslo"})
    admin("POST", "/v1/agents/executions", _execution({"scope": scope}))
    bundle = admin("GET", f"/v1/sessions/{sid}/bundle")[1]["bundle"]
    return {"user": user, "scope": scope, "sid": sid, "e1": ids[0], "e2": ids[1],
            "note": note, "pinned": pinned, "old": old["id"], "bundle": bundle}  # fmt: skip


Targets = dict[str, dict[str, str]]


@pytest.fixture
def served(
    start_server: Callable[..., Client], tmp_path: Path
) -> tuple[Client, Path, dict[str, dict[str, str]]]:
    api = start_server(api_keys=KEYS)
    admin = api.with_key(ADMIN)
    targets = {"alice": _target(admin, "alice", "sa"), "bob": _target(admin, "bob", "sb")}
    (database,) = tmp_path.glob("server-*.db")
    return api, database, targets


OUTSIDE = {
    READER: lambda case, who: case.kind == "beyond" or who == "bob" or case.kind == "change",
    WRITER: lambda case, who: case.kind == "beyond" or who == "bob" or case.kind == "read",
    BOTH: lambda case, who: case.kind == "beyond" or who == "bob",
}


@pytest.mark.parametrize("key", [READER, WRITER, BOTH], ids=["reader", "writer", "both"])
def test_no_route_does_anything_outside_a_key_s_grant(served: Any, key: str) -> None:
    api, database, targets = served
    client = api.with_key(key)
    outside = [
        (case, who)
        for who in ("bob", "alice")
        for case in CASES
        if case.kind != "free" and OUTSIDE[key](case, who)
    ]
    assert len(outside) > len(CASES)
    for case, who in outside:
        before = _snapshot(database)
        method, path, body = case.request(targets[who])
        status, answer = client(method, path, body)
        assert status == 403, (method, path, who, status, answer)
        assert answer["error"]["type"] == "ForbiddenError"
        assert _snapshot(database) == before, (method, path, who)


@pytest.mark.parametrize("key", [READER, WRITER, BOTH], ids=["reader", "writer", "both"])
def test_what_a_grant_allows_works(served: Any, key: str) -> None:
    api, _, targets = served
    client = api.with_key(key)
    inside = [c for c in CASES if c.kind == "free" or not OUTSIDE[key](c, "alice")]
    assert inside
    for case in inside:
        method, path, body = case.request(targets["alice"])
        status, answer = client(method, path, body)
        assert status != 403 and status < 500, (method, path, status, answer)


def test_the_tenant_route_tells_a_key_its_grant(served: Any) -> None:
    api = served[0]
    assert api.with_key(READER)("GET", "/v1/tenant")[1]["grant"] == {
        "read": ["user:alice", "session:sa"],
        "write": [],
    }
    assert api.with_key(ADMIN)("GET", "/v1/tenant")[1]["grant"] == {"read": None, "write": None}


def test_a_key_limited_to_some_scopes_cannot_read_the_metrics(served: Any) -> None:
    api = served[0]
    assert api.with_key(READER)("GET", "/metrics")[0] == 403
    assert api.with_key(ADMIN)("GET", "/metrics")[0] == 200


def test_a_key_that_may_not_write_the_user_cannot_teach_their_memory(
    start_server: Callable[..., Client],
) -> None:
    session_only = "k-session-only-0123"
    api = start_server(api_keys=f"{KEYS}, t:{session_only} feeder write=session:sb|session:sa")
    admin, feeder = api.with_key(ADMIN), api.with_key(session_only)
    _target(admin, "bob", "sb")
    before = admin("GET", "/v1/sessions/sb/records")[1]
    said = {"user": "My bank account number is 00-EVIL-99.", "wait": True}
    assert feeder("POST", "/v1/sessions/sb/turns", said)[0] == 403
    record = {"role": "user", "content": "I moved to Paris."}
    assert feeder("POST", "/v1/sessions/sb/records", record)[0] == 403
    assert admin("GET", "/v1/sessions/sb/records")[1] == before
    admin("POST", "/v1/sessions/sb/turns", {"user": "I have a cat.", "wait": True})
    learned = admin("GET", "/v1/memories?scope=user:bob")[1]["entries"]
    assert not any("EVIL" in e["content"] or "Paris" in e["content"] for e in learned)


def test_what_an_extraction_learned_is_shown_only_within_the_grant(
    start_server: Callable[..., Client],
) -> None:
    watcher = "k-watcher-01234567"
    api = start_server(api_keys=f"{KEYS}, t:{watcher} watcher read=session:sb")
    admin = api.with_key(ADMIN)
    _target(admin, "bob", "sb")
    status, turn = admin(
        "POST", "/v1/sessions/sb/turns", {"user": "I am allergic to peanuts.", "wait": True}
    )
    assert status == 201 and turn["learned"]["stored"]
    status, answer = api.with_key(watcher)("GET", "/v1/sessions/sb/extraction")
    assert status == 403 and "peanuts" not in str(answer)
    assert api.with_key(BOTH)("GET", "/v1/sessions/sa/extraction")[0] == 200


def test_a_reader_builds_a_context_whose_summaries_it_may_not_keep(
    served: Any,
) -> None:
    api, database, _ = served
    admin = api.with_key(ADMIN)
    for n in range(40):
        admin("POST", "/v1/sessions/sa/records", {"role": "user", "content": f"turn {n} " * 30})
    before = _snapshot(database)
    status, context = api.with_key(READER)("POST", "/v1/sessions/sa/context", {"budget": 300})
    assert status == 200 and context["summaries_made"] > 0
    assert _snapshot(database) == before  # made, not kept


def test_only_a_key_without_fields_reads_the_server_s_counters(
    start_server: Callable[..., Client],
) -> None:
    everything = "k-read-all-0123456"
    api = start_server(api_keys=f"{KEYS}, t:{everything} auditor read=*")
    assert api.with_key(everything)("GET", "/v1/stats")[0] == 403
    assert api.with_key(ADMIN)("GET", "/v1/stats")[0] == 200
