"""The inspector's pages and forms (Starlette endpoints) on the caller's tenant.

Every answer carries :data:`SECURITY_HEADERS` (no inline script, no framing, no caching). A
page needs a visit that logged in with a key of the server (none without keys); a form post
needs that visit's CSRF token too. Templates are autoescaped: memory content is untrusted text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...errors import MemvaultError, ValidationError
from ...facilities.model import GLOBAL_MEMORY, SESSION_MEMORY, trust_tag
from ...memory import AsyncMemory
from ...trust.hygiene_rules import CLASSES
from ...types import Scope
from ..auth import KeyRing, actor_of
from ..observe import route_template
from ..request import HttpError
from ..statuses import status_of
from . import view
from .tokens import LIFETIME, OPEN, Revocations, Signer, Visit

INSPECTOR = "inspector"
"""The agent the audit log names for changes made in the inspector (after the key's name)."""

log = logging.getLogger("memvault.server.ui")

HERE = Path(__file__).parent
COOKIE = "memvault_ui"
FORM_LIMIT = 64 * 1024
"""Largest form body accepted (bytes)."""
MAX_BULK = 500
"""Most entries one bulk delete takes."""
RECORDS_SHOWN = 200
"""The newest records a session page shows (it says how many more there are)."""
SESSIONS_SHOWN = 200
"""Sessions the list shows at first (a link shows more)."""
SUPERSEDED_SHOWN = 100
"""Superseded entries shown per scope (the page says when there are more)."""
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cache-control": "no-store",
}
"""Sent with every page, redirect and static file of the inspector. ``same-origin`` referrers
keep the ``Origin`` of the inspector's own form posts (``no-referrer`` would make it null)."""

Form = dict[str, list[str]]
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request comes from: the tenant's store view and the browser's visit."""

    memory: AsyncMemory
    visit: Visit
    fresh: bool = False
    """The visit starts with this request: its cookie goes with the answer."""


View = Callable[[Caller, Request], Awaitable[tuple[str, dict[str, Any]]]]
"""A page: the template and the values to render it with."""
Action = Callable[[AsyncMemory, Request, Form], Awaitable[str]]
"""A form's change: done on the tenant's store, it answers the address to go back to."""


class Inspector:
    """The visits, CSRF checks and rendering every inspector endpoint shares."""

    def __init__(self, signer: Signer, clock: Callable[[], float] = time.time) -> None:
        from jinja2 import Environment, FileSystemLoader, StrictUndefined

        self.signer, self.clock, self.revoked = signer, clock, Revocations()
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters.update(
            when=view.when,
            trust=trust_tag,
            severity=view.severity_of,
            segment=view.segment,
            amount=view.amount,
            percent=view.percent,
            money=view.money,
        )
        self.templates.globals["navigation"] = view.NAVIGATION

    # -- who is asking ------------------------------------------------------------------------

    def visit_of(self, request: Request) -> Visit | None:
        """The browser's unexpired, unrevoked visit, if its cookie holds one."""
        visit = self.signer.open(request.cookies.get(COOKIE), self.clock())
        return None if visit is None or visit in self.revoked else visit

    def caller(self, request: Request) -> Caller | None:
        """The caller: without keys anyone (a new visit if need be); with keys, a visit that
        logged in with a key still configured, else None."""
        memory: AsyncMemory = request.app.state.memory
        keys: KeyRing = request.app.state.keys
        visit = self.visit_of(request)
        if not keys.enabled:
            inspector = memory.as_actor(actor_of(memory.actor, INSPECTOR))
            if visit is None or visit.key_id != OPEN:
                return Caller(inspector, self.signer.visit(self.clock(), OPEN), fresh=True)
            return Caller(inspector, visit)
        if visit is None:
            return None
        key = self.signer.key(visit, keys.keys)
        if key is None:
            return None
        return Caller(key.view(memory, INSPECTOR), visit)

    # -- answers ------------------------------------------------------------------------------

    def render(
        self,
        request: Request,
        visit: Visit,
        template: str,
        values: dict[str, Any],
        status: int = 200,
        *,
        fresh: bool = False,
    ) -> HTMLResponse:
        keys: KeyRing = request.app.state.keys
        html = self.templates.get_template(template).render(
            csrf=self.signer.csrf(visit),
            logged_in=keys.enabled and bool(visit.key_id),
            notice=view.notice(request.query_params),
            here=request.url.path,
            **values,
        )
        answer = HTMLResponse(html, status, headers=SECURITY_HEADERS)
        if fresh:
            self.set_cookie(request, answer, visit)
        return answer

    def set_cookie(self, request: Request, answer: Response, visit: Visit) -> None:
        """Give the browser ``visit``: HttpOnly, SameSite=Strict, Secure over HTTPS."""
        answer.set_cookie(
            COOKIE,
            self.signer.seal(visit),
            max_age=LIFETIME,
            path=view.PREFIX,
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )

    def failure(self, request: Request, visit: Visit, status: int, message: str) -> HTMLResponse:
        values = {"status": status, "message": message}
        return self.render(request, visit, "error.html", values, status)

    # -- endpoints ----------------------------------------------------------------------------

    def page(self, show: View) -> Endpoint:
        """The endpoint of a page: the login page for a stranger, an error page for an error."""

        async def shown(request: Request, caller: Caller) -> Response:
            template, values = await show(caller, request)
            return self.render(request, caller.visit, template, values, fresh=caller.fresh)

        return self.for_callers(shown)

    def action(self, act: Action) -> Endpoint:
        """The endpoint of a form: a logged-in caller, the visit's CSRF token, then the change;
        the browser then goes back (303) to the page the action names."""

        async def done(request: Request, caller: Caller) -> Response:
            form = await self.checked_form(request, caller.visit, fresh=caller.fresh)
            return see_other(await act(caller.memory, request, form))

        return self.for_callers(done)

    def for_callers(self, handle: Callable[[Request, Caller], Awaitable[Response]]) -> Endpoint:
        """An endpoint that sends a stranger to the login page and answers a logged-in caller
        with ``handle`` (or the error page of what it raised)."""

        async def endpoint(request: Request) -> Response:
            caller = self.caller(request)
            if caller is None:
                return see_other(f"{view.PREFIX}/login")
            return await self.answer(request, caller.visit, handle(request, caller))

        return endpoint

    async def answer(self, request: Request, visit: Visit, work: Awaitable[Response]) -> Response:
        """``work``'s answer, or the error page of what it raised."""
        try:
            return await work
        except (MemvaultError, HttpError) as exc:
            status, message = _status_and_message(exc)
        except Exception:
            route = route_template(request.scope)  # never the raw path: it holds ids
            log.exception("unexpected error in %s %s", request.method, route)
            status, message = 500, "internal error; see the server log"
        return self.failure(request, visit, status, message)

    async def checked_form(self, request: Request, visit: Visit, *, fresh: bool = False) -> Form:
        """The posted form, if it carries the CSRF token of ``visit`` — which must not be
        ``fresh``, begun by this very request (else 403)."""
        form = await read_form(request)
        if fresh or not self.signer.csrf_ok(visit, form_value(form, "csrf")):
            raise HttpError(
                403,
                "CSRFRefused",
                "this form has expired or was not sent by the inspector; "
                "reload the page and try again",
            )
        return form

    async def login_page(self, request: Request) -> Response:
        """The key form (straight to the sessions without keys or once logged in)."""
        if self.caller(request) is not None:
            return see_other(view.PREFIX)
        visit = self.visit_of(request)
        if visit is None:
            visit = self.signer.visit(self.clock())
            return self.render(request, visit, "login.html", {"error": None}, fresh=True)
        return self.render(request, visit, "login.html", {"error": None})

    async def login(self, request: Request) -> Response:
        """Trade a pasted API key for a new visit of its tenant."""
        keys: KeyRing = request.app.state.keys
        visit = self.visit_of(request)
        if not keys.enabled or visit is None:
            return see_other(f"{view.PREFIX}/login")
        return await self.answer(request, visit, self._login(request, visit))

    async def _login(self, request: Request, visit: Visit) -> Response:
        keys: KeyRing = request.app.state.keys
        form = await self.checked_form(request, visit)
        found = keys.lookup(form_value(form, "key") or "")
        if found is None:
            error = "That is not an API key of this server."
            return self.render(request, visit, "login.html", {"error": error}, 401)
        self.revoked.revoke(visit, self.clock())
        answer = see_other(view.PREFIX)
        logged_in = self.signer.visit(self.clock(), self.signer.key_id(found.digest))
        self.set_cookie(request, answer, logged_in)
        return answer

    async def logout(self, request: Request) -> Response:
        """End the visit, here and in the browser."""
        caller = self.caller(request)
        if caller is None:
            return see_other(f"{view.PREFIX}/login")
        return await self.answer(request, caller.visit, self._logout(request, caller))

    async def _logout(self, request: Request, caller: Caller) -> Response:
        await self.checked_form(request, caller.visit, fresh=caller.fresh)
        self.revoked.revoke(caller.visit, self.clock())
        answer = see_other(f"{view.PREFIX}/login")
        answer.delete_cookie(COOKIE, path=view.PREFIX, httponly=True, samesite="strict")
        return answer


def see_other(url: str) -> RedirectResponse:
    """Go to ``url`` (one of the inspector's own addresses) with a GET."""
    return RedirectResponse(url, 303, headers=SECURITY_HEADERS)


def _status_and_message(exc: MemvaultError | HttpError) -> tuple[int, str]:
    if isinstance(exc, HttpError):
        return exc.status, str(exc)
    return status_of(exc), str(exc)


async def read_form(request: Request) -> Form:
    """The URL-encoded form posted (at most :data:`FORM_LIMIT` bytes, UTF-8)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_LIMIT:
            raise HttpError(413, "PayloadTooLarge", f"the form is over {FORM_LIMIT:,} bytes")
    try:
        text = bytes(body).decode("utf-8")
        return parse_qs(text, keep_blank_values=True, max_num_fields=MAX_BULK + 20, errors="strict")
    except ValueError as exc:  # UnicodeDecodeError, too many fields
        raise HttpError(400, "InvalidForm", f"the form could not be read: {exc}") from None


def form_value(form: Form, name: str) -> str | None:
    """The first value of a form field, or None."""
    values = form.get(name)
    return values[0] if values else None


# -- pages ------------------------------------------------------------------------------------


async def sessions_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """The tenant's sessions, newest first (``?user=`` for one user's)."""
    user = request.query_params.get("user") or None
    most = caller.memory.settings.max_limit
    shown = view.page_size(request.query_params.get("limit"), SESSIONS_SHOWN, most - 1)
    found = await caller.memory.list_sessions(user, limit=shown + 1)
    return "sessions.html", {
        "sessions": found[:shown],
        "more": len(found) > shown,
        "more_limit": min(shown * 2, most - 1),
        "user": user or "",
        "tenant": caller.memory.tenant,
    }


async def session_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """One session: records, Session Memory, findings (filtered), its user's Global Memory,
    and what was superseded in either scope."""
    memory, query = caller.memory, request.query_params
    session = await memory.get_session(request.path_params["session_id"])
    severity, text = query.get("severity", ""), query.get("q", "")
    every_finding = await memory.findings(session.id)
    findings = await memory.findings(
        session.id, tags=[severity] if severity else (), text=text or None
    )
    records = await memory.records(session.id)
    replaced, superseded_more = [], False
    for scope in (Scope.session(session.id), Scope.user(session.user_id)):
        found = await memory.superseded(scope, limit=SUPERSEDED_SHOWN + 1)
        replaced += found[:SUPERSEDED_SHOWN]
        superseded_more |= len(found) > SUPERSEDED_SHOWN
    return "session.html", {
        "tenant": memory.tenant,
        "session": session,
        "records": records[-RECORDS_SHOWN:],
        "records_hidden": max(0, len(records) - RECORDS_SHOWN),
        "notes": await memory.session_memory(session.id),
        "findings": findings,
        "finding_count": len(every_finding),
        "tags": view.filter_tags(every_finding),
        "severity": severity,
        "text": text,
        "global_memory": await memory.global_memory(session.user_id),
        "superseded": replaced,
        "superseded_more": superseded_more,
        "superseded_shown": SUPERSEDED_SHOWN,
        "pin_categories": GLOBAL_MEMORY,
        "demote_categories": SESSION_MEMORY,
    }


async def search_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """Hybrid search in one scope (``?scope=…&q=…``)."""
    scope, text = request.query_params.get("scope", ""), request.query_params.get("q", "")
    hits = await caller.memory.search(text, scope, limit=20) if scope and text else []
    return "search.html", {
        "tenant": caller.memory.tenant,
        "scope": scope,
        "q": text,
        "hits": hits,
        "searched": bool(scope and text),
    }


async def hygiene_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """The hygiene report (``?scope=…&stale_days=…``; no scope: the whole tenant): a row per
    scope, then each scope's ids by class — never content."""
    query = request.query_params
    scope = query.get("scope") or None
    days = view.whole_number("stale_days", query.get("stale_days"), 90)
    report = await caller.memory.hygiene(scope, stale_days=days)
    return "hygiene.html", {
        "tenant": caller.memory.tenant,
        "report": report,
        "scope": scope or "",
        "stale_days": days,
        "classes": CLASSES,
        "sessions": {s.scope: view.session_of(s.scope) for s in report.scopes},
    }


# -- actions ----------------------------------------------------------------------------------


def _back(form: Form, done: str, **query: str) -> str:
    return view.session_url(form_value(form, "session"), done=done, **query)


async def pin(memory: AsyncMemory, request: Request, form: Form) -> str:
    """Copy a Session Memory entry or a finding into Global Memory, as the category chosen."""
    await memory.pin(request.path_params["entry_id"], category=form_value(form, "category") or "")
    return _back(form, "pinned")


async def demote(memory: AsyncMemory, request: Request, form: Form) -> str:
    """Move a Global Memory entry into the session's Session Memory."""
    session_id = form_value(form, "session") or ""
    category = form_value(form, "category") or ""
    await memory.demote(request.path_params["entry_id"], session_id, category=category)
    return _back(form, "demoted")


async def delete(memory: AsyncMemory, request: Request, form: Form) -> str:
    """Delete one entry of the tenant (404 for an id it does not have)."""
    await _delete_all(memory, [request.path_params["entry_id"]])
    return _back(form, "deleted")


async def bulk_delete(memory: AsyncMemory, request: Request, form: Form) -> str:
    """Delete the entries ticked (all must be the tenant's: else 404 and none is deleted)."""
    ids = list(dict.fromkeys(form.get("ids", [])))
    if not ids:
        raise ValidationError("tick the entries to delete first")
    if len(ids) > MAX_BULK:
        raise ValidationError(f"at most {MAX_BULK} entries can be deleted at once")
    await _delete_all(memory, ids)
    return _back(form, "deleted", n=str(len(ids)))


async def _delete_all(memory: AsyncMemory, ids: list[str]) -> None:
    """Delete the ticked entries in one transaction: all of them, or (one missing, one
    outside the key's grant) none."""
    await memory.run_plan(memory.planners.store.delete_all(ids), "delete", changes=True)


async def restore(memory: AsyncMemory, request: Request, form: Form) -> str:
    """Make a superseded entry current again."""
    await memory.restore(request.path_params["entry_id"])
    return _back(form, "restored")
