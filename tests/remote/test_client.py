"""The remote client: opening, tenants and keys, errors, transport failures, retries and
timeouts, closing, learning over REST (the operations themselves: the conformance modules)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http.server
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from memvault import (
    AsyncMemory,
    BackendError,
    BundleError,
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
from memvault.errors import LocalOnlyError
from memvault.remote import Remote
from memvault.rest.codec import Request, error_of
from memvault.testing import HashEmbedder, ManualClock

from ..server.conftest import free_port
from .conftest import ACME, GLOBEX


def test_a_server_url_opens_a_memory_on_the_server(serve: Callable[..., str]) -> None:
    url = serve()
    with Memory(url, api_key=ACME) as memory:
        assert isinstance(memory, Memory) and memory.server == url
        assert memory.tenant == "acme"
        entry = memory.write("Maya likes green tea", scope="user:maya")
        assert memory.get(entry.id) == entry
        assert repr(memory) == f"Memory({url!r}, tenant='acme')"
        for local_only in ("backend", "planners", "settings", "embedder", "llm"):
            assert not hasattr(memory, local_only)
            with pytest.raises(LocalOnlyError, match=f"has no {local_only}: "):
                getattr(memory, local_only)
    with Memory(":memory:", embedder=HashEmbedder()) as local:
        assert local.server is None


def test_the_old_names_are_deprecated_aliases(serve: Callable[..., str]) -> None:
    import memvault

    with pytest.warns(DeprecationWarning, match="RemoteMemory is deprecated"):
        remote_memory = memvault.RemoteMemory
    with pytest.warns(DeprecationWarning, match="AsyncRemoteMemory is deprecated"):
        async_remote_memory = memvault.AsyncRemoteMemory
    assert (remote_memory, async_remote_memory) == (Memory, AsyncMemory)
    with remote_memory(serve(), api_key=ACME) as memory:
        assert isinstance(memory, Memory) and memory.count() == 0


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
    memory = Memory(url, api_key=ACME)
    with memory, pytest.raises(LocalOnlyError, match="memvault reembed"):
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
        async with AsyncMemory(url, api_key=[ACME, GLOBEX]) as memory:
            assert isinstance(memory, AsyncMemory) and memory.server == url
            session = await memory.create_session("alice")
            await memory.add_turn(session.id, user="I moved to Paris last month.")
            assert await memory.flush(30)
            assert isinstance(await memory.last_extraction(session.id), Extraction)
            assert (await memory.stats())["extractions"] >= 1
            assert await memory.with_tenant("globex").count() == 0
        with pytest.raises(ClosedError):
            await memory.count()

    asyncio.run(use())


def test_the_async_client_records_executions_in_the_background(serve: Callable[..., str]) -> None:
    url = serve()

    async def use() -> tuple[int, dict[str, int]]:
        opened: Any = AsyncMemory(url, api_key=ACME)
        async with opened as memory:
            for n in range(3):
                memory.record_execution_later(
                    workflow_id="wf", agent_id="a", input=f"job {n}", success=True
                )
            dropped = memory.record_execution_later(workflow_id="", agent_id="a", input="x")
            assert await memory.flush(30) and await dropped is None
            return len(await memory.executions()), await memory.stats()

    stored, counts = asyncio.run(use())
    assert stored == 3 and counts["executions_dropped"] == 1


def test_an_async_memory_serves_one_event_loop_after_another(serve: Callable[..., str]) -> None:
    """Each ``asyncio.run`` is a new loop; the remote memory opens a new pool for it."""
    memory: Any = AsyncMemory(serve(), api_key=ACME)

    async def count() -> int:
        return int(await memory.count())

    assert [asyncio.run(count()) for _ in range(3)] == [0, 0, 0]
    asyncio.run(memory.aclose())


@pytest.mark.slow
def test_an_async_memory_serves_loops_of_several_threads_at_once(
    serve: Callable[..., str],
) -> None:
    memory: Any = AsyncMemory(serve(), api_key=ACME)
    failures: list[BaseException] = []

    def worker() -> None:
        async def counts() -> None:
            for _ in range(20):
                await memory.count()

        try:
            asyncio.run(counts())
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    memory.close()
    assert failures == []


def _parity(call: Callable[[Any], Any], local: Any, remote: Any) -> None:
    """``call`` gives the same result type on both memories, or raises the same error class."""
    outcomes = []
    for memory in (local, remote):
        try:
            outcomes.append(type(call(memory)))
        except Exception as exc:
            outcomes.append(type(exc))
    assert outcomes[0] is outcomes[1], outcomes


PARITY_CALLS: dict[str, Callable[[Any], Any]] = {
    "a string for a flag": lambda m: m.create_session("u", private="true"),
    "a padded string for a limit": lambda m: m.search("x", "user:p", limit=" 5 "),
    "digits with an underscore for a limit": lambda m: m.search("x", "user:p", limit="1_0"),
    "a string for a budget": lambda m: m.build_context(m.create_session("u").id, "100"),
    "a string for include_narrower": lambda m: m.retrieve("user:p", include_narrower="0"),
    "a datetime inside metadata": lambda m: m.write(
        "x", scope="user:p", metadata={"at": datetime(2026, 1, 1, tzinfo=UTC)}
    ),
    "an update that changes nothing": lambda m: m.update(m.write("y", scope="user:p").id),
    "a flush timeout that is not a number": lambda m: m.flush(float("nan")),
    "a negative flush timeout": lambda m: m.flush(-1),
    "a flush timeout past any clock": lambda m: m.flush(1e10),
    "a string for delete_original": lambda m: m.promote(
        m.write("z", scope="user:p").id, to="org:o", delete_original="false"
    ),
    "a string for data loaded": lambda m: m.set_data_loaded(m.create_session("u").id, "false"),
    "a number for include_superseded": lambda m: m.count("user:p", include_superseded=1),
    "a string for conversational": lambda m: m.search("x", "user:p", conversational="no"),
}


@pytest.mark.parametrize("case", PARITY_CALLS)
def test_a_call_does_what_it_does_locally(
    case: str, serve: Callable[..., str], tmp_path: Path
) -> None:
    with (
        Memory(str(tmp_path / "local.db"), embedder=HashEmbedder(), clock=ManualClock()) as local,
        Memory(serve(), api_key=ACME) as remote,
    ):
        _parity(PARITY_CALLS[case], local, remote)


def test_what_no_url_can_carry_is_a_validation_error(serve: Callable[..., str]) -> None:
    with Memory(serve(), api_key=ACME) as memory:
        session = memory.create_session("u")
        for call in (
            lambda: memory.findings(session.id, text="x" * 70_000),
            lambda: memory.get("x" * 9_000),
            lambda: memory.count("user:a", tags=["t" * 100] * 100),
        ):
            with pytest.raises(ValidationError, match="URL"):
                call()
        assert memory.findings(session.id, text="x" * 2_000) == []  # a long one still goes


def test_a_password_in_the_url_does_not_replace_the_key(serve: Callable[..., str]) -> None:
    url = serve().replace("http://", "http://user:pw@")
    with pytest.raises(ConfigError, match="would replace the API key"):
        Memory(url, api_key=ACME)


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
        answers = {
            "/v1/tenant": b'{"tenant": "default", "actor": "local"}',
            "/v1/sessions/s1/extraction": b"[]",
        }
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


@pytest.mark.slow
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
    url = f"http://user:the-key-must-not-show@127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(BackendError, match="cannot reach the memvault server") as caught:
        Memory(url, retries=1)
    assert time.monotonic() - started < 10
    assert "the-key-must-not-show" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_silent_server_times_out_and_is_not_asked_again() -> None:
    """A request that timed out may still be running there: sending it again (even a read)
    would only add to a busy server's load."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # connections are accepted, and never answered
    accepted: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                accepted.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(BackendError, match=r"did not answer GET /v1/tenant within 0\.3 s"):
            Memory(url, timeout=0.3, retries=2)
        assert len(accepted) == 1
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


def test_a_key_a_header_cannot_carry_is_refused_unseen(serve: Callable[..., str]) -> None:
    for key in ("secret-key-\x00-0123456789", "secret key 0123456789", "secret-key-é-0123456"):
        with pytest.raises(ConfigError, match="HTTP header cannot carry") as caught:
            Memory(serve(), api_key=key)
        assert "secret" not in str(caught.value)


def test_an_answer_that_is_not_memvaults_is_a_backend_error() -> None:
    """A proxy's 401/404/429 page says nothing about the caller's arguments."""
    for status in (401, 404, 429):
        error = error_of(Request("GET", "/v1/tenant"), status, {"detail": "no"}, "http://x")
        assert type(error) is BackendError and "not with a memvault error" in str(error)


def test_the_key_never_shows(serve: Callable[..., str]) -> None:
    with Memory(serve(), api_key=ACME) as memory:
        assert isinstance(memory._at, Remote)
        link = memory._at.link
        shown = [repr(memory), repr(memory._at), repr(link), repr(link.sender.options)]
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


def test_a_session_bundle_travels_through_a_remote_memory(
    serve: Callable[..., str], tmp_path: Path
) -> None:
    url = serve()
    with Memory(url, api_key=[ACME, GLOBEX]) as acme:
        globex = acme.with_tenant("globex")
        session = acme.create_session("alice", title="remote trip", private=True)
        acme.append_record(session.id, "user", "Lisbon in May")
        path = tmp_path / "remote.zip"
        exported = acme.export_session(session.id, path)
        assert exported.path == str(path) and path.stat().st_size > 0
        imported = globex.as_actor("migrator").import_session(path)
        assert imported.source_session_id == session.id and imported.total == exported.total
        copy = globex.get_session(imported.session_id)
        assert copy.private and copy.title == "remote trip"
        created = globex.audit(operation="import_bundle").events  # what the server ran
        assert created and {e.actor for e in created} == {f"{globex.actor}/migrator"}
        path.write_bytes(b"junk")
        with pytest.raises(BundleError):
            globex.import_session(path)
        with pytest.raises(ValidationError, match="exists already"):
            acme.export_session(session.id, path)
        data, report = acme.session_bundle(session.id)
        assert report.sha256 == hashlib.sha256(data).hexdigest()
        assert globex.import_bundle(data).total == report.total
