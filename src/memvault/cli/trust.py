"""Commands of trust: erasure with a receipt, retention, hygiene, backup and restore."""

from __future__ import annotations

from datetime import datetime

import click

from ..errors import ErasureIncompleteError, ValidationError
from ..trust.audit_verify import AuditVerification
from ..trust.bundles import BundleReport
from ..trust.erasure import ErasureReceipt, FinishReport
from ..trust.hygiene import TidyReport
from ..trust.hygiene_rules import CLASSES, HygieneReport, ScopeHygiene
from ..types import CHANGES, Scope
from . import render
from .app import cli
from .common import (
    EXIT_NOT_INTACT,
    confirm,
    datetime_option,
    emit,
    open_memory,
    scope_option,
    yes_option,
)


def _receipt_text(receipt: ErasureReceipt) -> str:
    """A receipt, one line a kind: what went, never what it said."""
    kinds = [f"  {kind}: {count}" for kind, count in receipt.counts.items()]
    residue = {None: "not scanned (this store cannot be)", 0: "0: none left"}.get(
        receipt.residue, f"{receipt.residue} STILL FOUND: pending, memvault erase --finish"
    )
    return "\n".join(
        [
            f"erased {receipt.subject} in tenant {receipt.tenant} at {receipt.erased_at}",
            *kinds,
            f"total: {receipt.total}",
            f"ids sha256: {receipt.ids_sha256}",
            f"scan of the store: {residue}",
        ]
    )


def _finish_text(report: FinishReport) -> str:
    if not report.finished:
        return "no pending erasure"
    return "\n".join(f"finished the erasure of ids sha256 {ids}" for ids in report.finished)


@cli.command()
@click.option("--user", help="Erase this user: their scope, sessions and all made from them.")
@click.option("--scope", help="Erase this scope and all made from it.")
@click.option(
    "--whole-tenant", is_flag=True, help="Erase the whole tenant acted in (--tenant NAME)."
)
@click.option(
    "--finish",
    is_flag=True,
    help="Purge the store again for pending erasures (exit 5 while one still is).",
)
@yes_option
@click.pass_context
def erase(
    ctx: click.Context,
    user: str | None,
    scope: str | None,
    whole_tenant: bool,
    finish: bool,
    yes: bool,
) -> None:
    """Remove every trace of a user, a scope or a tenant, and print the receipt (counts per
    kind, a hash of the erased ids, and a scan of the store for what should be gone). Exit 5
    if the scan still finds some (another process held it): the erasure is pending, and
    --finish purges the store again for it later."""
    if finish:
        if user or scope or whole_tenant:
            raise ValidationError("--finish takes no --user, --scope or --whole-tenant")
        report = open_memory(ctx).finish_erasures()
        emit(ctx, report.to_dict(), _finish_text(report))
        return
    if sum(map(bool, (user, scope, whole_tenant))) != 1:
        raise ValidationError("erase what? give exactly one of --user, --scope or --whole-tenant")
    memory = open_memory(ctx)
    whole = memory.tenant if whole_tenant else None
    what = next(f"{k} {v}" for k, v in (("user", user), ("scope", scope), ("tenant", whole)) if v)
    confirm(f"Erase {what} for good?", yes)
    try:
        receipt = memory.erase(user=user, scope=scope, tenant=whole)
    except ErasureIncompleteError as exc:
        if exc.receipt is not None:  # what was erased, then the error (exit 5)
            pending = ErasureReceipt.from_dict(exc.receipt)
            emit(ctx, exc.receipt, _receipt_text(pending))
        raise
    emit(ctx, receipt.to_dict(), _receipt_text(receipt))


@cli.group(invoke_without_command=True)
@click.option("--entry", "entry_id", help="Only the events of this entry.")
@scope_option("--scope", help="Only the events of entries of this scope.")
@click.option("--by", help="Only what this actor (a key's name, an agent) did.")
@click.option("--operation", help="Only this operation (write, update, pin, erase…).")
@click.option("--change", type=click.Choice(CHANGES), help="Only this kind of change.")
@datetime_option("--since", help="Only events at or after.")
@datetime_option("--until", help="Only events before.")
@click.option("--oldest", is_flag=True, help="Oldest first (default: newest first).")
@click.option("--limit", type=int, default=100, show_default=True, help="Most events shown.")
@click.option("--cursor", help="Go on from a page's next_cursor.")
@click.pass_context
def audit(
    ctx: click.Context,
    entry_id: str | None,
    scope: Scope | None,
    by: str | None,
    operation: str | None,
    change: str | None,
    since: datetime | None,
    until: datetime | None,
    oldest: bool,
    limit: int,
    cursor: str | None,
) -> None:
    """The audit log: who changed which entry, how and when (never what it says).
    `memvault audit verify` checks it against its hash chain."""
    if ctx.invoked_subcommand is not None:
        given = [p.opts[0] for p in ctx.command.params if p.expose_value and _said(ctx, p)]
        if given:
            raise ValidationError(f"audit {ctx.invoked_subcommand} takes no {given[0]}")
        return
    page = open_memory(ctx).audit(
        entry_id=entry_id,
        scope=scope,
        actor=by,
        operation=operation,
        change=change,
        since=since,
        until=until,
        order="oldest" if oldest else "newest",
        limit=limit,
        cursor=cursor,
    )
    more = [f"more: --cursor {page.next_cursor}"] if page.next_cursor else []
    text = "\n".join([*(render.event_line(e) for e in page.events), *more])
    emit(ctx, page.to_dict(), text or "no events")


def _said(ctx: click.Context, param: click.Parameter) -> bool:
    """Whether the command line gave ``param``."""
    source = ctx.get_parameter_source(param.name or "")
    return source is click.core.ParameterSource.COMMANDLINE


def _verification_text(found: AuditVerification) -> str:
    """What verification found, the chain's kind, and the head to anchor elsewhere."""
    if found.keyed:
        kind = "HMAC-SHA256, keyed (MEMVAULT_AUDIT_KEY)"
    else:
        kind = (
            "SHA-256, unkeyed: it shows edits made without recomputing the chain "
            "(MEMVAULT_AUDIT_KEY keys it)"
        )
    head = f"event {found.head_seq}, {found.head}" if found.head else "none (nothing chained)"
    return "\n".join(
        [
            found.summary(),
            *([f"read {found.events} events"] if not found.intact else []),
            f"chain: {kind}",
            f"head: {head}",
        ]
    )


@audit.command("verify")
@click.pass_context
def audit_verify(ctx: click.Context) -> None:
    """Check the tenant's audit log against its hash chain: "intact, N events" (and what
    erasures removed), or the first event that does not fit — edited, removed, reordered,
    forged, the newest removed — and exit 7. Prints the head's hash to keep elsewhere."""
    found = open_memory(ctx).verify_audit()
    emit(ctx, found.to_dict(), _verification_text(found))
    if not found.intact:
        ctx.exit(EXIT_NOT_INTACT)


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.pass_context
def backup(ctx: click.Context, path: str) -> None:
    """Write a consistent copy of the SQLite store to PATH (a new file), while writers go on;
    checked with SQLite's integrity check. For PostgreSQL use pg_dump (docs/reliability.md)."""
    memory = open_memory(ctx)
    size = memory.backend.backup(path)
    entries = memory.count(include_superseded=True, include_expired=True)
    data = {"path": path, "bytes": size}
    emit(
        ctx,
        data,
        f"backed up to {path} ({size:,} bytes; {entries} entries of tenant {memory.tenant})",
    )


@cli.command("restore-backup")
@click.argument("path", type=click.Path(dir_okay=False))
@yes_option
@click.pass_context
def restore_backup(ctx: click.Context, path: str, yes: bool) -> None:
    """Replace the SQLite store's content by the backup at PATH (checked first: a whole
    database, a memvault store of a known schema). For PostgreSQL use pg_restore. (`memvault
    restore ID` makes a superseded entry current again.)"""
    memory = open_memory(ctx)
    memory.backend.check_restore(path)  # a bad file is refused before anyone is asked
    confirm(f"Replace everything in the store by {path}?", yes)
    memory.backend.restore(path)
    emit(ctx, {"restored": path}, f"restored from {path}")


def _bundle_text(verb: str, report: BundleReport) -> str:
    kinds = [f"  {kind}: {count}" for kind, count in report.counts.items()]
    origin = f" (was {report.source_session_id})" if report.source_session_id else ""
    where = f" -> {report.path}" if report.path else ""
    return "\n".join(
        [
            f"{verb} session {report.session_id}{origin}{where}",
            *kinds,
            f"total: {report.total}, audit events: {report.events}",
            f"sha256: {report.sha256}",
        ]
    )


@cli.command("export-session")
@click.argument("session_id")
@click.argument("path", type=click.Path(dir_okay=False))
@click.pass_context
def export_session(ctx: click.Context, session_id: str, path: str) -> None:
    """Write SESSION_ID with all it holds (records, summaries, Session Memory, findings, the
    objects created in it) and its audit events to a new bundle file at PATH."""
    report = open_memory(ctx).export_session(session_id, path)
    emit(ctx, report.to_dict(), _bundle_text("exported", report))


@cli.command("import-session")
@click.argument("path", type=click.Path(dir_okay=False))
@click.pass_context
def import_session(ctx: click.Context, path: str) -> None:
    """Import the bundle at PATH as a new session (fresh ids); a damaged, tampered or foreign
    bundle is refused and nothing is imported."""
    report = open_memory(ctx).import_session(path)
    emit(ctx, report.to_dict(), _bundle_text("imported", report))


@cli.group()
def retention() -> None:
    """Apply the retention policy (MEMVAULT_RETENTION; docs/trust.md)."""


@retention.command("run")
@click.option("--dry-run", is_flag=True, help="Only list what would go.")
@click.pass_context
def retention_run(ctx: click.Context, dry_run: bool) -> None:
    """Remove what the tenant's retention policy says may go, and list it (rule, id, scope,
    category — never content); with --dry-run, only list it."""
    report = open_memory(ctx).apply_retention(dry_run=dry_run)
    lines = [
        f"{item.rule:14} {item.entry_id}  {item.scope}  {item.category or ''}"
        for item in report.items
    ]
    if not report.policy:
        lines = ["no retention policy for this tenant (MEMVAULT_RETENTION)"]
    verb = "would remove" if dry_run else "removed"
    lines.append(f"{verb} {len(report.items)}: {report.counts}")
    emit(ctx, report.to_dict(), "\n".join(lines))


_COLUMNS = ("entries", "merged", *CLASSES)
_HEADS = ("entries", "merged", "near-dup", "junk", "stale", "secrets", "supersd", "expired")


def _count(scope: ScopeHygiene, name: str) -> int:
    value = getattr(scope, name)
    return value if isinstance(value, int) else int(value.count)


def _hygiene_text(report: HygieneReport) -> str:
    """A table, a row per scope (and the total), then each scope's ids by class: never
    content."""
    if not report.scopes:
        return f"no entries in tenant {report.tenant}"
    width = max(5, *(len(s.scope) for s in report.scopes))
    rows = [f"{'scope':{width}}  " + "  ".join(f"{h:>8}" for h in _HEADS)]
    for scope in report.scopes:
        cells = "  ".join(f"{_count(scope, name):>8}" for name in _COLUMNS)
        rows.append(f"{scope.scope:{width}}  {cells}")
    if len(report.scopes) > 1:
        cells = "  ".join(f"{report.total(name):>8}" for name in _COLUMNS)
        rows.append(f"{'total':{width}}  {cells}")
    for scope in report.scopes:
        listed = [
            f"  {name}: {' '.join(found.ids)}{' …' if found.count > len(found.ids) else ''}"
            for name in CLASSES
            if (found := getattr(scope, name)).count
        ]
        listed += [f"  near-duplicate group: {' '.join(group)}" for group in scope.groups]
        listed.append(
            "  largest: " + ", ".join(f"{i} ({size:,} chars)" for i, size in scope.largest)
        )
        rows += ["", f"{scope.scope}:", *listed]
    rows.append("")
    rows.append(f"stale: neither used nor written in {report.stale_days} days")
    if not report.secrets_checked:
        rows.append("secrets: not looked for (MEMVAULT_REDACT names no rule)")
    return "\n".join(rows)


def _tidy_text(done: TidyReport) -> str:
    retention = done.retention
    lines = [f"fix: purged {done.expired} expired entries"]
    lines += [f"  {entry_id}" for entry_id in done.expired_ids]
    if retention is None or not retention.policy:
        lines.append("fix: no retention policy for this tenant (MEMVAULT_RETENTION)")
    else:
        lines.append(f"fix: retention removed {len(retention.items)}")
        lines += [f"  {item.rule:14} {item.entry_id}  {item.scope}" for item in retention.items]
    return "\n".join(lines)


@cli.command()
@scope_option("--scope", help="Only this scope (default: every scope of the tenant).")
@click.option(
    "--stale-days",
    type=int,
    default=90,
    show_default=True,
    help="Stale: neither used nor written in this many days.",
)
@click.option(
    "--fix",
    is_flag=True,
    help="First do the safe fix (purge expired entries, apply the retention policy) and say "
    "what it removed; the report follows.",
)
@click.pass_context
def hygiene(ctx: click.Context, scope: Scope | None, stale_days: int, fix: bool) -> None:
    """What the memory holds that it would be better without, per scope: entries, restatements
    merged, near-duplicates (the same fact in other words), junk, stale, secrets and PII the
    redaction rules find, superseded, expired; the largest entries. Ids and counts, never
    content. Changes nothing unless --fix."""
    memory = open_memory(ctx)
    done = memory.tidy() if fix else None
    report = memory.hygiene(scope, stale_days=stale_days)
    if done is None:
        emit(ctx, report.to_dict(), _hygiene_text(report))
    else:
        data = {"fix": done.to_dict(), "report": report.to_dict()}
        emit(ctx, data, f"{_tidy_text(done)}\n\n{_hygiene_text(report)}")
