"""``/metrics``: known traffic through the real app, scraped and counted exactly; per-app
registries; the key rule and the browser guard on the scrape."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.testclient import TestClient

from memvault import AsyncMemory, Settings
from memvault.core import LATENCY_BUCKETS
from memvault.embeddings import CachedEmbedder
from memvault.errors import LLMUnavailableError
from memvault.llm.base import estimate_prompt_tokens, estimate_tokens
from memvault.llm.scripted import ScriptedChat
from memvault.server import create_app
from memvault.testing import HashEmbedder, ManualClock

from .conftest import Client

KEY_A, KEY_B = "a-key-0123456789abcdef", "b-key-0123456789abcdef"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
Serve = Callable[..., tuple[Client, Starlette]]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Apps over fresh SQLite stores whose hash embedder sits behind the process cache."""
    running: list[TestClient] = []

    def start(llm: Any = None, settings: Settings | None = None, **options: Any) -> Any:
        memory = AsyncMemory(
            str(tmp_path / f"metrics-{len(running)}.db"),
            settings=settings or Settings(near_duplicate_threshold=0.99),
            embedder=CachedEmbedder(HashEmbedder()),
            clock=ManualClock(),
            llm=llm,
        )
        app = create_app(memory, owns_memory=True, **options)
        client = TestClient(app, base_url="http://127.0.0.1:8765")
        client.__enter__()
        running.append(client)
        return Client("http://127.0.0.1:8765", asgi=client), app

    yield start
    for client in running:
        client.__exit__(None, None, None)


def scrape(api: Client) -> Samples:
    status, headers, text = api.exchange("GET", "/metrics")
    assert status == 200, text
    assert headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def requests(samples: Samples, method: str, route: str, status_class: str) -> float:
    labels = {"method": method, "route": route, "status_class": status_class}
    return value(samples, "memvault_http_request_duration_seconds_count", **labels)


def buckets(samples: Samples, name: str, **labels: str) -> list[float]:
    bounds = [*(str(b) for b in LATENCY_BUCKETS), "+Inf"]
    return [value(samples, f"{name}_bucket", le=le, **labels) for le in bounds]


def post(api: Client, path: str, body: Any) -> tuple[int, Any]:
    return api("POST", path, body)


def test_known_traffic_is_counted_exactly(serve: Serve) -> None:
    api, _ = serve()
    alice = {"content": "Alice prefers dark mode", "scope": "user:alice"}
    first = post(api, "/v1/memories", alice)
    assert first[0] == 201
    assert post(api, "/v1/memories", {**alice, "content": "Bob prefers tea"})[0] == 201
    assert post(api, "/v1/memories", alice)[1]["duplicate"] is True  # 200: a near-duplicate
    failure = {**alice, "content": '{"error": "rate limited", "status": 429}'}
    assert post(api, "/v1/memories", failure)[0] == 422  # filtered: an error response
    batch = {"items": [{**alice, "content": "Carol likes jazz"}, {**alice, "scope": "nowhere"}]}
    assert post(api, "/v1/memories/batch", batch)[0] == 201  # one stored, one refused
    query = {"query": "dark mode", "scope": "user:alice"}
    assert post(api, "/v1/search", query)[0] == post(api, "/v1/search", query)[0] == 200
    assert api("GET", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV")[0] == 404
    assert api("GET", "/v1/nothing/here")[0] == 404

    found = scrape(api)
    assert requests(found, "POST", "/v1/memories", "2xx") == 3
    assert requests(found, "POST", "/v1/memories", "4xx") == 1
    assert requests(found, "POST", "/v1/memories/batch", "2xx") == 1
    assert requests(found, "POST", "/v1/search", "2xx") == 2
    assert requests(found, "GET", "/v1/memories/{entry_id}", "4xx") == 1
    assert requests(found, "GET", "unmatched", "4xx") == 1
    histogram = "memvault_http_request_duration_seconds"
    labels = {"method": "POST", "route": "/v1/search", "status_class": "2xx"}
    counts = buckets(found, histogram, **labels)
    assert counts == sorted(counts) and counts[-1] == 2
    assert value(found, f"{histogram}_sum", **labels) > 0

    assert value(found, "memvault_writes_total") == 3
    skipped = {
        reason: value(found, "memvault_writes_skipped_total", reason=reason)
        for reason in ("near_duplicate", "finding_duplicate", "error_response", "too_short")
    }
    skipped["refused"] = value(found, "memvault_writes_skipped_total", reason="refused")
    assert skipped == {
        "near_duplicate": 1,
        "finding_duplicate": 0,
        "error_response": 1,
        "too_short": 0,
        "refused": 1,
    }
    assert value(found, "memvault_search_duration_seconds_count") == 2
    assert buckets(found, "memvault_search_duration_seconds")[-1] == 2
    # an embedding step per write that got past the filters (3), the batch (1), the searches (2)
    assert value(found, "memvault_embedding_duration_seconds_count") == 6
    # texts: Alice, Bob, Carol and the query were embedded; Alice again and the query again hit
    assert value(found, "memvault_embedding_cache_hits_total", cache="process") == 2
    assert value(found, "memvault_embedding_cache_misses_total", cache="process") == 4
    assert value(found, "memvault_store_entries") == 3
    assert value(found, "memvault_build_info", version=_version()) == 1

    assert requests(scrape(api), "GET", "/metrics", "2xx") == 1  # the first scrape


def _version() -> str:
    from memvault import __version__

    return __version__


def test_no_label_names_a_tenant_an_id_a_scope_or_content(serve: Serve) -> None:
    api, _ = serve(api_keys=f"acme-corp:{KEY_A}")
    api = api.with_key(KEY_A)
    _, entry = post(api, "/v1/memories", {"content": "Secret plans", "scope": "user:zed"})
    api("GET", f"/v1/memories/{entry['id']}")
    api("GET", "/v1/memories?scope=user:zed")
    api("DELETE", "/v1/scopes/user:zed")
    _, _, text = api.exchange("GET", "/metrics")
    for private in ("acme", entry["id"], "user:zed", "zed", "Secret", KEY_A):
        assert private not in text
    routes = {labels for (name, labels) in scrape(api) if name.endswith("_count")}
    assert {dict(labels).get("route") for labels in routes} >= {
        "/v1/memories",
        "/v1/memories/{entry_id}",
        "/v1/scopes/{scope}",  # the converter of {scope:path} left out
    }


def test_every_app_has_its_own_registry(serve: Serve) -> None:
    first, _ = serve()
    second, _ = serve()
    post(first, "/v1/memories", {"content": "only in the first", "scope": "user:a"})
    assert value(scrape(first), "memvault_writes_total") == 1
    assert value(scrape(second), "memvault_writes_total") == 0
    later = scrape(second)
    assert requests(later, "GET", "/metrics", "2xx") == 1  # the scrape before, nothing else
    assert not any(dict(labels).get("route") == "/v1/memories" for _, labels in later)


def test_the_store_size_is_counted_at_most_every_ttl(serve: Serve) -> None:
    api, app = serve()
    post(api, "/v1/memories", {"content": "one", "scope": "user:a"})
    assert value(scrape(api), "memvault_store_entries") == 1
    post(api, "/v1/memories", {"content": "two", "scope": "user:a"})
    assert value(scrape(api), "memvault_store_entries") == 1  # cached (30 s)
    app.state.metrics.store_size.ttl = 0
    assert value(scrape(api), "memvault_store_entries") == 2


def test_extraction_and_llm_usage(serve: Serve) -> None:
    reply = "preference|turn-1|The user prefers green tea.|"
    chat = ScriptedChat([reply, LLMUnavailableError("the model is down")])
    api, _ = serve(llm=chat, settings=Settings(extraction="llm"))
    _, session = post(api, "/v1/sessions", {"user_id": "alice"})
    turns = f"/v1/sessions/{session['id']}/turns"
    assert post(api, turns, {"user": "I prefer green tea.", "wait": True})[0] == 201
    assert post(api, turns, {"user": "I also like hiking.", "wait": True})[0] == 201

    found = scrape(api)
    assert value(found, "memvault_extractions_total") == 1
    assert value(found, "memvault_extraction_failures_total") == 1
    assert value(found, "memvault_extractions_running") == 0
    assert value(found, "memvault_llm_calls_total", purpose="extraction") == 2
    assert value(found, "memvault_llm_failures_total", purpose="extraction") == 1
    prompt = estimate_prompt_tokens(chat.requests[0].messages)
    tokens = "memvault_llm_tokens_total"
    assert value(found, tokens, purpose="extraction", kind="prompt") == prompt
    assert value(found, tokens, purpose="extraction", kind="completion") == estimate_tokens(reply)
    assert value(found, "memvault_llm_fallbacks_total", purpose="extraction") == 0


def test_metrics_need_a_key_when_keys_are_configured(serve: Serve) -> None:
    api, _ = serve(api_keys=f"acme:{KEY_A},globex:{KEY_B}")
    post(api.with_key(KEY_A), "/v1/memories", {"content": "acme's note", "scope": "user:a"})
    for content in ("globex one", "globex two"):
        post(api.with_key(KEY_B), "/v1/memories", {"content": content, "scope": "user:a"})
    for key in (None, "not-a-key-0123456789"):
        status, body = api.with_key(key)("GET", "/metrics")
        assert (status, body["error"]["type"]) == (401, "Unauthorized")
    found = scrape(api.with_key(KEY_B))  # any tenant's key: nothing in it is a tenant's
    assert value(found, "memvault_store_entries") == 3  # every served tenant, no tenant label
    assert requests(found, "GET", "/metrics", "4xx") == 2


def test_without_keys_metrics_are_open_like_every_route(serve: Serve) -> None:
    api, _ = serve()
    assert api("GET", "/metrics")[0] == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"},
    ],
)
def test_the_guard_refuses_a_browser_page_on_metrics(serve: Serve, headers: dict[str, str]) -> None:
    api, _ = serve(api_keys=f"acme:{KEY_A}")
    status, body = api.with_key(KEY_A)("GET", "/metrics", headers=headers)
    assert (status, body["error"]["type"]) == (403, "ForbiddenOrigin")
    status, body = api.with_key(KEY_A)("GET", "/metrics", headers={"Host": "rebind.example"})
    assert (status, body["error"]["type"]) == (421, "MisdirectedRequest")
    assert requests(scrape(api.with_key(KEY_A)), "GET", "/metrics", "4xx") == 2  # its route


def agent_samples(samples: Samples) -> dict[str, float]:
    """Agent memory's counters, by metric and labels (``name{label=value,…}``)."""
    prefix = ("memvault_agent_", "memvault_executions_total")
    return {
        name + "{" + ",".join(f"{k}={v}" for k, v in sorted(labels)) + "}": found
        for (name, labels), found in samples.items()
        if name.startswith(prefix) and not name.endswith("_created")
    }


def test_agent_memory_s_outcomes_and_choices_are_counted_once_whoever_calls(
    serve: Serve,
) -> None:
    """REST, MCP and Python on the server's own memory: each operation counted once, in the
    process that ran it; refused calls not at all."""
    mcp = pytest.importorskip("mcp")
    from memvault.integrations.mcp import Tenancy, build_server

    api, app = serve()
    memory: AsyncMemory = app.state.metrics.memory
    run: dict[str, Any] = {
        "workflow_id": "wf",
        "agent_id": "a",
        "input": "Find the top",
        "kind": "q",
    }
    executions = "/v1/agents/executions"
    assert post(api, executions, {**run, "success": True, "strategy": "react"})[0] == 201
    assert post(api, executions, {**run, "success": True, "strategy": "react"})[0] == 201
    failed = {**run, "success": False, "strategy": "plan", "error_class": "TimeoutError"}
    assert post(api, executions, failed)[0] == 201
    assert post(api, executions, {**run, "success": True, "tokens_in": -1})[0] == 400
    choose = "/v1/agents/strategies/choose"
    assert post(api, choose, {"candidates": ["react", "new"]})[1]["reason"] == "untried"
    assert post(api, choose, {"candidates": ["react", "plan"], "epsilon": 0})[1]["reason"] == (
        "exploit"
    )
    assert post(api, choose, {"candidates": []})[0] == 400
    teams, crew = "/v1/agents/teams", [{"role": "r", "agent_id": "a"}]
    assert post(api, f"{teams}/suggest", {"kind": "q"})[1]["reason"] == "none"
    assert post(api, teams, {"kind": "q", "agents": crew, "success": True})[0] == 201
    assert post(api, f"{teams}/suggest", {"kind": "q"})[1]["reason"] == "exploit"
    trip = {"query": "Plan a trip to Kyoto", "subtasks": ["book flights"]}
    assert post(api, "/v1/agents/decompositions", trip)[0] == 201
    suggest = "/v1/agents/decompositions/suggest"
    assert len(post(api, suggest, {"query": "Plan a trip to Kyoto"})[1]["suggestions"]) == 1
    assert post(api, suggest, {"query": "Bake sourdough bread"})[1]["suggestions"] == []

    async def on_the_server() -> None:
        async with mcp.Client(build_server(Tenancy(memory), "CRITICAL")) as client:
            for arguments in (
                {**run, "success": True, "strategy": "react"},
                {**run, "success": False},
                {**run, "success": True, "tokens_in": -1},  # refused by the tool's schema
            ):
                await client.call_tool("record_execution", arguments)
            explore = {"candidates": ["react", "plan"], "epsilon": 1, "seed": 7}
            assert (await client.call_tool("choose_strategy", explore)).structured_content
            await client.call_tool("suggest_decomposition", {"query": "Plan a trip to Kyoto"})
            other = [[{"role": "r", "agent_id": "b"}]]
            await client.call_tool("suggest_team", {"kind": "q", "candidates": other})
        await memory.record_execution(**{**run, "success": False, "error_class": "Boom"})
        choice = await memory.choose_strategy(["react", "plan"], epsilon=0)
        assert choice.reason == "exploit"
        await memory.suggest_decomposition("Repaint the garden fence")

    assert api.asgi is not None and api.asgi.portal is not None
    api.asgi.portal.call(on_the_server)  # in the app's own event loop
    assert agent_samples(scrape(api)) == {  # REST + MCP + Python
        "memvault_executions_total{}": 3 + 2 + 1,
        "memvault_agent_executions_total{outcome=success}": 2 + 1 + 0,
        "memvault_agent_executions_total{outcome=failure}": 1 + 1 + 1,
        "memvault_agent_choices_total{reason=untried,what=strategy}": 1 + 0 + 0,
        "memvault_agent_choices_total{reason=explore,what=strategy}": 0 + 1 + 0,
        "memvault_agent_choices_total{reason=exploit,what=strategy}": 1 + 0 + 1,
        "memvault_agent_choices_total{reason=untried,what=team}": 0 + 1 + 0,
        "memvault_agent_choices_total{reason=explore,what=team}": 0,
        "memvault_agent_choices_total{reason=exploit,what=team}": 1 + 0 + 0,
        "memvault_agent_choices_total{reason=none,what=team}": 1 + 0 + 0,
        "memvault_agent_decomposition_suggestions_total{result=hit}": 1 + 1 + 0,
        "memvault_agent_decomposition_suggestions_total{result=miss}": 1 + 0 + 1,
    }


def test_docs_operations_names_every_agent_counter_and_label() -> None:
    from memvault.server.agent_metrics import agent_counters

    page = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text("utf-8")
    for family in agent_counters({}):
        row = next(
            line for line in page.splitlines() if line.startswith(f"| `{family.name}_total`")
        )
        for sample in family.samples:
            for name, label in sample.labels.items():
                assert f"`{name}`" in row and f"`{label}`" in row, (family.name, name, label)


def test_the_breaker_metrics_show_its_state_moves_and_rejections(serve: Serve) -> None:
    """A SQLite store has no breaker (no series), but the counters of dropped background work
    are there; a breaker's counters become a gauge and counters by ``from`` and ``to``."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.registry import Collector

    from memvault.breaker import Breaker, Policy
    from memvault.errors import UnavailableError
    from memvault.server.metrics import breaker_metrics

    api, _ = serve()
    found = scrape(api)
    assert not any(name.startswith("memvault_breaker") for name, _ in found)
    assert value(found, "memvault_extractions_unavailable_total") == 0
    assert value(found, "memvault_uses_dropped_total") == 0
    assert value(found, "memvault_executions_dropped_total") == 0

    now = [0.0]
    breaker = Breaker("store", "the test store", Policy(1, 5.0), lambda: now[0])

    def down() -> None:
        raise UnavailableError("refused")

    for _ in range(3):  # the first opens it, the two after fail fast
        with pytest.raises(UnavailableError):
            breaker.call(down)
    now[0] = 5.0
    breaker.call(lambda: None)  # the probe closes it

    class Breakers(Collector):
        def collect(self) -> Any:
            return breaker_metrics(["store"], breaker.counts())

    registry = CollectorRegistry()
    registry.register(Breakers())
    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for sample in family.samples
    }
    assert value(samples, "memvault_breaker_state", breaker="store") == 0
    assert value(samples, "memvault_breaker_rejected_total", breaker="store") == 2
    moves = "memvault_breaker_transitions_total"
    assert value(samples, moves, breaker="store", **{"from": "closed", "to": "open"}) == 1
    assert value(samples, moves, breaker="store", **{"from": "open", "to": "half_open"}) == 1
    assert value(samples, moves, breaker="store", **{"from": "half_open", "to": "closed"}) == 1
    assert value(samples, moves, breaker="store", **{"from": "half_open", "to": "open"}) == 0
