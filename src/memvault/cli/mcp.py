"""``memvault mcp``: memvault as an MCP server, over stdio or streamable HTTP (needs
``memvault[mcp]``; see docs/mcp.md)."""

from __future__ import annotations

import click

from ..config import Settings
from ..memory import AsyncMemory
from . import global_options
from .app import cli
from .common import allow_anonymous_option, listenable, log_level_option


@cli.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: for a client that starts memvault itself (Claude Desktop, IDEs); "
    "http: streamable HTTP at http://HOST:PORT/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (http).")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8766,
    show_default=True,
    help="Port to listen on (http).",
)
@allow_anonymous_option
@log_level_option("warning", "on stderr")
@click.pass_context
def mcp(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    allow_anonymous: bool,
    log_level: str,
) -> None:
    """Serve memory to MCP clients: tools to remember, recall, forget, list, pin and demote,
    log turns, get a session's system prompt and context; resources for Global Memory and a
    session's notes (see docs/mcp.md).

    Over stdio the server acts in one tenant. Over http, with MEMVAULT_API_KEYS (tenant:key,…)
    every request needs 'Authorization: Bearer KEY' and the key picks the tenant; without keys
    it only listens on loopback, unless --allow-anonymous. Requests must name a loopback host,
    the --host address or one of MEMVAULT_ALLOWED_HOSTS; web pages may call it only from
    MEMVAULT_ALLOWED_ORIGINS.
    """
    from ..integrations import mcp as server  # ConfigError without the 'mcp' extra
    from ..server.guard import access_rules

    settings = Settings.from_env()
    if transport == "http":
        access_rules(settings, host, allow_anonymous)  # refuse before opening the store
        listenable(host, port)
    given = global_options.given(ctx)
    memory = AsyncMemory(
        given.store or settings.store_url(),
        tenant=given.tenant,
        settings=settings,
        actor=given.actor,
    )
    ctx.call_on_close(memory.close)  # waits for pending extractions
    if transport == "stdio":
        server.serve_stdio(memory, log_level)
    else:
        server.serve_http(
            memory, host=host, port=port, allow_anonymous=allow_anonymous, log_level=log_level
        )
