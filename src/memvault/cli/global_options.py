"""The options every command takes, before or after its name: ``--store``, ``--tenant``,
``--actor`` and ``--json``.

They are declared once, here. :class:`~memvault.cli.common.MemvaultGroup` gives every command
and group it registers a copy of them (the root group has its own), so ``memvault --store X
count`` and ``memvault count --store X`` mean the same. Each copy records what it was given in
the command line's shared ``meta``; given twice, the one nearer the end wins.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import click

KEY = "memvault.global"
"""Where the values given are kept, in the ``meta`` every context of a command line shares."""


@dataclass(frozen=True, slots=True)
class Given:
    """What the global options said (None, False: not given; settings decide)."""

    store: str | None = None
    tenant: str | None = None
    actor: str | None = None
    as_json: bool = False


_VALUES = (
    (
        "--store",
        "Store URL or path (default: MEMVAULT_STORE, else $MEMVAULT_HOME/memvault.db), "
        "e.g. sqlite:///m.db or postgresql://…",
    ),
    ("--tenant", "Tenant to act in (default: MEMVAULT_TENANT, else 'default')."),
    ("--actor", "Who the audit log says made the changes (default: MEMVAULT_ACTOR, else 'local')."),
)
_JSON_HELP = "Print the result as JSON instead of text."
NAMES = frozenset({"--store", "--tenant", "--actor", "--json"})


def options() -> list[click.Option]:
    """A fresh copy of the global options, for one command."""
    made = [
        click.Option([name], help=text, expose_value=False, callback=_record)
        for name, text in _VALUES
    ]
    json_flag = click.Option(
        ["--json", "as_json"], is_flag=True, help=_JSON_HELP, expose_value=False, callback=_record
    )
    return [*made, json_flag]


def add_to(command: click.Command) -> None:
    """Give ``command`` the global options (after its own); one it declares itself is a bug."""
    clash = NAMES & {name for param in command.params for name in param.opts}
    if clash:
        raise TypeError(f"{command.name} declares the global option(s) {sorted(clash)}")
    command.params.extend(options())


def given(ctx: click.Context) -> Given:
    """What the global options said anywhere on the command line."""
    found: Given = ctx.meta.get(KEY, Given())
    return found


def _record(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is None or value is False:
        return
    assert param.name is not None
    ctx.meta[KEY] = replace(given(ctx), **{param.name: value})
