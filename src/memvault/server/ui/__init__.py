"""The web inspector at ``/ui`` (``docs/inspector.md``): server-rendered pages to see and fix
what agents remember, on the REST server's keys and browser rules, with cookie visits and
CSRF-checked forms. Jinja2 is imported only when the routes are built."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Scope, Send

from ...environment import UI_SECRET
from ..guard import origin_of
from . import agent_pages, pages
from .pages import HERE, SECURITY_HEADERS, Inspector
from .tokens import Signer
from .view import PREFIX

SECRET_ENV = UI_SECRET
"""The secret that signs the inspector's cookies (at least 32 characters). ``memvault serve``
sets a random one for its workers unless it is set; without it an app makes its own."""

__all__ = ["PREFIX", "SECRET_ENV", "page_origin", "routes", "secured"]


def page_origin(scope: Scope) -> str | None:
    """For a request to an inspector page, the server's origin as the request names it (its
    scheme and ``Host``; "" without ``Host``): the one web origin its forms may come from.
    None for any other request."""
    path: str = scope.get("path", "")
    if path != PREFIX and not path.startswith(f"{PREFIX}/"):
        return None
    host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), "")
    return (origin_of(f"{scope.get('scheme', 'http')}://{host}") or "") if host else ""


def routes(secret: str | None = None) -> list[BaseRoute]:
    """The inspector's routes, with cookies signed by ``secret`` (random when None)."""
    inspector = Inspector(Signer.from_text(secret))
    page, action = inspector.page, inspector.action
    return [
        Route(PREFIX, page(pages.sessions_page), methods=["GET"]),
        Route(f"{PREFIX}/login", inspector.login_page, methods=["GET"]),
        Route(f"{PREFIX}/login", inspector.login, methods=["POST"]),
        Route(f"{PREFIX}/logout", inspector.logout, methods=["POST"]),
        Route(f"{PREFIX}/sessions/{{session_id}}", page(pages.session_page), methods=["GET"]),
        Route(f"{PREFIX}/search", page(pages.search_page), methods=["GET"]),
        Route(f"{PREFIX}/hygiene", page(pages.hygiene_page), methods=["GET"]),
        Route(f"{PREFIX}/agents/executions", page(agent_pages.executions_page), methods=["GET"]),
        Route(f"{PREFIX}/agents/strategies", page(agent_pages.strategies_page), methods=["GET"]),
        Route(f"{PREFIX}/agents/failures", page(agent_pages.failures_page), methods=["GET"]),
        Route(f"{PREFIX}/entries/delete", action(pages.bulk_delete), methods=["POST"]),
        Route(f"{PREFIX}/entries/{{entry_id}}/pin", action(pages.pin), methods=["POST"]),
        Route(f"{PREFIX}/entries/{{entry_id}}/demote", action(pages.demote), methods=["POST"]),
        Route(f"{PREFIX}/entries/{{entry_id}}/delete", action(pages.delete), methods=["POST"]),
        Route(f"{PREFIX}/entries/{{entry_id}}/restore", action(pages.restore), methods=["POST"]),
        Mount(f"{PREFIX}/static", app=StaticFiles(directory=HERE / "static")),
    ]


def secured(send: Send) -> Send:
    """``send``, adding the inspector's security headers to the answer (the server's
    middleware wraps every answer under ``/ui`` so: pages, files, refusals and 404s)."""

    async def send_secured(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).update(SECURITY_HEADERS)
        await send(message)

    return send_secured
