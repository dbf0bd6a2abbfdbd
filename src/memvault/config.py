"""Typed settings. Each field is documented; values come from arguments or ``MEMVAULT_*``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from .errors import ConfigError

ENV_PREFIX = "MEMVAULT_"


def default_home() -> Path:
    """The data directory: ``$MEMVAULT_HOME``, else the platform's user data dir."""
    env = os.environ.get(f"{ENV_PREFIX}HOME")
    return Path(env).expanduser() if env else Path(platformdirs.user_data_dir("memvault"))


@dataclass(frozen=True, slots=True)
class Settings:
    """memvault settings. Build with :meth:`from_env` or :meth:`from_mapping`."""

    store: str = field(default="", metadata={"doc": "store URL; empty means <home>/memvault.db"})
    tenant: str = field(default="default", metadata={"doc": "tenant of the embedded library"})
    max_content_chars: int = field(
        default=100_000, metadata={"doc": "longest content accepted, in characters"}
    )
    max_tags: int = field(default=64, metadata={"doc": "most tags on one entry"})
    max_tag_chars: int = field(default=128, metadata={"doc": "longest tag, in characters"})
    max_metadata_bytes: int = field(
        default=65_536, metadata={"doc": "largest metadata object, as UTF-8 JSON bytes"}
    )
    max_limit: int = field(default=10_000, metadata={"doc": "largest page or retrieve limit"})
    sqlite_busy_timeout_ms: int = field(
        default=30_000, metadata={"doc": "how long SQLite waits for a lock before failing"}
    )
    sqlite_synchronous: str = field(
        default="FULL", metadata={"doc": "SQLite synchronous mode: FULL (durable) or NORMAL"}
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int" and (not isinstance(value, int) or value <= 0):
                raise ConfigError(f"setting {f.name} must be a positive integer, got {value!r}")
        if self.sqlite_synchronous not in {"FULL", "NORMAL", "EXTRA"}:
            raise ConfigError("setting sqlite_synchronous must be FULL, NORMAL or EXTRA")
        if not self.tenant.strip():
            raise ConfigError("setting tenant must be a non-empty string")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Settings:
        """Build from a mapping; unknown keys are rejected."""
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(
                f"unknown settings: {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**{k: _convert(known[k].type, k, v) for k, v in values.items()})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every known ``MEMVAULT_<FIELD>`` variable (``MEMVAULT_HOME`` is read by paths)."""
        env = os.environ if environ is None else environ
        values = {
            f.name: env[ENV_PREFIX + f.name.upper()]
            for f in fields(cls)
            if ENV_PREFIX + f.name.upper() in env
        }
        return cls.from_mapping(values)

    def with_overrides(self, **values: Any) -> Settings:
        """A copy with some fields changed (validated like the rest)."""
        checked = Settings.from_mapping(values)
        return replace(self, **{k: getattr(checked, k) for k in values})

    def store_url(self) -> str:
        return self.store or f"sqlite:///{default_home() / 'memvault.db'}"


def _convert(type_name: object, key: str, value: Any) -> Any:
    if type_name == "int" and isinstance(value, str):
        try:
            return int(value.replace("_", ""))
        except ValueError:
            raise ConfigError(f"setting {key} must be an integer, got {value!r}") from None
    return value
