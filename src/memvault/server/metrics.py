"""``/metrics``: one app's Prometheus metrics, in a registry of its own (``docs/operations.md``).

Requests are timed as they end (a histogram per method, route template and status class);
everything else is read when scraped: the store's counters and latency histograms
(``Memory.stats()``, ``core.Stats.timings()``), the embedding caches' hits and misses, the LLM's
usage, and the store's size, counted at most every ``StoreSize.ttl`` seconds. No label holds a
tenant, an id, a scope or a raw path.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Histogram, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .. import __version__
from ..breaker import TRANSITIONS
from ..core import LATENCY_BUCKETS, Timing
from ..embeddings import CachedEmbedder, Embedder
from ..embeddings.redis_cache import RedisCachedEmbedder
from ..llm import ChatModel
from ..memory import AsyncMemory
from .agent_metrics import agent_counters
from .auth import KeyRing

log = logging.getLogger("memvault.server")

STORE_SIZE_TTL_S = 30.0
COUNT_TIMEOUT_S = 5.0

COUNTERS = (
    ("memvault_writes", "Entries written (API, facilities, records, learned facts).", "written"),
    ("memvault_entries_superseded", "Entries a newer fact superseded.", "superseded"),
    ("memvault_entries_evicted", "Entries a FIFO cap deleted.", "evicted"),
    ("memvault_extractions", "Background extractions finished.", "extractions"),
    ("memvault_extraction_failures", "Background extractions that failed.", "extraction_failures"),
    (
        "memvault_extraction_facts_dropped",
        "Facts an extraction did not store.",
        "extraction_dropped",
    ),
    (
        "memvault_extraction_replies_refused",
        "LLM replies refused by the leak check.",
        "extraction_refused_leak",
    ),
    (
        "memvault_extraction_parse_failures",
        "LLM replies extraction could not parse (nothing usable in them).",
        "extraction_parse_failures",
    ),
    ("memvault_executions", "Agent and tool executions recorded.", "executions"),
    (
        "memvault_executions_dropped",
        "Background execution records dropped after their retries.",
        "executions_dropped",
    ),
    (
        "memvault_extractions_unavailable",
        "Background extractions that failed because the store could not be reached.",
        "extraction_unavailable",
    ),
    ("memvault_uses_dropped", "Uses of entries that could not be stored.", "uses_dropped"),
)
"""(metric name, help, key of ``Memory.stats()``) of each plain counter."""
SKIPPED = (
    ("near_duplicate", "near_duplicate"),
    ("finding_duplicate", "finding_duplicate"),
    ("error_response", "filtered_error_response"),
    ("too_short", "filtered_too_short"),
    ("refused", "refused"),
)
"""(``reason`` label, key of ``Memory.stats()``) of each way a write stores nothing."""
TIMINGS = (
    ("memvault_search_duration_seconds", "Searches, from the query to the hits.", "search"),
    ("memvault_embedding_duration_seconds", "Embedding steps (cache hits too).", "embedding"),
)
"""(metric name, help, name in ``Stats.timings()``) of each latency histogram."""


class StoreSize:
    """How many entries the served tenants store (any category; expired ones until purged,
    superseded ones included), counted at most every ``ttl`` seconds: one count per tenant,
    which SQLite and PostgreSQL answer from the (tenant, created_at) index."""

    def __init__(self, tenants: Iterable[str], ttl: float = STORE_SIZE_TTL_S) -> None:
        self.tenants, self.ttl = tuple(sorted(set(tenants))), ttl
        self.value: int | None = None
        self._counted_at: float | None = None

    async def _counted(self, memory: AsyncMemory) -> int:
        """Every entry of the served tenants, expired and superseded ones too."""
        total = 0
        for tenant in self.tenants:
            view = memory.with_tenant(tenant)
            total += await view.count(include_superseded=True, include_expired=True)
        return total

    async def refresh(self, memory: AsyncMemory) -> None:
        """Count again if the last count is older than ``ttl``; None if the store fails."""
        now = time.monotonic()
        if self._counted_at is not None and now - self._counted_at < self.ttl:
            return
        self._counted_at = now
        try:
            self.value = await asyncio.wait_for(self._counted(memory), COUNT_TIMEOUT_S)
        except Exception as exc:
            log.warning("metrics: counting the store's entries failed (%s)", type(exc).__name__)
            self.value = None


class MemoryCollector(Collector):
    """The store's metrics, read from ``memory`` at each scrape (its counters, awaited, just
    before: :meth:`AppMetrics.exposition`)."""

    def __init__(self, memory: AsyncMemory, size: StoreSize) -> None:
        self.memory, self.size = memory, size
        self.counts: Mapping[str, int] = {}

    def collect(self) -> Iterator[Metric]:
        counts = self.counts
        yield InfoMetricFamily("memvault_build", "memvault's version.", {"version": __version__})
        yield from counters(counts)
        yield from agent_counters(counts)
        yield from timings(self.memory.planners.store.stats.timings())
        yield from cache_counters(self.memory.embedder)
        yield GaugeMetricFamily(
            "memvault_extractions_running",
            "Sessions with a background extraction running or queued.",
            counts.get("extraction_pending", 0),
        )
        if self.size.value is not None:
            yield GaugeMetricFamily(
                "memvault_store_entries",
                "Entries the served tenants store (expired until purged, superseded too).",
                self.size.value,
            )
        yield from llm_counters(self.memory.llm)
        yield from breaker_metrics(self._breakers(), counts)

    def _breakers(self) -> tuple[str, ...]:
        """The names of the circuit breakers this app's store calls pass (none for SQLite)."""
        breaker = self.memory.backend.breaker
        return () if breaker is None else (breaker.name,)


def breaker_metrics(names: Iterable[str], counts: Mapping[str, int]) -> Iterator[Metric]:
    """Each circuit breaker's state (0 closed, 1 half-open, 2 open), its transitions by
    ``from`` and ``to``, and the calls it failed fast, by ``breaker`` (``Breaker.counts``)."""
    state = GaugeMetricFamily(
        "memvault_breaker_state",
        "Circuit breaker state: 0 closed, 1 half-open, 2 open.",
        labels=["breaker"],
    )
    moves = CounterMetricFamily(
        "memvault_breaker_transitions",
        "Circuit breaker transitions, by from and to state.",
        labels=["breaker", "from", "to"],
    )
    rejected = CounterMetricFamily(
        "memvault_breaker_rejected",
        "Calls failed fast by an open circuit breaker, without reaching the store.",
        labels=["breaker"],
    )
    for name in names:
        prefix = f"breaker_{name}_"
        state.add_metric([name], counts.get(prefix + "state", 0))
        rejected.add_metric([name], counts.get(prefix + "rejected", 0))
        for old, new in TRANSITIONS:
            key = f"{prefix}{old.label}_to_{new.label}"
            moves.add_metric([name, old.label, new.label], counts.get(key, 0))
    yield from (state, moves, rejected)


def counters(counts: Mapping[str, int]) -> Iterator[Metric]:
    """The plain counters, writes skipped by reason, and redactions by rule."""
    for name, documentation, key in COUNTERS:
        yield CounterMetricFamily(name, documentation, counts.get(key, 0))
    skipped = CounterMetricFamily(
        "memvault_writes_skipped", "Writes that stored nothing, by reason.", labels=["reason"]
    )
    for reason, key in SKIPPED:
        skipped.add_metric([reason], counts.get(key, 0))
    yield skipped
    redactions = CounterMetricFamily(
        "memvault_redactions",
        "PII redacted before storage or extraction, by rule.",
        labels=["rule"],
    )
    for key, n in sorted(counts.items()):
        if key.startswith("redacted_"):
            redactions.add_metric([key.removeprefix("redacted_")], n)
    yield redactions


def timings(found: Mapping[str, Timing]) -> Iterator[Metric]:
    for name, documentation, key in TIMINGS:
        timing = found.get(key, Timing())
        cumulative, buckets = 0, []
        for bound, n in zip((*LATENCY_BUCKETS, float("inf")), timing.buckets, strict=True):
            cumulative += n
            buckets.append(("+Inf" if bound == float("inf") else str(bound), cumulative))
        yield HistogramMetricFamily(name, documentation, buckets, timing.seconds)


def cache_counters(embedder: Embedder) -> Iterator[Metric]:
    """Hits and misses of each embedding cache in front of the model (by ``cache``:
    ``process``, the in-process LRU; ``redis``, the shared one)."""
    hits = CounterMetricFamily(
        "memvault_embedding_cache_hits", "Texts an embedding cache answered.", labels=["cache"]
    )
    misses = CounterMetricFamily(
        "memvault_embedding_cache_misses", "Texts an embedding cache passed on.", labels=["cache"]
    )
    layer: Embedder | None = embedder
    while layer is not None:
        if isinstance(layer, CachedEmbedder | RedisCachedEmbedder):
            kind = "process" if isinstance(layer, CachedEmbedder) else "redis"
            hits.add_metric([kind], layer.hits)
            misses.add_metric([kind], layer.misses)
        layer = getattr(layer, "inner", None)
    yield from (hits, misses)


def llm_counters(chat: ChatModel | None) -> Iterator[Metric]:
    """The LLM's calls, failures, tokens, time and fallbacks, by ``purpose`` (``extraction``,
    ``summary``, ``compaction``)."""
    calls = _by_purpose("memvault_llm_calls", "LLM calls (answered or failed).")
    failures = _by_purpose("memvault_llm_failures", "LLM calls that failed.")
    seconds = _by_purpose("memvault_llm_call_seconds", "Time spent in LLM calls, retries included.")
    fallbacks = _by_purpose("memvault_llm_fallbacks", "Tasks done without the LLM after it failed.")
    tokens = CounterMetricFamily(
        "memvault_llm_tokens",
        "LLM tokens (as the server reports them, else estimated), by purpose and kind.",
        labels=["purpose", "kind"],
    )
    for purpose, usage in (chat.usage.by_purpose() if chat is not None else {}).items():
        calls.add_metric([purpose], usage["calls"])
        failures.add_metric([purpose], usage["failures"])
        seconds.add_metric([purpose], usage["latency_ms"] / 1000)
        fallbacks.add_metric([purpose], usage["fallbacks"])
        tokens.add_metric([purpose, "prompt"], usage["prompt_tokens"])
        tokens.add_metric([purpose, "completion"], usage["completion_tokens"])
    yield from (calls, failures, tokens, seconds, fallbacks)


def _by_purpose(name: str, documentation: str) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, labels=["purpose"])


class AppMetrics:
    """One app's registry: the request histogram, the store's collector, the process's."""

    def __init__(self, memory: AsyncMemory, keys: KeyRing) -> None:
        self.memory = memory
        self.registry = CollectorRegistry()
        self.requests = Histogram(
            "memvault_http_request_duration_seconds",
            "HTTP requests, by method, route template and status class (2xx, 4xx…).",
            ("method", "route", "status_class"),
            registry=self.registry,
            buckets=LATENCY_BUCKETS,
        )
        self._children: dict[tuple[str, str, str], Histogram] = {}
        self.store_size = StoreSize(keys.served(memory.tenant))
        self.collector = MemoryCollector(memory, self.store_size)
        self.registry.register(self.collector)
        ProcessCollector(registry=self.registry)

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, f"{status // 100}xx")
        child = self._children.get(key)
        if child is None:  # a few dozen keys at most: routes are templates
            child = self._children[key] = self.requests.labels(*key)
        child.observe(seconds)

    async def exposition(self, accept: str) -> Response:
        """The registry in the format the scraper accepts (Prometheus text or OpenMetrics)."""
        await self.store_size.refresh(self.memory)
        self.collector.counts = await self.memory.stats()
        encode, content_type = choose_encoder(accept)
        return Response(encode(self.registry), headers={"Content-Type": content_type})


async def metrics(request: Request) -> Response:
    """``GET /metrics``. With API keys it needs one that reaches its whole tenant (any
    tenant's: nothing in it is a tenant's memory), so a browser page, a stranger or a key
    limited to some scopes cannot read the server's activity."""
    keys: KeyRing = request.app.state.keys
    if not keys.enabled:
        return await _exposed(request)
    key = keys.key_for(request.headers.get("authorization"))
    if key is None:
        raise HTTPException(401, "a valid 'Authorization: Bearer <key>' is required")
    if key.grant.limited:
        raise HTTPException(403, "a key limited by read= or write= cannot read the metrics")
    return await _exposed(request)


async def _exposed(request: Request) -> Response:
    observed: AppMetrics = request.app.state.metrics
    return await observed.exposition(request.headers.get("accept", ""))
