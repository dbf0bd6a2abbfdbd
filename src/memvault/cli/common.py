"""What every command of the CLI shares: the group that turns errors into one line and an exit
code, the options, opening the store, asking for confirmation, and printing.

Exit codes (:data:`EXIT_BY_ERROR`, by the error's type): 0 success, 1 store or backend error,
2 bad input (also: a usage error, a confirmation needed where no one can answer), 3 not found,
4 not allowed, 5 an erasure is pending (its purge left traces: ``memvault erase --finish``),
6 aborted by the user (a confirmation declined), 7 the audit log does not verify (``memvault audit
verify``: a result, not an error), 8 the store or server is unavailable (down, unreachable, or
its circuit breaker open: retry later). A command never prints a traceback: memvault
errors are translated once, in :class:`MemvaultGroup`; anything else is reported as an internal
error (``MEMVAULT_DEBUG=1`` shows its traceback).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import click

from ..config import Settings
from ..environment import DEBUG
from ..errors import (
    AbortedError,
    ConfigError,
    ErasureIncompleteError,
    ForbiddenError,
    InvalidScopePromotionError,
    MemvaultError,
    NotFoundError,
    UnavailableError,
    ValidationError,
)
from ..memory import Memory
from ..types import MemoryEntry, Scope
from . import global_options, render

Command = TypeVar("Command", bound=Callable[..., Any])
EXIT_STORE, EXIT_INPUT, EXIT_NOT_FOUND, EXIT_FORBIDDEN, EXIT_PENDING, EXIT_ABORTED = range(1, 7)
EXIT_NOT_INTACT = 7
"""``memvault audit verify`` found the audit log not intact (a result: no error type maps to it)."""
EXIT_UNAVAILABLE = 8
"""The store or server cannot be reached now (UnavailableError): the same command may work
later, unlike a store error (1)."""

EXIT_BY_ERROR: tuple[tuple[type[MemvaultError], int], ...] = (
    (ErasureIncompleteError, EXIT_PENDING),
    (UnavailableError, EXIT_UNAVAILABLE),
    (NotFoundError, EXIT_NOT_FOUND),
    (ForbiddenError, EXIT_FORBIDDEN),
    (ValidationError, EXIT_INPUT),
    (InvalidScopePromotionError, EXIT_INPUT),
    (ConfigError, EXIT_INPUT),
    (AbortedError, EXIT_ABORTED),
)
"""The exit code of each kind of error, the first that matches (as the REST server's statuses);
any other memvault error is a store error (1)."""


def exit_code(error: MemvaultError) -> int:
    return next((code for kind, code in EXIT_BY_ERROR if isinstance(error, kind)), EXIT_STORE)


class MemvaultGroup(click.Group):
    """A command group whose commands' errors become one line on stderr and an exit code, and
    whose every command (its groups' too) takes the global options (:mod:`.global_options`)."""

    group_class = type  # its groups are MemvaultGroups

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        global_options.add_to(cmd)
        super().add_command(cmd, name)

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
yes_option = click.option(
    "--yes", is_flag=True, help="Do not ask for confirmation (a script must give it)."
)
"""The consent of a command that asks first (see :func:`confirm`)."""
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
    """Open the store the global options name (``options`` go to Memory), closed on exit.

    A command ends with its process, so a store that does not outlive it (``memory://``,
    ``:memory:``) is refused rather than silently forgotten."""
    given = global_options.given(ctx)
    settings = Settings.from_env()
    memory = Memory(
        given.store or settings.store_url(),
        tenant=given.tenant,
        settings=settings,
        actor=given.actor,
        **options,
    )
    ctx.call_on_close(memory.close)
    if not memory.backend.capabilities.persistent:
        raise ConfigError(
            f"the {memory.backend.name!r} store forgets everything when this command ends; "
            "give --store a SQLite file or a PostgreSQL URL"
        )
    return memory


def confirm(question: str, yes: bool) -> None:
    """Go on if ``yes`` (the command's ``--yes``) or the person at the terminal agrees.

    Nobody can answer a script (standard input is not a terminal): it fails at once, naming
    ``--yes``, instead of waiting or reading its input as the answer (ValidationError, exit 2).
    Declining, or interrupting the question, is :class:`AbortedError` (exit 6)."""
    if yes:
        return
    if not interactive():
        raise ValidationError(
            f"{question} — this asks for confirmation and standard input is not a terminal: "
            "add --yes to go on without asking"
        )
    try:
        agreed = click.confirm(question)
    except click.Abort:  # Ctrl-C or end of input at the question
        agreed = False
    if not agreed:
        raise AbortedError("aborted: nothing was changed")


def interactive() -> bool:
    """Whether a person can answer a question: standard input is a terminal."""
    return sys.stdin.isatty()


def argument_text(value: str) -> str:
    """An argument's value, or standard input for '-'."""
    return sys.stdin.read() if value == "-" else value


def wants_json(ctx: click.Context) -> bool:
    """Whether ``--json`` was given, before or after the command."""
    return global_options.given(ctx).as_json


def emit(ctx: click.Context, data: Any, text: str) -> None:
    """Print a result: ``data`` as JSON with ``--json``, else ``text``."""
    click.echo(render.as_json(data) if wants_json(ctx) else text)


def emit_written(ctx: click.Context, entry: MemoryEntry) -> None:
    """A written entry's id (or JSON); a merge is said on stderr and as ``"duplicate"``."""
    if entry.duplicate and not wants_json(ctx):
        click.echo(f"already stored as {entry.id}: the same fact; nothing new written", err=True)
    emit(ctx, {**entry.to_dict(), "duplicate": entry.duplicate}, entry.id)


@contextmanager
def progress(label: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """A ``report(done)`` that shows ``label: done[/total]`` on stderr at a terminal (else
    nothing: a log keeps no progress lines), its line erased at the end, before the result."""
    shown = sys.stderr.isatty()
    out_of = "" if total is None else f"/{total:,}"

    def report(done: int) -> None:
        if shown:
            click.echo(f"\r{label}: {done:,}{out_of}", nl=False, err=True)

    try:
        yield report
    finally:
        if shown:
            click.echo("\r\033[K", nl=False, err=True)


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
