"""Memory for the official OpenAI client, in two lines: :func:`remember` wraps ``OpenAI`` or
``AsyncOpenAI`` so that each chat completion sees what memvault remembers, and is remembered::

    client = memvault.openai.remember(OpenAI(), memvault.Memory(), user="alice")
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])

Each ``chat.completions.create`` (``parse`` and ``stream`` too) sends one system message first:
the session's system prompt (the caller's own leading system message as its base, then Global
Memory, Session Memory and Findings), then the memories relevant to the last user message, as
data (:meth:`~memvault.Memory.recall`). Once the answer is in — a stream when it ends — the
exchange is logged with :meth:`~memvault.Memory.add_turn` (extraction runs in the background).
A memory failure while logging is logged (logger ``memvault.openai``) and the answer returned;
a failure while preparing the request raises, and nothing is sent. ``docs/openai.md`` says all.

The ``openai`` package is imported when a client is wrapped, never before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from . import validation as check
from .context.plans import HierarchicalContext, relevant_line, relevant_message
from .errors import ConfigError, ValidationError, extra_needed, shown
from .facilities.model import Session
from .memory import AsyncMemory, Memory
from .types import Scope

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

log = logging.getLogger("memvault.openai")

DEFAULT_BUDGET = 4000
"""The tokens of the context :meth:`~memvault.Memory.recall` builds per call; the memories it
prepends take at most 30 % of it."""
SYSTEM_ROLES = ("system", "developer")
"""The roles of the caller's own instructions: their leading messages are the prompt's base."""

ClientT = TypeVar("ClientT", bound="OpenAI | AsyncOpenAI")


def remember(
    client: ClientT,
    memory: Memory,
    user: str,
    *,
    session: str | None = None,
    private: bool = False,
    budget: int = DEFAULT_BUDGET,
) -> ClientT:
    """``client`` with memory: a proxy that looks like it (same class for ``isinstance``, same
    attributes), whose chat completions carry ``user``'s memories and are logged in a session
    of theirs — a new one (``private`` if asked), or ``session`` (which must be theirs). An
    ``AsyncOpenAI`` client runs this blocking memory's calls in a thread; an
    :class:`~memvault.AsyncMemory` is wrapped with ``await`` :func:`aremember`."""
    asynchronous = _checked_client(client, memory, awaits=False)
    _checked_session(user, session, private, budget)
    if session is None:
        sid = memory.create_session(user, private=private).id
    else:
        sid = _owned(memory.get_session(session), user, private)
    return cast(ClientT, _Client(client, _Binding(memory, sid, budget), asynchronous))


async def aremember(
    client: ClientT,
    memory: Memory | AsyncMemory,
    user: str,
    *,
    session: str | None = None,
    private: bool = False,
    budget: int = DEFAULT_BUDGET,
) -> ClientT:
    """:func:`remember` for an :class:`~memvault.AsyncMemory` (whose session is made with
    ``await``) — or a ``Memory``, whose calls then run in a thread."""
    asynchronous = _checked_client(client, memory, awaits=True)
    _checked_session(user, session, private, budget)
    if isinstance(memory, AsyncMemory):
        if session is None:
            sid = (await memory.create_session(user, private=private)).id
        else:
            sid = _owned(await memory.get_session(session), user, private)
    elif session is None:
        sid = (await asyncio.to_thread(memory.create_session, user, private=private)).id
    else:
        sid = _owned(await asyncio.to_thread(memory.get_session, session), user, private)
    return cast(ClientT, _Client(client, _Binding(memory, sid, budget), asynchronous))


def session_of(client: object) -> str:
    """The id of the session a remembering client logs to (``client.memvault_session``)."""
    if not isinstance(client, _Client):
        raise ValidationError(f"not a client made by memvault.openai.remember: {shown(client)}")
    return client.memvault_session


# -- checking what remember is given ----------------------------------------------------------


def _openai() -> ModuleType:
    """The ``openai`` package, or a ConfigError naming the extra that installs it."""
    try:
        import openai
    except ImportError as missing:
        raise extra_needed(missing, "openai", "memvault.openai") from None
    return openai


def _checked_client(client: object, memory: object, *, awaits: bool) -> bool:
    """Check the client and the memory :func:`remember` is given (``awaits``: whether it can
    await an AsyncMemory); whether the client is an async one."""
    openai = _openai()
    if isinstance(client, _Client):
        raise ValidationError(f"this client already remembers (session {client.memvault_session})")
    if not isinstance(client, openai.OpenAI | openai.AsyncOpenAI):
        raise ValidationError(
            f"remember wraps an openai.OpenAI or openai.AsyncOpenAI client, got {shown(client)}"
        )
    asynchronous = isinstance(client, openai.AsyncOpenAI)
    if not isinstance(memory, Memory | AsyncMemory):
        raise ValidationError(
            f"memory must be a memvault Memory or AsyncMemory, got {shown(memory)}"
        )
    if isinstance(memory, AsyncMemory) and not asynchronous:
        raise ConfigError("an AsyncMemory serves an AsyncOpenAI client; give OpenAI a Memory")
    if isinstance(memory, AsyncMemory) and not awaits:
        raise ConfigError(
            "an AsyncMemory makes its session with await: "
            "client = await memvault.openai.aremember(client, memory, user=...)"
        )
    return asynchronous


def _checked_session(user: object, session: object, private: object, budget: object) -> None:
    """Check the arguments that pick the session, before anything is made."""
    if not isinstance(user, str):
        raise ValidationError(f"user must be a user id (a string), got {shown(user)}")
    Scope.user(user)
    if session is not None and not isinstance(session, str):
        raise ValidationError(f"session must be a session id (a string), got {shown(session)}")
    check.flag("private", private)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise ValidationError(f"budget must be a positive number of tokens, got {shown(budget)}")


def _owned(found: Session, user: str, private: bool) -> str:
    """The id of the session given to remember, if it is ``user``'s (and private, if asked)."""
    if found.user_id != user:
        raise ValidationError(f"session {found.id} is not {user}'s: it belongs to another user")
    if private and not found.private:
        raise ValidationError(f"session {found.id} is not private: private=True makes a new one")
    return found.id


# -- the messages of a request (pure) ---------------------------------------------------------


def _field(item: object, name: str) -> Any:
    """A field of a message or a part: a dict's key, or a model's attribute (None if absent)."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def text_of(content: object) -> str:
    """The text of a message's content: itself, or its text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, Iterable):
        return ""
    texts = (_field(part, "text") for part in content if _field(part, "type") == "text")
    return "\n".join(text for text in texts if isinstance(text, str))


@dataclass(frozen=True, slots=True)
class Said:
    """What a request's messages say, as memvault reads them."""

    base: str
    """The caller's own instructions: the text of its leading system (or developer) messages."""
    role: str
    """The role the system message sent takes: the caller's own, else ``system``."""
    rest: tuple[Any, ...]
    """The caller's messages after its instructions, as given."""
    query: str | None
    """What recall looks for: the last user message (its end, when it is long)."""
    user: str | None
    """The user's new words: the user messages after the last answer (None: none)."""


def request_of(kwargs: Mapping[str, Any]) -> Said | None:
    """What a call's ``messages`` say (None: it has none, or not a list of them)."""
    messages = kwargs.get("messages")
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        return None
    return said(messages)


def said(messages: Iterable[Any]) -> Said:
    """Read a request's ``messages``."""
    given = list(messages)
    lead = 0
    while lead < len(given) and _field(given[lead], "role") in SYSTEM_ROLES:
        lead += 1
    base = "\n\n".join(text_of(_field(m, "content")) for m in given[:lead]).strip()
    role = _field(given[0], "role") if lead else "system"
    users = [text_of(_field(m, "content")) for m in given if _field(m, "role") == "user"]
    query = check.asked(users[-1]) if users else None
    return Said(base, role, tuple(given[lead:]), query, _new_words(given))


def _new_words(messages: Sequence[Any]) -> str | None:
    """The text of the user messages after the last assistant message (a call after a tool's
    answer has none: its user message was logged with the call that asked for the tool)."""
    last = max((n for n, m in enumerate(messages) if _field(m, "role") == "assistant"), default=-1)
    fresh = [_field(m, "content") for m in messages[last + 1 :] if _field(m, "role") == "user"]
    text = "\n\n".join(t for t in map(text_of, fresh) if t.strip())
    return text or None


def with_memory(request: Said, prompt: str, context: HierarchicalContext) -> list[Any]:
    """The messages to send: one system message — the system prompt, then the memories
    relevant to the request that the prompt does not hold already, as data — and the caller's
    messages after its own instructions. No system message if there is nothing to say."""
    shown_lines = set(prompt.splitlines())
    fresh = [hit for hit in context.relevant if relevant_line(hit) not in shown_lines]
    parts = [prompt.strip(), relevant_message(fresh).content if fresh else ""]
    system = "\n\n".join(part for part in parts if part)
    if not system:
        return list(request.rest)
    return [{"role": request.role, "content": system}, *request.rest]


def answer_of(completion: Any) -> str | None:
    """The text of a completion's first choice (None: no text, e.g. only tool calls)."""
    choices = _field(completion, "choices") or ()
    message = _field(choices[0], "message") if choices else None
    return _text_or_none(_field(message, "content"))


def _text_or_none(text: object) -> str | None:
    return text if isinstance(text, str) and text.strip() else None


# -- the memory's side: prepare a request, log an exchange ------------------------------------


@dataclass(frozen=True, slots=True)
class _Binding:
    """A session of a memory, as a wrapped client uses it."""

    memory: Memory | AsyncMemory
    session_id: str
    budget: int

    def ready(self, kwargs: dict[str, Any]) -> tuple[Said | None, dict[str, Any]]:
        """A call's request and its arguments with memory (a blocking Memory); None and the
        arguments as given if it has no messages to read (the client says what is wrong)."""
        request = request_of(kwargs)
        if request is None:
            return None, kwargs
        return request, {**kwargs, "messages": self.prepared(request)}

    async def aready(self, kwargs: dict[str, Any]) -> tuple[Said | None, dict[str, Any]]:
        """:meth:`ready` without blocking the event loop."""
        request = request_of(kwargs)
        if request is None:
            return None, kwargs
        return request, {**kwargs, "messages": await self.aprepared(request)}

    def prepared(self, request: Said) -> list[Any]:
        """The messages to send, with memory (a blocking Memory)."""
        memory = cast(Memory, self.memory)
        prompt = memory.system_prompt(self.session_id, request.base)
        context = memory.recall(self.session_id, self.budget, query=request.query)
        return with_memory(request, prompt, context)

    async def aprepared(self, request: Said) -> list[Any]:
        """:meth:`prepared` without blocking the event loop."""
        memory = self.memory
        if not isinstance(memory, AsyncMemory):
            return await asyncio.to_thread(self.prepared, request)
        prompt = await memory.system_prompt(self.session_id, request.base)
        context = await memory.recall(self.session_id, self.budget, query=request.query)
        return with_memory(request, prompt, context)

    def keep(self, user: str | None, answer: str | None) -> None:
        """Log an exchange (a blocking Memory); a failure is logged, never raised."""
        if user is None and answer is None:
            return
        try:
            cast(Memory, self.memory).add_turn(self.session_id, user=user, assistant=answer)
        except Exception as exc:
            self._failed(exc)

    async def akeep(self, user: str | None, answer: str | None) -> None:
        """:meth:`keep` without blocking the event loop."""
        memory = self.memory
        if not isinstance(memory, AsyncMemory):
            await asyncio.to_thread(self.keep, user, answer)
            return
        if user is None and answer is None:
            return
        try:
            await memory.add_turn(self.session_id, user=user, assistant=answer)
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        log.error(
            "memvault could not log an exchange of session %s (the answer was returned): %s: %s",
            self.session_id,
            type(exc).__name__,
            exc,
            exc_info=exc,
        )


# -- proxies ----------------------------------------------------------------------------------


class _Proxy:
    """Stands for the object it wraps: what it does not define is the wrapped object's, and
    ``isinstance`` sees the wrapped object's class."""

    __slots__ = ("_binding", "_wrapped")
    _binding: _Binding
    _wrapped: Any

    def __init__(self, wrapped: Any, binding: _Binding) -> None:
        object.__setattr__(self, "_wrapped", wrapped)
        object.__setattr__(self, "_binding", binding)

    @property  # type: ignore[misc]
    def __class__(self) -> type[Any]:
        return type(self._wrapped)

    def __getattr__(self, name: str) -> Any:
        if name in _Proxy.__slots__:  # not set yet (a copy being made): not the wrapped one's
            raise AttributeError(name)
        return getattr(self._wrapped, name)

    def __dir__(self) -> list[str]:
        return sorted({*dir(self._wrapped), *dir(type(self))})

    def __repr__(self) -> str:
        return f"<memvault.openai {self._wrapped!r} session={self._binding.session_id!r}>"


class _Client(_Proxy):
    """A client whose chat completions remember."""

    __slots__ = ("_asynchronous",)

    def __init__(self, wrapped: Any, binding: _Binding, asynchronous: bool) -> None:
        super().__init__(wrapped, binding)
        object.__setattr__(self, "_asynchronous", asynchronous)

    @property
    def memvault_session(self) -> str:
        """The id of the session this client's exchanges are logged in."""
        return self._binding.session_id

    @property
    def memvault_memory(self) -> Memory | AsyncMemory:
        """The memory this client remembers with."""
        return self._binding.memory

    @property
    def chat(self) -> Any:
        return _Chat(self._wrapped.chat, self._binding, self._asynchronous)

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        """The client's ``copy`` (``with_options``), remembering in the same session."""
        copied = self._wrapped.copy(*args, **kwargs)
        return _Client(copied, self._binding, self._asynchronous)

    with_options = copy

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._wrapped, name, value)

    def __enter__(self) -> Any:
        self._wrapped.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._wrapped.__exit__(*exc)

    async def __aenter__(self) -> Any:
        await self._wrapped.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._wrapped.__aexit__(*exc)


class _Chat(_Proxy):
    """A client's ``chat``, whose ``completions`` remember."""

    __slots__ = ("_asynchronous",)

    def __init__(self, wrapped: Any, binding: _Binding, asynchronous: bool) -> None:
        super().__init__(wrapped, binding)
        object.__setattr__(self, "_asynchronous", asynchronous)

    @property
    def completions(self) -> Any:
        kind = _AsyncCompletions if self._asynchronous else _Completions
        return kind(self._wrapped.completions, self._binding)


class _Completions(_Proxy):
    """``chat.completions`` of a blocking client: ``create``, ``parse`` and ``stream``
    remember; the rest is the client's."""

    __slots__ = ()

    def create(self, *args: Any, **kwargs: Any) -> Any:
        request, kwargs = self._binding.ready(kwargs)
        reply = self._wrapped.create(*args, **kwargs)
        if request is not None and isinstance(reply, _openai().Stream):
            return _Stream(reply, self._binding, request.user)
        if request is not None:
            self._binding.keep(request.user, answer_of(reply))
        return reply

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        request, kwargs = self._binding.ready(kwargs)
        reply = self._wrapped.parse(*args, **kwargs)
        if request is not None:
            self._binding.keep(request.user, answer_of(reply))
        return reply

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        """The client's stream manager, whose request is made (with memory) on entering it."""
        return _StreamManager(self._wrapped, self._binding, args, kwargs)


class _AsyncCompletions(_Proxy):
    """``chat.completions`` of an async client: ``create``, ``parse`` and ``stream``
    remember; the rest is the client's."""

    __slots__ = ()

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        request, kwargs = await self._binding.aready(kwargs)
        reply = await self._wrapped.create(*args, **kwargs)
        if request is not None and isinstance(reply, _openai().AsyncStream):
            return _AsyncStream(reply, self._binding, request.user)
        if request is not None:
            await self._binding.akeep(request.user, answer_of(reply))
        return reply

    async def parse(self, *args: Any, **kwargs: Any) -> Any:
        request, kwargs = await self._binding.aready(kwargs)
        reply = await self._wrapped.parse(*args, **kwargs)
        if request is not None:
            await self._binding.akeep(request.user, answer_of(reply))
        return reply

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        """The client's stream manager, whose request is made (with memory) on entering it."""
        return _StreamManager(self._wrapped, self._binding, args, kwargs)


# -- streams ----------------------------------------------------------------------------------


class _Received:
    """The text of a stream's deltas so far (its first choice's), and whether it was logged."""

    def __init__(self, user: str | None) -> None:
        self.user = user
        self.pieces: list[str] = []
        self.logged = False

    def take(self, chunk: Any) -> None:
        for choice in _field(chunk, "choices") or ():
            content = _field(_field(choice, "delta"), "content")
            if _field(choice, "index") == 0 and isinstance(content, str):
                self.pieces.append(content)

    def ending(
        self, complete: bool, text: str | None = None
    ) -> tuple[str | None, str | None] | None:
        """What to log as the stream ends (once): a complete stream's exchange, or what an
        abandoned one received (nothing, if it received no text). ``text``: the answer, if
        not the deltas taken."""
        if self.logged:
            return None
        self.logged = True
        answer = _text_or_none("".join(self.pieces) if text is None else text)
        return (self.user, answer) if complete or answer is not None else None


class _Stream(_Proxy):
    """A blocking stream of chunks, passed through as they come; its exchange is logged when
    it ends (read to the end, or closed)."""

    __slots__ = ("_received",)

    def __init__(self, wrapped: Any, binding: _Binding, user: str | None) -> None:
        super().__init__(wrapped, binding)
        object.__setattr__(self, "_received", _Received(user))

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> Any:
        try:
            chunk = next(self._wrapped)
        except StopIteration:
            self._end(complete=True)
            raise
        self._received.take(chunk)
        return chunk

    def close(self) -> None:
        self._wrapped.close()
        self._end(complete=False)

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _end(self, *, complete: bool) -> None:
        ending = self._received.ending(complete)
        if ending is not None:
            self._binding.keep(*ending)


class _AsyncStream(_Proxy):
    """An async stream of chunks, passed through as they come; its exchange is logged when it
    ends (read to the end, or closed)."""

    __slots__ = ("_received",)

    def __init__(self, wrapped: Any, binding: _Binding, user: str | None) -> None:
        super().__init__(wrapped, binding)
        object.__setattr__(self, "_received", _Received(user))

    def __aiter__(self) -> _AsyncStream:
        return self

    async def __anext__(self) -> Any:
        try:
            chunk = await self._wrapped.__anext__()
        except StopAsyncIteration:
            await self._end(complete=True)
            raise
        self._received.take(chunk)
        return chunk

    async def close(self) -> None:
        await self._wrapped.close()
        await self._end(complete=False)

    async def __aenter__(self) -> _AsyncStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _end(self, *, complete: bool) -> None:
        ending = self._received.ending(complete)
        if ending is not None:
            await self._binding.akeep(*ending)


class _StreamManager:
    """``with client.chat.completions.stream(...) as stream`` (``async with`` for an async
    client): the request is made with memory on entering; the exchange is logged on leaving."""

    def __init__(
        self, completions: Any, binding: _Binding, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        self._completions, self._binding = completions, binding
        self._args, self._kwargs = args, kwargs
        self._manager: Any = None
        self._stream: Any = None
        self._received: _Received | None = None  # None: a call without messages, not logged

    def __enter__(self) -> Any:
        self._opened(*self._binding.ready(self._kwargs))
        self._stream = self._manager.__enter__()
        return self._stream

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._manager.__exit__(kind, exc, tb)
        ending = self._ending()
        if ending is not None:
            self._binding.keep(*ending)

    async def __aenter__(self) -> Any:
        self._opened(*await self._binding.aready(self._kwargs))
        self._stream = await self._manager.__aenter__()
        return self._stream

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._manager.__aexit__(kind, exc, tb)
        ending = self._ending()
        if ending is not None:
            await self._binding.akeep(*ending)

    def _opened(self, request: Said | None, kwargs: dict[str, Any]) -> None:
        self._received = None if request is None else _Received(request.user)
        self._manager = self._completions.stream(*self._args, **kwargs)

    def _ending(self) -> tuple[str | None, str | None] | None:
        """What to log as the block ends: the stream's accumulated completion, complete if its
        first choice finished."""
        if self._received is None:
            return None
        try:
            snapshot = self._stream.current_completion_snapshot
        except AssertionError:  # no chunk came
            snapshot = None
        choices = _field(snapshot, "choices") or ()
        first = choices[0] if choices else None
        text = _field(_field(first, "message"), "content")
        complete = _field(first, "finish_reason") is not None
        return self._received.ending(complete, text if isinstance(text, str) else "")


__all__ = ["DEFAULT_BUDGET", "aremember", "remember", "session_of"]
