"""LLM tasks besides extraction: summarising a block of records for the context builder, and
compacting entries into one. Both redact what they send and what the model answers (PII never
reaches the model nor the store through them), wrap every piece of untrusted text as data (fail
closed), use the same client and accounting, and refuse a reply that echoes the data tags or
carries instructions (a summary reports, it does not instruct)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, Protocol

from ..errors import LLMError, LLMResponseError
from ..patterns import lazy
from ..security import guard, injection
from ..security.redact import Redactor
from .base import ChatMessage, ChatModel, ChatRequest

log = logging.getLogger("memvault.llm")

INSTRUCTIONS = frozenset(injection.FlagKind) - {injection.FlagKind.HIDDEN}
"""What a summary or a merged entry may not carry: it reports, it does not instruct. (Hidden
characters are the wrapper's to strip.)"""
_THINKING = lazy(r"<(think|thinking)>.*?(</\1>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = lazy(r"^```[\w-]*\s*\n?|\n?```\s*$")

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


class Fallback(Protocol):
    """What summarises without the LLM (``memvault.ExtractiveSummarizer``)."""

    def summarize(self, records: Sequence[Any]) -> str: ...


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
    carried = instructions(text)
    if carried:
        kinds = ", ".join(carried)
        raise LLMResponseError(f"the {purpose} answer carries instructions ({kinds}); not used")
    return text


def instructions(text: str) -> list[str]:
    """The kinds of instruction (:data:`INSTRUCTIONS`) a model's summary or merged entry
    carries, scanned as text in the model's voice, not the user's."""
    found = {f.kind for f in injection.scan(text, user_voice=False)}
    return sorted(str(kind) for kind in found & INSTRUCTIONS)


class LLMSummarizer:
    """A summariser for ``build_context`` (see :class:`memvault.Summarizer`) that asks the LLM.

    The records it sends and the summary it returns are redacted by ``redactor`` (default: every
    rule). When the call fails (an :class:`~memvault.errors.LLMError`, a timeout) and there is a
    ``fallback`` (``build_context``'s default has :class:`memvault.ExtractiveSummarizer`), the
    fallback's summary, redacted, is returned instead: logged, and counted in the model's usage
    (``llm_fallbacks_summary``). An answer that echoes the data tags or carries instructions
    (:func:`instructions`) is a failed call too. Its ``name`` (part of the summary cache key)
    names the model, so another model makes new summaries.
    """

    def __init__(
        self,
        chat: ChatModel,
        *,
        max_words: int = 120,
        max_tokens: int = 400,
        redactor: Redactor | None = None,
        fallback: Fallback | None = None,
    ) -> None:
        self.chat, self.max_words, self.max_tokens = chat, max_words, max_tokens
        self.redactor = redactor if redactor is not None else Redactor()
        self.fallback = fallback
        self.name = f"llm-v3-{chat.name}-{max_words}"

    def summarize(self, records: Sequence[Said]) -> str:
        try:
            text = self._ask(records)
        except (LLMError, TimeoutError) as exc:
            if self.fallback is None:
                raise
            self.chat.usage.record_fallback("summary")
            log.warning("LLM summary failed, fallback used: %s: %s", type(exc).__name__, exc)
            text = self.fallback.summarize(records)
        return self.redactor.redact(text).text

    def _ask(self, records: Sequence[Said]) -> str:
        nonce = guard.new_nonce()
        system = SUMMARY_INSTRUCTIONS.format(notice=guard.data_notice(nonce), words=self.max_words)
        user = "\n".join(
            guard.wrap(
                "record", _redacted(self.redactor, r.content), nonce, attributes={"role": r.role}
            )
            for r in records
        )
        return _answer(self.chat, (system, user), "summary", nonce, self.max_tokens)


class LLMCompaction:
    """A compaction callback for ``Memory.compact`` that asks the LLM to merge the entries:
    ``memory.compact(ids, LLMCompaction(memory.llm))``. The entries it sends and the merged
    entry it returns are redacted by ``redactor`` (default: every rule); a failed call, or an
    answer that carries instructions, raises (the compaction changes nothing)."""

    def __init__(
        self,
        chat: ChatModel,
        *,
        max_words: int = 200,
        max_tokens: int = 600,
        redactor: Redactor | None = None,
    ) -> None:
        self.chat, self.max_words, self.max_tokens = chat, max_words, max_tokens
        self.redactor = redactor if redactor is not None else Redactor()

    def __call__(self, entries: Sequence[Written]) -> str:
        nonce = guard.new_nonce()
        system = COMPACTION_INSTRUCTIONS.format(
            notice=guard.data_notice(nonce), words=self.max_words
        )
        user = "\n".join(
            guard.wrap(
                "entry", _redacted(self.redactor, e.content), nonce, attributes={"n": str(n)}
            )
            for n, e in enumerate(entries, start=1)
        )
        text = _answer(self.chat, (system, user), "compaction", nonce, self.max_tokens)
        return self.redactor.redact(text).text


def _redacted(redactor: Redactor, text: str) -> str:
    """``text`` redacted; anything but text is left for the wrapper to refuse."""
    return redactor.redact(text).text if isinstance(text, str) else text
