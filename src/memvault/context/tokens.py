"""Token estimates for budgets (pure).

memvault does not ship a chat model's tokenizer (and downloads none), so budgets use a documented
estimate: one token per 4 UTF-8 bytes, rounded up, plus 4 tokens of framing per message. For
English text this is within ~10-20 % of common BPE tokenizers and errs on the large side for
code and non-Latin scripts, so a window built to N estimated tokens fits N real ones in practice.
"""

from __future__ import annotations

MESSAGE_OVERHEAD = 4


def estimate(text: str) -> int:
    """Estimated tokens of ``text``."""
    return -(-len(text.encode("utf-8")) // 4)


def message_tokens(content: str) -> int:
    """Estimated tokens of one chat message with this content."""
    return estimate(content) + MESSAGE_OVERHEAD
