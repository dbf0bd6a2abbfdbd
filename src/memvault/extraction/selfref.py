"""Facts about the assistant and the machinery, not the user (pure; seed 001 §9
"IsSelfReferential").

A self-referential fact would be re-injected into every future prompt as something "known about
the user" while it describes the assistant itself — a reasoning leak, a tool, a rule of its
prompt. :func:`is_self_referential` is true for facts

- whose subject is the assistant ("The assistant will remember…", "The AI's system prompt
  says…", "I will keep that in mind"), or a model or bot doing assistant things ("the model
  uses the search tool");
- that hold the machinery: ``<think>`` tags, our wrapper tags, ``turn-N`` citations, special
  tokens, Global/Session Memory, memvault, the extraction, tool calls, a tool of
  ``tool_names``; or "the system prompt", "the assistant's instructions", "its reasoning";
- that narrate the conversation ("User asked the assistant a question", "The user greeted the
  assistant", "In this conversation…", "The user wants the AI to remember…").

It is false for facts about the user and the world, also when they mention an AI: "The user is
building an AI assistant", "The user's chatbot has a long system prompt" (the user's own
project), and a preference about how answers are given — "The user prefers the assistant to
answer in French", "The user asked the assistant to always reply briefly" — which is a
legitimate, durable preference of the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..patterns import lazy
from ..security.text import fold

_SELF = (
    r"(?:assistant|ai|a\.i\.|ai\s+assistant|chatbot|bot|llm|language\s+model|model|gpt|chatgpt"
    r"|claude)"
)
_SELF_THINGS = (
    r"(?:system\s+prompt|prompt|instructions|guidelines|rules|reasoning|thoughts|thinking|chain"
    r"|memory|memories|tools?|training|knowledge|capabilit\w+|configuration|persona|identity|name"
    r"|creator|developers?|context(?:\s+window)?|limitations?|policies|programming|answers?"
    r"\s+(?:style|format)|tool\s+calls?|functions?)"
)
_MACHINERY = lazy(
    r"<\s*/?\s*(?:think|thinking|reasoning)\s*>|\bturn[-_]\d+\b|\buser_data\b|<\|\w+\|>|\[/?inst\]"
    r"|<\s*/?\s*\w+_[0-9a-f]{8,}|\bmemvault\b|\b(?:global|session)\s+memory\b"
    r"|\bthe\s+memory\s+system\b|\b(?:this|the)\s+extraction\b"
    r"|\btool\s+(?:calls?|outputs?|results?|invocations?)\b",
    re.IGNORECASE,
)
_USER_PROJECT = lazy(
    r"\b(?:user|they|he|she)\s+(?:is|are|was|were|has\s+been|have\s+been|will\s+be|wants\s+to"
    r"\s+(?:build|train|write|create|develop))?\s*(?:building|developing|writing|training|making"
    r"|working\s+on|creating|designing|fine-tuning|deploying|evaluating|testing|researching"
    r"|studying|maintaining|running|coding|prototyping|build|train|write|create|develop)\b"
    r"|\b(?:the\s+user'?s|their|his|her)\s+(?:own\s+|new\s+|company'?s?\s+)?(?:ai|assistant"
    r"|chatbot|bot|model|llm|agent|app|project|system|prompt|system\s+prompt|tool|product"
    r"|startup|code|pipeline|service)\b",
    re.IGNORECASE,
)
_ASSISTANT_SUBJECT = lazy(
    r"^\W*(?:(?:the|this|our)\s+)?(?:ai\s+)?(?:assistant|ai|a\.i\.)(?:'s\b|\s+(?:is|was|will|would"
    r"|can|could|should|must|has|had|does|did|uses?|used|called|invoked|remembers?|stores?|stored"
    r"|knows?|thinks?|thought|reasons?|believes?|said|says|answered|responded|replied|explained"
    r"|suggested|recommended|provided|gave|helped|noted|cannot|can't|won't|doesn't|didn't|may"
    r"|might|lacks|needs|follows|obeys|apologi[sz]ed|offered|asked|greeted|thanked|understood"
    r"|understands|searched|looked|found|ran|executed|tried|acknowledged|confirmed|agreed"
    r"|declined|refused|generated|wrote|created|summari[sz]ed|retrieved|saved)\b)"
    r"|^\W*I\s+(?:will|would|can|could|should|must|am|was|have|had|remember|think|thought|used"
    r"|called|searched|need|do|did|don't|won't|cannot|can't|'ll|'m|'ve)\b",
    re.IGNORECASE,
)
_MODEL_SUBJECT = lazy(
    rf"^\W*(?:(?:the|this)\s+)?{_SELF}\s+(?:(?:then|also|now|just|always|often)\s+)?(?:uses?|used"
    rf"|called|calls|invoked|searched"
    r"|answered|responded|replied|remembers?|stores?|saved|will|would|can|cannot|could|should"
    r"|must|is|was|has|had|does|did|said|says|looked|ran|tried)\b",
    re.IGNORECASE,
)
_ASSISTANT_WORK = lazy(
    r"\b(?:tools?|search(?:ed|es)?|prompt|instructions?|memory|remember\w*|answer\w*|respond\w*"
    r"|repl(?:y|ies|ied)|user'?s\s+questions?|the\s+user|conversation|assistant|apologi[sz]\w*)\b",
    re.IGNORECASE,
)
_OWNED = lazy(
    rf"\b{_SELF}'s\s+(?:own\s+)?{_SELF_THINGS}\b"
    r"|\b(?:my|its|your)\s+(?:system\s+prompt|instructions|guidelines|reasoning|chain[- ]of[- ]"
    r"thought|training(?:\s+data)?|context\s+window|memory\s+system|knowledge\s+cutoff)\b"
    r"|\bthe\s+(?:system\s+prompt|system\s+message|developer\s+message|context\s+window"
    r"|reasoning\s+(?:block|trace|process)|knowledge\s+cutoff)\b",
    re.IGNORECASE,
)
_MECHANICS = lazy(
    r"\buser\s+(?:asked|asks|is\s+asking|was\s+asking|said|says|told|tells|mentioned|thanked"
    r"|thanks|greeted|greets|typed|sent|wrote|requested|inquired|wondered|started|opened|began"
    r"|ended|continued|wants\s+to\s+know)\b[^.]{0,30}?\b(?:the\s+assistant|the\s+ai|the\s+model"
    r"|the\s+chatbot|the\s+bot|you|a\s+question|a\s+follow-?up|questions|for\s+help"
    r"|for\s+assistance|hello|hi|goodbye|(?:this|the|a)\s+conversation|the\s+chat|a\s+message)\b"
    r"|\b(?:this|the\s+current|the\s+previous|the\s+last|the\s+earlier|our)\s+(?:conversation"
    r"|chat|session|exchange|dialog(?:ue)?|turn)\b|^\W*the\s+conversation\b"
    rf"|\b(?:the\s+{_SELF}|you)\s+to\s+(?:remember|memori[sz]e|store|save|forget|note|record"
    r"|keep\s+in\s+mind|look\s+up|search)\b",
    re.IGNORECASE,
)
_STANDING_WISH = lazy(
    rf"\b(?:the\s+{_SELF}|you)\s+to\s+(?:always\s+|never\s+|only\s+|not\s+)?(?:answer|respond"
    r"|reply|write|use|speak|talk|keep|be|format|call|address|explain|avoid|include|switch"
    r"|stop|give|show)\b",
    re.IGNORECASE,
)


def is_self_referential(fact: str, tool_names: Iterable[str] = ()) -> bool:
    """Whether ``fact`` is about the assistant, its tools or the memory machinery rather than
    the user or the world."""
    text = fold(fact)[0] if isinstance(fact, str) else ""
    if _MACHINERY.search(text) or _names_tool(text, tool_names):
        return True
    if _USER_PROJECT.search(text):
        return False
    if _ASSISTANT_SUBJECT.search(text) or _OWNED.search(text):
        return True
    if _MODEL_SUBJECT.search(text) and _ASSISTANT_WORK.search(text):
        return True
    return bool(_MECHANICS.search(text)) and not _STANDING_WISH.search(text)


def _names_tool(text: str, tool_names: Iterable[str]) -> bool:
    """A tool's identifier (``web_search``) anywhere, a plain-word tool's name as a tool
    ("the search tool", ```search```, ``search()``)."""
    for name in tool_names:
        plain = fold(name.strip())[0]
        if not plain:
            continue
        word = re.escape(plain)
        if re.fullmatch(r"[A-Za-z]+", plain):
            pattern = (
                rf"\b{word}\s+(?:tool|function|command)\b|`{word}`|\b{word}\(\)|called\s+{word}\b"
            )
        else:
            pattern = rf"(?<![\w-]){word}(?![\w-])"
        if re.search(pattern, text, re.IGNORECASE):
            return True
    return False
