"""The ``memvault`` group and the commands of the scoped store."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

import click

from .. import validation as check
from ..api import store as api
from ..core import UNSET
from ..errors import MemvaultError, NotFoundError, ValidationError, restated
from ..memory import Memory
from ..rest.fields import fields
from ..types import ItemResult, NewEntry, Outcome, Provenance, Scope, WriteReport
from . import global_options, render
from .common import (
    EXIT_INPUT,
    MemvaultGroup,
    as_of_option,
    confirm,
    datetime_option,
    emit,
    emit_written,
    json_object_option,
    open_memory,
    parse_scope,
    progress,
    scope_option,
    since_option,
    superseded_option,
    tag_option,
    yes_option,
)


@click.group(
    cls=MemvaultGroup,
    params=global_options.options(),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="memvault")
def cli() -> None:
    """memvault: long-term memory for LLM agents.

    Scopes are written kind:id — session:ID, user:ID, workspace:ID, org:ID or object:TYPE:ID.

    --store, --tenant, --actor and --json go before or after any command.

    Exit codes: 0 ok, 1 store error, 2 bad input, 3 not found, 4 not allowed, 5 an erasure
    pending, 6 aborted by the user (a confirmation declined), 7 the audit log does not verify,
    8 the store or server is unavailable (retry later).
    """


@cli.command()
@click.argument("content")
@scope_option("--scope", required=True, help="Scope to write into, e.g. user:alice.")
@tag_option
@click.option("--category", help="A category word, e.g. preference.")
@click.option("--ttl", type=click.FloatRange(min=0, min_open=True), help="Expire after SECONDS.")
@datetime_option("--expires-at", help="Expire at this instant.")
@json_object_option("--metadata", help="A JSON object of extra fields.")
@click.option("--source", help="Provenance: which process wrote it.")
@click.option("--agent-id", help="Provenance: which agent wrote it.")
@click.option("--confidence", type=click.FloatRange(0, 1), help="Provenance: confidence 0..1.")
@click.pass_context
def write(
    ctx: click.Context,
    content: str,
    scope: Scope,
    tags: tuple[str, ...],
    category: str | None,
    ttl: float | None,
    expires_at: datetime | None,
    metadata: dict[str, Any] | None,
    source: str | None,
    agent_id: str | None,
    confidence: float | None,
) -> None:
    """Store CONTENT in a scope ('-' reads it from standard input)."""
    if content == "-":
        content = sys.stdin.read()
    provenance = Provenance(source=source, agent_id=agent_id, confidence=confidence)
    entry = open_memory(ctx).write(
        content,
        scope=scope,
        tags=tags,
        category=category,
        ttl=ttl,
        expires_at=expires_at,
        metadata=metadata,
        provenance=provenance,
    )
    emit_written(ctx, entry)


@cli.command()
@click.argument("entry_id")
@click.pass_context
def get(ctx: click.Context, entry_id: str) -> None:
    """Show one entry in full (exit 3 if it does not exist or has expired)."""
    entry = open_memory(ctx).get(entry_id)
    if entry is None:
        raise NotFoundError(entry_id)
    emit(ctx, entry.to_dict(), render.entry_block(entry))


@cli.command("list")
@scope_option("--scope", help="Only this scope (default: every scope).")
@tag_option
@since_option
@click.option(
    "--order", type=click.Choice(["newest", "oldest"]), default="newest", help="Sort order."
)
@click.option("--limit", type=int, default=20, show_default=True, help="Entries per page.")
@click.option("--cursor", help="Continue after a previous page (its next_cursor).")
@click.option("--include-expired", is_flag=True, help="Show expired entries too.")
@superseded_option
@click.pass_context
def list_(
    ctx: click.Context,
    scope: Scope | None,
    tags: tuple[str, ...],
    since: datetime | None,
    order: str,
    limit: int,
    cursor: str | None,
    include_expired: bool,
    include_superseded: bool,
) -> None:
    """List entries, newest first, one page at a time."""
    page = open_memory(ctx).list(
        scope,
        tags=tags,
        since=since,
        order=check.order(order),
        limit=limit,
        cursor=cursor,
        include_expired=include_expired,
        include_superseded=include_superseded,
    )
    data = {"entries": [e.to_dict() for e in page.entries], "next_cursor": page.next_cursor}
    text = render.entry_lines(page.entries) or "(no entries)"
    if page.next_cursor:
        text += f"\n(more: --cursor {page.next_cursor})"
    emit(ctx, data, text)


@cli.command()
@click.argument("entry_id")
@click.option("--content", help="New content ('-' reads standard input).")
@tag_option
@click.option("--clear-tags", is_flag=True, help="Remove every tag.")
@datetime_option("--expires-at", help="New expiry instant.")
@click.option("--no-expiry", is_flag=True, help="Remove the expiry.")
@json_object_option("--metadata", help="Replace the metadata with this JSON object.")
@click.pass_context
def update(
    ctx: click.Context,
    entry_id: str,
    content: str | None,
    tags: tuple[str, ...],
    clear_tags: bool,
    expires_at: datetime | None,
    no_expiry: bool,
    metadata: dict[str, Any] | None,
) -> None:
    """Change an entry's content, tags, expiry or metadata (scope never changes)."""
    if tags and clear_tags:
        raise click.UsageError("--tag and --clear-tags cannot be combined")
    if expires_at and no_expiry:
        raise click.UsageError("--expires-at and --no-expiry cannot be combined")
    if content == "-":
        content = sys.stdin.read()
    changes: dict[str, Any] = {
        "content": UNSET if content is None else content,
        "tags": () if clear_tags else (tags or UNSET),
        "expires_at": None if no_expiry else (expires_at or UNSET),
        "metadata": UNSET if metadata is None else metadata,
    }
    if all(value is UNSET for value in changes.values()):
        raise click.UsageError("nothing to change: give --content, --tag, --expires-at, ...")
    entry = open_memory(ctx).update(entry_id, **changes)
    emit(ctx, entry.to_dict(), render.entry_block(entry))


@cli.command()
@click.argument("entry_id")
@click.pass_context
def delete(ctx: click.Context, entry_id: str) -> None:
    """Delete one entry (succeeds even if it was already gone)."""
    deleted = open_memory(ctx).delete(entry_id)
    emit(ctx, {"id": entry_id, "deleted": deleted}, "deleted" if deleted else "not present")


@cli.command("delete-scope")
@click.argument("scope", callback=parse_scope, metavar="SCOPE")
@yes_option
@click.pass_context
def delete_scope(ctx: click.Context, scope: Scope, yes: bool) -> None:
    """Delete every entry of exactly one SCOPE (other scopes are untouched)."""
    confirm(f"Delete every entry of {scope}?", yes)
    count = open_memory(ctx).delete_by_scope(scope)
    emit(ctx, {"scope": str(scope), "deleted": count}, f"deleted {count}")


@cli.command()
@click.argument("entry_id")
@scope_option("--to", "target", required=True, help="Broader scope to promote into.")
@click.option("--delete-original", is_flag=True, help="Remove the source entry.")
@click.option("--content", help="Override the content of the promoted entry.")
@tag_option
@click.pass_context
def promote(
    ctx: click.Context,
    entry_id: str,
    target: Scope,
    delete_original: bool,
    content: str | None,
    tags: tuple[str, ...],
) -> None:
    """Copy an entry into a broader scope (session → user → workspace → org)."""
    entry = open_memory(ctx).promote(
        entry_id, target, delete_original=delete_original, content=content, tags=tags or None
    )
    emit_written(ctx, entry)


@cli.command()
@scope_option("--scope", help="Only this scope (default: every scope).")
@tag_option
@since_option
@click.option("--include-narrower", is_flag=True, help="With a user scope: add --session too.")
@click.option("--session", "session_id", help="The session --include-narrower adds.")
@as_of_option
@superseded_option
@click.pass_context
def count(
    ctx: click.Context,
    scope: Scope | None,
    tags: tuple[str, ...],
    since: datetime | None,
    include_narrower: bool,
    session_id: str | None,
    as_of: datetime | None,
    include_superseded: bool,
) -> None:
    """Count unexpired current entries."""
    if scope is None and (include_narrower or session_id):
        raise ValidationError("--include-narrower and --session need --scope")
    total = open_memory(ctx).count(
        scope,
        tags=tags,
        since=since,
        include_narrower=include_narrower,
        session_id=session_id,
        as_of=as_of,
        include_superseded=include_superseded,
    )
    emit(ctx, {"count": total}, str(total))


@cli.command("purge-expired")
@click.pass_context
def purge_expired(ctx: click.Context) -> None:
    """Really delete expired entries (they are already hidden from every read)."""
    purged = open_memory(ctx).purge_expired()
    emit(ctx, {"purged": purged}, f"purged {purged}")


@cli.command()
@click.argument("query")
@scope_option("--scope", required=True, help="Scope to search, e.g. user:alice.")
@click.option("--limit", type=int, default=10, show_default=True, help="Most hits to return.")
@tag_option
@click.option("--category", "categories", multiple=True, help="Only these categories.")
@since_option
@datetime_option("--until", help="Only entries created before.")
@click.option("--recency", type=float, default=0.0, help="Weight of recency in the score.")
@click.option("--diversity", type=click.FloatRange(0, 1), help="MMR diversity, 0..1.")
@click.option(
    "--min-score",
    type=float,
    help="Drop hits scoring below this (the score fuses BM25 and cosine; an unrelated "
    "entry scores near 0).",
)
@click.option("--conversational", is_flag=True, help="Entries are conversation turns.")
@click.option("--rerank", is_flag=True, help="Reorder the best 50 with the SPLADE model.")
@click.option(
    "--time-weight",
    type=float,
    default=0.0,
    help="Weight of entries created when the query's time expressions say.",
)
@click.option(
    "--min-relevance",
    type=float,
    default=None,
    help="Drop hits whose calibrated relevance (0 to 1) is below this.",
)
@click.option(
    "--decay/--no-decay",
    default=None,
    help="Fade the scores of entries unused for long (MEMVAULT_DECAY; default: "
    "MEMVAULT_DECAY_BY_DEFAULT).",
)
@as_of_option
@superseded_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    scope: Scope,
    limit: int,
    tags: tuple[str, ...],
    categories: tuple[str, ...],
    since: datetime | None,
    until: datetime | None,
    recency: float,
    diversity: float | None,
    min_score: float | None,
    conversational: bool,
    rerank: bool,
    time_weight: float,
    min_relevance: float | None,
    decay: bool | None,
    as_of: datetime | None,
    include_superseded: bool,
) -> None:
    """Hybrid (lexical + semantic) search within one scope, best first."""
    hits = open_memory(ctx).search(
        query,
        scope,
        limit=limit,
        tags=tags,
        categories=categories,
        since=since,
        until=until,
        recency_weight=recency,
        diversity=diversity,
        min_score=min_score,
        conversational=conversational,
        rerank=rerank,
        time_weight=time_weight,
        as_of=as_of,
        include_superseded=include_superseded,
        min_relevance=min_relevance,
        decay=decay,
    )
    emit(ctx, [hit.to_dict() for hit in hits], render.hit_lines(hits))


@cli.command()
@click.argument("entry_ids", nargs=-1, required=True)
@click.pass_context
def reinforce(ctx: click.Context, entry_ids: tuple[str, ...]) -> None:
    """Count a use of these entries now: a search with --decay ranks them as fresh."""
    done = open_memory(ctx).reinforce(list(entry_ids))
    emit(ctx, {"reinforced": done}, f"reinforced {done} of {len(entry_ids)}")


@cli.command("import")
@click.argument("source", type=click.File("rb"))
@scope_option("--scope", help="Scope for lines that name none.")
@click.option(
    "--batch",
    type=click.IntRange(1, 10_000),
    default=256,
    show_default=True,
    help="Entries written per transaction.",
)
@click.option("--strict", is_flag=True, help="Stop at the first refused line.")
@click.pass_context
def import_(ctx: click.Context, source: Any, scope: Scope | None, batch: int, strict: bool) -> None:
    """Bulk-write JSON Lines from SOURCE ('-' for standard input).

    Each line is an object with "content" and optionally "scope", "tags", "category",
    "metadata", "provenance", "context", "created_at" and "expires_at" (ISO-8601 with a
    timezone); a line with any other key is refused, naming it.
    Reports how many lines were stored, merged into an entry already there (with its id) and
    refused (with the reason); the exit code is 2 if any line was refused. With --strict the
    first refused line stops the import; batches already written stay written.
    """
    lines = [(n, line) for n, line in enumerate(source.read().splitlines(), 1) if line.strip()]
    results: list[ItemResult] = []
    memory = open_memory(ctx)
    with progress("importing", len(lines)) as step:
        for start in range(0, len(lines), batch):
            chunk = lines[start : start + batch]
            results += _import_batch(memory, chunk, scope, strict)
            step(start + len(chunk))
    report = WriteReport(tuple(results))
    emit(
        ctx,
        report.to_dict() | {"items": [_import_line(i) for i in results]},
        render.import_summary(report),
    )
    if report.refused:
        ctx.exit(EXIT_INPUT)


def _import_batch(
    memory: Memory, lines: list[tuple[int, bytes]], scope: Scope | None, strict: bool
) -> list[ItemResult]:
    """Write one batch of numbered lines; each result's ``index`` is its line number."""
    items, numbers, refused = [], [], []
    for number, line in lines:
        try:
            items.append(_import_item(line, scope))
            numbers.append(number)
        except ValidationError as exc:
            if strict:
                raise ValidationError(f"line {number}: {exc}") from exc
            refused.append(ItemResult.refusal(number, exc))
    try:
        report = memory.write_many(items, strict=strict)
    except MemvaultError as exc:
        if exc.item is None or not isinstance(exc.__cause__, MemvaultError):
            raise
        raise restated(exc.__cause__, f"line {numbers[exc.item]}") from exc
    return list(report.placed(numbers, refused).items)


def _import_line(result: ItemResult) -> dict[str, Any]:
    """One line of the JSON report: its number, outcome and id (no content)."""
    line = {"line": result.index, **result.to_dict()}
    line.pop("index")
    entry = line.pop("entry", None)
    if entry is not None and result.outcome is Outcome.STORED:
        line["id"] = entry["id"]
    return line


def _import_item(line: bytes, scope: Scope | None) -> NewEntry:
    """One JSON line as an entry to write: an object with the fields of a REST batch item,
    checked as the server checks them (an unknown field is named, each type and time too)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:  # also: not UTF-8, too many digits
        raise ValidationError(f"not a JSON line: {exc}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"not a JSON object but a JSON {type(data).__name__}")
    if data.get("scope") is None:  # null is "not given", as over REST
        if scope is None:
            raise ValidationError("no scope (give one per line or --scope)")
        data["scope"] = str(scope)
    return NewEntry(**fields(data, api.ENTRY, api.ENTRY_REQUIRED))


@cli.command()
@click.option(
    "--batch",
    type=click.IntRange(1, 10_000),
    default=256,
    show_default=True,
    help="Chunks embedded per transaction.",
)
@click.pass_context
def reembed(ctx: click.Context, batch: int) -> None:
    """Re-embed every entry of the store with the current embedding model.

    Needed after changing the model (memvault refuses to mix vectors of two models).
    Safe to interrupt and run again.
    """
    memory = open_memory(ctx, check_embedding=False)
    with progress("re-embedded chunks") as report:
        done = memory.reembed(batch_size=batch, progress=report)
    emit(
        ctx,
        {"reembedded_chunks": done, "model": memory.embedder.name},
        f"re-embedded {done} chunks with {memory.embedder.name}",
    )


@cli.group()
def bench() -> None:
    """Reproducible benchmarks."""


@bench.command("locomo")
@click.option(
    "--data",
    type=click.Path(exists=True, dir_okay=False),
    required=True,
    help="A LoCoMo-format JSON file.",
)
@click.option(
    "--k", "ks", default="1,5,10,25", show_default=True, help="Cut-offs, comma-separated."
)
@click.option(
    "--out", type=click.Path(dir_okay=False), help="Also write the results, as JSON, here."
)
@click.pass_context
def bench_locomo(ctx: click.Context, data: str, ks: str, out: str | None) -> None:
    """Retrieval quality on LoCoMo: turn_recall@k and session_any@k against baselines
    (--json prints the results as JSON instead of the table)."""
    from pathlib import Path

    from ..bench import locomo

    try:
        cutoffs = tuple(sorted({int(k) for k in ks.split(",")}))
    except ValueError:
        raise click.BadParameter("--k takes whole numbers separated by commas") from None
    if not cutoffs or min(cutoffs) < 1:
        raise click.BadParameter("--k values must be at least 1")
    result = locomo.run(Path(data), cutoffs, progress=lambda m: click.echo(m, err=True))
    if out:
        Path(out).write_text(render.as_json(result) + "\n", encoding="utf-8")
    emit(ctx, result, locomo.table(result, cutoffs))


def main() -> None:
    cli(prog_name="memvault")


__all__ = ["cli", "main"]
