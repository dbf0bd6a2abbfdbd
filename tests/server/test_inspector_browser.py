"""The web inspector in a real headless Chromium (Debian's ``chromium``, driven by Playwright;
no browser is downloaded), against a real server on a socket over seeded data.

Screenshots of every test land in ``tests/artifacts/inspector/`` (``MEMVAULT_TEST_ARTIFACTS``
moves them; git ignores the folder). The tests skip only when no Chromium is installed.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, Response, expect, sync_playwright

from memvault import AsyncMemory
from memvault.server import create_app
from memvault.testing import HashEmbedder, ManualClock

from .conftest import uvicorn_threads
from .inspector_seed import ACME_KEY, API_KEYS, HOSTILE, SETTINGS, Seeded, seed

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = (
    Path(os.environ.get("MEMVAULT_TEST_ARTIFACTS") or Path(__file__).parents[1] / "artifacts")
    / "inspector"
)

pytestmark = [
    pytest.mark.slow,  # a real browser
    pytest.mark.skipif(
        not Path(CHROMIUM).is_file(),
        reason="no Chromium: install Debian's 'chromium' package (.ci/run does) to run these",
    ),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Seeded]]:
    """A real server (uvicorn in a thread) with acme's and globex's keys over seeded data."""
    path = tmp_path_factory.mktemp("inspector") / "inspector.db"
    seeded = seed(path)
    memory = AsyncMemory(str(path), settings=SETTINGS, embedder=HashEmbedder(), clock=ManualClock())
    with uvicorn_threads() as serve:
        yield serve(create_app(memory, api_keys=API_KEYS, owns_memory=True)), seeded


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser context (no cookies) that accepts confirmation dialogs; its last view
    is saved as a screenshot."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.on("dialog", lambda dialog: dialog.accept())
    yield tab
    screenshot(tab, request.node.name)
    context.close()


def screenshot(tab: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)


def log_in(tab: Page, base: str, key: str = ACME_KEY) -> None:
    tab.goto(f"{base}/ui")
    tab.fill("#key", key)
    tab.get_by_role("button", name="Log in").click()
    expect(tab.locator("h1")).to_have_text("Sessions")


def open_session(tab: Page, base: str, seeded: Seeded) -> None:
    log_in(tab, base)
    tab.click("text=Q1 sales")
    expect(tab.locator("h1")).to_contain_text("Q1 sales")
    tab.wait_for_load_state("load")  # its script (filters that submit on change) has run


def entry(tab: Page, panel: str, text: str) -> Locator:
    """The entry of a panel (``notes``, ``findings``, ``global``, ``superseded``) with ``text``."""
    return tab.locator(f"#{panel} li.entry", has_text=text)


def test_a_key_logs_in_and_the_sessions_show_which_are_private(
    page: Page, served: tuple[str, Seeded]
) -> None:
    base, _ = served
    missing: list[str] = []  # what the pages load is there (the icon too: no /favicon.ico)

    def note_missing(answer: Response) -> None:
        if answer.status == 404:
            missing.append(answer.url)

    page.on("response", note_missing)
    page.goto(f"{base}/ui")
    expect(page).to_have_url(f"{base}/ui/login")
    page.fill("#key", "not-a-key-of-this-server")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".error")).to_have_text("That is not an API key of this server.")
    page.fill("#key", ACME_KEY)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".tenant")).to_have_text("tenant acme")
    expect(page.locator("tr", has_text="Scratch").locator(".badge")).to_have_text("private")
    expect(page.locator("tr", has_text="Q1 sales").locator(".badge")).to_have_text("shared")
    expect(page.locator("body")).not_to_contain_text("Globex")
    (cookie,) = page.context.cookies()
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
    payload = base64.urlsafe_b64decode(cookie["value"].split(".")[1] + "==")
    assert ACME_KEY not in cookie["value"] and b"acme" not in payload
    screenshot(page, "sessions")
    assert missing == []
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{base}/ui/login")
    # the visit the old cookie holds was revoked at logout
    page.context.add_cookies([{"name": cookie["name"], "value": cookie["value"], "url": base}])
    page.goto(f"{base}/ui")
    expect(page).to_have_url(f"{base}/ui/login")


def test_pinning_a_finding_puts_it_in_global_memory(page: Page, served: tuple[str, Seeded]) -> None:
    base, seeded = served
    open_session(page, base, seeded)
    finding = entry(page, "findings", "Kyoto returns doubled")
    finding.locator("select[name=category]").select_option("preference")
    finding.get_by_role("button", name="Pin").click()
    expect(page.locator(".notice")).to_have_text("Pinned to Global Memory.")
    pinned = entry(page, "global", "Kyoto returns doubled in March")
    expect(pinned.locator(".badge.cat")).to_have_text("preference")
    expect(pinned.locator(".badge.trust")).to_have_text("[user-stated]")


def test_findings_filter_by_severity_and_text(page: Page, served: tuple[str, Seeded]) -> None:
    base, seeded = served
    open_session(page, base, seeded)
    findings = page.locator("#findings li.entry")
    expect(findings).to_have_count(4)
    page.select_option("#severity", "critical")  # the script submits the filter on change
    expect(page).to_have_url(re.compile(r"severity=critical"))
    expect(findings).to_have_count(1)
    expect(findings.locator(".badge.sev")).to_have_text("critical")
    expect(findings).to_contain_text("Osaka sold 1850 units in week 10")
    page.select_option("#severity", "")
    expect(findings).to_have_count(4)  # the unfiltered page has loaded before typing in it
    page.wait_for_load_state("load")
    page.fill("#findings input[name=q]", "osaka")
    page.locator("#findings").get_by_role("button", name="Filter").click()
    expect(findings).to_have_count(2)
    page.wait_for_load_state("load")
    page.select_option("#severity", "medium")
    expect(findings).to_have_count(1)
    expect(findings).to_contain_text("Osaka promotion ended a week early")
    expect(page.locator("#findings .count")).to_have_text("1 of 4")


def test_an_entry_is_deleted_and_ticked_ones_in_bulk(
    page: Page, served: tuple[str, Seeded]
) -> None:
    base, seeded = served
    open_session(page, base, seeded)
    entry(page, "notes", "scratch note one").get_by_role("button", name="Delete").click()
    expect(page.locator(".notice")).to_have_text("Deleted.")
    expect(entry(page, "notes", "scratch note one")).to_have_count(0)
    bulk = page.locator("[data-count-ticks]")
    expect(bulk).to_be_disabled()
    entry(page, "notes", "scratch note two").locator("input.tick").check()
    entry(page, "notes", "scratch note three").locator("input.tick").check()
    expect(bulk).to_have_text("Delete selected (2)")
    bulk.click()
    expect(page.locator(".notice")).to_have_text("Deleted (2 entries).")
    expect(entry(page, "notes", "scratch note")).to_have_count(0)
    expect(entry(page, "notes", "User is analysing Q1 sales")).to_have_count(1)


def test_a_superseded_entry_shows_its_successor_and_is_restored(
    page: Page, served: tuple[str, Seeded]
) -> None:
    base, seeded = served
    open_session(page, base, seeded)
    replaced = entry(page, "superseded", "User lives in Berlin")
    expect(replaced.locator(".successor")).to_contain_text("User lives in Paris")
    expect(replaced).to_contain_text("moved in March")
    expect(entry(page, "global", "User lives in Paris")).to_have_count(1)
    replaced.get_by_role("button", name="Restore").click()
    expect(page.locator(".notice")).to_have_text("Restored: the entry is current again.")
    expect(entry(page, "global", "User lives in Berlin")).to_have_count(1)
    expect(entry(page, "global", "User lives in Paris")).to_have_count(0)
    expect(entry(page, "superseded", "User lives in Paris").locator(".successor")).to_contain_text(
        "User lives in Berlin"
    )


def test_another_tenants_data_is_not_reachable(page: Page, served: tuple[str, Seeded]) -> None:
    base, seeded = served
    open_session(page, base, seeded)
    answer = page.goto(f"{base}/ui/sessions/{seeded.other_tenant_session}")
    assert answer is not None and answer.status == 404
    expect(page.locator("body")).not_to_contain_text("Globex secret")
    page.goto(f"{base}/ui/search?scope=session:{seeded.other_tenant_session}&q=merger")
    expect(page.locator("ol.hits li")).to_have_count(0)
    page.goto(f"{base}/ui/sessions/{seeded.session}")
    csrf = page.locator("#bulk input[name=csrf]").input_value()
    for action in ("pin", "delete", "restore"):  # with a valid token, from the inspector itself
        with page.expect_navigation() as sent:
            post_form(page, f"/ui/entries/{seeded.other_tenant_finding}/{action}", csrf=csrf)
        assert sent.value is not None and sent.value.status == 404, action
    with page.expect_navigation() as sent:
        post_form(page, "/ui/entries/delete", csrf=csrf, ids=seeded.other_tenant_finding)
    assert sent.value is not None and sent.value.status == 404


def post_form(tab: Page, action: str, **fields: str) -> None:
    """Send a form the page did not contain (built through the DevTools protocol, which the
    page's Content-Security-Policy does not restrict)."""
    tab.evaluate(
        """([action, fields]) => {
            const form = document.createElement("form");
            form.method = "post";
            form.action = action;
            for (const [name, value] of Object.entries(fields)) {
                const input = document.createElement("input");
                input.type = "hidden";
                input.name = name;
                input.value = value;
                form.append(input);
            }
            document.body.append(form);
            HTMLFormElement.prototype.submit.call(form);
        }""",
        [action, fields],
    )


def test_a_script_in_memory_content_stays_text(page: Page, served: tuple[str, Seeded]) -> None:
    base, seeded = served
    log_in(page, base)
    answer = page.goto(f"{base}/ui/sessions/{seeded.session}")
    assert answer is not None
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert answer.headers["x-frame-options"] == "DENY"
    expect(entry(page, "notes", "window.__pwned = 1").locator(".content")).to_have_text(HOSTILE)
    assert page.locator("#notes script, #notes img").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_the_hygiene_page_counts_by_scope(page: Page, served: tuple[str, Seeded]) -> None:
    base, seeded = served
    log_in(page, base)
    page.get_by_role("link", name="Hygiene").click()
    expect(page.locator("h1")).to_have_text("Hygiene")
    row = page.locator(f'tr[data-scope="session:{seeded.session}"]')
    expect(row).to_have_count(1)
    assert int(row.locator("td").nth(1).inner_text()) > 0  # entries
    expect(page.locator("body")).not_to_contain_text("Osaka")  # ids, never content
    assert page.evaluate("window.__pwned") is None
    page.fill("#stale_days", "0")
    page.get_by_role("button", name="Report").click()
    expect(page.locator(".error")).to_contain_text("stale_days")
    page.goto(f"{base}/ui/hygiene")
    row.get_by_role("link").click()
    expect(page.locator("h1")).to_contain_text("Q1 sales")


def test_a_cross_site_form_post_is_refused(page: Page, served: tuple[str, Seeded]) -> None:
    base, seeded = served
    open_session(page, base, seeded)
    victim = entry(page, "notes", "User is analysing Q1 sales").get_attribute("data-id")
    csrf = page.locator("#bulk input[name=csrf]").input_value()
    with evil_site(f"{base}/ui/entries/{victim}/delete", csrf) as evil:
        page.goto(evil)  # another port of 127.0.0.1: same-site, so the cookie goes along
        with page.expect_navigation() as sent:
            page.get_by_role("button", name="Win a prize").click()
        assert sent.value is not None and sent.value.status == 403
        expect(page.locator("body")).to_contain_text("ForbiddenOrigin")
    page.goto(f"{base}/ui/sessions/{seeded.session}")
    with page.expect_navigation() as sent:  # same origin, but no CSRF token
        post_form(page, f"/ui/entries/{victim}/delete", session=seeded.session)
    assert sent.value is not None and sent.value.status == 403
    expect(page.locator(".error")).to_contain_text("this form has expired")
    page.goto(f"{base}/ui/sessions/{seeded.session}")
    expect(entry(page, "notes", "User is analysing Q1 sales")).to_have_count(1)


@contextmanager
def evil_site(target: str, csrf: str) -> Iterator[str]:
    """A web page on another port that posts a form to ``target`` (even with a stolen token)."""
    html = (
        f'<form method="post" action="{target}"><input type="hidden" name="csrf" '
        f'value="{csrf}"><button>Win a prize</button></form>'
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_agent_memory_pages_filter_runs_and_show_them_as_text(
    page: Page, served: tuple[str, Seeded]
) -> None:
    base, seeded = served
    log_in(page, base)
    page.get_by_role("link", name="Executions").click()
    expect(page.locator("h1")).to_have_text("Executions")
    page.wait_for_load_state("load")  # its script (the outcome filter submits on change) has run
    runs = page.locator("tbody.execution")
    expect(runs).to_have_count(4)
    expect(page.locator("body")).not_to_contain_text("Globex merger")  # another tenant's
    hostile = page.locator(f'tbody.execution[data-id="{seeded.hostile_execution}"]')
    expect(hostile.locator(".content.input")).to_have_text(HOSTILE)
    expect(hostile.locator(".content.output")).to_have_text(HOSTILE)
    assert page.locator("tbody.execution script, tbody.execution img").count() == 0
    assert page.evaluate("window.__pwned") is None
    screenshot(page, "agent-executions")
    page.select_option("#outcome", "failure")
    expect(page).to_have_url(re.compile(r"outcome=failure"))
    expect(runs).to_have_count(2)
    expect(runs.locator(".error-class")).to_have_text(["RateLimitError", "RateLimitError"])
    page.wait_for_load_state("load")
    page.fill("#workflow", "wf-1")
    page.get_by_role("button", name="Filter").click()
    expect(runs).to_have_count(1)
    expect(runs.locator(".agent")).to_have_text("writer")
    expect(page.locator("#outcome")).to_have_value("failure")  # the filters it was given
    page.get_by_role("link", name="clear").click()
    expect(runs).to_have_count(4)

    page.get_by_role("link", name="Strategies").click()
    expect(page.locator("h1")).to_have_text("Strategies")
    rows = page.locator("table.strategies tbody tr")
    expect(rows).to_have_count(4)
    react = page.locator('tr[data-strategy="react"][data-kind="lookup"]')
    expect(react.locator(".runs")).to_have_text("2")
    expect(react.locator(".success")).to_have_text("100%")
    page.fill("#kind", "report")
    page.get_by_role("button", name="Show").click()
    expect(rows).to_have_count(1)
    expect(rows.locator(".strategy")).to_have_text("plan_and_execute")

    page.get_by_role("link", name="Failures").click()
    expect(page.locator("h1")).to_have_text("Failure patterns")
    learned = page.locator('tr[data-pattern="learned:RateLimitError"]')
    expect(learned.locator(".occurrences")).to_have_text("2")
    expect(learned.locator(".terms")).to_contain_text("parallel (2)")
    expect(page.locator("tr.built-in")).to_have_count(3)
