"""LLM tasks besides extraction: summarising a block of records for the context builder, and
compacting entries into one. Both wrap every piece of untrusted text as data (fail closed), use
the same client and accounting, and refuse a reply that echoes the data tags."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from ..errors import LLMResponseError
from ..security import guard
from .base import ChatMessage, ChatModel, ChatRequest

_THINKING = re.compile(r"<(think|thinking)>.*?(</\1>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[\w-]*\s*\n?|\n?```\s*$")

SUMMARY_INSTRUCTIONS = """\
You summarise an excerpt of a conversation between a user and an AI assistant, so that the \
assistant can continue it without the full text.

{notice}

Keep what later turns need: facts stated, decisions made, open questions, names, numbers and \
dates. Write plain prose in at most {words} words, in the third person ("The user asked..."). \
Answer with the summary only."""

COMPACTION_INSTRUCTIONS = """\
You merge several memory entries about the same subject into one entry.

{notice}

Keep every distinct fact, name, number and date; drop repetitions; where entries disagree, \
keep the most recent (the last listed). Write at most {words} words. Answer with the merged \
entry only."""


class Said(Protocol):
    """A record of a conversation (``memvault.Record``)."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


class Written(Protocol):
    """A stored entry (``memvault.MemoryEntry``)."""

    @property
    def content(self) -> str: ...


def cleaned(text: str) -> str:
    """A model's answer without reasoning blocks and code fences around it."""
    text = _THINKING.sub("", text)
    return _FENCE.sub("", text.strip()).strip()


def _answer(
    chat: ChatModel, messages: tuple[str, str], purpose: str, nonce: str, limit: int
) -> str:
    system, user = messages
    request = ChatRequest(
        (ChatMessage("system", system), ChatMessage("user", user)),
        max_tokens=limit,
        purpose=purpose,
    )
    text = cleaned(chat.complete(request).text)
    if guard.leaks(text, nonce):
        raise LLMResponseError(f"the {purpose} answer echoes its data tags; it is not used")
    if not text:
        raise LLMResponseError(f"the {purpose} answer is empty")
    return text


class LLMSummarizer:
    """A summariser for ``build_context`` (see :class:`memvault.Summarizer`) that asks the LLM.

    Its ``name`` (part of the summary cache key) names the model, so another model makes new
    summaries.
    """

    def __init__(self, chat: ChatModel, *, max_words: int = 120, max_tokens: int = 400) -> None:
        self.chat, self.max_words, self.max_tokens = chat, max_words, max_tokens
        self.name = f"llm-v1-{chat.name}-{max_words}"

    def summarize(self, records: Sequence[Said]) -> str:
        nonce = guard.new_nonce()
        system = SUMMARY_INSTRUCTIONS.format(notice=guard.data_notice(nonce), words=self.max_words)
        user = "\n".join(
            guard.wrap("record", r.content, nonce, attributes={"role": r.role}) for r in records
        )
        return _answer(self.chat, (system, user), "summary", nonce, self.max_tokens)


class LLMCompaction:
    """A compaction callback for ``Memory.compact`` that asks the LLM to merge the entries:
    ``memory.compact(ids, LLMCompaction(memory.llm))``."""

    def __init__(self, chat: ChatModel, *, max_words: int = 200, max_tokens: int = 600) -> None:
        self.chat, self.max_words, self.max_tokens = chat, max_words, max_tokens

    def __call__(self, entries: Sequence[Written]) -> str:
        nonce = guard.new_nonce()
        system = COMPACTION_INSTRUCTIONS.format(
            notice=guard.data_notice(nonce), words=self.max_words
        )
        user = "\n".join(
            guard.wrap("entry", e.content, nonce, attributes={"n": str(n)})
            for n, e in enumerate(entries, start=1)
        )
        return _answer(self.chat, (system, user), "compaction", nonce, self.max_tokens)
