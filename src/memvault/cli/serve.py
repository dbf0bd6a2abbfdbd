"""``memvault serve``: the REST server (needs ``memvault[server]``)."""

from __future__ import annotations

import os
import secrets

import click

from ..config import LOG_FORMATS, Settings
from ..errors import ConfigError
from ..memory import Memory
from . import global_options
from .app import cli
from .common import EXIT_INPUT, allow_anonymous_option, listenable, log_level_option


def share_cores(settings: Settings, workers: int) -> None:
    """Unless MEMVAULT_EMBED_THREADS is set, give each worker's embedding model its share of the
    cores (onnxruntime's default, a thread per core in every worker, oversubscribes the CPU)."""
    from ..embeddings.local import automatic_threads

    if settings.embed_threads == 0:
        os.environ["MEMVAULT_EMBED_THREADS"] = str(automatic_threads(workers))


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on.",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Worker processes (all share the one store; each embeds with cores/N "
    "threads unless MEMVAULT_EMBED_THREADS is set).",
)
@allow_anonymous_option
@log_level_option("info", "info: a line per request")
@click.option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    help="Log lines as text or as JSON objects (default: MEMVAULT_LOG_FORMAT, else text).",
)
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    workers: int,
    allow_anonymous: bool,
    log_level: str,
    log_format: str | None,
) -> None:
    """Serve the store over HTTP (JSON API under /v1; see docs/server.md).

    With MEMVAULT_API_KEYS (tenant:key,…) every request needs 'Authorization: Bearer KEY',
    and the key picks the tenant. Without keys the server only listens on loopback, unless
    --allow-anonymous. Requests must name a loopback host, the --host address or one of
    MEMVAULT_ALLOWED_HOSTS; web pages may call it only from MEMVAULT_ALLOWED_ORIGINS.
    The web inspector is at /ui (log in with a key; docs/inspector.md). Prometheus metrics at
    /metrics, health at /healthz and /readyz (docs/operations.md).
    """
    try:
        import uvicorn

        from ..server.app import BOUND_HOST_ENV
        from ..server.guard import access_rules
        from ..server.logs import logging_config
        from ..server.ui import SECRET_ENV as UI_SECRET_ENV
    except ImportError:
        click.echo(
            "Error: the server needs the 'server' extra: in the clone, "
            "python -m pip install -e '.[server]'",
            err=True,
        )
        ctx.exit(EXIT_INPUT)
    given = global_options.given(ctx)
    for name, value in (("STORE", given.store), ("TENANT", given.tenant), ("ACTOR", given.actor)):
        if value:
            os.environ[f"MEMVAULT_{name}"] = value  # for the workers
    settings = Settings.from_env()
    access_rules(settings, host, allow_anonymous)  # fail here, early
    listenable(host, port)
    with Memory(settings=settings) as memory:  # a bad store or model fails here, not in a worker
        if workers > 1 and not memory.backend.capabilities.multiprocess:
            raise ConfigError(
                f"the {memory.backend.name!r} store at {settings.store_url()} lives in one "
                f"process; {workers} workers would each have their own: use --workers 1, or a "
                "SQLite file or PostgreSQL"
            )
    share_cores(settings, workers)
    os.environ[BOUND_HOST_ENV] = host  # the app (in every worker) accepts it as a Host name
    os.environ.setdefault(UI_SECRET_ENV, secrets.token_urlsafe(32))  # one for all workers
    uvicorn.run(
        "memvault.server.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        log_config=logging_config(log_format or settings.log_format, log_level),
        access_log=False,  # the app logs each request once, with its id (docs/operations.md)
    )
