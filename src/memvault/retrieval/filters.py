"""Write-time filters (pure): what is not worth remembering.

An *error response* is content that **is** a failure output — a traceback, a stack trace, a raw
HTTP error (status line, JSON error body, error page) or a tool's one-line failure — not a note
that talks about one. Only structural evidence at the start of the content counts, and a
one-line failure that speaks of people or of what to remember is a note ("Error: the user said
the build failed, remember that"). When in doubt, the content is kept: a stored error output is
noise, a refused memory is lost.
"""

from __future__ import annotations

import json
import re

_TRACEBACK = re.compile(r"\A\s*Traceback \(most recent call last\):")
_STACK_FRAME = re.compile(
    r"""^(?:\s+at\ [\w$.<>\[\]/]+.*(?:\(.*\)|:\d+:\d+)\s*$   # JavaScript, Java, C#
        | \tat\ .+$                                          # Java
        | goroutine\ \d+\ \[\w+                              # Go
        | \s*File\ ".+",\ line\ \d+                          # Python frames
        | \s+\d+:\s+0x[0-9a-f]+\ -\ .+                       # Rust backtrace
        )""",
    re.MULTILINE | re.VERBOSE,
)
_CRASH_HEAD = re.compile(
    r"\A\s*(?:panic: |thread '.+' panicked at |Exception in thread \"|Unhandled exception\b|"
    r"Fatal error: Uncaught )"
)
_HTTP_STATUS_LINE = re.compile(r"\A\s*HTTP/\d(?:\.\d)? [45]\d\d\b")
_STATUS_TEXT = (
    r"(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|"
    r"Conflict|Gone|Payload Too Large|Too Many Requests|Internal Server Error|Not Implemented|"
    r"Bad Gateway|Service Unavailable|Gateway Time-?out)"
)
_BARE_STATUS = re.compile(
    rf"\A\s*(?:[45]\d\d:? (?i:{_STATUS_TEXT})|Internal Server Error|Bad Gateway|"
    r"Service Unavailable|Gateway Time-?out)\.?\s*\Z"
)
"""A body that is only a status: "404 Not Found", "Internal Server Error" (not "Gone")."""
_HTML_ERROR = re.compile(
    rf"\A\s*(?:<!DOCTYPE html[^>]*>\s*)?<(?:html|head|body|title|h1|center)\b.*?"
    rf"<(?:title|h1)>[^<]*(?:\b[45]\d\d\b|{_STATUS_TEXT}|\berror\b)",
    re.IGNORECASE | re.DOTALL,
)
_EXCEPTION_LINE = re.compile(
    r"\A\s*(?:[a-z_][\w]*\.)*(?:[A-Z][a-z0-9]+)+(?:Error|Exception|Fault|Failure)(?:\[\w+\])?: \S"
)
_WEAK_FAILURE = re.compile(
    r"\A\s*(?:Error|ERROR|error|Exception|FATAL|Fatal|FAILED|Failed)(?:\[\w+\])?:\s"
)
"""A prefix that a note may also start with: the rest must read as a failure."""
_TOOL_FAILURE = re.compile(
    r"""\A\s*(?:fatal:\ | npm\ ERR!\ | curl:\ \(\d+\)\ | psql:\ error:\ | E:\ | error\[E\d+\]:
        | (?:ba|z|fi|c|k)?sh:\ .+:\ (?:command\ not\ found|No\ such\ file|Permission\ denied)
        | make:\ \*\*\* | ssh:\ | Permission\ denied\ \(publickey | [\w.-]+:\ error:\
        | gcc:\ | ld:\ )""",
    re.VERBOSE,
)
"""A tool's own failure prefix."""
_FAILURE_WORDS = re.compile(
    r"\b(?:refused|denied|not found|no such|failed|failure|unable to|cannot|can't|could not|"
    r"couldn't|timed out|timeout|invalid|unknown|missing|does not exist|not exist|unexpected|"
    r"unauthori[sz]ed|forbidden|expired|exceeded|unreachable|not allowed|not permitted|"
    r"undefined|null|E[A-Z]{3,}|errno|exit (?:code|status)|\d{3})\b",
    re.IGNORECASE,
)
_NOTE_WORDS = re.compile(
    r"\b(?:user|users|customer|client|team|remember|note|means|meaning|fix|fixed|workaround|"
    r"because|should|always|never|usually|prefers?|likes?|wants?|happens|whenever|when|"
    r"I|we|my|our|you|your|he|she|they|his|her|their|him|them)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
"""Quoted text is data (a file, a table, a value), not words of a note."""
_ERROR_KEYS = frozenset({"error", "errors", "err", "fault", "exception"})
_STATUS_KEYS = frozenset({"status", "code", "statusCode", "status_code", "documentation_url"})


def is_error_response(text: str) -> bool:
    """Content that is a failure output (see the module's docstring), not a note about one."""
    head = text.lstrip()[:4000]
    if _TRACEBACK.match(head) or _CRASH_HEAD.match(head) or _HTTP_STATUS_LINE.match(head):
        return True
    if _BARE_STATUS.match(text) or _HTML_ERROR.match(head) or _is_json_error(text):
        return True
    lines = head.splitlines() or [""]
    frames = len(_STACK_FRAME.findall(head))
    if frames >= 2 and not _NOTE_WORDS.search(lines[0]):
        return True
    strong = _EXCEPTION_LINE.match(head) or _TOOL_FAILURE.match(head)
    prefix = strong or _WEAK_FAILURE.match(head)
    if prefix is None:
        return False
    if frames:
        return True
    opening = _QUOTED.sub(" ", " ".join(head[prefix.end() :].splitlines()[:3]))
    if _NOTE_WORDS.search(opening):
        return False  # it speaks of people, or of what to remember: a note
    return bool(strong) or len(lines) > 1 or bool(_FAILURE_WORDS.search(lines[0]))


def _is_json_error(text: str) -> bool:
    """A JSON error body: an object with an error key, or a message with a status or code."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")) or len(stripped) > 100_000:
        return False
    try:
        body = json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    if not isinstance(body, dict):
        return False
    keys = set(body)
    if keys & _ERROR_KEYS or keys == {"detail"}:
        return True
    if str(body.get("status", "")).lower() in {"error", "fail", "failed", "failure"}:
        return True
    return "message" in keys and bool(keys & _STATUS_KEYS) and len(keys) <= 4


def is_too_short(text: str, min_chars: int) -> bool:
    """Saliency: fewer than ``min_chars`` non-space characters (0 disables the filter)."""
    return min_chars > 0 and len("".join(text.split())) < min_chars
