"""The web inspector over HTTP, in-process: logins and visits, CSRF, the guard's page rules,
tenant isolation, escaping and security headers (the browser tests show the same in Chromium)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memvault import AsyncMemory, ConfigError
from memvault.server import create_app
from memvault.testing import HashEmbedder, ManualClock

from .inspector_seed import ACME_KEY, API_KEYS, HOSTILE, SETTINGS, Seeded, seed

BASE = "http://127.0.0.1:8765"
SAME_ORIGIN = {"Origin": BASE}
SECRET = "a-secret-of-at-least-32-characters!"


@pytest.fixture
def seeded(tmp_path: Path) -> Seeded:
    return seed(tmp_path / "inspector.db")


@pytest.fixture
def open_app(tmp_path: Path, seeded: Seeded) -> Iterator[Callable[..., TestClient]]:
    """Starts apps over the seeded store: ``open_app(api_keys=…, base=…)``."""
    running: list[TestClient] = []

    def start(api_keys: str = API_KEYS, base: str = BASE) -> TestClient:
        memory = AsyncMemory(
            str(tmp_path / "inspector.db"),
            tenant="acme",
            settings=SETTINGS,
            embedder=HashEmbedder(),
            clock=ManualClock(),
        )
        app = create_app(memory, api_keys=api_keys, owns_memory=True, ui_secret=SECRET)
        client = TestClient(app, base_url=base, follow_redirects=False)
        client.__enter__()
        running.append(client)
        return client

    yield start
    for client in running:
        client.__exit__(None, None, None)


@pytest.fixture
def ui(open_app: Callable[..., TestClient]) -> TestClient:
    return open_app()


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no CSRF token"
    return found[1]


def log_in(client: TestClient, key: str = ACME_KEY) -> str:
    """Log in; the CSRF token of the new visit."""
    token = csrf_of(client.get("/ui/login").text)
    answer = client.post("/ui/login", data={"csrf": token, "key": key}, headers=SAME_ORIGIN)
    assert (answer.status_code, answer.headers["location"]) == (303, "/ui")
    return csrf_of(client.get("/ui").text)


def post(client: TestClient, path: str, **fields: str | list[str]) -> tuple[int, str]:
    answer = client.post(path, data=fields, headers=SAME_ORIGIN)
    return answer.status_code, answer.headers.get("location") or answer.text


def test_pages_need_a_login_and_a_key_logs_in(ui: TestClient) -> None:
    for path in ("/ui", "/ui/sessions/s-1", "/ui/search?scope=user:alice&q=go"):
        answer = ui.get(path)
        assert (answer.status_code, answer.headers["location"]) == (303, "/ui/login")
    login = ui.get("/ui/login")
    assert login.status_code == 200 and 'type="password"' in login.text
    cookie = login.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert "Secure" not in cookie  # plain HTTP: the browser would drop a Secure cookie
    answer = ui.post("/ui/login", data={"csrf": csrf_of(login.text), "key": "x" * 20})
    assert answer.status_code == 401 and "not an API key" in answer.text
    log_in(ui)
    assert ACME_KEY not in ui.cookies["memvault_ui"]
    assert ui.get("/ui/login").headers["location"] == "/ui"
    assert "Q1 sales" in ui.get("/ui").text


def test_over_https_the_cookie_is_secure(open_app: Callable[..., TestClient]) -> None:
    client = open_app(base="https://127.0.0.1")
    assert "Secure" in client.get("/ui/login").headers["set-cookie"]


def test_a_login_needs_the_forms_token(ui: TestClient) -> None:
    ui.get("/ui/login")
    answer = ui.post("/ui/login", data={"key": ACME_KEY}, headers=SAME_ORIGIN)
    assert answer.status_code == 403 and "memvault_ui" not in answer.headers.get("set-cookie", "")
    fresh = TestClient(ui.app, base_url=BASE, follow_redirects=False)
    assert fresh.post("/ui/login", data={"key": ACME_KEY}).headers["location"] == "/ui/login"


def test_logout_ends_the_visit(ui: TestClient) -> None:
    token = log_in(ui)
    cookie = ui.cookies["memvault_ui"]
    assert post(ui, "/ui/logout", csrf="")[0] == 403
    assert post(ui, "/ui/logout", csrf=token) == (303, "/ui/login")
    ui.cookies.set("memvault_ui", cookie, path="/ui")
    assert ui.get("/ui").headers["location"] == "/ui/login"


def test_a_removed_key_ends_its_visits(open_app: Callable[..., TestClient]) -> None:
    before = open_app()
    log_in(before)
    after = open_app(api_keys="globex:" + "g" * 20)  # same secret, acme's key is gone
    after.cookies.set("memvault_ui", before.cookies["memvault_ui"], path="/ui")
    assert after.get("/ui").headers["location"] == "/ui/login"


def test_every_form_needs_the_visits_token(ui: TestClient, seeded: Seeded) -> None:
    token = log_in(ui)
    note = _entry_id(ui.get(f"/ui/sessions/{seeded.session}").text, "User is analysing")
    forms = [f"/ui/entries/{note}/{a}" for a in ("pin", "demote", "delete", "restore")]
    for path in [*forms, "/ui/entries/delete"]:
        for wrong in ({}, {"csrf": ""}, {"csrf": token[:-2] + "xx"}):
            status, body = post(ui, path, ids=note, session=seeded.session, **wrong)
            assert status == 403 and "this form has expired" in body, path
    assert "User is analysing" in ui.get(f"/ui/sessions/{seeded.session}").text


def test_forms_come_from_the_inspectors_own_origin_as_forms(ui: TestClient) -> None:
    token = log_in(ui)
    for origin in ("http://127.0.0.1:9999", "http://localhost:8765", "null"):
        answer = ui.post("/ui/logout", data={"csrf": token}, headers={"Origin": origin})
        assert answer.status_code == 403 and answer.json()["error"]["type"] == "ForbiddenOrigin"
    answer = ui.post("/ui/logout", json={"csrf": token}, headers=SAME_ORIGIN)
    assert answer.status_code == 415
    api = ui.post("/v1/memories", data={"content": "x"}, headers=SAME_ORIGIN)
    assert api.status_code == 403  # the API stays closed to web pages, the inspector's too


def _entry_id(html: str, text: str) -> str:
    found = re.search(r'data-id="([^"]+)">(?:(?!</li>).)*?' + re.escape(text), html, re.S)
    assert found, text
    return found[1]


def test_another_tenants_ids_are_not_found(ui: TestClient, seeded: Seeded) -> None:
    token = log_in(ui)
    answer = ui.get(f"/ui/sessions/{seeded.other_tenant_session}")
    assert answer.status_code == 404 and "Globex" not in answer.text
    other = seeded.other_tenant_finding
    session = seeded.session
    for action in ("pin", "demote", "delete", "restore"):
        fields = {"csrf": token, "session": session, "category": "fact"}
        status, body = post(ui, f"/ui/entries/{other}/{action}", **fields)
        assert status == 404 and "not found" in body, action
    status, _ = post(ui, "/ui/entries/delete", csrf=token, session=session, ids=[other])
    assert status == 404
    hits = ui.get(f"/ui/search?scope=session:{seeded.other_tenant_session}&q=merger")
    assert hits.status_code == 200 and "Globex" not in hits.text
    assert "Globex" not in ui.get("/ui").text


def test_memory_content_is_escaped(ui: TestClient, seeded: Seeded) -> None:
    log_in(ui)
    html = ui.get(f"/ui/sessions/{seeded.session}").text
    assert HOSTILE not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=&#34;x&#34;" in html
    assert "<script" not in html.replace('<script src="/ui/static/inspector.js" defer>', "")


def test_every_answer_carries_the_security_headers(ui: TestClient, seeded: Seeded) -> None:
    answers = [ui.get("/ui"), ui.get("/ui/login"), ui.get("/ui/static/inspector.js")]
    token = log_in(ui)
    answers += [ui.get(f"/ui/sessions/{seeded.session}"), ui.get("/ui/sessions/nope")]
    answers += [ui.get("/ui/nope"), ui.get("/ui/sessions/"), ui.get("/ui/static/none.css")]
    answers.append(ui.post("/ui/entries/x/pin", json={}, headers=SAME_ORIGIN))  # refused: 415
    answers.append(ui.get("/ui", headers={"Origin": "https://evil.example"}))  # refused: 403
    answers.append(ui.post("/ui/logout", data={"csrf": token}, headers=SAME_ORIGIN))
    assert {a.status_code for a in answers} >= {200, 303, 403, 404, 415}
    for answer in answers:
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert ui.get("/ui/static/inspector.css").status_code == 200


def test_changes_through_forms(ui: TestClient, seeded: Seeded) -> None:
    token = log_in(ui)
    page = ui.get(f"/ui/sessions/{seeded.session}").text
    note, finding = _entry_id(page, "User is analysing"), _entry_id(page, "Kyoto returns")
    here = {"csrf": token, "session": seeded.session}
    back = f"/ui/sessions/{seeded.session}?done="
    assert post(ui, f"/ui/entries/{finding}/pin", category="identity", **here) == (
        303,
        back + "pinned",
    )
    page = ui.get(f"/ui/sessions/{seeded.session}?done=pinned").text
    assert "Pinned to Global Memory." in page
    pinned = _entry_id(page.split('id="global"')[1], "Kyoto returns")
    assert post(ui, f"/ui/entries/{pinned}/demote", category="context", **here)[1] == (
        back + "demoted"
    )
    status, body = post(ui, f"/ui/entries/{note}/pin", category="nonsense", **here)
    assert status == 400 and "category must be one of" in body
    status, body = post(ui, "/ui/entries/delete", **here)
    assert status == 400 and "tick the entries" in body
    status, _ = post(ui, "/ui/entries/delete", ids=[note] * 2, **here)
    assert status == 303 and "User is analysing" not in ui.get(back[:-6]).text


def test_a_private_session_refuses_pins(ui: TestClient, seeded: Seeded) -> None:
    token = log_in(ui)
    page = ui.get(f"/ui/sessions/{seeded.private_session}").text
    assert "private: no pin" in page and "/pin" not in page
    note = _entry_id(page, "Never leaves")
    status, body = post(ui, f"/ui/entries/{note}/pin", csrf=token, category="decision")
    assert status == 403 and "is private" in body


def test_forms_have_limits(ui: TestClient, seeded: Seeded) -> None:
    token = log_in(ui)
    status, body = post(ui, "/ui/entries/delete", csrf=token, ids=[f"e{i}" for i in range(501)])
    assert status == 400 and "at most 500" in body
    form = {**SAME_ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}
    answer = ui.post("/ui/entries/delete", content=b"csrf=" + b"x" * 70_000, headers=form)
    assert answer.status_code == 413
    answer = ui.post("/ui/entries/delete", content=b"csrf=\xff", headers=form)
    assert answer.status_code == 400


def test_search_in_a_scope(ui: TestClient, seeded: Seeded) -> None:
    log_in(ui)
    answer = ui.get("/ui/search?scope=user:alice&q=which+language")
    assert answer.status_code == 200 and "User prefers Go over Python" in answer.text
    answer = ui.get("/ui/search?scope=nonsense&q=go")
    assert answer.status_code == 400


def test_without_keys_there_is_no_login(
    open_app: Callable[..., TestClient], seeded: Seeded
) -> None:
    client = open_app(api_keys="")
    page = client.get("/ui")
    assert page.status_code == 200 and "Q1 sales" in page.text and "Log out" not in page.text
    assert "HttpOnly" in page.headers["set-cookie"]
    assert client.get("/ui/login").headers["location"] == "/ui"
    page = client.get(f"/ui/sessions/{seeded.session}")
    token, note = csrf_of(page.text), _entry_id(page.text, "scratch note one")
    assert post(client, f"/ui/entries/{note}/delete", csrf=token)[0] == 303
    stranger = TestClient(client.app, base_url=BASE, follow_redirects=False)
    assert post(stranger, f"/ui/entries/{note}/delete", csrf=token)[0] == 403


def test_the_secret_must_be_long() -> None:
    memory = AsyncMemory(":memory:", embedder=HashEmbedder())
    try:
        with pytest.raises(ConfigError, match="at least 32"):
            create_app(memory, ui_secret="short")
    finally:
        memory.close()


def test_long_lists_say_what_they_do_not_show(
    ui: TestClient, seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memvault.server.ui.pages.SESSIONS_SHOWN", 1)
    monkeypatch.setattr("memvault.server.ui.pages.SUPERSEDED_SHOWN", 0)
    log_in(ui)
    sessions = ui.get("/ui").text
    assert sessions.count("data-session=") == 1 and "Only the newest 1 are shown" in sessions
    assert 'href="/ui?limit=2"' in sessions
    assert ui.get("/ui?limit=2").text.count("data-session=") == 2
    assert "Only the newest 1 are shown" not in ui.get("/ui?limit=50").text
    page = ui.get(f"/ui/sessions/{seeded.session}").text
    assert "Only the newest 0 of each scope" in page


def test_an_empty_list_names_the_tenant_and_how_to_see_another(
    open_app: Callable[..., TestClient],
) -> None:
    ui = open_app()
    log_in(ui)
    page = ui.get("/ui?user=nobody").text
    assert "No sessions of nobody in tenant <b>acme</b>." in page
    assert "log in with a key of that tenant" in page
    keyless = open_app(api_keys="").get("/ui?user=nobody").text
    assert "No sessions of nobody in tenant <b>acme</b>." in keyless
    assert "memvault serve --tenant NAME" in keyless


def test_a_key_s_grant_bounds_what_the_inspector_shows_and_changes(
    open_app: Callable[..., TestClient], seeded: Seeded
) -> None:
    reader = "acme-reader-0123456789abcdef"
    grant = f"read=session:{seeded.session}|user:alice"
    ui = open_app(api_keys=f"{API_KEYS},acme:{reader} reader {grant}")
    token = csrf_of(ui.get("/ui/login").text)
    login = ui.post("/ui/login", data={"csrf": token, "key": reader}, headers=SAME_ORIGIN)
    assert login.status_code == 303
    home = ui.get("/ui")  # every session: beyond a key granted one
    assert home.status_code == 403 and "does not allow" in home.text
    page = ui.get(f"/ui/sessions/{seeded.session}")  # granted: shown
    assert page.status_code == 200 and "Kyoto returns" in page.text
    private = ui.get(f"/ui/sessions/{seeded.private_session}")
    assert private.status_code == 403 and "Never leaves" not in private.text
    assert ui.get("/ui/search?scope=user:bob&q=plans").status_code == 403
    token = csrf_of(page.text)
    finding = _entry_id(page.text, "Kyoto returns")
    here = {"csrf": token, "session": seeded.session, "category": "identity"}
    for action in ("pin", "delete"):
        status, body = post(ui, f"/ui/entries/{finding}/{action}", **here)
        assert status == 403 and "does not allow" in body, action
    assert "Kyoto returns" in ui.get(f"/ui/sessions/{seeded.session}").text  # nothing changed


def test_a_bulk_delete_outside_a_key_s_grant_deletes_none(
    open_app: Callable[..., TestClient], seeded: Seeded
) -> None:
    key = "acme-editor-0123456789abcdef"
    shared, private = seeded.session, seeded.private_session
    grant = f"read=session:{shared}|session:{private}|user:alice write=session:{shared}"
    ui = open_app(api_keys=f"{API_KEYS},acme:{key} editor {grant}")
    token = csrf_of(ui.get("/ui/login").text)
    ui.post("/ui/login", data={"csrf": token, "key": key}, headers=SAME_ORIGIN)
    page = ui.get(f"/ui/sessions/{shared}").text
    mine = _entry_id(page, "Kyoto returns")
    theirs = _entry_id(ui.get(f"/ui/sessions/{private}").text, "Never leaves")
    fields = {"csrf": csrf_of(page), "session": shared}
    status, body = post(ui, "/ui/entries/delete", ids=[mine, theirs], **fields)
    assert status == 403 and "does not allow" in body
    assert "Kyoto returns" in ui.get(f"/ui/sessions/{shared}").text  # none deleted
    assert post(ui, "/ui/entries/delete", ids=[mine], **fields)[0] == 303


def test_the_hygiene_page_counts_by_scope_and_shows_no_content(
    ui: TestClient, seeded: Seeded
) -> None:
    log_in(ui)
    assert 'href="/ui/hygiene"' in ui.get("/ui").text  # linked from the home page
    page = ui.get("/ui/hygiene")
    assert page.status_code == 200
    assert f'<a href="/ui/sessions/{seeded.session}">session:{seeded.session}</a>' in page.text
    assert "Osaka" not in page.text and "__pwned" not in page.text  # ids, never content
    rows = dict(re.findall(r'<tr data-scope="([^"]+)">(.*?)</tr>', page.text, re.S))
    assert f"session:{seeded.session}" in rows
    one = ui.get(f"/ui/hygiene?scope=session:{seeded.session}&stale_days=30")
    assert one.status_code == 200
    assert re.findall(r'<tr data-scope="([^"]+)">', one.text) == [f"session:{seeded.session}"]
    for wrong in ("stale_days=0", "stale_days=ten", "scope=nonsense"):
        assert ui.get(f"/ui/hygiene?{wrong}").status_code == 400, wrong


def test_a_key_limited_to_a_scope_sees_only_its_hygiene(
    open_app: Callable[..., TestClient], seeded: Seeded
) -> None:
    reader = "acme-reader-0123456789abcdef"
    ui = open_app(api_keys=f"{API_KEYS},acme:{reader} reader read=user:alice")
    token = csrf_of(ui.get("/ui/login").text)
    ui.post("/ui/login", data={"csrf": token, "key": reader}, headers=SAME_ORIGIN)
    assert ui.get("/ui/hygiene").status_code == 403  # the whole tenant
    assert ui.get("/ui/hygiene?scope=user:alice").status_code == 200


# -- agent memory -------------------------------------------------------------------------------


def _executions(html: str) -> list[tuple[str, str, str]]:
    """(workflow, agent, outcome) of each execution the page lists, in its order."""
    rows = re.findall(
        r'<tbody class="execution" data-id="[^"]+">.*?class="workflow">([^<]*)</td>\s*'
        r'<td class="agent">([^<]*)</td>.*?class="badge (ok|failed)"',
        html,
        re.S,
    )
    return [(workflow, agent, outcome) for workflow, agent, outcome in rows]


def test_the_navigation_links_every_page(ui: TestClient) -> None:
    log_in(ui)
    for path in ("/ui", "/ui/hygiene", "/ui/agents/executions", "/ui/agents/failures"):
        page = ui.get(path).text
        links = re.findall(r'<nav class="pages".*?</nav>', page, re.S)[0]
        for target in ("/ui", "/ui/hygiene", "/ui/agents/executions", "/ui/agents/strategies"):
            assert f'href="{target}"' in links, (path, target)
        assert f'<a href="{path}" aria-current="page">' in links


def test_the_executions_page_lists_runs_newest_first_and_filters_them(
    ui: TestClient, seeded: Seeded
) -> None:
    log_in(ui)
    page = ui.get("/ui/agents/executions")
    assert page.status_code == 200
    assert _executions(page.text) == [
        ("wf-2", "researcher", "ok"),
        ("wf-2", "writer", "failed"),
        ("wf-1", "writer", "failed"),
        ("wf-1", "researcher", "ok"),
    ]
    assert f'data-id="{seeded.hostile_execution}"' in page.text
    first = page.text.split('<tbody class="execution"')[-1]  # the oldest: every column
    for cell in ("react", "lookup", "1,280", "2,150 ms", "ACME, Globex, Initech", ">sql<"):
        assert cell in first, cell
    assert "RateLimitError" in page.text and "429 Too Many Requests" in page.text
    assert "Globex merger" not in page.text  # globex's execution: another tenant
    filtered = {
        "workflow=wf-1": [("wf-1", "writer", "failed"), ("wf-1", "researcher", "ok")],
        "agent=writer": [("wf-2", "writer", "failed"), ("wf-1", "writer", "failed")],
        "outcome=success": [("wf-2", "researcher", "ok"), ("wf-1", "researcher", "ok")],
        "workflow=wf-1&agent=researcher&outcome=success": [("wf-1", "researcher", "ok")],
        "workflow=wf-3": [],
        "scope=workspace:other": [],
    }
    for query, rows in filtered.items():
        answer = ui.get(f"/ui/agents/executions?{query}")
        assert answer.status_code == 200 and _executions(answer.text) == rows, query
    assert (
        "No executions match in <code>workspace:agents</code>"
        in ui.get("/ui/agents/executions?workflow=wf-3").text
    )
    for wrong, message in (("outcome=maybe", "outcome must be"), ("scope=agents", "scope")):
        answer = ui.get(f"/ui/agents/executions?{wrong}")
        assert answer.status_code == 400 and message in answer.text, wrong


def test_a_long_list_of_executions_says_what_it_does_not_show(
    ui: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memvault.server.ui.agent_pages.EXECUTIONS_SHOWN", 1)
    log_in(ui)
    page = ui.get("/ui/agents/executions?agent=writer").text
    assert len(_executions(page)) == 1 and "Only the newest 1 are shown" in page
    assert 'href="/ui/agents/executions?agent=writer&amp;limit=2"' in page
    assert len(_executions(ui.get("/ui/agents/executions?agent=writer&limit=2").text)) == 2


def test_an_execution_s_hostile_text_is_escaped(ui: TestClient) -> None:
    log_in(ui)
    html = ui.get("/ui/agents/executions").text
    assert HOSTILE not in html
    escaped = "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=&#34;x&#34;"
    assert html.count(escaped) == 2  # its input and its output
    assert "<script" not in html.replace('<script src="/ui/static/inspector.js" defer>', "")
    assert "<img" not in html


def test_the_strategy_table(ui: TestClient) -> None:
    log_in(ui)
    page = ui.get("/ui/agents/strategies")
    assert page.status_code == 200
    rows = re.findall(
        r'<tr data-strategy="([^"]+)" data-kind="([^"]+)">(.*?)</tr>', page.text, re.S
    )
    assert [(strategy, kind) for strategy, kind, _ in rows] == [
        ("plan_and_execute", "*"),
        ("plan_and_execute", "report"),
        ("react", "*"),
        ("react", "lookup"),
    ]
    cells = {
        (strategy, kind): re.findall(r"<td[^>]*>([^<]*)</td>", row) for strategy, kind, row in rows
    }
    #        strategy, kind, runs, success, mean ms, p95 ms, mean tokens, p95 tokens, cost, last
    assert cells[("react", "lookup")][2:9] == [
        "2",
        "100%",
        "1,500",
        "2,150",
        "790",
        "1,280",
        "0.0020",
    ]
    assert cells[("plan_and_execute", "*")][2:4] == ["2", "0%"]
    report = ui.get("/ui/agents/strategies?kind=report").text
    assert re.findall(r'<tr data-strategy="([^"]+)" data-kind="([^"]+)">', report) == [
        ("plan_and_execute", "report")
    ]
    assert (
        "No strategy has run on <code>chat</code> requests"
        in ui.get("/ui/agents/strategies?kind=chat").text
    )
    teams = re.findall(r'<tr data-kind="([^"]+)">\s*<td class="team">(.*?)</td>', page.text, re.S)
    assert [kind for kind, _ in teams] == ["*", "lookup"]
    assert teams[1][1] == (
        '<span class="member">researcher: r-1 (&lt;b&gt;big&lt;/b&gt;)</span> + '
        '<span class="member">writer: w-1</span>'
    )
    assert "No team has run on <code>report</code> requests" in report


def test_the_failure_patterns_page(ui: TestClient) -> None:
    log_in(ui)
    page = ui.get("/ui/agents/failures")
    assert page.status_code == 200
    names = re.findall(r'<tr data-pattern="([^"]+)" class="([^"]+)">', page.text)
    assert names == [
        ("rate_limit", "built-in"),
        ("context_overflow", "built-in"),
        ("ambiguous_request", "built-in"),
        ("learned:RateLimitError", "learned"),
    ]
    learned = page.text.split('data-pattern="learned:RateLimitError"')[1]
    assert '<td class="num occurrences">2</td>' in learned
    for term in ("order", "parallel", "summaris", "everi"):  # stems, in both requests
        assert f'of its recent failed requests">{term} (2)</span>' in learned, term
    assert "custom" not in learned  # in one of the two failed requests only
    assert "retry with exponential backoff" in learned  # a built-in class's mitigation


def test_a_key_s_grant_bounds_the_agent_memory_pages(
    open_app: Callable[..., TestClient],
) -> None:
    agents, alice = "acme-agents-0123456789abcdef", "acme-alice-0123456789abcdef"
    keys = f"{API_KEYS},acme:{agents} ops read=workspace:agents,acme:{alice} a read=user:alice"
    pages = ("executions", "strategies", "failures")
    ops = open_app(api_keys=keys)
    log_in(ops, agents)
    for name in pages:
        assert ops.get(f"/ui/agents/{name}").status_code == 200, name
        beyond = ops.get(f"/ui/agents/{name}?scope=workspace:other")
        assert beyond.status_code == 403 and "does not allow" in beyond.text, name
    assert ops.get("/ui").status_code == 403  # every session: beyond its grant
    other = open_app(api_keys=keys)
    log_in(other, alice)
    for name in pages:
        answer = other.get(f"/ui/agents/{name}")
        assert answer.status_code == 403 and "does not allow" in answer.text, name
        assert "researcher" not in answer.text and "plan_and_execute" not in answer.text
    mine = other.get("/ui/agents/executions?scope=user:alice")  # its own scope: none there
    assert mine.status_code == 200 and "No executions in <code>user:alice</code>" in mine.text
