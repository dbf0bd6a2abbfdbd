"""Write-time filters (pure): what is not worth remembering.

An *error response* is content that **is** a failure output — a traceback, a stack trace, a raw
HTTP error (status line, JSON or XML error body, error page) or a tool's failure message — not a
note that talks about one. Three tiers of evidence, all at the start of the content:

1. structure that only failure outputs have (a traceback header, stack frames, an HTTP error
   status line or body): always refused;
2. a failure *head* — a named exception (``KeyError: …``), a tool's prefix (``fatal:``,
   ``npm ERR!``, ``bash: x: …``), a compiler's ``file:line: error`` — refused unless what follows
   on its line explains it ("… means the CSV lacks headers", "… is fixed by", "… when …");
3. a prefix a note may also start with — ``Error:``, refused only if the rest reads as a
   failure ("refused", "not found", "denied", an errno…), and ``prog:``, only if it says what
   programs say ("command not found", "No such file or directory"…) — and neither explains it
   nor speaks of people ("the user", "we").

When in doubt, the content is kept: a stored error output is noise, a refused memory is lost.
Quoted text ('users', "main", `x`) is data, not words of a note.
"""

from __future__ import annotations

import json
import re

from ..patterns import lazy

_STATUS_TEXT = (
    r"(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|"
    r"Conflict|Gone|Payload Too Large|Too Many Requests|Internal Server Error|Not Implemented|"
    r"Bad Gateway|Service (?:Temporarily )?Unavailable|Gateway Time-?out)"
).replace(" ", r"\ ")  # the patterns below are verbose: spaces must be escaped
_STRUCTURE = lazy(
    rf"""\A\s*(?:
        Traceback\ \(most\ recent\ call\ last\):
      | (?:<\ )?HTTP/\d(?:\.\d)?\ [45]\d\d(?:\ [A-Z][\w\ -]*)?[\ \t]*(?:\r?\n|\Z)
      | (?:[45]\d\d:?\ (?i:{_STATUS_TEXT}|page\ not\ found)|Internal\ Server\ Error|Bad\ Gateway
         |Service\ Unavailable|Gateway\ Time-?out)\.?\s*\Z
      | (?i:<!DOCTYPE\ html[^>]*>\s*)?<(?i:html|head|body|title|h1|center)\b.*?
        <(?i:title|h1)>[^<]*(?:\b[45]\d\d\b|(?i:{_STATUS_TEXT})|(?i:\berror\b))
      | <\?xml[^>]*>\s*<(?:Error|error|Fault|fault)>
      | Cannot\ (?:GET|POST|PUT|PATCH|DELETE)\ /\S*\s*\Z
      | error\ code:\ \d+\s*\Z
      | Error\ code:\ [45]\d\d\b
      | (?:Request|Command)\ failed\ with\ (?:status|exit)\ code\ \d+\.?\s*\Z
      | Internal\ Server\ Error:\ /\S*\s*\Z
      | (?:Permission\ denied|Connection\ refused|Connection\ reset\ by\ peer|Broken\ pipe
         |Connection\ timed\ out|Operation\ timed\ out|Killed|Timeout|TimeoutError
         |Out\ of\ memory)\.?\s*\Z
    )""",
    re.VERBOSE | re.DOTALL,
)
"""Tier 1: only failure outputs look like this."""
_STACK_FRAME = lazy(
    r"""^(?:\s+at\ [\w$.<>\[\]/]+.*(?:\(.*\)|:\d+:\d+)\s*$   # JavaScript, Java, C#
        | \tat\ .+$                                          # Java
        | goroutine\ \d+\ \[[\w\ ]+\]:                       # Go
        | \t\S+\.go:\d+                                      # Go frames
        | \s*File\ ".+",\ line\ \d+                          # Python frames
        | \s+\d+:\s+0x[0-9a-f]+\ -\ .+                       # Rust backtrace
        )""",
    re.MULTILINE | re.VERBOSE,
)
_EXCEPTION = lazy(
    r"(?:Uncaught\ )?(?:[a-z_]\w*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Failure)"
    r"(?:\[\w+\])?:(?:\s|\Z)"
    r"|(?:[a-z_]\w*\.)+[A-Z]\w+:\s",  # a qualified class name: requests.exceptions.ReadTimeout:
    re.VERBOSE,
)
_FAILURE_HEAD = lazy(
    r"""(?:fatal:\s | fatal\ error:\s | npm\ ERR!\s | curl:\ \(\d+\)\s | psql:\ error:\s | E:\s
        | ERROR:\ \  | Segmentation\ fault\b | error\[E\d+\]: | make:\ \*\*\*
        | Permission\ denied\ \(publickey | Error\ executing\ tool\ \S+:
        | (?:ba|z|fi|c|k|da)?sh:\ \S.*:\ \S | [\w.-]+@[\w.-]+:\ Permission\ denied
        | [\w.-]+:\ (?:fatal\ )?error:\s | gcc:\s | ld:\s | panic:\s | thread\ '.+'\ panicked\ at
        | \[?Unhandled\w*(?:\ exception)?\b | Fatal\ error:\ Uncaught\s
        | [\w./\\-]+\.\w+[:(]\d+(?:[:,]\d+)?\)?:?\ (?:-\ )?(?:fatal\ )?error\b
        | ORA-\d{5}: | ERROR\ \d+\ \(\w+\): | Msg\ \d+,\ Level\ \d+
        | Exception\ in\ thread\ "[^"]+"\ [\w.$]+(?:Exception|Error)\b
        | [\w./\\-]+\.(?:go|rs|c|cc|cpp|h|hpp|java|kt|scala|ts|tsx|js|mjs|py|rb|cs|swift|php)
          (?:[:(]\d+(?:[:,]\d+)?\)?:?\ |:\d+:in\ `)
        | PHP\ (?:Fatal\ error|Parse\ error|Warning|Notice):
        | (?:Warning|Notice|Fatal\ error|Parse\ error):\ .+\ in\ \S+\.php\ on\ line\ \d+
        | node:internal/ | \[(?:ERROR|FATAL)\]\ | An\ error\ occurred\ \(\w+\)
        | (?:FEHLER|ERREUR|ERRORE|ОШИБКА):\s)""",
    re.VERBOSE,
)
"""Tier 2: a tool's own failure prefix."""
_WEAK_HEAD = lazy(
    r"(?:[A-Z][a-z]+\ )?(?:Error|ERROR|error|Exception|FATAL|Fatal|FAILED|Failed)(?:\ from\ \w+)?"
    r"(?:\ \([\w ]+\))?(?:\[\w+\])?:?\s",
    re.VERBOSE,
)
"""Tier 3: a prefix that a note may also start with ("Error: …")."""
_LABEL_HEAD = lazy(r"[a-z][\w.+-]*:\s")
"""Tier 3 too: a program's name ("docker: …") — or a note's label ("redis: …")."""
_FAILURE_WORDS = lazy(
    r"\b(?:refused|denied|not found|no such|failed|unable to|cannot|can't|could not|couldn't|"
    r"timed out|does not exist|unreachable|not permitted|already in use|syntax error|"
    r"(?-i:E[A-Z]{3,})|errno|exit (?:code|status))\b",
    re.IGNORECASE,
)
"""What the rest of an ``Error: …`` line says when it is a failure ("missing", "invalid" or
"expired" are said by notes just as often)."""
_TOOL_FAILURES = lazy(
    r"\b(?:command not found|no such file or directory|permission denied|cannot access|"
    r"connection refused|connection reset|error response from daemon|is not recognized|"
    r"cannot connect|could not resolve|not in gzip format|operation not permitted)\b",
    re.IGNORECASE,
)
"""What a program's own failure line says (a ``label:`` note rarely says these)."""
_EXPLAINS = lazy(
    r"(?<![\w.])(?:remember|note|means|meaning|fix|fixed|fixes|workaround|because|should|"
    r"always|never|usually|prefers?|likes?|wants?|happens|whenever|when|appears|shows up|"
    r"solved|resolved|caused|came from|comes from|due to|traced to|turned out|is what|"
    r"safe to ignore)(?![\w.])|;\s*(?:use|run|try|set)\b",
    re.IGNORECASE,
)
"""Words of a note that explains a failure: they veto every failure head."""
_PEOPLE = lazy(
    r"(?<![\w.])(?:user|users|team|I|we|my|our|he|she|they|his|her|their|him|them)(?![\w.])",
    re.IGNORECASE,
)
"""Words of a note about people: they veto a prefix that a note may start with."""
_QUOTED = lazy(r"'[^']*'|\"[^\"]*\"|`[^`]*`|«[^»]*»|»[^«]*«")
_BOX = lazy(r"\A[\s╷│|>]*")
_NOTE_LABELS = frozenset(
    "note todo fyi reminder decision preference fact summary context update idea tip question "
    "answer status result info warning tldr ps memo finding lesson".split()
)
"""``label:`` openers of notes, not program names."""
_ERROR_KEYS = frozenset({"error", "errors", "err", "fault", "exception"})
_STATUS_KEYS = frozenset({"status", "code", "statusCode", "status_code", "documentation_url"})


def is_error_response(text: str) -> bool:
    """Content that is a failure output (see the module's docstring), not a note about one."""
    head = _BOX.sub("", text[:4000])
    if _STRUCTURE.match(head) or _is_json_error(text):
        return True
    lines = head.splitlines() or [""]
    frames = len(_STACK_FRAME.findall(head))
    if frames >= 2 or (frames and _EXCEPTION.match(lines[-1].strip())):
        return not _EXPLAINS.search(_QUOTED.sub(" ", lines[0]))
    named = _EXCEPTION.match(head) or _FAILURE_HEAD.match(head)
    weak = None if named else _WEAK_HEAD.match(head)
    prefix = named or weak or _LABEL_HEAD.match(head)
    if prefix is None or prefix.group().rstrip(": \t\n").lower() in _NOTE_LABELS:
        return False
    rest = _QUOTED.sub(" ", " ".join(head[prefix.end() :].splitlines()[: 1 if named else 3]))
    if _EXPLAINS.search(rest) or (named is None and _PEOPLE.search(rest)):
        return False  # it explains the failure, or speaks of people: a note
    if named is not None:
        return True
    return bool((_FAILURE_WORDS if weak else _TOOL_FAILURES).search(rest))


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
    if keys & _ERROR_KEYS or keys == {"detail"} or body.get("is_error") is True:
        return True
    if str(body.get("status", "")).lower() in {"error", "fail", "failed", "failure"}:
        return True
    return "message" in keys and bool(keys & _STATUS_KEYS) and len(keys) <= 4


def is_too_short(text: str, min_chars: int) -> bool:
    """Saliency: fewer than ``min_chars`` non-space characters (0 disables the filter)."""
    return min_chars > 0 and len("".join(text.split())) < min_chars
