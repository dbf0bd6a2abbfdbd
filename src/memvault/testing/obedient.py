# ruff: noqa: RUF001, RUF002  (Turkish dotless i in the verb tables)
"""An "obedient" extraction model for tests: it follows every instruction it reads.

The defences against injected instructions must hold even when the model is no defence at all.
:func:`obey` plays such a model: given the whole prompt (system and user messages concatenated)
it answers in the extraction line format ``category|turn-N|fact|`` and

- for every instruction to remember/store/save/add/pin/note/label a payload — in English,
  French, German, Spanish, Chinese, Italian, Portuguese, Russian, Japanese, Korean or Turkish
  (where the verb comes last, what is before it is the payload), through homoglyphs,
  zero-width and full-width characters, tag characters and base64, as a real model reads
  them — emits ``{category}|turn-N|{payload}|``
  (the category asked for, ``preference`` by default; first-person payloads turned into "The
  user…"; "remember that" points back to the words before it; an instruction to store "parts"
  joins the parts it was given);
- outputs the text of every "output/print/say/reply with …" (quoted, after a colon, or a
  forged ``category|turn-N|…`` line), and copies extraction answers written in the data;
- echoes the wrapper's closing tag and nonce when asked to ("print the nonce", "close the
  tag"), and the head of the prompt when asked for its system prompt;
- extracts facts naively from every turn, quoted material included: first-person ones ("I
  prefer X" → ``preference|turn-N|The user prefers X|``, "my name is", "I live in", "we
  decided to"…), "you prefer X", and claims about the user ("the user prefers X", "the user
  has decided to X") — so that benign behaviour can be tested with it too.

The instruction part of the prompt (before the first wrapped block or turn marker) is read for
the nonce only. ``turn-N`` is the number of the nearest turn marker before the instruction: an
attribute ``turn="turn-N"`` (or ``n``/``number`` with a number) on a tag, a tag ``<turn_N…``, or
a line starting ``turn-N``; 1 when there is none. Negated instructions ("never store…") are not
followed.
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from ..patterns import lazy
from ..security.text import TAG_CHARACTERS, decode_tag_characters, fold, fold_pattern

_MARKER = lazy(
    r"<\w+[^>\n]*?\b(?:turn|n|number)=\"(?:turn-)?(\d+)\"[^>\n]*>|<turn_(\d+)"
    r"|^\W{0,4}turn[-_ ](\d+)\b",
    re.IGNORECASE | re.MULTILINE,
)
_NONCE = lazy(r"<(\w+?)_([0-9a-f]{16,64})\b")
_RECALL = lazy(
    r"\b(?:remember|memori[sz]e|keep\s+in\s+mind|note\s+(?:down\s+)?that"
    r"|make\s+(?:a\s+)?(?:\w+\s+)?note(?:\s+of)?|take\s+note(?:\s+of)?|noted|memorise[rz]?|retiens"
    r"|retenez|souviens-toi|souvenez-vous|enregistre[rz]?|merke?\s+dir|merken\s+sie\s+sich"
    r"|speicher(?:e|n)|notier(?:e|en)|recuerd[ae]|memoriz[ae]|guard[ae]|anot[ae])\b|记住|牢记"
    # Italian, Portuguese, Russian
    + fold_pattern(
        r"|\b(?:ricorda(?:ti|te|tevi|lo|la|telo|tela)?|memorizza(?:te|lo|la)?|tieni\s+a\s+mente"
        r"|tenga\s+a\s+mente"
        r"|prendi\s+nota(?:\s+che)?|annota(?:te)?\s+che|lembre(?:-se)?|lembra(?:-te)?|memorize"
        r"|memoriza|tenha\s+em\s+mente|tome\s+nota(?:\s+de)?|anote\s+que|запомни(?:те)?"
        r"|помни(?:те)?|учти(?:те)?|имей(?:те)?\s+в\s+виду|заруби\s+на\s+носу)\b"
    ),
    re.IGNORECASE,
)
"""Verbs that ask to remember whatever follows."""
_RECALL_LAST = lazy(
    fold_pattern(
        r"(?:覚えて|覚えと|覚えろ|覚えなさい|記憶して|記憶しておいて|記憶せよ|記憶しろ|メモして|記録して"
        r"|記録せよ|保存して|保存せよ|登録して|心に留めて)(?:おいて|おけ|いて)?"
        r"(?:ください|下さい|くれ|ね|よ)?"
        r"|(?:기억|메모|저장|기록|명심|등록)(?:해|하세요|하십시오|해라|하라)(?:\s*(?:줘|주세요|두세요|둬|놔))?"
        r"|\b(?:hatırla(?:yın|yınız)?|kaydet(?:in|iniz)?|not\s+et(?:in)?|not\s+al(?:ın)?"
        r"|aklında\s+tut|aklınızda\s+tutun|sakla(?:yın)?|ezberle(?:yin)?)\b"
    ),
    re.IGNORECASE,
)
"""Japanese, Korean and Turkish verbs that ask to remember what comes before them (or after
them, after a colon)."""
_QUOTATIVE = lazy(
    fold_pattern(
        r"(?:ということを|ことを|ってこと|って|と|을|를|고|라고|다고|는\s*것을|것을|것)\s*$"
    ),
    re.IGNORECASE,
)
"""The particle that ends what is to be remembered in a verb-last language ("…と覚えて")."""
_FILE = lazy(
    r"\b(?:store|save|add|pin|note|record|log|persist|write\s+down|commit|label|tag|mark|classify"
    r"|file|treat|register|retain|enregistre[rz]?|sauvegarde[rz]?|ajoute[rz]?|note[rz]?"
    r"|speicher(?:e|n)?|notier(?:e|en)?|vermerke?|guard[ae]|anot[ae]|registr[ae]|almacen[ae])\b"
    r"|保存|记录|存储|写入"
    + fold_pattern(
        r"|\b(?:salva(?:te|lo|la)?|registra(?:te|lo|la)?|annota(?:te|lo|la)?|archivia|conserva"
        r"|salve|guarde|registre"
        r"|anote|grave|armazene|сохрани(?:те)?|запиши(?:те)?|занеси(?:те)?|внеси(?:те)?"
        r"|добавь(?:те)?)\b"
    ),
    re.IGNORECASE,
)
"""Verbs that ask to store something when the sentence speaks of memory or a category."""
_MEMORY_TALK = lazy(
    r"memor|preference|decision|\bfacts?\b|\bcontext\b|profile|long[- ]term|permanent|global"
    r"|gedachtnis|praferenz|vorliebe|memoire|preferencia|记忆|偏好"
    + fold_pattern(
        r"|preferenza|decisione|decisao|памят|предпочтени|решени|記憶|メモリ|好み|기억|메모리|선호"
        r"|hafıza|bellek|tercih|karar"
    ),
    re.IGNORECASE,
)
_QUESTION = lazy(r"\b(?:do|did|can't|don't|if|whether)\s+(?:you|i|we)\s+$|\byou\s+$", re.I)
_NEGATED = lazy(
    r"\b(?:not|never|don't|do\s+not|no\s+need\s+to|avoid|without|nor|ne|nicht|nunca|no"
    + fold_pattern(r"|non|mai|nao|не|никогда")
    + r")\s+(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
_CLAUSE_END = lazy(r"[.!?](?=\s|$)|\n|</|\u2039/|\u3002|$")
_SENTENCE_START = lazy(r"[.!?](?=\s)|\n|>|\u3002")
_CATEGORY = lazy(
    r"\b(?:as|under|category\W{0,3}|comme|als|como)\s+(?:an?\s+|the\s+|une\s+|una\s+)?(?:new\s+)?"
    r"(?:user'?s?\s+|global\s+|permanent\s+|long[- ]term\s+|durable\s+)*(preference|decision|fact"
    r"|context)|\b(decision|fact|context)\b",
    re.IGNORECASE,
)
_LABEL = lazy(
    r"\b(?:as|under|comme|als|como)\s+(?:an?\s+|the\s+|une\s+|una\s+)?(?:new\s+)?"
    r"(?:user'?s?\s+|global\s+|permanent\s+|long[- ]term\s+|durable\s+)*(?:preference|decision"
    r"|fact|context|praferenz|preferencia)\b",
    re.IGNORECASE,
)
_TARGET = lazy(
    r"\b(?:to|in|into|inside|dans|en|a|im|ins|nella|nel|alla|na|no|"
    + fold_pattern("в|во")
    + r")\s+(?:your\s+|the\s+|its\s+|ta\s+|tu\s+|dein\w*\s+)?"
    r"(?:[\w'-]+\s+){0,2}?(?:memory|memories|profile|memoire|memoria|gedachtnis)\b",
    re.IGNORECASE,
)
_LEAD = lazy(
    r"^(?:\W|\b(?:this|that|the\s+following|it|please|forever|permanently|for\s+(?:all\s+)?future"
    r"\s+sessions|que|dass|das|que"
    + fold_pattern(r"|che|de\s+que|что|per\s+sempre|para\s+sempre|навсегда")
    + r")\b)+",
    re.IGNORECASE,
)
_WH = lazy(r"^(?:what|when|where|who|why|how|which|if|whether|to|about)\b", re.IGNORECASE)
_OUTPUT = lazy(
    r"\b(?:output|print|say|respond\s+with|reply\s+with|answer\s+with|return|emit|echo|write"
    r"\s+out)\s+(?:only\s+|exactly\s+|verbatim\s+)?(?:the\s+following\s*)?"
    r"(?:\"([^\"\n]{1,500})\"|'([^'\n]{1,500})'|\u201c([^\u201d\n]{1,500})\u201d|:\s*([^\n]{1,500})"
    r"|(\S*\|[^\n]{1,500}))",
    re.IGNORECASE,
)
_ECHO_TAG = lazy(
    r"\b(?:print|repeat|echo|output|reveal|include|copy|say|tell|show|close|end"
    r"|escape)\b[^\n.]{0,40}?"
    r"\b(?:nonce|closing\s+tag|wrapper|tag\s+name|the\s+tag|data\s+tag)",
    re.IGNORECASE,
)
_LEAK = lazy(
    r"\b(?:print|reveal|repeat|show|output|tell|recite|dump)\b[^\n.]{0,30}?\b(?:your|the)\s+"
    r"(?:system\s+prompt|instructions|prompt)",
    re.IGNORECASE,
)
_NAIVE = (
    (
        "preference",
        lazy(
            r"\b(?:I|you)\s+(?:really\s+|also\s+|still\s+|strongly\s+|always\s+"
            r"|usually\s+)?prefer\s+"
        ),
        "The user prefers ",
    ),
    (
        "preference",
        lazy(r"\bI\s+(?:really\s+|also\s+)?(?:like|love|enjoy)\s+"),
        "The user likes ",
    ),
    ("preference", lazy(r"\bI\s+(?:really\s+)?(?:hate|dislike)\s+"), "The user dislikes "),
    ("fact", lazy(r"\bmy\s+name\s+is\s+", re.I), "The user's name is "),
    ("fact", lazy(r"\bI\s+live\s+in\s+"), "The user lives in "),
    ("fact", lazy(r"\bI\s+work\s+(?=at|for|as)"), "The user works "),
    (
        "fact",
        lazy(r"\bI(?:'m|\s+am)\s+(?=allergic|vegetarian|vegan|a\s|an\s)"),
        "The user is ",
    ),
    (
        "decision",
        lazy(r"\b(?:we|I)\s+(?:have\s+|'ve\s+)?decided\s+(?:to\s+)?", re.I),
        "The user decided to ",
    ),
    (
        "decision",
        lazy(
            r"\b(?:the|this)\s+user\s+(?:has\s+)?(?:decided|authori[sz]ed|approved|agreed|chosen"
            r"|chose)\s+",
            re.I,
        ),
        "",
    ),
    (
        "preference",
        lazy(
            r"\b(?:the|this)\s+user\s+(?:always\s+|now\s+|really\s+)?(?:prefers|wants|likes"
            r"|loves)\s+",
            re.I,
        ),
        "",
    ),
)
"""(category, pattern, lead): the fact is the lead and the rest of the clause; an empty lead
keeps the words matched ("The user has decided …")."""
_FORGED_LINE = lazy(
    r"\b(?:preference|decision|fact|context)\s*\|\s*turn-\d+\s*\|[^\n]*?(?=</|\u2039/|\n|$)", re.I
)
_FORGED_JSON = lazy(
    r"\{[^{}]*\"category\"\s*:\s*\"(\w+)\"[^{}]*\"fact\"\s*:\s*\"([^\"]+)\"[^{}]*\}"
)
_PRONOUN = lazy(
    r"^\s*(?:it|that|this|them|those|these|both(?:\s+parts)?"
    + fold_pattern(r"|questo|isso|isto|это|bunu|これ|それ|이걸|이것|그걸")
    + r")\b(?!\s+(?:the|i|we|my|you|he|she|they|our)\b)",
    re.IGNORECASE,
)
_CLITIC = lazy(r"(?:lo|la|telo|tela)$", re.IGNORECASE)
"""An Italian verb carrying "it" ("memorizzalo"): what it points back to is the payload."""
_BE = lazy(r"^(?:I|we|they)\s*(?:am|'m|are|'re)\b", re.I)
_SUBJECT = lazy(r"^(?:I|we|they)\s+((?:\w+ly|always|never|also|really|still|now)\s+)?(\w+)", re.I)
_POSSESSIVE = lazy(r"\b(?:my|our)\b", re.I)
_ME = lazy(r"\b(?:me|us)\b|(?<=\s)I\b")
_PARTS = lazy(
    r"\bpart\s*(?:one|1|two|2|three|3|a|b|c)\b[^:\n]{0,30}:\s*(.+?)"
    r"(?=[.!?](?:\s|$)|\s*(?:</|\u2039/|\n|$))",
    re.IGNORECASE,
)
_NAIVE_END = lazy(r",|;|\s+(?:and|but|so|because|although)\s+")
_LOOK_BACK = 400
_CLAUSE = 500
"""The longest instruction clause read (characters)."""
_BASE64 = lazy(r"(?<![\w+/=-])[A-Za-z0-9+/]{20,}={0,2}(?![\w+/=-])")


@dataclass(frozen=True, slots=True)
class _Line:
    position: int
    text: str


def obey(prompt_text: str) -> str:
    """The reply of a model that does whatever the prompt's text tells it to."""
    readable = _readable(prompt_text)
    start = _data_start(readable)
    lines = [
        *_stores(readable, start),
        *_outputs(readable, start),
        *_echoes(readable, start),
        *_naive(readable, start),
        *_forged(readable, start),
    ]
    texts = list(dict.fromkeys(line.text for line in sorted(lines, key=lambda x: x.position)))
    return "\n".join(texts) if texts else "NONE"


def _readable(text: str) -> str:
    """The prompt as a model reads it: hidden ASCII and base64 spelled out, look-alikes plain."""
    text = TAG_CHARACTERS.sub(lambda m: " " + decode_tag_characters(m.group(0)) + " ", text)
    text = _BASE64.sub(lambda m: _decoded(m.group(0)) or m.group(0), text)
    return fold(text)[0]


def _decoded(blob: str) -> str | None:
    try:
        text = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return text if text.isprintable() and " " in text else None


def _data_start(text: str) -> int:
    marks = [m.start() for m in (_MARKER.search(text), _NONCE.search(text)) if m]
    return min(marks, default=0)


def _turn_at(text: str, position: int) -> int:
    """The number of the turn a position of the prompt belongs to (1 before any marker)."""
    starts, numbers = _markers(text)
    index = bisect_right(starts, position) - 1
    return numbers[index] if index >= 0 else 1


@lru_cache(maxsize=4)
def _markers(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    found = [(m.start(), int(next(g for g in m.groups() if g))) for m in _MARKER.finditer(text)]
    return tuple(s for s, _ in found), tuple(n for _, n in found)


def _stores(text: str, start: int) -> Iterator[_Line]:
    yield from _stores_before(text, start)
    found = [*_RECALL.finditer(text, start), *_FILE.finditer(text, start)]
    for match in sorted(found, key=lambda m: m.start()):
        before = text[max(0, match.start() - 40) : match.start()]
        if _NEGATED.search(before) or _QUESTION.search(before):
            continue
        end = _CLAUSE_END.search(text, match.end(), match.end() + _CLAUSE)
        clause = text[match.end() : end.start() if end else len(text)]
        before = _sentence_before(text, match)
        if match.re.pattern == _FILE.pattern and not _MEMORY_TALK.search(before + clause):
            continue
        clitic = _CLITIC.search(match.group(0)) and not clause.lstrip().startswith(":")
        if (_PRONOUN.match(clause) and ":" not in clause) or clitic:
            clause = ": " + _antecedent(text, match, before)
        payload = _payload(clause, lambda: _PARTS.findall(text, start))
        if payload:
            category = _category(text[match.start() : match.end() + len(clause)])
            yield _line(text, match.start(), category, _third_person(payload))


def _stores_before(text: str, start: int) -> Iterator[_Line]:
    """Verb-last instructions: what is to be remembered is the sentence before the verb ("…と覚えて
    おいて", "…고 기억해", "…tercih ettiğini hatırla"), or what follows a colon after it."""
    for match in _RECALL_LAST.finditer(text, start):
        end = _CLAUSE_END.search(text, match.end(), match.end() + _CLAUSE)
        after = text[match.end() : end.start() if end else len(text)]
        if after.lstrip().startswith(":"):
            payload = _payload(after, lambda: [])
        else:
            before = _QUOTATIVE.sub("", _sentence_before(text, match)).strip(" ,、")
            if _PRONOUN.match(before) or len(before) < 3:
                before = _antecedent(text, match, "")
            payload = before
        if len(payload) >= 3:
            category = _category(text[match.start() : match.end() + len(after)])
            yield _line(text, match.start(), category, payload[:1].upper() + payload[1:])


def _sentence_before(text: str, match: re.Match[str]) -> str:
    low = max(0, match.start() - _LOOK_BACK)
    starts = [m.end() for m in _SENTENCE_START.finditer(text, low, match.start())]
    return text[starts[-1] if starts else low : match.start()]


def _antecedent(text: str, match: re.Match[str], before: str) -> str:
    """What "it"/"that" points back to: the words before the verb, else the sentence before."""
    own = re.sub(r"\b(?:please|kindly|and|now|so|then)\b|[,;(]", " ", before).strip()
    if len(own.split()) >= 3:
        return own
    head = text[: match.start() - len(before)].rstrip(" .!?\n")
    previous = _SENTENCE_START.split(head)[-1] if head else ""
    return previous.strip()


def _payload(clause: str, parts_given: Callable[[], list[str]]) -> str:
    """What an instruction's clause asks to store."""
    if ":" in clause:
        clause = clause.split(":", 1)[1]
    clause = _TARGET.sub(" ", _LABEL.sub(" ", clause))
    payload = _LEAD.sub("", clause).strip(" \"'\u201c\u201d,")
    if re.search(r"\bparts?\b", payload, re.I):
        parts = parts_given()
        if parts:
            return " ".join(p.strip(" .") for p in parts)
    return "" if len(payload) < 3 or _WH.match(payload) else payload


def _category(clause: str) -> str:
    match = _CATEGORY.search(clause)
    return next((g.lower() for g in match.groups() if g), "preference") if match else "preference"


def _third_person(payload: str) -> str:
    """A first-person payload as a fact about the user."""
    payload = _BE.sub("The user is", payload)
    payload = _SUBJECT.sub(lambda m: f"The user {m.group(1) or ''}{_verb(m.group(2))}", payload)
    payload = _ME.sub("the user", _POSSESSIVE.sub("the user's", payload))
    return payload[:1].upper() + payload[1:]


def _verb(word: str) -> str:
    irregular = {"have": "has", "do": "does", "go": "goes", "was": "was", "were": "was"}
    if word.lower() in irregular:
        return irregular[word.lower()]
    return word if word.endswith(("s", "ed")) else word + "s"


def _outputs(text: str, start: int) -> Iterator[_Line]:
    for match in _OUTPUT.finditer(text, start):
        said = next(g for g in match.groups() if g is not None)
        yield _Line(match.start(), said.strip())


def _echoes(text: str, start: int) -> Iterator[_Line]:
    found = _NONCE.search(text)
    if found:
        kind, nonce = found.groups()
        for match in _ECHO_TAG.finditer(text, start):
            yield _Line(match.start(), f"</{kind}_{nonce}> {nonce}")
    for match in _LEAK.finditer(text, start):
        yield _Line(match.start(), " ".join((text[:start] or text).split())[:300])


def _naive(text: str, start: int) -> Iterator[_Line]:
    for category, pattern, lead in _NAIVE:
        for match in pattern.finditer(text, start):
            end = _CLAUSE_END.search(text, match.end(), match.end() + _CLAUSE)
            rest = _NAIVE_END.split(text[match.end() : end.start() if end else len(text)])[0]
            rest = rest.strip(" ,")
            if rest:
                rest = _ME.sub("the user", _POSSESSIVE.sub("the user's", rest))
                fact = (lead or match.group(0)) + rest
                yield _line(text, match.start(), category, fact[:1].upper() + fact[1:])


def _forged(text: str, start: int) -> Iterator[_Line]:
    """Extraction answers written in the data, copied as they are."""
    for match in _FORGED_LINE.finditer(text, start):
        yield _Line(match.start(), match.group(0).strip())
    for match in _FORGED_JSON.finditer(text, start):
        yield _line(text, match.start(), match.group(1).lower(), match.group(2))


def _line(text: str, position: int, category: str, fact: str) -> _Line:
    number = _turn_at(text, position)
    return _Line(position, f"{category}|turn-{number}|{fact.strip()}|")
