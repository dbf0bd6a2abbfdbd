"""The CLI reference (docs/cli.md), generated from the commands themselves (pure).

``python -m memvault.cli.reference > docs/cli.md`` writes it; a test keeps the file in sync.
"""

from __future__ import annotations

from collections.abc import Iterator

import click


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command under ``group``, groups included, in order."""
    for name in sorted(group.commands):
        command = group.commands[name]
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def reference(root: click.Group, program: str = "memvault") -> str:
    """Markdown: every command's usage, help and options, as ``--help`` prints them."""
    parts = [
        "# CLI reference",
        "",
        "Generated from the commands (`python -m memvault.cli.reference > docs/cli.md`); a test",
        "keeps it in sync. Every command also answers `--help`.",
        "",
        _section(root, (), program),
    ]
    parts += [_section(root, path, program) for path in commands(root)]
    return "\n".join(parts)


def _section(root: click.Group, path: tuple[str, ...], program: str) -> str:
    """One command's help, in the context chain the real CLI builds (inherited settings)."""
    settings = {"terminal_width": 100, "max_content_width": 100, **root.context_settings}
    context = click.Context(root, info_name=program, **settings)
    for name in path:
        group = context.command
        assert isinstance(group, click.Group)
        context = click.Context(group.commands[name], info_name=name, parent=context)
    title = "#" * min(len(path) + 2, 4)
    usage = " ".join((program, *path))
    return f"{title} `{usage}`\n\n```text\n{context.command.get_help(context)}\n```\n"


if __name__ == "__main__":
    from . import cli

    print(reference(cli), end="")
