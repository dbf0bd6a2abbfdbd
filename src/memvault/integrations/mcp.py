"""memvault as an MCP server (``memvault mcp``; needs ``memvault[mcp]``; see ``docs/mcp.md``).

Built on the official ``mcp`` SDK (``MCPServer``) over one :class:`~memvault.AsyncMemory`: tools
to remember, recall, forget, list, pin and demote, log a turn and learn from it, and fetch the
system prompt and context of a session; agent memory's tools (:mod:`.mcp_agents`); the Global
Memory of a user and the notes of a session as templated resources. Every result carries
structured content and readable text; every memvault error becomes an error result
(``isError``) with its message.

Over stdio the server acts in one tenant (settings or ``--tenant``). Over streamable HTTP it
keeps the REST server's rules: with ``MEMVAULT_API_KEYS`` every request needs
``Authorization: Bearer <key>`` and the key decides the tenant; the Host/Origin/content-type
guard refuses what a web page could forge; a non-loopback address needs keys.
"""

from __future__ import annotations

import hashlib
import inspect
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

from .. import __version__
from ..context.builder import ContextWindow
from ..context.plans import HierarchicalContext
from ..errors import ForbiddenError, MemvaultError, NotFoundError, extra_needed
from ..extraction.plans import Extraction, TurnResult
from ..extraction.worker import Failure
from ..facilities.model import Finding, Session, trust_tag
from ..memory import AsyncMemory
from ..types import MemoryEntry, ScopeKind, SearchHit

try:
    import anyio
    import uvicorn
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field
    from starlette.applications import Starlette
    from starlette.datastructures import Headers, MutableHeaders
    from starlette.middleware import Middleware
    from starlette.routing import Mount
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ..server.app import GuardMiddleware, error_response, printable
    from ..server.auth import AGENT_HEADER, KeyRing, actor_of, agent_of
    from ..server.guard import Guard, access_rules
    from ..server.learning import WAIT_SECONDS
except ImportError as missing:  # pragma: no cover - exercised without the extra
    raise extra_needed(missing, "mcp", "the MCP server") from None

Ctx = Context[Any, Any]
MCP_AGENT = "mcp"
"""The agent the audit log names for changes made over MCP by a client that names none."""
Answer = tuple[str, dict[str, Any]]
"""What an operation answers: readable text, and the same as structured content."""

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
KEPT_SESSIONS = 100_000
"""MCP sessions whose key is remembered (an older one is refused: its client opens another)."""
INSTRUCTIONS = """\
memvault is your long-term memory: it keeps what you learn about users and their work across
conversations, searchable by meaning.

Every memory lives in exactly one scope, written kind:id — user:<user_id> (about one person,
across all their conversations), session:<session_id> (only this conversation),
workspace:<id>, org:<id> (shared by a team or company), object:<type>:<id> (about one thing).
A search never crosses scopes.

Typical use:
1. At the start of a conversation, call recall with what the user asks (scope user:<user_id>);
   or, if you keep memvault sessions, create_session (or reuse one from list_sessions) and call
   get_system_prompt to get everything remembered about the user.
2. When the user tells you something worth keeping (a preference, a decision, a fact about
   them or their work), call remember — or, with a session, log each exchange with
   remember_turn and memvault learns from it by itself.
3. Call forget when the user asks you to forget something or a memory is wrong.

If you run tasks with strategies, sub-agents or tools, memvault also keeps your own work: call
check_failures, suggest_decomposition and choose_strategy before a task, and record_execution
(and record_decomposition) after it, so the next choice learns from this one.
"""


# -- tenancy ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tenancy:
    """Which tenant a request acts in: the memory's own, or (with keys) its Bearer key's."""

    memory: AsyncMemory
    keys: KeyRing = field(default_factory=KeyRing)

    def memory_for(self, headers: Mapping[str, str] | None) -> AsyncMemory:
        """The memory view of the request's tenant; ForbiddenError for a missing or unknown key."""
        agent = agent_of(None if headers is None else headers.get(AGENT_HEADER))
        memory = self.memory
        if not self.keys.enabled:
            return memory.as_actor(actor_of(memory.actor, agent or MCP_AGENT))
        key = self.keys.key_for(None if headers is None else headers.get("authorization"))
        if key is None:
            raise ForbiddenError("a valid 'Authorization: Bearer <key>' is required")
        return key.view(memory, agent or MCP_AGENT)


# -- readable text (pure) -----------------------------------------------------------------------


def entry_text(entry: MemoryEntry) -> str:
    """``[category] content (id …, scope) #tags``."""
    category = f"[{entry.category}] " if entry.category else ""
    tags = "".join(f" #{tag}" for tag in entry.tags)
    return f"{category}{entry.content} (id {entry.id}, {entry.scope}){tags}"


def entry_lines(entries: Iterable[MemoryEntry], empty: str = "(none)") -> str:
    return "\n".join(f"- {entry_text(entry)}" for entry in entries) or empty


def hit_lines(hits: Iterable[SearchHit]) -> str:
    lines = [
        f"{n}. (relevance {hit.relevance:.2f}) {entry_text(hit.entry)}"
        for n, hit in enumerate(hits, 1)
    ]
    return "\n".join(lines) or "nothing relevant is remembered"


def written_text(entry: MemoryEntry, verb: str) -> str:
    if entry.duplicate:
        return f"Already remembered as {entry.id} in {entry.scope} (the same fact); nothing new."
    return f"{verb} in {entry.scope} as {entry.id}: {entry.content}"


def learned_text(turn: TurnResult, learned: Extraction | Failure | None) -> str:
    """What a turn did: the records logged, then what extraction learned from them."""
    head = f"Logged {len(turn.records)} record(s) in session {turn.session_id}."
    if turn.extraction == "off":
        return f"{head} Learning from turns is off (MEMVAULT_EXTRACTION)."
    if learned is None:
        return f"{head} Still learning from it in the background."
    if isinstance(learned, Failure):
        return f"{head} Learning from it failed: {learned.error}"
    lines = [f"{_home(e)}: {entry_text(e)}" for e in (*learned.stored, *learned.merged)]
    lines += [f"superseded {entry_id}" for entry_id in learned.superseded]
    return "\n".join([head, "Learned:" if lines else "Nothing new learned.", *lines])


def _home(entry: MemoryEntry) -> str:
    return "Global Memory" if entry.scope.kind is ScopeKind.USER else "Session Memory"


def session_line(session: Session) -> str:
    private = ", private" if session.private else ""
    return f"- {session.id}: {session.title} (user {session.user_id}{private})"


def global_memory_text(user_id: str, entries: Iterable[MemoryEntry]) -> str:
    lines = [f"- {trust_tag(e.provenance.source)} {entry_text(e)}" for e in entries]
    body = "\n".join(lines) or "(nothing remembered yet)"
    return f"# Global Memory of user {user_id}\n\n{body}\n"


def notes_text(session_id: str, notes: Iterable[MemoryEntry], findings: Iterable[Finding]) -> str:
    found = [f"- {trust_tag(f.source)} {f.content} (id {f.entry_id})" for f in findings]
    return (
        f"# Notes of session {session_id}\n\n## Session Memory\n\n{entry_lines(notes)}\n\n"
        f"## Findings\n\n{chr(10).join(found) or '(none)'}\n"
    )


def failure(error: MemvaultError) -> CallToolResult:
    """A memvault error as a tool error result: its type and message, never a traceback."""
    kind, message = type(error).__name__, printable(str(error))
    return CallToolResult(
        content=[TextContent(type="text", text=f"{kind}: {message}")],
        structured_content={"error": {"type": kind, "message": message}},
        is_error=True,
    )


def success(answer: Answer) -> CallToolResult:
    text, data = answer
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


# -- operations: one memory in, an answer out ---------------------------------------------------


async def _remember(
    memory: AsyncMemory,
    content: str,
    scope: str,
    *,
    tags: list[str] | None,
    category: str | None,
    ttl_seconds: float | None,
) -> Answer:
    entry = await memory.write(
        content,
        scope=scope,
        tags=tags,
        category=category,
        ttl=ttl_seconds,
        provenance={"source": "mcp"},
    )
    return written_text(entry, "Remembered"), {**entry.to_dict(), "duplicate": entry.duplicate}


async def _remember_turn(
    memory: AsyncMemory, session_id: str, user: str | None, assistant: str | None
) -> Answer:
    turn = await memory.add_turn(session_id, user=user, assistant=assistant)
    learned = None
    if turn.extraction != "off" and await memory.flush(WAIT_SECONDS, session_id=session_id):
        learned = await memory.last_extraction(session_id)
    data = {**turn.to_dict(), "learned": None if learned is None else learned.to_dict()}
    return learned_text(turn, learned), data


async def _recall(
    memory: AsyncMemory, query: str, scope: str, tags: list[str] | None, limit: int
) -> Answer:
    floor = memory.settings.min_relevance
    hits = await memory.search(
        query, scope, tags=tags, limit=limit, rerank=True, min_relevance=floor
    )
    if hits:  # what an agent was given counts as used (docs/trust.md: decay)
        await memory.reinforce([hit.entry.id for hit in hits])
    return hit_lines(hits), {"hits": [hit.to_dict() for hit in hits]}


async def _reinforce(memory: AsyncMemory, memory_ids: list[str]) -> Answer:
    done = await memory.reinforce(memory_ids)
    return f"Reinforced {done} of {len(memory_ids)} memories.", {"reinforced": done}


async def _forget(memory: AsyncMemory, memory_id: str) -> Answer:
    deleted = await memory.delete(memory_id)
    text = f"Forgot {memory_id}." if deleted else f"No memory {memory_id}; nothing to forget."
    return text, {"id": memory_id, "deleted": deleted}


async def _list_memories(
    memory: AsyncMemory,
    scope: str,
    limit: int,
    cursor: str | None,
    order: Literal["newest", "oldest"],
) -> Answer:
    page = await memory.list(scope, limit=limit, cursor=cursor, order=order)
    text = entry_lines(page.entries, f"no memories in {scope}")
    if page.next_cursor:
        text += f"\nMore: call list_memories again with cursor={page.next_cursor!r}."
    data = {"entries": [e.to_dict() for e in page.entries], "next_cursor": page.next_cursor}
    return text, data


async def _pin(memory: AsyncMemory, memory_id: str, category: str) -> Answer:
    entry = await memory.pin(memory_id, category=category)
    return written_text(entry, "Pinned to Global Memory"), entry.to_dict()


async def _demote(memory: AsyncMemory, memory_id: str, session_id: str, category: str) -> Answer:
    entry = await memory.demote(memory_id, session_id, category=category)
    return written_text(entry, "Moved to Session Memory"), entry.to_dict()


async def _system_prompt(memory: AsyncMemory, session_id: str, base: str) -> Answer:
    prompt = await memory.system_prompt(session_id, base)
    return prompt or "(nothing remembered yet)", {"session_id": session_id, "prompt": prompt}


async def _context(
    memory: AsyncMemory, session_id: str, budget: int, recall: bool, query: str | None
) -> Answer:
    built: ContextWindow | HierarchicalContext
    if recall or query is not None:
        built = await memory.recall(session_id, budget, query=query)
    else:
        built = await memory.build_context(session_id, budget)
    text = "\n\n".join(f"{m.role}: {m.content}" for m in built.messages)
    return text or "(the session has no records yet)", built.to_dict()


async def _create_session(memory: AsyncMemory, user_id: str, title: str, private: bool) -> Answer:
    session = await memory.create_session(user_id, title=title, private=private)
    return f"Started session {session.id} for user {user_id}.", session.to_dict()


async def _list_sessions(memory: AsyncMemory, user_id: str | None, limit: int) -> Answer:
    sessions = await memory.list_sessions(user_id, limit=limit)
    text = "\n".join(session_line(s) for s in sessions) or "no sessions"
    return text, {"sessions": [s.to_dict() for s in sessions]}


# -- the server ---------------------------------------------------------------------------------


ScopeArg = Annotated[
    str,
    Field(
        description="Scope, written kind:id: user:<user_id> (one person, across conversations), "
        "session:<session_id> (one conversation), workspace:<id>, org:<id>, object:<type>:<id>.",
        examples=["user:alice", "workspace:acme-web"],
    ),
]
SessionId = Annotated[
    str, Field(description="A session id, from create_session or list_sessions.", min_length=1)
]
MemoryId = Annotated[
    str, Field(description="A memory's id, from remember, recall or list_memories.", min_length=1)
]
Tags = Annotated[
    list[str] | None,
    Field(description="Short labels; filters match memories with ALL of them.", examples=[["ui"]]),
]
Limit = Annotated[int, Field(description="Most results to return.", ge=1, le=100)]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Operation = Callable[[AsyncMemory], Awaitable[Answer]]
Run = Callable[[Ctx, Operation], Awaitable[CallToolResult]]
Read = Callable[[Ctx, Callable[[AsyncMemory], Awaitable[str]]], Awaitable[str]]


def described(doc: str | None) -> str:
    """A docstring as a description: dedented, each paragraph on one line."""
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


F = TypeVar("F", bound=Callable[..., Any])


def tool(server: MCPServer[Any], annotations: ToolAnnotations) -> Callable[[F], F]:
    """Register a tool under its function's name, its docstring as the description."""

    def register(fn: F) -> F:
        server.add_tool(fn, description=described(fn.__doc__), annotations=annotations)
        return fn

    return register


def build_server(tenancy: Tenancy, log_level: str = "WARNING") -> MCPServer[Any]:
    """The MCP server: memvault's tools and resources, each acting in its request's tenant."""
    server: MCPServer[Any] = MCPServer(
        "memvault",
        title="memvault",
        description="Long-term memory for LLM agents: scoped, searchable, offline.",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=log_level.upper(),  # type: ignore[arg-type]
    )

    async def run(ctx: Ctx, operation: Operation) -> CallToolResult:
        try:
            return success(await operation(tenancy.memory_for(ctx.headers)))
        except MemvaultError as error:
            return failure(error)

    async def read(ctx: Ctx, operation: Callable[[AsyncMemory], Awaitable[str]]) -> str:
        try:
            return await operation(tenancy.memory_for(ctx.headers))
        except NotFoundError as error:
            raise ResourceNotFoundError(printable(str(error))) from None
        except MemvaultError as error:
            raise ResourceError(printable(str(error))) from None

    from .mcp_agents import add_agent_tools  # built on this module's tool helpers

    add_store_tools(server, run)
    add_session_tools(server, run)
    add_agent_tools(server, run)
    add_resources(server, read)
    return server


def add_store_tools(server: MCPServer[Any], run: Run) -> None:
    """remember, recall, reinforce, forget, list_memories: memories of any scope."""

    @tool(server, WRITES)
    async def remember(
        *,
        content: Annotated[str, Field(description="The memory: one self-contained statement.")],
        scope: ScopeArg,
        ctx: Ctx,
        tags: Tags = None,
        category: Annotated[
            str | None, Field(description="One word: preference, decision, identity, fact, note…")
        ] = None,
        ttl_seconds: Annotated[
            float | None, Field(description="Forget it after this many seconds.", gt=0)
        ] = None,
    ) -> CallToolResult:
        """Store one memory in a scope, to find it again in later conversations.

        Call it when the user tells you something worth keeping beyond this conversation: a
        preference, a decision, a fact about them, their project or their organisation. Write one
        self-contained statement ("Alice prefers Go for backend services", not "she likes it").
        In a user scope, category preference, decision or identity puts it in the user's Global
        Memory, which get_system_prompt shows in every session of that user.
        Example: {"content": "Alice prefers dark mode", "scope": "user:alice",
        "category": "preference", "tags": ["ui"]}.
        Returns the memory's id; restating a memory already there returns that one
        (duplicate: true) and stores nothing new.
        """
        return await run(
            ctx,
            lambda m: _remember(
                m, content, scope, tags=tags, category=category, ttl_seconds=ttl_seconds
            ),
        )

    @tool(server, READ_ONLY)
    async def recall(
        query: Annotated[str, Field(description="What you want to know, in your own words.")],
        scope: ScopeArg,
        ctx: Ctx,
        tags: Tags = None,
        limit: Limit = 10,
    ) -> CallToolResult:
        """Search the memories of one scope by meaning and by keywords, best match first.

        Call it before answering whenever earlier conversations may matter: the user's
        preferences, facts about them or their work, past decisions. Search the user's scope for
        personal things, a workspace or org scope for shared knowledge. Nothing outside the scope
        is searched.
        Example: {"query": "which programming language does she prefer", "scope": "user:alice"}.
        Each hit has the memory's id (for forget or pin), its content and its relevance (0..1);
        hits too weak to bear on the query are left out, so no hit means nothing relevant is
        remembered.
        """
        return await run(ctx, lambda m: _recall(m, query, scope, tags, limit))

    @tool(server, WRITES)
    async def reinforce(
        memory_ids: Annotated[
            list[str],
            Field(description="Ids of memories that helped, from recall.", min_length=1),
        ],
        ctx: Ctx,
    ) -> CallToolResult:
        """Tell memory which memories helped, so they stay strong.

        Call it after a memory you recalled actually answered the user's question or shaped
        your answer. Memories that are never used fade in searches that ask for it (nothing is
        deleted); recall already counts what it returns, so reinforce what proved useful.
        Example: {"memory_ids": ["01JQ3Z8K6T2V9X4B7N5M1C0D2E"]}. Returns how many were
        reinforced (ids that are not memories of yours are skipped).
        """
        return await run(ctx, lambda m: _reinforce(m, memory_ids))

    @tool(server, DELETES)
    async def forget(memory_id: MemoryId, ctx: Ctx) -> CallToolResult:
        """Delete one memory for good, by its id.

        Call it when the user asks you to forget something, or a memory turns out to be wrong
        (to replace a fact, forget the old one and remember the new one). Find the id with recall
        or list_memories first. Forgetting an id that does not exist is not an error
        (deleted: false). Example: {"memory_id": "01JQ3Z8K6T2V9X4B7N5M1C0D2E"}.
        """
        return await run(ctx, lambda m: _forget(m, memory_id))

    @tool(server, READ_ONLY)
    async def list_memories(
        scope: ScopeArg,
        ctx: Ctx,
        limit: Limit = 20,
        cursor: Annotated[
            str | None, Field(description="next_cursor of the previous page, to continue.")
        ] = None,
        order: Annotated[
            Literal["newest", "oldest"], Field(description="newest (default) or oldest first.")
        ] = "newest",
    ) -> CallToolResult:
        """List the memories of one scope, a page at a time, newest first.

        Use it to review everything remembered in a scope (to search, use recall). When there is
        more, the answer has next_cursor: pass it back as cursor for the next page.
        Example: {"scope": "user:alice", "limit": 20}.
        """
        return await run(ctx, lambda m: _list_memories(m, scope, limit, cursor, order))


def add_session_tools(server: MCPServer[Any], run: Run) -> None:
    """Sessions: create and list them, log turns, pin and demote, the prompt and the context."""

    @tool(server, WRITES)
    async def create_session(
        user_id: Annotated[str, Field(description="Who the conversation is with.", min_length=1)],
        ctx: Ctx,
        title: Annotated[str, Field(description="A short title.", min_length=1)] = "New session",
        private: Annotated[
            bool, Field(description="true: nothing from it ever reaches Global Memory.")
        ] = False,
    ) -> CallToolResult:
        """Start a memvault session: one conversation with one user.

        Call it at the start of a conversation you want memvault to learn from; keep the
        returned id for remember_turn, get_system_prompt, get_context, pin and demote. To
        continue an earlier conversation, find its id with list_sessions instead.
        Example: {"user_id": "alice", "title": "Q1 sales analysis"}.
        """
        return await run(ctx, lambda m: _create_session(m, user_id, title, private))

    @tool(server, READ_ONLY)
    async def list_sessions(
        ctx: Ctx,
        user_id: Annotated[
            str | None, Field(description="Only this user's sessions (default: everyone's).")
        ] = None,
        limit: Limit = 20,
    ) -> CallToolResult:
        """List sessions, newest first, to resume one. Example: {"user_id": "alice"}."""
        return await run(ctx, lambda m: _list_sessions(m, user_id, limit))

    @tool(server, WRITES)
    async def remember_turn(
        session_id: SessionId,
        ctx: Ctx,
        user: Annotated[str | None, Field(description="What the user said.")] = None,
        assistant: Annotated[str | None, Field(description="What you answered.")] = None,
    ) -> CallToolResult:
        """Log one exchange of a session and learn from it.

        Call it after each exchange of a session (from create_session): memvault keeps the
        conversation's log and extracts what is worth remembering by itself — preferences,
        decisions and who the user is go to the user's Global Memory, other facts to the
        session's Session Memory; personal data is redacted, and a fact that changed supersedes
        the old one. It waits for the extraction and returns what was learned.
        Example: {"session_id": "s-01jq3z8k6t", "user": "I moved to Paris last month.",
        "assistant": "Congratulations on the move!"}.
        """
        return await run(ctx, lambda m: _remember_turn(m, session_id, user, assistant))

    @tool(server, WRITES)
    async def pin(
        memory_id: Annotated[
            str, Field(description="A Session Memory note or Finding of a session.", min_length=1)
        ],
        ctx: Ctx,
        category: Annotated[
            Literal["preference", "decision", "identity"],
            Field(description="What it becomes in Global Memory."),
        ] = "decision",
    ) -> CallToolResult:
        """Pin a session's note or finding to its user's Global Memory, for every future session.

        Call it when something learned in one conversation should hold in all of the user's
        conversations. The original stays in the session. Refused for private sessions.
        Example: {"memory_id": "01JQ3Z8K6T2V9X4B7N5M1C0D2E", "category": "preference"}.
        """
        return await run(ctx, lambda m: _pin(m, memory_id, category))

    @tool(server, WRITES)
    async def demote(
        memory_id: Annotated[
            str, Field(description="A Global Memory entry of the user.", min_length=1)
        ],
        session_id: SessionId,
        ctx: Ctx,
        category: Annotated[
            Literal["fact", "context"], Field(description="What it becomes in the session.")
        ] = "fact",
    ) -> CallToolResult:
        """Move a Global Memory entry back into one session of the same user.

        Call it when something remembered for every conversation should only apply to one (it
        leaves Global Memory). Example: {"memory_id": "01JQ3Z8K6T2V9X4B7N5M1C0D2E",
        "session_id": "s-01jq3z8k6t"}.
        """
        return await run(ctx, lambda m: _demote(m, memory_id, session_id, category))

    @tool(server, READ_ONLY)
    async def get_system_prompt(
        session_id: SessionId,
        ctx: Ctx,
        base: Annotated[str, Field(description="Your own instructions, put first.")] = "",
    ) -> CallToolResult:
        """The system prompt of a session: everything memvault remembers that applies to it.

        Your base instructions, then the user's Global Memory, the session's Session Memory and
        its Findings, each marked [user-stated] or [derived]. Call it at the start of a session
        and after learning, and follow it as context about the user.
        Example: {"session_id": "s-01jq3z8k6t"}.
        """
        return await run(ctx, lambda m: _system_prompt(m, session_id, base))

    @tool(server, READ_ONLY)
    async def get_context(
        session_id: SessionId,
        ctx: Ctx,
        budget: Annotated[int, Field(description="Tokens the messages may take.", ge=1)] = 2000,
        recall: Annotated[
            bool, Field(description="Also the memories most relevant to the conversation.")
        ] = False,
        query: Annotated[
            str | None, Field(description="Relevant to this instead of the last user message.")
        ] = None,
    ) -> CallToolResult:
        """The conversation of a session, fitted to a token budget, for your next model call.

        The newest records verbatim, older ones folded into summaries, with time markers; with
        recall (or a query), first the memories most relevant to the conversation from Global
        Memory, the session's notes and the user's other sessions.
        Example: {"session_id": "s-01jq3z8k6t", "budget": 4000, "recall": true}.
        """
        return await run(ctx, lambda m: _context(m, session_id, budget, recall, query))


def add_resources(server: MCPServer[Any], read: Read) -> None:
    """The Global Memory of a user and the notes of a session, as templated resources."""

    @server.resource(
        "memvault://users/{user_id}/global-memory",
        name="global-memory",
        title="Global Memory of a user",
        description="What memvault remembers about a user in every session: preferences, "
        "decisions and identity facts, newest first, with ids and trust tags.",
        mime_type="text/markdown",
    )
    async def global_memory_resource(user_id: str, ctx: Ctx) -> str:
        async def text(memory: AsyncMemory) -> str:
            return global_memory_text(user_id, await memory.global_memory(user_id))

        return await read(ctx, text)

    @server.resource(
        "memvault://sessions/{session_id}/notes",
        name="session-notes",
        title="Notes of a session",
        description="A session's Session Memory (facts and context) and Findings, newest first, "
        "with ids.",
        mime_type="text/markdown",
    )
    async def session_notes_resource(session_id: str, ctx: Ctx) -> str:
        async def text(memory: AsyncMemory) -> str:
            notes = await memory.session_memory(session_id)
            return notes_text(session_id, notes, await memory.findings(session_id))

        return await read(ctx, text)


# -- transports ---------------------------------------------------------------------------------


class KeyCheck:
    """Refuse (401) an HTTP request without a known Bearer key before the MCP app reads it, and
    keep each MCP session to the key that opened it: a request naming a session another key
    opened, or one this server does not know, is answered as for an unknown session (404)."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app, self.keys = app, keys
        self.owners: OrderedDict[str, str] = OrderedDict()
        """The digest of the key that opened each session (the latest ``KEPT_SESSIONS``; an
        older session is refused, and its client opens a new one)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keys.enabled:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        key = headers.get("authorization")
        session = headers.get(SESSION_HEADER)
        if self.keys.tenant_for(key) is None:
            refusal = error_response(
                401,
                "Unauthorized",
                "a valid 'Authorization: Bearer <key>' is required",
                {"www-authenticate": "Bearer"},
            )
        elif session is not None and self.owners.get(session) != _digest(key):
            refusal = error_response(404, "NotFound", "session not found")
        else:
            await self.app(scope, receive, self._noting(send, session, _digest(key), scope))
            return
        await refusal(scope, receive, send)

    def _noting(self, send: Send, session: str | None, owner: str, scope: Scope) -> Send:
        """``send``, noting the owner of a session an answer opens (and forgetting one that a
        ``DELETE`` ended)."""

        async def send_noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = MutableHeaders(scope=message).get(SESSION_HEADER)
                if session is None and opened:
                    self.owners[opened] = owner
                    while len(self.owners) > KEPT_SESSIONS:
                        self.owners.popitem(last=False)
                ended = scope["method"] == "DELETE" and message["status"] < 300
                if session is not None and ended:
                    self.owners.pop(session, None)
            await send(message)

        return send_noting


def _digest(key: str | None) -> str:
    return hashlib.sha256((key or "").encode("utf-8", "surrogatepass")).hexdigest()


def http_app(
    memory: AsyncMemory, *, keys: KeyRing, guard: Guard, log_level: str = "WARNING"
) -> Starlette:
    """The streamable HTTP app at ``/mcp``, behind the REST server's guard and the key check.
    When it shuts down it waits for pending extractions (it does not close ``memory``)."""
    server = build_server(Tenancy(memory, keys), log_level)
    mcp_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=memory.settings.max_request_bytes,
        # Host and Origin are checked by the guard, with memvault's settings.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            try:
                yield
            finally:
                await memory.flush()

    return Starlette(
        routes=[Mount("/", app=mcp_app)],
        middleware=[Middleware(GuardMiddleware, guard=guard), Middleware(KeyCheck, keys=keys)],
        lifespan=lifespan,
    )


def serve_stdio(memory: AsyncMemory, log_level: str = "WARNING") -> None:
    """Serve ``memory`` (its tenant) over standard input and output until the client leaves."""
    anyio.run(build_server(Tenancy(memory), log_level).run_stdio_async)


def serve_http(
    memory: AsyncMemory,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    allow_anonymous: bool = False,
    log_level: str = "warning",
) -> None:
    """Serve ``memory`` over streamable HTTP at ``http://host:port/mcp``; keys, allowed hosts
    and origins come from its settings (``MEMVAULT_API_KEYS``, ``_ALLOWED_HOSTS``, …)."""
    keys, guard = access_rules(memory.settings, host, allow_anonymous)
    app = http_app(memory, keys=keys, guard=guard, log_level=log_level)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
