"""Versioned, append-only schema migrations shipped as ``<dialect>/NNNN_name.sql`` files.

Each applied migration is recorded with a checksum; opening a store whose recorded migrations
differ from the shipped ones, or that is newer than this memvault, fails with a SchemaError.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

from ...errors import SchemaError
from ...patterns import lazy

_NAME = lazy(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load(dialect: str) -> tuple[Migration, ...]:
    """The shipped migrations of one dialect, in version order (versions must be 1, 2, 3…)."""
    folder = resources.files(__package__).joinpath(dialect)
    found = []
    for item in folder.iterdir():
        match = _NAME.match(item.name)
        if match:
            found.append(Migration(int(match[1]), match[2], item.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise SchemaError(f"{dialect} migrations are not numbered 1..N without gaps")
    return tuple(found)


def pending(shipped: tuple[Migration, ...], applied: dict[int, str]) -> tuple[Migration, ...]:
    """Migrations still to apply, after checking the applied ones (version → checksum)."""
    newest = len(shipped)
    if applied and max(applied) > newest:
        raise SchemaError(
            f"the store's schema is at version {max(applied)}, newer than this memvault "
            f"supports ({newest}); upgrade memvault"
        )
    for migration in shipped:
        recorded = applied.get(migration.version)
        if recorded is not None and recorded != migration.checksum:
            raise SchemaError(
                f"migration {migration.version} ({migration.name}) differs from the one applied "
                "to this store; shipped migrations must never be edited"
            )
    return tuple(m for m in shipped if m.version not in applied)
