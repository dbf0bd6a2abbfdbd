"""The remote client: opening, tenants and keys, errors, transport failures, retries and
timeouts, closing, learning over REST (the operations themselves: the conformance modules)."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import httpx
import pytest

from memvault import (
    AsyncMemory,
    BackendError,
    ClosedError,
    ConfigError,
    Extraction,
    ForbiddenError,
    Memory,
    NotFoundError,
    SessionNotFoundError,
    Settings,
    ValidationError,
)
from memvault.context.summarize import ExtractiveSummarizer
from memvault.rest import AsyncRemoteMemory, RemoteMemory
from memvault.testing import ManualClock

from ..server.conftest import free_port
from .conftest import ACME, GLOBEX


def test_a_server_url_opens_a_remote_memory_not_a_memory(serve: Callable[..., str]) -> None:
    url = serve()
    opened: Any = Memory(url, api_key=ACME)  # typed Memory: see docs/remote.md, "Types"
    assert isinstance(opened, RemoteMemory) and not isinstance(opened, Memory)
    with opened as memory:
        assert memory.tenant == "acme"
        entry = memory.write("Maya likes green tea", scope="user:maya")
        assert memory.get(entry.id) == entry
        assert repr(memory) == f"RemoteMemory({url!r}, tenant='acme')"
    assert isinstance(Memory(":memory:"), Memory)


def test_the_key_decides_the_tenant_and_views_switch_by_key(serve: Callable[..., str]) -> None:
    url = serve()
    both = Memory(url, api_key=[ACME, GLOBEX])
    only_acme = Memory(url, api_key=ACME)
    globex = both.with_tenant("globex")
    globex.write("Globex ships on Fridays", scope="org:globex")
    assert (globex.tenant, globex.count(), both.count()) == ("globex", 1, 0)
    with Memory(url, api_key=[ACME, GLOBEX], tenant="globex") as chosen:
        assert chosen.count() == 1
    assert only_acme.with_tenant("acme").count() == 0
    with pytest.raises(ForbiddenError, match="the server decides the tenant from the key"):
        only_acme.with_tenant("globex")
    with pytest.raises(ForbiddenError):
        Memory(url, api_key=ACME, tenant="globex")
    with pytest.raises(ConfigError, match="Unauthorized"):
        Memory(url, api_key="not-a-key-of-this-server")
    with pytest.raises(ConfigError, match="Unauthorized"):
        Memory(url)
    globex.close()  # a view closes nothing
    assert both.count() == 0
    both.close()
    with pytest.raises(ClosedError):
        globex.count()
    only_acme.close()


def test_a_server_without_keys_serves_its_own_tenant_only(serve: Callable[..., str]) -> None:
    url = serve(api_keys="")
    with Memory(url) as memory:
        assert memory.tenant == "default"
        assert memory.with_tenant("default").count() == 0
        with pytest.raises(ForbiddenError):
            memory.with_tenant("other")  # never silently the server's tenant


def test_errors_are_the_servers_own(serve: Callable[..., str]) -> None:
    with Memory(serve(), api_key=ACME) as memory:
        with pytest.raises(SessionNotFoundError, match="session not found: s-missing") as caught:
            memory.get_session("s-missing")
        assert caught.value.entry_id == "s-missing"
        with pytest.raises(NotFoundError) as missing:
            memory.update("no-such-id", content="x")
        assert str(missing.value).startswith("memory entry not found: no-such-id")
        assert memory.get("no-such-id") is None
        with pytest.raises(ValidationError, match="summariser object cannot be sent"):
            memory.build_context("s-any", 100, summarizer=ExtractiveSummarizer())
        with pytest.raises(ValidationError, match="base must not be None"):
            memory.system_prompt("s-any", base=None)  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="keys must be strings"):
            memory.write("x", scope="user:a", metadata={1: "one"})  # type: ignore[dict-item]


def test_what_is_the_servers_is_refused_here(serve: Callable[..., str]) -> None:
    url = serve()
    with pytest.raises(ConfigError, match="where `memvault serve` runs"):
        Memory(url, api_key=ACME, settings=Settings())
    with pytest.raises(ConfigError, match="where `memvault serve` runs"):
        Memory(url, api_key=ACME, clock=ManualClock())
    with pytest.raises(ConfigError, match="apply to a memvault server's URL"):
        Memory(":memory:", api_key=ACME)
    with pytest.raises(ConfigError, match="timeout"):
        Memory(url, api_key=ACME, timeout=0)
    with pytest.raises(ConfigError, match="retries"):
        Memory(url, api_key=ACME, retries=-1)
    memory = RemoteMemory(url, api_key=ACME)
    with memory, pytest.raises(AttributeError, match="memvault reembed"):
        memory.reembed()


def test_learning_runs_on_the_server(serve: Callable[..., str]) -> None:
    with Memory(serve(), api_key=ACME) as memory:
        session = memory.create_session("alice")
        turn = memory.add_turn(session.id, user="I live in Berlin and I prefer dark mode.")
        assert turn.extraction in {"scheduled", "queued"}
        assert memory.flush(30, session_id=session.id) and memory.flush()
        learned = memory.last_extraction(session.id)
        assert isinstance(learned, Extraction) and learned.stored
        assert "The user lives in Berlin." in {e.content for e in memory.global_memory("alice")}
        assert memory.stats()["extractions"] >= 1
        assert memory.last_extraction("s-never") is None


def test_the_async_client_does_the_same(serve: Callable[..., str]) -> None:
    url = serve()

    async def use() -> None:
        opened: Any = AsyncMemory(url, api_key=[ACME, GLOBEX])
        assert isinstance(opened, AsyncRemoteMemory)
        async with opened as memory:
            session = await memory.create_session("alice")
            await memory.add_turn(session.id, user="I moved to Paris last month.")
            assert await memory.flush(30)
            assert isinstance(await memory.last_extraction(session.id), Extraction)
            assert (await memory.stats())["extractions"] >= 1
            assert await memory.with_tenant("globex").count() == 0
        with pytest.raises(ClosedError):
            await memory.count()

    asyncio.run(use())


class _Flaky(http.server.BaseHTTPRequestHandler):
    """Answers which tenant a key acts in (and an extraction no client can read); drops every
    other request without an answer."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        _Flaky.seen.append(f"{self.command} {self.path}")
        answers = {"/v1/tenant": b'{"tenant": "default"}', "/v1/sessions/s1/extraction": b"[]"}
        if self.path in answers:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answers[self.path])))
            self.end_headers()
            self.wfile.write(answers[self.path])
            return
        self.close_connection = True  # the request arrived; its answer is lost

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    _Flaky.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_only_idempotent_requests_are_sent_again(flaky: str) -> None:
    with Memory(flaky, retries=2, api_key="k" * 16) as memory:
        _Flaky.seen.clear()
        with pytest.raises(BackendError, match=r"cannot reach the memvault .*GET /v1/count"):
            memory.count()
        assert _Flaky.seen == ["GET /v1/count"] * 3
        _Flaky.seen.clear()
        with pytest.raises(BackendError, match="POST /v1/memories"):
            memory.write("x", scope="user:a")
        assert _Flaky.seen == ["POST /v1/memories"]  # it may have been stored: never twice
        _Flaky.seen.clear()
        with pytest.raises(BackendError):
            memory.search("x", "user:a")  # a POST that only reads
        assert len(_Flaky.seen) == 3
        with pytest.raises(BackendError, match="is the server another memvault version"):
            memory.last_extraction("s1")  # an answer the client cannot read


def test_an_unreachable_server_is_a_clear_error_without_the_key() -> None:
    url = f"http://user:secret@127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(BackendError, match="cannot reach the memvault server") as caught:
        Memory(url, api_key="the-key-must-not-show", retries=1)
    assert time.monotonic() - started < 10
    assert "the-key-must-not-show" not in str(caught.value) and "secret" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_silent_server_times_out() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # connections are accepted by the kernel, and never answered
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(BackendError, match=r"did not answer GET /v1/tenant within 0\.3 s"):
            Memory(url, timeout=0.3, retries=0)
    finally:
        listener.close()


def test_the_key_never_shows(serve: Callable[..., str]) -> None:
    with RemoteMemory(serve(), api_key=ACME) as memory:
        shown = [repr(memory), repr(memory._link), repr(memory._link.sender.options)]
        try:
            memory.with_tenant("globex")
        except ForbiddenError as exc:
            shown.append(str(exc))
        assert all(ACME not in text for text in shown)


def test_a_closed_memory_refuses_work(serve: Callable[..., str]) -> None:
    memory = Memory(serve(), api_key=ACME)
    memory.close()
    memory.close()
    with pytest.raises(ClosedError):
        memory.count()


def test_an_async_memory_closes_without_await(serve: Callable[..., str]) -> None:
    url = serve()
    with asyncio.Runner() as runner:
        memory = AsyncMemory(url, api_key=ACME)
        runner.run(memory.count())
        memory.close()  # its loop is idle: the connections close on it at once
        with pytest.raises(ClosedError):
            runner.run(memory.count())

    async def inside_the_loop() -> None:
        memory = AsyncMemory(url, api_key=ACME)
        await memory.count()
        memory.close()  # the loop runs: the connections close in a task
        await asyncio.sleep(0.1)

    asyncio.run(inside_the_loop())


def test_a_compaction_stores_only_what_was_made_of_unchanged_sources(
    serve: Callable[..., str],
) -> None:
    url = serve()
    with Memory(url, api_key=ACME) as memory:
        entry = memory.write("Alice drinks tea", scope="user:alice")
        headers = {"Authorization": f"Bearer {ACME}"}
        stale = {"ids": [entry.id], "content": "a summary", "revisions": [entry.revision + 1]}
        answer = httpx.post(f"{url}/v1/memories/compact", json=stale, headers=headers)
        assert (answer.status_code, answer.json()["error"]["type"]) == (409, "ConflictError")
        assert memory.count() == 1
        merged = memory.compact([entry.id], lambda sources: f"{len(sources)} source")
        assert (merged.content, merged.compacted_from_ids) == ("1 source", (entry.id,))
