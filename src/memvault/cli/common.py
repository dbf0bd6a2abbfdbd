"""What every command of the CLI shares: the group that turns errors into one line and an exit
code, the options, opening the store, and printing.

Exit codes: 0 success, 1 store or backend error, 2 bad input, 3 entry not found, 4 not allowed,
5 an erasure is pending (its purge left traces: ``memvault erase --finish``).
A command never prints a traceback: memvault errors are translated once, in
:class:`MemvaultGroup`; anything else is reported as an internal error (``MEMVAULT_DEBUG=1``
shows its traceback).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import click

from ..environment import DEBUG
from ..errors import (
    ConfigError,
    ErasureIncompleteError,
    ForbiddenError,
    MemvaultError,
    NotFoundError,
    ValidationError,
)
from ..memory import Memory
from ..types import MemoryEntry, Scope
from . import render

Command = TypeVar("Command", bound=Callable[..., Any])
EXIT_STORE, EXIT_INPUT, EXIT_NOT_FOUND, EXIT_FORBIDDEN, EXIT_PENDING = 1, 2, 3, 4, 5


def exit_code(error: MemvaultError) -> int:
    if isinstance(error, ErasureIncompleteError):
        return EXIT_PENDING
    if isinstance(error, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(error, ForbiddenError):
        return EXIT_FORBIDDEN
    if isinstance(error, ValidationError | ConfigError):
        return EXIT_INPUT
    return EXIT_STORE


class MemvaultGroup(click.Group):
    """A command group whose commands' errors become one line on stderr and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except MemvaultError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exit_code(exc))
        except Exception as exc:
            if os.environ.get(DEBUG):
                raise
            reason = f"internal error ({type(exc).__name__}: {exc})"
            click.echo(f"Error: {reason}; {DEBUG}=1 shows the traceback", err=True)
            ctx.exit(EXIT_STORE)


def parse_scope(ctx: click.Context, param: click.Parameter, value: str | None) -> Scope | None:
    try:
        return None if value is None else Scope.coerce(value)
    except ValidationError as exc:
        raise click.BadParameter(str(exc)) from None


def _datetime(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO-8601 datetime") from None
    if parsed.tzinfo is None:
        raise click.BadParameter(f"{value!r} needs a timezone, e.g. 2026-01-31T12:00:00+00:00")
    return parsed


def json_object(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError) as exc:  # also: an integer of too many digits
        raise click.BadParameter(f"not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("must be a JSON object")
    return parsed


def _parsed_option(
    callback: Callable[..., Any], metavar: str
) -> Callable[..., Callable[[Command], Command]]:
    """An option factory whose values ``callback`` parses (click's types vary by version)."""

    def option(*decls: str, **kwargs: Any) -> Callable[[Command], Command]:
        return click.option(*decls, callback=callback, metavar=metavar, **kwargs)

    return option


scope_option = _parsed_option(parse_scope, "SCOPE")
datetime_option = _parsed_option(_datetime, "DATETIME")
json_object_option = _parsed_option(json_object, "JSON")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
allow_anonymous_option = click.option(
    "--allow-anonymous",
    is_flag=True,
    help="Serve a non-loopback address without API keys (all clients share one tenant).",
)
"""The servers' (``serve``, ``mcp --transport http``) consent to listen beyond loopback keyless."""


def log_level_option(default: str, explained: str) -> Callable[[Command], Command]:
    """A server's ``--log-level`` (its default, and what that level shows)."""
    return click.option(
        "--log-level",
        default=default,
        show_default=True,
        type=click.Choice(["critical", "error", "warning", "info", "debug"]),
        help=f"How much the server logs ({explained}).",
    )


tag_option = click.option(
    "--tag", "tags", multiple=True, help="A tag; repeat for several (filters need ALL of them)."
)
since_option = datetime_option("--since", help="Only entries created at or after.")
as_of_option = datetime_option("--as-of", help="What held at that instant (superseded since).")
superseded_option = click.option(
    "--include-superseded", is_flag=True, help="Show superseded versions too."
)


def open_memory(ctx: click.Context, **options: Any) -> Memory:
    """Open the store the group's options name (``options`` go to Memory), closed on exit.

    A command ends with its process, so a store that does not outlive it (``memory://``,
    ``:memory:``) is refused rather than silently forgotten."""
    opener: Callable[..., Memory] = ctx.obj
    memory = opener(**options)
    ctx.call_on_close(memory.close)
    if not memory.backend.capabilities.persistent:
        raise ConfigError(
            f"the {memory.backend.name!r} store forgets everything when this command ends; "
            "give --store a SQLite file or a PostgreSQL URL"
        )
    return memory


def argument_text(value: str) -> str:
    """An argument's value, or standard input for '-'."""
    return sys.stdin.read() if value == "-" else value


def emit(as_json: bool, data: Any, text: str) -> None:
    click.echo(render.as_json(data) if as_json else text)


def emit_written(as_json: bool, entry: MemoryEntry) -> None:
    """A written entry's id (or JSON); a merge is said on stderr and as ``"duplicate"``."""
    if entry.duplicate and not as_json:
        click.echo(f"already stored as {entry.id}: the same fact; nothing new written", err=True)
    emit(as_json, {**entry.to_dict(), "duplicate": entry.duplicate}, entry.id)


def listenable(host: str, port: int) -> None:
    """Refuse (ConfigError) an address the server could not listen on — a port in use, a host
    this machine does not have — before anything starts (the server would exit with its own
    code and a log line)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        with socket.socket(found[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            probe.bind(found[0][4])
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"cannot listen on {host}:{port}: {reason}; pick another --port"
        ) from None
