"""Commands of trust: erasure with a receipt."""

from __future__ import annotations

import click

from ..trust.erasure import ErasureReceipt
from .app import cli
from .common import emit, json_option, open_memory


def _receipt_text(receipt: ErasureReceipt) -> str:
    """A receipt, one line a kind: what went, never what it said."""
    kinds = [f"  {kind}: {count}" for kind, count in receipt.counts.items()]
    residue = {None: "not scanned (this store cannot be)", 0: "0: none left"}.get(
        receipt.residue, f"{receipt.residue} STILL FOUND"
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


@cli.command()
@click.option("--user", help="Erase this user: their scope, sessions and all made from them.")
@click.option("--scope", help="Erase this scope and all made from it.")
@click.option("--tenant", "whole", help="Erase this whole tenant.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_context
def erase(
    ctx: click.Context,
    user: str | None,
    scope: str | None,
    whole: str | None,
    yes: bool,
    as_json: bool,
) -> None:
    """Remove every trace of a user, a scope or a tenant, and print the receipt (counts per
    kind, a hash of the erased ids, and a scan of the store for what should be gone)."""
    what = next(
        (f"{k} {v}" for k, v in (("user", user), ("scope", scope), ("tenant", whole)) if v), ""
    )
    if what and not yes:
        click.confirm(f"Erase {what} for good?", abort=True)
    receipt = open_memory(ctx).erase(user=user, scope=scope, tenant=whole)
    emit(as_json, receipt.to_dict(), _receipt_text(receipt))
    if receipt.residue:
        ctx.exit(1)
