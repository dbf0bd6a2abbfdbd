"""The tool loop's rules (seed 001 §3), without I/O: how many rounds, when repeated failing calls
stop it, and the fallback for servers that drop the ``tool`` role.

Not ReAct: the model gets its tool results back verbatim, as OpenAI's ``tool`` messages (or,
folded, as a user turn), with no "Observation/Thought" framing, so weak local models follow.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable

from ..context.builder import Message
from ..llm.base import ChatMessage, ToolCall

MAX_ROUNDS = 10
"""Model calls of one turn, at most (the last may not call tools)."""
REPEATS = 3
"""The same call failing this many times stops the loop."""
FAILED = "error: "
"""How a tool's answer starts when the call failed."""


def signature(call: ToolCall) -> tuple[str, str]:
    """What makes two calls the same: the tool and its arguments (JSON key order aside)."""
    try:
        arguments = json.dumps(json.loads(call.arguments), sort_keys=True)
    except (ValueError, RecursionError):
        arguments = call.arguments
    return call.name, arguments


class Guard:
    """Counts a turn's failing calls; :meth:`failed` says when the loop must stop."""

    def __init__(self, repeats: int = REPEATS) -> None:
        self.repeats = repeats
        self._failures: Counter[tuple[str, str]] = Counter()

    def failed(self, call: ToolCall, answer: str) -> bool:
        """Note a call's answer; True once the same failing call was made ``repeats`` times."""
        if not answer.startswith(FAILED):
            return False
        key = signature(call)
        self._failures[key] += 1
        return self._failures[key] >= self.repeats


def chat_messages(messages: Iterable[Message], *, folded: bool) -> list[ChatMessage]:
    """A context window as the model's messages. A system message past the first (the marker of
    records left out) goes as a user turn, which every chat template takes. ``folded``: calls and
    their results go as text — the call as an assistant line, the result as a user turn
    ``<TOOL_RESULT name=…>…</TOOL_RESULT>`` — for servers that drop the ``tool`` role. Turns of
    one role in a row are one turn (strict templates want user and assistant to alternate)."""
    return merged(_converted(messages, folded=folded))


def merged(messages: Iterable[ChatMessage]) -> list[ChatMessage]:
    """Messages with each run of one role (user or assistant) as one: their texts joined, the
    calls of the last kept (a message that made calls ends its run)."""
    out: list[ChatMessage] = []
    for m in messages:
        last = out[-1] if out else None
        if last and last.role == m.role in ("user", "assistant") and not last.tool_calls:
            text = "\n\n".join(t for t in (last.content, m.content) if t)
            out[-1] = ChatMessage(m.role, text, tool_calls=m.tool_calls)
        else:
            out.append(m)
    return out


def _converted(messages: Iterable[Message], *, folded: bool) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "tool" and folded:
            out.append(ChatMessage("user", tool_result(m.name or "tool", m.content)))
        elif m.tool_calls and folded:
            calls = "; ".join(f"[called {c.name} with {c.arguments}]" for c in m.tool_calls)
            out.append(ChatMessage("assistant", f"{m.content}{calls}"))
        elif m.role == "tool":
            out.append(ChatMessage("tool", m.content, tool_call_id=m.tool_call_id, name=m.name))
        else:
            role = "user" if m.role == "system" else m.role
            out.append(ChatMessage(role, m.content, tool_calls=m.tool_calls))  # type: ignore[arg-type]
    return out


def tool_result(name: str, content: str) -> str:
    """A tool's result folded into a user turn (seed 001 §7). ``content`` is already wrapped
    as data (:func:`memvault.context.builder.guarded`)."""
    return f"<TOOL_RESULT name={name}>\n{content}\n</TOOL_RESULT>"


def drops_tool_role(error: str) -> bool:
    """Whether a server's refusal says it does not take the ``tool`` role or tool calls."""
    said = error.lower()
    refused = "http 400" in said or "http 422" in said
    return refused and ("tool" in said or "role" in said)
