"""``memvault chat``: the reference agent (:mod:`memvault.chat`) in a terminal, or one turn."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..config import TOOL_RESULT_MODES, Settings, default_home
from ..errors import ConfigError, ValidationError
from ..llm.configured import chat_model_from_settings
from ..security.text import visible
from ..store.session_files import SessionFiles
from .app import cli
from .common import open_memory
from .global_options import given

if TYPE_CHECKING:
    from ..chat.agent import Agent

NEEDS = "memvault chat needs its extra: pip install 'memvault[chat]'"
NO_MODEL = (
    "memvault chat needs a model: set MEMVAULT_LLM_BASE_URL and MEMVAULT_LLM_MODEL (Ollama: "
    "http://localhost:11434/v1 and qwen3:4b)"
)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return "me"


@cli.command()
@click.option("--user", default=_os_user, show_default="the OS user", help="Whose memory.")
@click.option("--session", "session_id", help="Resume this session.")
@click.option("--private", is_flag=True, help="A private session: nothing reaches Global Memory.")
@click.option(
    "--once",
    "message",
    metavar="MESSAGE",
    help="Send MESSAGE, print the answer and the session's id (on stderr), exit; a slash "
    "command alone acts on the latest session unless --session says which.",
)
@click.option("--yes", is_flag=True, help="Approve every call that asks (for scripts).")
@click.option(
    "--data-dir",
    "data_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A folder data files may be loaded from, besides the current one (repeatable).",
)
@click.option(
    "--attach",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --once: a document sent along, as data (repeatable).",
)
@click.option(
    "--budget",
    type=click.IntRange(min=2048),
    help="Tokens of each prompt: system prompt, tools and messages (default: "
    "MEMVAULT_CHAT_BUDGET, 8192).",
)
@click.option(
    "--tool-results",
    type=click.Choice(TOOL_RESULT_MODES),
    help="How tool results go to the model: OpenAI's tool role (native), folded into user "
    "turns, or the tool role until the server refuses it (auto; default: "
    "MEMVAULT_CHAT_TOOL_RESULTS).",
)
@click.pass_context
def chat(
    ctx: click.Context,
    user: str,
    session_id: str | None,
    private: bool,
    message: str | None,
    yes: bool,
    data_dirs: tuple[Path, ...],
    attach: tuple[Path, ...],
    budget: int | None,
    tool_results: str | None,
) -> None:
    """Chat with the model of MEMVAULT_LLM_BASE_URL and MEMVAULT_LLM_MODEL, with memory.

    Data tools (load-data, describe-data, query-sql, analyze-data, promote-finding) work on a
    DuckDB database per session, and resolve-date reads dates; /help lists the slash
    commands."""
    try:
        from ..chat.agent import Agent, approve_all, refuse_all
    except ImportError:
        raise ConfigError(NEEDS) from None
    if message is None and not sys.stdin.isatty():
        raise ValidationError("memvault chat needs a terminal; in scripts use --once MESSAGE")
    if attach and message is None:
        raise ValidationError("--attach goes with --once; in the chat, paste the document")
    settings = Settings.from_env()
    model = chat_model_from_settings(settings)
    if model is None:
        raise ConfigError(NO_MODEL)
    ctx.call_on_close(model.close)
    model.check()
    memory = open_memory(ctx)
    agent = Agent(
        memory,
        model,
        user,
        files=SessionFiles.of(default_home(), given(ctx).store or settings.store_url()),
        session_id=session_id,
        private=private,
        data_dirs=data_dirs,
        approve=approve_all if yes else refuse_all,
        budget=budget or settings.chat_budget,
        tool_results=tool_results or settings.chat_tool_results,
        notify=lambda line: click.echo(visible(line), err=True),
    )
    agent.sweep()
    if message is not None:
        if message.startswith("/") and session_id is None and (latest := agent.sessions()):
            agent.resume(latest[0].id)  # a command alone acts on the user's latest session
        said = _once(agent, message, [_read(path) for path in attach])
        if agent.started:
            click.echo(f"session {agent.session.id}", err=True)
        click.echo(visible(said))
        return
    _interactive(agent, yes)


def _interactive(agent: Agent, yes: bool) -> None:
    from rich.console import Console

    from ..chat.terminal import Terminal

    Terminal(agent, Console(), ask=not yes).run()


def _once(agent: Agent, message: str, documents: list[str]) -> str:
    """One message's answer, or a slash command's output."""
    if message.startswith("/"):
        from ..chat.commands import Commands

        return Commands(agent).run(message)
    return agent.send(message, documents).text


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read {path} as UTF-8 text: {exc}") from None
