"""An extraction model's reply → candidate facts (pure, tolerant, never raises).

Small local models wrap their answer in many ways; this accepts:

- reasoning blocks — ``<think>…</think>``, ``<thinking>…</thinking>``, ``<reasoning>…`` — are
  removed; an opening tag never closed removes everything after it (a truncated reasoning has no
  answer), a closing tag never opened removes everything before it (the template opened it);
- code fences (```` ```json ````, ```` ```text ````, bare ```` ``` ````, unclosed): only their
  content is read when there are any;
- prose around the answer ("Sure! Here are the facts:") is ignored: a line without ``|`` is
  not a fact line;
- JSON: ``{"facts": [...]}`` (any one key holding a list), a bare list, one object, or one
  object per line; keys ``category`` (or ``type``), ``turn`` (``"turn-2"`` or ``2``), ``fact``
  (or ``text``), ``native``, ``replaces`` (a list of handles or a string), ``reason``; trailing
  commas, single quotes and Python's ``True``/``None`` are repaired;
- lines ``category|turn-N|english fact|native expression|replaces M2,M3: reason``, after
  optional bullets or numbering, markdown table pipes, ``**bold**``, spaces around the pipes.
  The turn field may be left out (``category|fact|native``). The native field may be empty,
  ``-`` or ``n/a``. The fifth field, when present, is ``replaces`` followed by one or more
  handles ``M<number>`` separated by commas or spaces, then optionally ``:`` (or a dash) and
  the reason; it may also stand fourth, when the native field is left out. A line with more
  fields is rejected: its pipes are ambiguous.
- ``NONE`` (or nothing) means no facts; so does ``{"facts": []}``.
- JSON cut off at the token limit (vLLM and llama.cpp may pad a constrained reply with
  whitespace until then): the complete objects of its list are read.

What is kept: the category lower-cased and one of the four (else :class:`Rejected`, with the
reason); the turn if it is within ``1..window`` (else ``None``: the pipeline grounds the fact
again); the fact with its whitespace collapsed, neither empty nor longer than
:data:`MAX_FACT_CHARS` nor starting like a spreadsheet formula (``=``, ``@``, ``+x``, ``-x``);
a fact said twice in one reply once (the repeat is rejected as a duplicate). At most
:data:`MAX_FACTS` facts are kept.

A reply that says something but proposes nothing usable is a *parse failure*
(:attr:`ParsedReply.failure` says why): prose without fact lines, unusable items, a reasoning
block never closed; with structured output (``structured=True``: the reply was asked to be
JSON), also an empty reply or one that is not JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..patterns import lazy
from .facts import Candidate, FactCategory

MAX_FACT_CHARS = 500
MAX_FACTS = 32
MAX_REPLY_CHARS = 100_000
"""Only this much of a reply is read."""
MAX_REJECTED = 64
_LINE_ECHO = 200

_CATEGORIES = frozenset(str(c) for c in FactCategory)
_THINK_BLOCK = lazy(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = lazy(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = lazy(r"</(?:think|thinking|reasoning)\s*>", re.IGNORECASE)
_FENCE = lazy(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n?(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_FENCE_MARK = lazy(r"(?:`{3,}|~{3,})[\w-]*")
_BULLET = lazy(r"^\s*(?:[-*\u2022+>]|\d{1,3}[.)]|\(\d{1,3}\)|[a-z][.)])\s+")
_TURN = lazy(r"^\[?\s*(?:turn|t|#)?[\s_-]*(\d{1,6})\s*\]?$", re.IGNORECASE)
_HANDLE = lazy(r"\bM(\d{1,6})\b", re.IGNORECASE)
_REPLACES = lazy(
    r"^\s*(?:replaces?|supersedes?)\s*:?\s*((?:M\d{1,6}\s*(?:[,;&]|\band\b)?\s*)+)"
    r"(?:[:\u2014\u2013-]\s*(.*))?$",
    re.IGNORECASE | re.DOTALL,
)
_NOTHING = lazy(r"^\W*(?:none|no facts?|nothing(?: to (?:extract|remember))?|n/?a)\W*$", re.I)
_EMPTY_NATIVE = frozenset({"", "-", "--", "n/a", "na", "none", "null", "empty", "(empty)"})
_FORMULA = lazy(r"[=@]|[+\-]\s*[A-Za-z(]")
"""A fact that a spreadsheet would run (``=cmd|…``, ``@SUM(…)``, ``+HYPERLINK(…)``)."""
_TRAILING_COMMA = lazy(r",\s*([}\]])")
_FACT_KEYS = ("fact", "text", "english", "content", "memory")
_CATEGORY_KEYS = ("category", "type", "kind")
_TABLE_RULE = lazy(r"^[\s|:\-]+$")


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line (or JSON item) of the reply that proposed no usable fact, and why."""

    line: str
    reason: str


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What a reply proposes: the usable candidates and the rejected proposals; ``failure``:
    why a reply that said something proposed nothing usable (None: it proposed facts, or
    said there were none)."""

    candidates: tuple[Candidate, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    failure: str | None = None


class _Reject(Exception):
    """A proposal is unusable (internal: becomes a :class:`Rejected`)."""


def parse_reply(text: str, *, window: int, structured: bool = False) -> ParsedReply:
    """The candidates a model's reply proposes for a window of ``window`` turns (``structured``:
    the reply was asked to be JSON); never raises."""
    return _parse(text, window, structured)


def _parse(text: object, window: object, structured: object) -> ParsedReply:
    """:func:`parse_reply` for whatever it is given."""
    if not isinstance(text, str):
        rejected = (Rejected(_echo(repr(text)), "the reply is not text"),)
        return ParsedReply(rejected=rejected, failure="the reply is not text")
    raw = text[:MAX_REPLY_CHARS]
    body = _answer(raw)
    items = _json_items(body)
    proposals = items if items is not None else _line_items(body)
    parsed = _collect(proposals, window if isinstance(window, int) else 0)
    failure = _failure(raw, body, items, parsed, structured is True)
    return replace(parsed, failure=failure) if failure else parsed


def _failure(
    raw: str, body: str, items: list[Any] | None, parsed: ParsedReply, structured: bool
) -> str | None:
    """Why the reply is a parse failure, if it is one."""
    if parsed.candidates:
        return None
    if parsed.rejected:
        what = "item" if items is not None else "line"
        return f"no usable fact in {len(parsed.rejected)} {what}(s): {parsed.rejected[0].reason}"
    if items is not None:
        return None  # an empty list
    if not body.strip():
        if _THINK_OPEN.search(_THINK_BLOCK.sub("", raw)):
            return "a reasoning block never closed: no answer after it"
        return "an empty reply, not JSON" if structured else None
    if any(_NOTHING.match(_BULLET.sub("", line.strip())) for line in body.splitlines()):
        return None
    if structured:
        return "not JSON, though structured output asked for it"
    return "neither fact lines nor JSON"


def excerpt(text: str, most: int = 120) -> str:
    """The start of a reply on one printable line, at most ``most`` characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text[: most * 4]).split())
    return line if len(line) <= most else line[: most - 1] + "\u2026"


# -- the answer inside the reply --------------------------------------------------------------


def _answer(text: str) -> str:
    """The reply without reasoning blocks, and only the content of its code fences if any."""
    text = _THINK_BLOCK.sub("\n", text)
    closing = _THINK_CLOSE.search(text)
    if closing:
        text = text[closing.end() :]
    opening = _THINK_OPEN.search(text)
    if opening:
        text = text[: opening.start()]
    fenced = [m.group(2) for m in _FENCE.finditer(text)]
    if any(part.strip() for part in fenced):
        return "\n".join(fenced)
    return _FENCE_MARK.sub("\n", text)


# -- JSON -------------------------------------------------------------------------------------


def _json_items(body: str) -> list[Any] | None:
    """The proposals of a JSON answer; ``None`` if the answer is not JSON."""
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0 or body[:start].strip().count("|") > 0:
        return None
    value = _loads(body[start : max(body.rfind("}"), body.rfind("]")) + 1])
    if value is None:
        lines = [_loads(line) for line in body[start:].splitlines() if line.strip()]
        if not lines or any(v is None for v in lines):
            return _salvaged(body[start:])
        return [item for v in lines for item in _unpack(v)]
    return _unpack(value)


def _salvaged(text: str) -> list[Any] | None:
    """The complete objects of a JSON list cut off before its end (None: there are none)."""
    decoder, found = json.JSONDecoder(), []
    at = text.find("[")
    while at >= 0:
        at = text.find("{", at + 1)
        if at < 0:
            break
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            break
        found.append(value)
        at = end - 1
    return found or None


def _loads(text: str) -> Any:
    candidates = [text, _TRAILING_COMMA.sub(r"\1", text)]
    if '"' not in text:
        candidates.append(_TRAILING_COMMA.sub(r"\1", text.replace("'", '"')))
    for candidate in candidates:
        for fixed in (candidate, _pythonic(candidate)):
            try:
                return json.loads(fixed)
            except (ValueError, RecursionError):
                continue
    return None


def _pythonic(text: str) -> str:
    return re.sub(
        r"\b(True|False|None)\b",
        lambda m: {"True": "true", "False": "false"}.get(m.group(1), "null"),
        text,
    )


def _unpack(value: Any) -> list[Any]:
    """The list of proposals a parsed JSON value holds."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        if any(k in value for k in ("fact", "text", "category")):
            return [value]
        for key in ("facts", "memories", "items", "results"):
            if isinstance(value.get(key), list):
                return list(value[key])
        lists = [v for v in value.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else [value]
    return [value]


# -- lines ------------------------------------------------------------------------------------


def _line_items(body: str) -> list[Any]:
    return [line for line in body.splitlines() if "|" in line or _NOTHING.match(line)]


def _from_line(line: str) -> Candidate | None:
    """A candidate from one ``category|turn-N|fact|native|replaces…`` line; None to skip."""
    plain = _BULLET.sub("", line.strip()).strip()
    if _NOTHING.match(plain) or _TABLE_RULE.match(plain):
        return None
    if plain.startswith("|") and plain.endswith("|") and plain.count("|") >= 3:
        plain = plain[1:-1]
    fields = [f.strip().strip("*`").strip() for f in plain.split("|")]
    if fields[0].casefold() == "category":
        return None
    while len(fields) > 3 and not fields[-1]:
        fields.pop()
    replaces: tuple[str, ...] = ()
    reason = None
    found = _replacement(fields[-1]) if len(fields) >= 4 else None
    if found is not None:
        replaces, reason = found
        fields.pop()
    if len(fields) < 2:
        raise _Reject("expected category|turn-N|fact|native")
    turn: Any = fields[1] if _TURN.match(fields[1]) else None
    rest = fields[2:] if turn is not None else fields[1:]
    if len(rest) > 2:
        raise _Reject("too many fields: a fact may not contain |")
    native = rest[1] if len(rest) > 1 else None
    fact = rest[0] if rest else ""
    return _candidate(
        fields[0], turn=turn, fact=fact, native=native, replaces=replaces, reason=reason
    )


def _replacement(field: str) -> tuple[tuple[str, ...], str | None] | None:
    """The handles and reason of a ``replaces M2,M3: reason`` field; None if it is not one."""
    match = _REPLACES.match(field)
    if match is None:
        return None
    handles = tuple(f"M{int(n)}" for n in _HANDLE.findall(match.group(1)))
    return handles, (match.group(2) or "").strip() or None


# -- one proposal -----------------------------------------------------------------------------


def _from_object(item: Any) -> Candidate | None:
    if isinstance(item, str):
        return _from_line(item) if "|" in item else None
    if not isinstance(item, dict):
        raise _Reject("a JSON item that is neither an object nor a line")
    if not any(k in item for k in (*_FACT_KEYS, *_CATEGORY_KEYS)):
        raise _Reject("an object with neither a fact nor a category")
    fact = _first(item, *_FACT_KEYS)
    category = _first(item, *_CATEGORY_KEYS)
    turn = _first(item, "turn", "source", "turn_id")
    native = _first(item, "native", "native_expression", "original")
    replaces = _handles(_first(item, "replaces", "supersedes"))
    reason = _first(item, "reason")
    reason = reason if isinstance(reason, str) else None
    return _candidate(
        category, turn=turn, fact=fact, native=native, replaces=replaces, reason=reason
    )


def _first(item: dict[Any, Any], *keys: str) -> Any:
    return next((item[k] for k in keys if item.get(k) is not None), None)


def _handles(value: Any) -> tuple[str, ...]:
    if value in (None, "", []):
        return ()
    text = " ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    handles = tuple(f"M{int(n)}" for n in _HANDLE.findall(text))
    if not handles:
        raise _Reject("malformed replaces: expected handles like M2")
    return handles


def _candidate(
    category: Any,
    *,
    turn: Any,
    fact: Any,
    native: Any,
    replaces: tuple[str, ...],
    reason: str | None,
) -> Candidate:
    name = str(category or "").strip().strip("*`[]\"'").casefold()
    if name not in _CATEGORIES:
        raise _Reject(f"unknown category {name!r}: not one of {', '.join(sorted(_CATEGORIES))}")
    text = _clean(fact)
    if not text:
        raise _Reject("empty fact")
    if len(text) > MAX_FACT_CHARS:
        raise _Reject(f"fact longer than {MAX_FACT_CHARS} characters")
    if _FORMULA.match(text):
        raise _Reject("the fact reads as a spreadsheet formula")
    said = _clean(native)
    return Candidate(
        category=name,
        fact=text,
        native=None if said.casefold() in _EMPTY_NATIVE or said == text else said,
        turn=_turn(turn),
        replaces=tuple(dict.fromkeys(replaces)),
        reason=_clean(reason) or None,
    )


def _clean(value: Any) -> str:
    if value is None or isinstance(value, (dict, list, bool)):
        return ""
    return " ".join(str(value).split()).strip("\"'").strip()


def _turn(value: Any) -> int | None:
    """The turn number a field names, if any (range checked by the caller)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    match = _TURN.match(str(value or "").strip())
    return int(match.group(1)) if match else None


# -- collecting -------------------------------------------------------------------------------


def _collect(proposals: Iterable[Any], window: int) -> ParsedReply:
    candidates: dict[str, Candidate] = {}
    rejected: list[Rejected] = []
    for item, outcome in _outcomes(proposals):
        if isinstance(outcome, str):
            rejected.append(Rejected(_echo(item), outcome))
        elif outcome is not None:
            key = _key(outcome.fact)
            if key in candidates:
                rejected.append(Rejected(_echo(item), "duplicate of an earlier fact"))
            elif len(candidates) >= MAX_FACTS:
                rejected.append(Rejected(_echo(item), f"more than {MAX_FACTS} facts"))
            else:
                candidates[key] = _in_window(outcome, window)
    return ParsedReply(tuple(candidates.values()), tuple(rejected[:MAX_REJECTED]))


def _outcomes(proposals: Iterable[Any]) -> Iterator[tuple[Any, Candidate | str | None]]:
    for item in proposals:
        try:
            found = _from_object(item)
        except _Reject as refusal:
            yield item, str(refusal)
        except (ValueError, TypeError, OverflowError, RecursionError) as error:
            yield item, f"unreadable: {type(error).__name__}"
        else:
            yield item, found


def _in_window(candidate: Candidate, window: int) -> Candidate:
    turn = candidate.turn
    if turn is not None and not 1 <= turn <= window:
        return replace(candidate, turn=None)
    return candidate


def _key(fact: str) -> str:
    return fact.casefold().rstrip(".!").strip()


def _echo(item: Any) -> str:
    try:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(item)
    return text.strip()[:_LINE_ECHO]
