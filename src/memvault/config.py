"""Typed settings. Each field is documented; values come from arguments or ``MEMVAULT_*``."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from .breaker import Policy as BreakerPolicy
from .environment import HOME, PREFIX, check_environment
from .errors import ConfigError
from .validation import encodable

EXTRACTION_MODES = ("auto", "llm", "heuristic", "off")
STRUCTURED_MODES = ("auto", "on", "off")
TOOL_RESULT_MODES = ("auto", "native", "folded")
LOG_FORMATS = ("text", "json")


RETENTION_RULES = ("records", "superseded", "expired", "idle_sessions")
"""What retention removes: records older than DAYS; entries superseded more than DAYS ago;
entries expired more than DAYS ago; sessions idle for DAYS, with everything in them."""
Policy = dict[str, int]


def retention_policies(text: str) -> dict[str | None, Policy]:
    """The retention setting read: the policy of every tenant (key None) and of named tenants,
    each rule a number of days (``off``: not applied). A tenant's rules override the general
    ones; ConfigError for anything else."""
    policies: dict[str | None, Policy] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        tenant: str | None = None
        head, colon, rest = part.partition(":")
        listed = part
        if colon and "=" not in head:
            tenant, listed = head.strip(), rest
            if not tenant:
                raise ConfigError(f"setting retention: no tenant before ':' in {part[:40]!r}")
        rules = policies.setdefault(tenant, {})
        for rule in (r.strip() for r in listed.split(",") if r.strip()):
            name, equals, days = (x.strip() for x in rule.partition("="))
            if name not in RETENTION_RULES or not equals:
                raise ConfigError(
                    f"setting retention: {rule[:40]!r} is not RULE=DAYS with RULE one of "
                    f"{', '.join(RETENTION_RULES)}"
                )
            if days != "off" and not (days.isdigit() and len(days) <= 6):
                raise ConfigError(f"setting retention: {name} needs a number of days or off")
            rules[name] = -1 if days == "off" else int(days)
    return policies


def retention_policy(text: str, tenant: str) -> Policy:
    """The rules that apply to ``tenant`` (days; rules turned off are left out)."""
    policies = retention_policies(text)
    merged = {**policies.get(None, {}), **policies.get(tenant, {})}
    return {rule: days for rule, days in merged.items() if days >= 0}


def _check_audit_key(key: str) -> None:
    """An audit key is none, or long enough not to be guessed."""
    if key and len(key) < 16:
        raise ConfigError("setting audit_key must be empty or 16 or more characters")


def _check_seconds(name: str, seconds: object) -> None:
    """A duration setting is a finite, positive number of seconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ConfigError(f"setting {name} must be a number of seconds, got {seconds!r}")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(f"setting {name} must be a positive number of seconds")


DECAY_EVERY_CATEGORY = "*"
NEVER_DECAY = ("preference", "decision", "identity")
"""Categories that never decay unless the decay setting names them."""


def decay_policy(text: str) -> dict[str, float]:
    """The decay setting read: ``CATEGORY:DAYS,…`` → each category's half-life in days (0:
    never decays; ``*``: every category not named, uncategorised entries too). Preferences,
    decisions and identity never decay unless named. ConfigError for anything else."""
    policy: dict[str, float] = dict.fromkeys(NEVER_DECAY, 0.0)
    for rule in (r.strip() for r in text.split(",") if r.strip()):
        category, colon, days = (x.strip() for x in rule.rpartition(":"))
        try:
            half_life = float(days)
        except ValueError:
            half_life = -1.0
        if not colon or not category or not (math.isfinite(half_life) and half_life >= 0):
            raise ConfigError(
                f"setting decay: {rule[:40]!r} is not CATEGORY:DAYS (a half-life in days, "
                "0: never decays; CATEGORY * for every other category)"
            )
        policy[category] = half_life
    return policy


def default_home() -> Path:
    """The data directory: ``$MEMVAULT_HOME``, else the platform's user data dir."""
    env = os.environ.get(HOME)
    return Path(env).expanduser() if env else Path(platformdirs.user_data_dir("memvault"))


CHOICES = {
    "log_format": LOG_FORMATS,
    "extraction": EXTRACTION_MODES,
    "llm_structured": STRUCTURED_MODES,
    "chat_tool_results": TOOL_RESULT_MODES,
}
"""The settings that take one of a few words."""


@dataclass(frozen=True, slots=True)
class Settings:
    """memvault settings. Build with :meth:`from_env` or :meth:`from_mapping`."""

    store: str = field(default="", metadata={"doc": "store URL; empty means <home>/memvault.db"})
    tenant: str = field(default="default", metadata={"doc": "tenant of the embedded library"})
    actor: str = field(
        default="local",
        metadata={"doc": "who the audit log says made local changes (a person, an agent)"},
    )
    audit_key: str = field(
        default="",
        repr=False,
        metadata={
            "doc": "secret that keys the audit log's hash chain (HMAC-SHA256; empty: SHA-256, "
            "which anyone holding the store can recompute); every process of a store sets "
            "the same"
        },
    )
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
    breaker_failures: int = field(
        default=5,
        metadata={
            "doc": "calls in a row that fail because a PostgreSQL store or a memvault server "
            "cannot be reached before calls to it fail fast (its circuit breaker opens)"
        },
    )
    breaker_reset_s: float = field(
        default=5.0,
        metadata={
            "doc": "seconds calls fail fast before one call tries the store (or server) again; "
            "doubled after each failed try, up to 60 s"
        },
    )
    sqlite_synchronous: str = field(
        default="FULL", metadata={"doc": "SQLite synchronous mode: FULL (durable) or NORMAL"}
    )
    chunk_tokens: int = field(default=2000, metadata={"doc": "tokens per chunk of long content"})
    chunk_overlap: int = field(
        default=200, metadata={"doc": "tokens shared by neighbouring chunks", "min": 0}
    )
    chunk_min_tokens: int = field(
        default=100, metadata={"doc": "a shorter last chunk joins the one before", "min": 0}
    )
    near_duplicate_threshold: float = field(
        default=0.85,
        metadata={"doc": "cosine at which a write returns the existing entry (0 turns it off)"},
    )
    min_relevance: float = field(
        default=0.16,
        metadata={
            "doc": "recall (context and MCP) drops hits whose calibrated relevance is below "
            "this (0 keeps every hit)"
        },
    )
    decay: str = field(
        default="context:14,fact:90",
        metadata={
            "doc": "half-life in days of an unused entry's score with search(decay=True), per "
            "category: CATEGORY:DAYS,… (0: never; *: every other category; preferences, "
            "decisions and identity never decay unless named)"
        },
    )
    decay_by_default: bool = field(
        default=False, metadata={"doc": "search with decay=True unless a search says otherwise"}
    )
    min_content_chars: int = field(
        default=0, metadata={"doc": "saliency: refuse shorter content (0 turns it off)", "min": 0}
    )
    coarse_min_chunks: int = field(
        default=20_000,
        metadata={
            "doc": "a scope index with this many chunks finds its nearest vectors by a coarse "
            "pass rescored exactly (0: always one exact product)",
            "min": 0,
        },
    )
    ann_candidates: int = field(
        default=2_000,
        metadata={"doc": "most candidates a search takes from each signal (10 per hit asked)"},
    )
    redis_url: str = field(
        default="", metadata={"doc": "Redis URL of a shared embedding cache (empty: none)"}
    )
    skip_error_responses: bool = field(
        default=True, metadata={"doc": "refuse content that is an error response or traceback"}
    )
    max_session_memory: int = field(
        default=50, metadata={"doc": "Session Memory entries kept per session (oldest go first)"}
    )
    max_findings: int = field(
        default=100, metadata={"doc": "Findings kept per session (oldest go first)"}
    )
    max_global_memory: int = field(
        default=100, metadata={"doc": "Global Memory entries kept per user (oldest go first)"}
    )
    agent_scope: str = field(
        default="workspace:agents",
        metadata={
            "doc": "scope of agent memory (executions, strategy statistics, decompositions, "
            "failure patterns) unless a call names another"
        },
    )
    agent_execution_days: int = field(
        default=30,
        metadata={"doc": "days an execution is kept (0: forever)", "min": 0},
    )
    agent_pattern_days: int = field(
        default=90,
        metadata={
            "doc": "days a decomposition or learned failure pattern is kept after its last use "
            "(0: forever)",
            "min": 0,
        },
    )
    agent_aggregate_days: int = field(
        default=365,
        metadata={
            "doc": "days a strategy's statistics are kept after its last run (0: forever)",
            "min": 0,
        },
    )
    work_style: bool = field(
        default=True,
        metadata={
            "doc": "infer each user's expertise and speed/accuracy leaning from their messages "
            "and runs (user_preferences; reset after 24 h of inactivity unless opted in)"
        },
    )
    api_keys: str = field(
        default="",
        repr=False,
        metadata={"doc": "REST server keys as tenant:key pairs, comma-separated (empty: none)"},
    )
    max_request_bytes: int = field(
        default=16 * 1024 * 1024, metadata={"doc": "largest REST request body, in bytes"}
    )
    max_batch_items: int = field(
        default=1_000, metadata={"doc": "most items in one REST batch request"}
    )
    allowed_hosts: str = field(
        default="",
        metadata={
            "doc": "REST server: Host names accepted besides loopback ones, comma-separated "
            "('*': any)"
        },
    )
    allowed_origins: str = field(
        default="",
        metadata={
            "doc": "REST server: web origins allowed to call it (and given CORS headers), "
            "comma-separated; empty: no cross-site request is served"
        },
    )
    log_format: str = field(
        default="text",
        metadata={"doc": "REST server logs: text (readable lines) or json (a JSON object a line)"},
    )
    embed_threads: int = field(
        default=0,
        metadata={
            "doc": "threads of the local embedding model (0: chosen automatically)",
            "min": 0,
        },
    )
    llm_base_url: str = field(
        default="",
        metadata={
            "doc": "OpenAI-compatible chat server, e.g. http://localhost:11434/v1 (empty: no "
            "LLM; extraction uses the heuristic extractor)"
        },
    )
    llm_model: str = field(default="", metadata={"doc": "chat model name the LLM server knows"})
    llm_api_key: str = field(
        default="", repr=False, metadata={"doc": "bearer key of the LLM server (empty: none)"}
    )
    llm_timeout_s: float = field(
        default=60.0, metadata={"doc": "seconds one LLM request may take before it is retried"}
    )
    llm_max_retries: int = field(
        default=3,
        metadata={"doc": "retries of an LLM request after a 429, a 5xx or a timeout", "min": 0},
    )
    llm_max_request_bytes: int = field(
        default=512 * 1024, metadata={"doc": "largest LLM request body sent, in bytes"}
    )
    llm_max_tokens: int = field(default=1024, metadata={"doc": "most tokens an LLM reply may have"})
    llm_structured: str = field(
        default="auto",
        metadata={
            "doc": "structured output of LLM extraction (a JSON schema in response_format): "
            "auto (asked for; a server that refuses it gets the line format from then on), on "
            "(a refusal fails the extraction) or off (the line format only)"
        },
    )
    chat_budget: int = field(
        default=8192,
        metadata={
            "doc": "tokens of each prompt memvault chat sends: system prompt, tools and messages",
            "min": 2048,
        },
    )
    chat_tool_results: str = field(
        default="auto",
        metadata={
            "doc": "how memvault chat sends tool results: native (OpenAI's tool role), folded "
            "(into user turns, for servers that drop that role) or auto (native until the "
            "server refuses it)"
        },
    )
    extraction: str = field(
        default="auto",
        metadata={
            "doc": "how add_turn learns: auto (the LLM if one is configured, else heuristic), "
            "llm, heuristic or off"
        },
    )
    redact: str = field(
        default="email,phone,secret,card,iban,ip",
        metadata={
            "doc": "PII redaction rules applied before extraction and storage of learned "
            "facts, comma-separated (empty: none)"
        },
    )
    redact_records: bool = field(
        default=False, metadata={"doc": "also redact the raw Records log of add_turn"}
    )
    redact_phone_regions: str = field(
        default="US,GB,DE,FR,ES,IT,NL,CA,AU,IN",
        metadata={"doc": "regions whose national phone formats are recognised, comma-separated"},
    )
    retention: str = field(
        default="",
        metadata={
            "doc": "retention policy: RULE=DAYS,… for every tenant, then '; TENANT: RULE=DAYS,…' "
            "per tenant (RULE: records, superseded, expired, idle_sessions; DAYS or off)"
        },
    )
    retention_interval_s: int = field(
        default=3600,
        metadata={
            "doc": "how often memvault serve applies retention, in seconds (0: never)",
            "min": 0,
        },
    )

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            least = f.metadata.get("min", 1)
            if f.type == "int" and (
                isinstance(value, bool) or not isinstance(value, int) or value < least
            ):
                raise ConfigError(f"setting {f.name} must be an integer >= {least}, got {value!r}")
        for name in ("llm_timeout_s", "breaker_reset_s"):
            _check_seconds(name, getattr(self, name))
        for name, choices in CHOICES.items():
            if getattr(self, name) not in choices:
                raise ConfigError(f"setting {name} must be one of {', '.join(choices)}")
        for name in ("near_duplicate_threshold", "min_relevance"):
            if not 0 <= getattr(self, name) <= 1:
                raise ConfigError(f"setting {name} must be between 0 and 1")
        if not self.chunk_overlap < self.chunk_tokens:
            raise ConfigError("setting chunk_overlap must be smaller than chunk_tokens")
        if self.sqlite_synchronous not in {"FULL", "NORMAL", "EXTRA"}:
            raise ConfigError("setting sqlite_synchronous must be FULL, NORMAL or EXTRA")
        if not self.tenant.strip():
            raise ConfigError("setting tenant must be a non-empty string")
        retention_policies(self.retention)  # a bad policy fails here
        _check_audit_key(self.audit_key)
        decay_policy(self.decay)
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, str) and not encodable(value):
                raise ConfigError(f"setting {f.name} is not valid Unicode text")

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
        """Read every ``MEMVAULT_<FIELD>`` variable; any other ``MEMVAULT_*`` variable that is
        not one of :data:`~memvault.environment.OTHER_VARIABLES` is a ConfigError naming it."""
        env = os.environ if environ is None else environ
        variables = {PREFIX + f.name.upper(): f.name for f in fields(cls)}
        check_environment(env, variables)
        return cls.from_mapping({name: env[v] for v, name in variables.items() if v in env})

    def with_overrides(self, **values: Any) -> Settings:
        """A copy with some fields changed (validated like the rest)."""
        checked = Settings.from_mapping(values)
        return replace(self, **{k: getattr(checked, k) for k in values})

    def breaker(self) -> BreakerPolicy:
        """The circuit breaker's policy these settings give (``breaker_*``)."""
        return BreakerPolicy(self.breaker_failures, float(self.breaker_reset_s))

    def store_url(self) -> str:
        return self.store or f"sqlite:///{default_home() / 'memvault.db'}"


BREAKER_SETTINGS = ("breaker_failures", "breaker_reset_s")
"""What a memory on a memvault server reads of the settings: the rest are the server's."""


def breaker_from_env(environ: Mapping[str, str] | None = None) -> BreakerPolicy:
    """The breaker's policy from ``MEMVAULT_BREAKER_*`` alone (a remote client's: it reads no
    other setting, so other ``MEMVAULT_*`` variables are not checked here)."""
    env = os.environ if environ is None else environ
    variables = {PREFIX + name.upper(): name for name in BREAKER_SETTINGS}
    given = {name: env[variable] for variable, name in variables.items() if variable in env}
    return Settings.from_mapping(given).breaker()


def _convert(type_name: object, key: str, value: Any) -> Any:
    if not isinstance(value, str) or type_name == "str":
        return value
    try:
        if type_name == "int":
            return int(value.replace("_", ""))
        if type_name == "float":
            return float(value)
    except ValueError:
        kind = "an integer" if type_name == "int" else "a number"
        raise ConfigError(f"setting {key} must be {kind}, got {value!r}") from None
    if type_name == "bool":
        if value.lower() in {"1", "true", "yes", "on"}:
            return True
        if value.lower() in {"0", "false", "no", "off"}:
            return False
        raise ConfigError(f"setting {key} must be true or false, got {value!r}")
    return value
