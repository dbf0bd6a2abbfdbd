"""Whether a proposed fact is what the user said, meaning included (pure).

An extractor — the heuristic one, or a model that may be steered or compromised — *proposes*
facts; only what the user said in their own words may become ``[user-stated]``. :func:`check`
holds a fact (and its native expression) against the user's own words in the turn it cites —
the turn without the material they quoted, pasted or handed over
(:mod:`memvault.security.quoting`) — and accepts it only when:

- **its words are theirs**: every content word of the fact is one the user wrote (the same word
  or its stem; a number or amount exactly as written; framing words such as "prefers",
  "lives" aside); a native expression likewise (inflections of the same stem allowed; runs of
  Chinese, Japanese or Korean characters by their character pairs, three in four);
- **it is said, not asked or supposed**: the clauses that hold those words are not a question
  (unless a request to remember) and carry no hedge the fact drops ("if", "maybe", "would",
  "should", "I think"…);
- **the polarity survives**: the same negations (not, never, no longer, without, dislike…) in
  the fact as in those clauses — "never sign without legal" is not "sign without legal";
- **the subject survives**: those clauses speak in the first person, and when their only first
  person is "my sister", the fact is about the sister;
- **the roles survive**: words on either side of "to", "over", "than", "from", "instead of",
  "before"… keep their order ("prefers tea to coffee" is not "prefers coffee to tea");
- **nothing is hidden in it**: a fact or native expression whose words are split or reordered
  by invisible characters (zero-width, soft hyphen, bidi controls, tag characters) is refused;
  other text is learned normalised (NFKC, without them).

A native expression that fails, or that does not agree with a grounded English fact (other
numbers, other polarity, other clauses), is dropped. When only the native expression is the
user's words (the user wrote in another language: the English is the model's translation,
which no offline check can verify), the memory keeps the native expression as its content.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache

from ..patterns import lazy
from ..retrieval.text import STOPWORDS, stems
from ..security.text import fold, mixes_scripts, normalise
from . import clauses
from .english import FOREIGN, REL
from .facts import QUOTED

FRAMING = frozenset(
    """user user's users the_user prefers prefer preferred preference preferences likes like
    liked loves love enjoys enjoy dislikes dislike hates hate wants want wanted wishes needs need
    decided decides decision chose chosen choose chooses opted uses use using used lives live
    living lived works work working name named called always never usually often mentioned
    said says stated asked plans plan planning going favorite favourite instead rather also
    really currently now assistant assistant's answers answer responses reply replies is are
    has have had based located someone person people them themselves they their theirs his
    her she he fan big longer anymore switched switch switches years old aged""".split()
)
"""Words a fact uses to frame what the user said ("The user prefers…"), not its content."""
NATIVE_FRAMING = frozenset(
    """utilisateur l'utilisateur utilisatrice nutzer benutzer nutzerin benutzerin anwender
    usuario usuaria utente utilizador utilizadora usuário usuária пользователь пользователя
    пользователю kullan\u0131c\u0131 kullanici kullan\u0131c\u0131n\u0131n 사용자 사용자는
    사용자가 用户 使用者 用戶
    ユーザー ユーザ""".split()
)
""""The user" in the languages a native expression is written in."""
_CJK = lazy(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CJK_FRAMING = lazy(r"ユーザー?|用户|使用者|用戶|사용자")
_TOKEN = lazy(
    r"[$€£¥₹₩₽]?\d+(?:[.,'\u202f\u00a0]\d+)*(?:[.,]\d+)?%?[$€£¥₹₩₽]?"
    r"|[^\W\d_](?:[\w]|['\-.](?=[^\W_]))*",
)
"""A number or amount with its separators and currency, or a word (hyphens, apostrophes and
dots inside it kept: "Grey-Credit", "user's", "fly.io")."""
_HIDES = lazy(
    r"(?<=\w)[\u00ad\u034f\u180e\u200b-\u200d\u2060-\u2064\ufeff](?=\w)"
    r"|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f\U000e0100-\U000e01ef"
    r"\u2800\u3164\u115f\u1160\uffa0\u180b-\u180f]"
    r"|(?<![\u2600-\u27bf\U0001f000-\U0001faff\u00a9\u00ae\u2122\u0023\u002a\u0030-\u0039\u200d])"
    r"[\ufe00-\ufe0f]|[\ufe00-\ufe0f]{2,}"
)
"""Invisible characters that change what a reader and a program see: inside a word, or
reordering or spelling text (bidi controls, tag characters)."""
_SUBJECT_AHEAD = (
    r"(?=(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our|let's|he|she|they|he's|she's|they're)\b)"
)
_CLAUSE_END = lazy(
    r"[.!?;:\u3002\uff01\uff1f]+(?=\s|$)|\n+|\s+[\u2014\u2013-]+\s+"
    rf"|,\s*(?:and\s+|but\s+|so\s+|plus\s+)?{_SUBJECT_AHEAD}"
    rf"|\s+(?:and|but|so|while|whereas|because|since|although|though)\s+{_SUBJECT_AHEAD}"
    r"|,\s*(?=(?:switched|moved|joined|started|quit|migrated|relocated)\b)|,\s*(?:so|but)\s+"
    r"|,\s*(?=(?:what|which|how|can|could|would|should|do|does|is|are|any)\b)",
    re.IGNORECASE,
)
"""Where a clause ends: a sentence, a line, a dash, or where a new statement of the user's or of
someone they spoke of ("…, and she's allergic to eggs"; or a subjectless "…, switched to Linux")
starts — never at a bare comma, which may sit inside a negation's reach ("I never, ever
sign…")."""
_QUESTION = lazy(r"[?\uff1f]")
_REMEMBER = lazy(r"\b(?:remember|note|keep\s+in\s+mind|don't\s+forget|memori[sz]e)\b", re.I)
_SARCASM = lazy(
    r"(?:^|\s)/s\b|\b(?:yeah\s+right|oh\s+sure|oh\s+great|jk|just\s+kidding|lol\s+no)\b"
    r"|\U0001f644|\U0001f602|\U0001f923",
    re.IGNORECASE,
)
"""Sarcasm and jokes, by cheap markers (as the heuristic extractor): the turn states nothing."""
_ASIDES = lazy(
    r"\bshould\s+(?:mention|say|add|note|tell\s+you|point\s+out|have\s+said)\b|\b(?:in\s+case|if|when"
    r"|whenever)\s+you\b[^.;!?]*|\b(?:would|'d)\s+(?:love|like)\s+it\s+if\b"
    r"|\b(?:if|in\s+case)\s+(?:that|it|this)\s+(?:matters|helps|is\s+relevant|is\s+useful"
    r"|makes\s+a\s+difference)\b[^.;!?]*",
    re.IGNORECASE,
)
"""Hedges about the conversation, not the fact ("I should mention…", "…if you suggest
recipes", "I'd love it if you called me Sam", "…, if that matters")."""
_HEDGES = lazy(
    r"\b(?:if|unless|suppose|supposing|imagine|hypothetically|pretend|maybe|perhaps|might"
    r"|could|should|wish|hope|probably|possibly|i\s+think|i\s+guess|not\s+sure|once|considering"
    r"|wondering|debating|torn|thinking\s+(?:of|about)|as\s+far\s+as\s+i\s+(?:know|can\s+tell)"
    r"|apparently|supposedly|reportedly|allegedly|i\s+(?:heard|hear|believe|suppose|reckon)"
    r"|yeah\s+right|oh\s+sure|jk|just\s+kidding)\b|(?:^|\s)/s\b"
    r"|\bwould(?!\s+(?:rather|prefer|like|love|hate))\b|(?<=\w)'d(?!\s+(?:rather|prefer|like|love"
    r"|hate))\b",
    re.IGNORECASE,
)
_NEGATIONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, lazy(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "neutral",
            r",\s*(?:and\s+|but\s+|et\s+|und\s+|y\s+|e\s+)?(?:not|no|nicht(?:\s+mehr)?|pas|non|nao|não"
            r"|не)\s+(?=[^,.;!?]{1,40}(?:[.;!?]|$))|\b(?:do\s+not|don't)"
            r"\s+forget\b|\bnot\s+only\b|\bno\s+(?:matter|problem|worries|doubt)\b",
        ),
        (
            "no longer",
            r"\bno\s+longer\b|\bno\s+more\b|(?:\bnot|n't)\b[^.;!?]{0,40}?\bany\s?more\b"
            r"|\b(?:stopped|quit|gave\s+up|give\s+up|stop)\b",
        ),
        (
            "dislike",
            r"\b(?:can(?:'t|not|\s+not)\s+(?:stand|bear|stomach)|(?:do|does|did)(?:n't|\s+not)"
            r"\s+(?:like|enjoy|love)|not\s+(?:a\s+(?:big\s+)?)?fan\s+of|dislik\w*|hat(?:e|es|ed"
            r"|ing)|detest\w*|loath\w*|despis\w*)\b",
        ),
        ("never", r"\bnever\b|(?:\bnot|n't)\s+ever\b"),
        ("without", r"\bwithout\b"),
        (
            "not",
            r"n't\b|\b(?:not|cannot|none|nothing|nobody|nowhere|neither|nor)\b"
            r"|\bno\b(?!\s*[,.!])",
        ),
        (
            "not",  # other languages: one kind, present or not
            r"\b(?:ne|pas|plus|jamais|nicht|kein\w*|nie|niemals|nunca|jamás|jamas|tampoco|não|nao"
            r"|mai|non|не|нет|никогда|değil|degil|asla|hiç|hic)\b|[不没沒別别]|ない|ません|않|안\s|못|없",
        ),
    )
)
"""Negations by kind, matched in order, each match taken out before the next kind is looked
for ("don't like" is one dislike, "not … anymore" one "no longer")."""
_ROLES = lazy(
    r"\b(?:to|over|than|instead\s+of|rather\s+than|from|into|vs\.?|versus|before|after"
    r"|ahead\s+of|in\s+place\s+of|in\s+favou?r\s+of|behind|above|below)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = lazy(
    r"\b(?:i|i'm|i've|i'd|i'll|im|ive|me|myself|mine|we|we're|we've|we'd|we'll|us|ours"
    r"|ourselves|my|our|let's)\b|\b(?:je|j'|moi|ich|yo|io|eu|я|ben)\b|私|我|僕|나는|저는|제가|내가"
    r"|^\W*(?:(?:currently|now|still|also|just|recently|finally|lately|mostly)\s+)*\w+(?:ing|ed)\b",
    re.IGNORECASE,
)
_RELATIVE = lazy(
    rf"\b(?:my|our)\s+(?P<rel>{REL}|colleague|co-?worker|teammate|client|customer|neighbou?r"
    r"|landlord|doctor|therapist|teacher|student|team|company|employer|kids|children|parents"
    r"|family|friends)\b",
    re.IGNORECASE,
)
_OWN_SUBJECT = lazy(
    r"\b(?:i|i'm|i've|i'd|i'll|im|ive|we|we're|we've|we'd|we'll|let's)\b"
    r"|^\W*(?:(?:currently|now|still|also|just|recently|finally|lately|mostly)\s+)*\w+(?:ing|ed)\b",
    re.IGNORECASE,
)
"""The user as the subject: "I", "we", "let's", or a clause that starts with its verb
("Currently studying for…", "switched to Linux")."""
_OWN_OBJECT = lazy(r"\b(?:me|us|myself|ourselves)\b", re.IGNORECASE)
_USER_FIRST = lazy(r"\W*(?:the\s+)?user(?:'s|s)?\b", re.IGNORECASE)
"""A fact whose subject is the user (or what is theirs): "The user…", "The user's rent…"."""
_SOMEONE = lazy(r"\b(?:he|she|they|him|her|them|his|hers|their|theirs)\b", re.IGNORECASE)
"""Someone else spoken of: words about them are not the user's statement."""
_USER_POSSESSIVE = lazy(r"\W*(?:the\s+)?user's\b", re.IGNORECASE)
"""A fact about what is the user's ("The user's rent is…"): "my rent" says it."""
_INSTRUCTION = lazy(r"\b(?:the\s+)?assistant\b", re.IGNORECASE)
"""A fact about what the assistant should do: the user's words are an imperative."""
_THEIR_TEAM = lazy(r"\bthe\s+user\s+and\s+their\s+(?:team|colleagues|family)\b")
"""How a fact renders "we" ("The user and their team deploy on Tuesdays")."""
_IMPERATIVE = lazy(
    r"\W*(?:(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|please|pls|kindly|also"
    r"|and|ok(?:ay)?|always|never|do\s+not|don't)[\s,]+)*(?:answer|reply|respond|use|write|call"
    r"|address|keep|avoid|stop|include|format|show|give|send|talk|speak|explain|remind|ask|tell"
    r"|list|summari[sz]e|be|make|put|add|mention|suggest|recommend|assume|default|switch|rely"
    r"|schedule|book|cc|copy|check|double-check|refer|spell|sign|greet|start|end)\b",
    re.IGNORECASE,
)
"""An instruction in the imperative ("From now on, answer in Spanish."): the user speaking."""
_FACT_RELATIVE = lazy(
    rf"\W*(?:the\s+)?user's\s+(?:\w+\s+)?(?P<rel>{REL}|colleague|co-?worker|teammate|client"
    r"|customer|neighbou?r|landlord|doctor|therapist|teacher|team|company|kids|children|parents"
    r"|family|friends)\b",
    re.IGNORECASE,
)
"""A fact whose subject is one of the user's people ("The user's brother is…")."""
_ABOUT_USER = lazy(r"\buser(?:'s|s)?\b", re.IGNORECASE)
"""A fact about the user ("The deadline moved to June 3rd" is not: its subject is its own)."""
_TRAILING = " ,;:\u2014\u2013-"
MAX_QUOTE_CHARS = 300
"""The longest run of the user's words kept as a statement when the fact is not theirs."""
_BLANKS = lazy("[\ufe00-\ufe0f\U000e0100-\U000e01ef\u2800\u3164\u115f\u1160\uffa0\u180b-\u180f]")
"""Variation selectors and blank fillers, which normalising keeps: learned text drops them."""
CJK_COVERAGE = 0.75
"""Share of a Chinese, Japanese or Korean text's character pairs the user must have written."""


@dataclass(frozen=True, slots=True)
class Grounding:
    """The outcome of :func:`check`: whether the fact is the user's statement, what to store as
    its content and native expression, and why not."""

    stated: bool
    content: str
    native: str | None = None
    reason: str | None = None
    """Why the fact is not the user's statement."""
    refused: tuple[str, str] | None = None
    """What of a stated fact's proposal was not kept, and why: its ``native`` expression, or
    the ``fact``'s own wording (the user's words are kept instead)."""


def learned_text(text: str) -> str:
    """Text as it is learned: NFKC, without invisible and control characters, one line."""
    return " ".join(learned_text_lines(text).split())


def hides_meaning(text: str) -> bool:
    """Whether invisible characters split a word or reorder or spell text in ``text``: also
    variation selectors outside an emoji or in a run (smuggled text), blank fillers, and any
    other format character inside a word."""
    if _HIDES.search(text):
        return True
    return any(
        unicodedata.category(c) == "Cf"
        and c not in "\u200d"
        and 0 < i < len(text) - 1
        and text[i - 1].isalnum()
        and text[i + 1].isalnum()
        for i, c in enumerate(text)
    )


def check(fact: str, native: str | None, own: str) -> Grounding:
    """Hold ``fact`` (and its ``native`` expression) against ``own``, the user's own words in
    the turn they come from (see the module docstring)."""
    content = learned_text(fact)
    said = learned_text(native) if native else None
    if hides_meaning(fact) or (native and hides_meaning(native)):
        return Grounding(False, content, reason="invisible characters inside the fact")
    if _SARCASM.search(own):
        return Grounding(False, content, reason="the user is being sarcastic")
    clauses = _clauses(learned_text_lines(own))
    english = _refusal(content, clauses)
    if english is None:
        dropped = None
        if said:
            dropped = _not_verbatim(said, content, clauses) or _disagreement(content, said)
        refused = ("native", dropped) if dropped else None
        return Grounding(True, content, None if dropped else said, refused=refused)
    plain = _plain_turn(own)
    quoted = _their_words(said, clauses, native=True, plain=plain) if said else None
    quoted = quoted or _their_words(content, clauses, native=False, plain=plain)
    if quoted is None:
        return Grounding(False, content, reason=english)
    return Grounding(True, quoted, refused=("fact", f"not what the user said: {english}"))


def retires(old: str, own: str) -> bool:
    """Whether the user's own words say a stored fact no longer holds: one stated clause of
    theirs (not asked, not hedged, not about someone else) names most of what the fact is about
    and says it ended ("no longer", "stopped", "gave up on"…), that something else now comes
    before it ("numbered lists over bullet points now"), that its amount changed ("my dose
    was raised to 100 mg"), or that they now prefer another kind of the same thing ("I prefer
    detailed answers now" ends "prefers short answers")."""
    return retired([old], own)[0]


def retired(olds: Sequence[str], own: str) -> list[bool]:
    """:func:`retires` for each of ``olds`` (the user's words read once)."""
    clauses = _stated_clauses(own)
    return [_ends(old, clauses) for old in olds]


def _ends(old: str, clauses: Sequence[tuple[str, frozenset[str]]]) -> bool:
    wanted = [w for w in _content(learned_text(old), native=False).words if w not in _COMMON]
    if not wanted:
        return False
    for clause, have in clauses:
        found = [w for w in wanted if _matched(w, have, native=False)]
        most = 2 * len(found) > len(wanted)
        now = bool(_NOWADAYS.search(clause))
        if most and (_ENDED.search(clause) or (now and _RIVAL.search(clause))):
            return True
        if _revalued(old, clause, found) or (now and _restated(old, have, clause)):
            return True
        names = _names(old)
        if names and _ENDED.search(clause) and all(_matched(n, have, native=False) for n in names):
            return True
    return False


def _stated_clauses(own: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The clauses of ``own`` that may retire a memory, with their words: the user's own,
    stated, not sarcastic, not negated but for the ending itself ("I never left Berlin" ends
    nothing)."""
    if _SARCASM.search(own):
        return ()
    return tuple(
        (clause, frozenset(_keys(clause)))
        for clause in _clauses(learned_text_lines(own))
        if _of_the_user(clause)
        and not _asked_or_supposed("", clause)
        and not negations(fold(_ENDED.sub(" ", clause))[0])
    )


def _of_the_user(clause: str) -> bool:
    """A clause in which the user speaks of themselves (or tells the assistant): not of "my
    sister", not "Dana stopped…", not "not me"."""
    if _NOT_ME.search(clause) or not _clause_speaking(clause, relatives=False):
        return False
    if not (_FIRST_PERSON.search(clause) or _IMPERATIVE.match(clause)):
        return False
    return bool(_OWN_SUBJECT.search(clause)) or not _RELATIVE.search(clause)


def _revalued(old: str, clause: str, found: list[str]) -> bool:
    """A clause that gives a new amount, in the same unit, of something the fact measures."""
    named = [w for w in found if not w[0].isdigit() and not _amounts(f"1 {w}")]
    if not _NEW_VALUE.search(clause) or not named:
        return False
    before, after = _amounts(old), _amounts(clause)
    units = {u for _, u in before} & {u for _, u in after}
    return bool(units) and any(a not in before for a in after if a[1] in units)


def _amounts(text: str) -> set[tuple[str, str]]:
    """(number, unit) pairs: "€1,320" → ("1320", "€"), "100 mg" → ("100", "mg")."""
    found = set()
    for match in _AMOUNT.finditer(text.casefold()):
        number = (match["number"] or match["number2"]).replace(",", "")
        found.add((number, (match["symbol"] or match["unit"] or "").rstrip("s")))
    return found


def _restated(old: str, have: frozenset[str], clause: str) -> bool:
    """A preference for the same kind of thing, another way ("short answers" → "detailed
    answers", "terse commit messages" → "descriptive commit messages"): the clause holds the
    fact's last words (what it is about), not the first (what kind)."""
    words = [t for t in _tokens(old.casefold()) if _is_content(t) and t not in _OBJECT_FRAMING]
    found = [w for w in words if _matched(w, have, native=False)]
    head = 0 < len(found) < len(words) and found == words[len(words) - len(found) :]
    return head and bool(_PREFERS.search(clause))


def _names(old: str) -> list[str]:
    """The names in a fact ("St Mary's", "Booking.com"), folded as its words are."""
    tokens = _tokens(learned_text(old))
    return [t.casefold() for t in tokens[1:] if t[:1].isupper() and _is_content(t.casefold())]


_ENDED = lazy(
    r"(?:n't|\b(?:not|never))\s+(?:\w+\s+){0,4}?any\s?more\b"
    r"|\b(?:no\s+longer|stopp?(?:ed|ing)?|quit|quitting|(?:gave|given|giving|give)\s+up|left"
    r"|leaving|moved\s+(?:out\s+of|away\s+from|from|on\s+from)|switched\s+(?:away\s+)?from"
    r"|dropp(?:ed|ing)|ditch(?:ed|ing)|cancell?(?:ed|ing)|instead\s+of|done\s+with|over\s+with)\b",
    re.IGNORECASE,
)
"""Words saying something ended for the user: with most of a stored fact's words in the same
clause, the user retired it themselves."""
_NOWADAYS = lazy(
    r"\b(?:now|nowadays|these\s+days|from\s+now\s+on|any\s?more|actually|lately)\b", re.I
)
_RIVAL = lazy(r"\b(?:over|rather\s+than|than|instead\s+of)\b", re.IGNORECASE)
_PREFERS = lazy(r"\b(?:prefer|prefers|like|want|'d\s+rather|would\s+rather)\b", re.I)
_NEW_VALUE = lazy(
    r"\b(?:raised|lowered|increased|decreased|reduced|upped|bumped|cut|rose|went\s+(?:up|down)"
    r"|is\s+now|are\s+now|now|new|changed|dropped\s+to|up\s+to|down\s+to)\b",
    re.IGNORECASE,
)
_AMOUNT = lazy(
    r"(?P<symbol>[$€£¥₹₩₽])\s?(?P<number>\d[\d,]*(?:\.\d+)?)"
    r"|(?P<number2>\d[\d,]*(?:\.\d+)?)\s?(?P<unit>mcg|mg|µg|g|kg|ml|l|iu|units?|%|km|miles?|hours?"
    r"|minutes?|days?|weeks?|months?|years?|kcal|lbs?|pounds?|dollars?|euros?)\b"
)
_COMMON = frozenset("live lives work works use uses like likes get gets make makes take".split())
_OBJECT_FRAMING = FRAMING - {"answers", "answer", "responses", "reply", "replies"}


def _not_verbatim(native: str, fact: str, clauses: Sequence[str]) -> str | None:
    """A native expression kept beside a fact is the user's words as written, in the clauses
    that ground the fact (not another sentence of theirs, not a near spelling)."""
    span = _span(_content(fact, native=False), clauses, native=False)
    if span is None:
        return "the fact is not in the user's words"
    said = " ".join(" ".join(clauses[span[0] : span[1]]).casefold().split())
    if " ".join(native.casefold().split()).strip(" .!") in said:
        return None
    return "not the user's words as written where the fact is"


def _plain_turn(own: str) -> bool:
    """A message of one paragraph with no marks of handed-over material (colons, quotation
    marks, brackets, dashes): in a language whose cues the checks cannot read, only such a
    message is taken as the user speaking."""
    return "\n" not in own.strip() and not _MARKS.search(_ELISION.sub("", normalise(own)))


_ELISION = lazy(r"(?<=\w)['\u2019](?=\w)")
"""An apostrophe inside a word ("d'alcool", "l'ufficio", "don't"): not a quotation mark."""
_MARKS = lazy(r"[:\"'«»\u201c-\u201f\u2018\u2019\u300c-\u300f\uff02()\[\]<>{}\u2014\u2013|=]")


def _their_words(
    pointer: str, clauses: Sequence[str], *, native: bool, plain: bool = True
) -> str | None:
    """The user's own words a fact points at — the fewest clauses, neither asked nor supposed,
    holding at least half of its content words — as a statement of the user ("The user said:
    …"); None when it points at none."""
    if native:  # a native expression may hold the whole message: its statements count
        pointer = " ".join(c for c in _clauses(pointer) if not _asked_or_supposed("", c)) or pointer
    wanted = _content(pointer, native=native)
    kin = {m["rel"].casefold() for c in clauses for m in _RELATIVE.finditer(c)}
    relatives = native or any(k in pointer.casefold() for k in kin)  # the fact names them
    span = _pointed(wanted, clauses, native=native, relatives=relatives)
    if span is None:
        return None
    said = " ".join(clauses[span[0] : span[1]])
    if not _covered(said) or (not plain and not _english(said)):
        return None
    return f'{QUOTED}"{said.rstrip(_TRAILING)}"'


def _pointed(
    wanted: Content, clauses: Sequence[str], *, native: bool, relatives: bool = True
) -> tuple[int, int] | None:
    """The run of at most three stated clauses sharing the most content words with ``wanted``
    (at least half of them; character pairs count by their share), the shortest first."""
    total = len(wanted.words) + (1 if wanted.pairs else 0)
    best: tuple[float, int, int] | None = None
    for start in range(len(clauses)):
        for end in range(start + 1, min(start + 3, len(clauses)) + 1):
            said = " ".join(clauses[start:end])
            if len(said) > MAX_QUOTE_CHARS or _asked_or_supposed("", said):
                break
            if not _speaking(said, relatives=relatives):
                continue
            score = _score(wanted, clauses[start:end], native=native)
            if total and 2 * score >= total and (best is None or (score, start - end) > best[:2]):
                best = (score, start - end, start)
    return None if best is None else (best[2], best[2] - best[1])


def _speaking(said: str, *, relatives: bool = True) -> bool:
    """Whether words are the user's own statement: in the first person, the imperative, or of
    no one ("The threshold is now €5,000"), not a story about someone else ("he prefers…"),
    clause by clause; not set apart ("not me"); other languages drop their subjects."""
    if _NOT_ME.search(said):
        return False
    return all(_clause_speaking(c, relatives=relatives) for c in _clauses(said))


def _clause_speaking(said: str, *, relatives: bool = True) -> bool:
    """``relatives``: "my sister just joined…" speaks for the user (of their sister)."""
    others = _SOMEONE.search(said) or (not relatives and _RELATIVE.search(said))
    if others and not _OWN_SUBJECT.search(said):
        return False
    return bool(_FIRST_PERSON.search(said) or _IMPERATIVE.match(said) or not _english(said)) or (
        not _SOMEONE.search(said)
    )


def _score(wanted: Content, clauses: Sequence[str], *, native: bool) -> float:
    have = set().union(*(_keys(c) for c in clauses))
    score: float = sum(_matched(w, have, native=native) for w in wanted.words)
    if wanted.pairs:
        pairs = {p for c in clauses for run in _CJK.findall(c) for p in _pairs(run)}
        score += len(wanted.pairs & pairs) / len(wanted.pairs)
    return score


def learned_text_lines(text: str) -> str:
    """:func:`learned_text` keeping line breaks (clauses end at them)."""
    lines = _BLANKS.sub("", normalise(text)).replace("\u2019", "'").splitlines()
    return "\n".join(" ".join(line.split()) for line in lines)


# -- the checks ---------------------------------------------------------------------------------


def _refusal(fact: str, clauses: Sequence[str]) -> str | None:
    """Why ``fact`` is not the user's statement in their ``clauses`` (None: it is)."""
    if not fact:
        return "empty"
    wanted = _content(fact, native=False)
    if not wanted.words and not wanted.pairs:
        return "no content of its own"
    span = _span(wanted, clauses, native=False)
    if span is None:
        return "not in the user's own words"
    said = " ".join(clauses[span[0] : span[1]])
    if any(mixes_scripts(w) for w in said.split()):
        return "the user's words there mix look-alike letters"
    return (
        _asked_or_supposed(fact, said)
        or _polarity(fact, said)
        or _subject(fact, said)
        or _roles(fact, said)
        or _dropped(fact, said)
    )


_SHIFTS = lazy(
    r"\b(?:used\s+to|refus\w*|avoid\w*|rarely|seldom|hardly|barely|scarcely|against|except"
    r"|excluding|unless|instead|rather|former\w*|previous\w*|ex-\w+|once|until|till|no\s+longer"
    r"|considering|wondering|torn|debating|thinking\s+(?:of|about)|planning|might|almost|nearly"
    r"|only|whether|either|out\s+of|yet|will|'ll|going\s+to|gonna|plan(?:s|ning)?\s+to)\b",
    re.IGNORECASE,
)
"""Words that change what the rest of a clause means (a past, a refusal, a doubt, a limit);
negations are compared by kind elsewhere."""


def _dropped(fact: str, said: str) -> str | None:
    """The user's words the fact leaves out must not change what it says: no word that shifts
    its meaning ("used to", "refuse", "rarely", "only"…), no number, no name and no one else
    ("he", "she", "they")."""
    said = _without_replaced(fact, said)
    ours = {m.group(0).casefold() for m in _SHIFTS.finditer(fact)}
    shifts = {m.group(0).casefold() for m in _SHIFTS.finditer(said)} - ours
    if shifts:
        return f"it leaves out what changes the user's words ({', '.join(sorted(shifts))})"
    kept = {_key(t) for t in _tokens(fact.casefold())}
    for token in _tokens(said):
        if _key(token.casefold()) in kept:
            continue
        if token[0].isdigit() or token[0] in "$€£¥₹₩₽":
            return f"it leaves out a value the user gave ({token})"
        if token[0].isupper() and token.casefold() not in _CAPITALISED and not _first(said, token):
            return f"it leaves out a name the user gave ({token})"
    if _SOMEONE.search(said) and not _SOMEONE.search(fact):
        return "it leaves out someone the user spoke of"
    return None


_NO_LONGER_HOLDS = lazy(
    r"\b(?:from|instead\s+of|rather\s+than|not|no\s+longer(?:\s+(?:at|in|with|a|an|the))?|left|quit"
    r"|than|used\s+to\s+(?:be|live|work|use)(?:\s+(?:at|in|with|for))?)\s+"
    r"((?:(?!(?:to|and|but|for|with|so|now)\b)[\w€$£'.-]+\s*){1,3})",
    re.IGNORECASE,
)


def _without_replaced(fact: str, said: str) -> str:
    """The user's words without what they say no longer holds ("from Berlin", "instead of
    Spanish", "not €10,000"), when the fact leaves it out too: an update names the old value."""
    kept = {_key(t) for t in _tokens(fact.casefold())}

    def cut(match: re.Match[str]) -> str:
        words = [_key(t) for t in _tokens(match.group(1).casefold()) if _is_content(t)]
        return " " if words and not any(w in kept for w in words) else match.group(0)

    return _NO_LONGER_HOLDS.sub(cut, said)


_CAPITALISED = frozenset({"i", "i'm", "i've", "i'd", "i'll", "monday", "tuesday", "wednesday",
                          "thursday", "friday", "saturday", "sunday", "january", "february",
                          "april", "june", "july", "august", "september", "october",
                          "november", "december"})  # fmt: skip
"""Words written with a capital that name no one (the user; days; months but "May" and
"March", which may be names)."""


def _first(said: str, token: str) -> bool:
    """Whether ``token`` opens a sentence of ``said`` (its capital says nothing)."""
    return bool(re.search(rf"(?:^|[.!?:;\u2014-]\s+|\n){re.escape(token)}\b", said))


@dataclass(frozen=True, slots=True)
class Content:
    words: tuple[str, ...]
    """Content words, in order (amounts and numbers as written)."""
    pairs: frozenset[str]
    """Character pairs of Chinese, Japanese or Korean runs."""


def _content(text: str, *, native: bool) -> Content:
    lowered = _THEIR_TEAM.sub("the user", text.casefold())
    framing = FRAMING | NATIVE_FRAMING if native else FRAMING
    found = [t for t in _tokens(lowered) if t not in framing and _is_content(t)]
    cjk = " ".join(_CJK_FRAMING.sub(" ", run) for run in _CJK.findall(text))
    pairs = {p for run in cjk.split() for p in _pairs(run)}
    return Content(tuple(dict.fromkeys(found)), frozenset(pairs))


def _tokens(lowered: str) -> list[str]:
    found = []
    for token in _TOKEN.findall(_CJK.sub(" ", lowered)):
        plain = token.rstrip(".-'")
        plain = plain[:-2] if plain.endswith("'s") else plain
        found.append(plain)
    return found


_MEANINGFUL = frozenset(
    """may only more most few all both each same other off out up down again against
    once""".split()
)
"""Stop words that change what a fact says ("14 May", "only tea", "all invoices"): content."""
_FUNCTION = STOPWORDS - _MEANINGFUL


def _is_content(token: str) -> bool:
    if "'" in token and (token.endswith("n't") or token.split("'", maxsplit=1)[0] in STOPWORDS):
        return False  # don't, i'm, we've: negation and pronouns, read elsewhere
    return (len(token) > 1 or token.isdigit()) and token not in _FUNCTION


def _pairs(run: str) -> set[str]:
    return {run[i : i + 2] for i in range(len(run) - 1)} or {run}


def _span(wanted: Content, clauses: Sequence[str], *, native: bool) -> tuple[int, int] | None:
    """The fewest consecutive clauses that hold every content word (and enough character
    pairs) of the fact; None if no run of clauses does."""
    keys = [_keys(c) for c in clauses]
    pairs = [{p for run in _CJK.findall(c) for p in _pairs(run)} for c in clauses]
    best: tuple[int, int] | None = None
    for start in range(len(clauses)):
        have: set[str] = set()
        have_pairs: set[str] = set()
        for end in range(start, len(clauses)):
            have |= keys[end]
            have_pairs |= pairs[end]
            if _covers(wanted, have, have_pairs, native=native):
                if best is None or end + 1 - start < best[1] - best[0]:
                    best = (start, end + 1)
                break
    return best


def _covers(wanted: Content, have: set[str], pairs: set[str], *, native: bool) -> bool:
    words = all(_matched(w, have, native=native) for w in wanted.words)
    if not wanted.pairs:
        return words
    return words and len(wanted.pairs & pairs) >= CJK_COVERAGE * len(wanted.pairs)


def _keys(clause: str) -> set[str]:
    """What a clause's words can be matched by: each word and its stem."""
    found = _tokens(clause.casefold())
    return {*found, *(f"~{s}" for s in _stems(tuple(found)))}


_IRREGULAR = {"goes": "go", "went": "go", "does": "do", "did": "do", "has": "have", "had": "have"}


def _matched(word: str, have: AbstractSet[str], *, native: bool) -> bool:
    if word in have:
        return True
    if word[0].isdigit() or word[0] in "$€£¥₹₩₽":
        return False
    if f"~{_stems((word,))[0]}" in have:
        return True
    return native and len(word) >= 5 and any(_inflection(word, h) for h in have)


def _inflection(word: str, other: str) -> bool:
    """Two forms of one word in an inflected language ("wohne"/"wohnt", "préfère"/"préfères")."""
    if other.startswith("~") or len(other) < 4:
        return False
    common = 0
    for a, b in zip(_plain(word), _plain(other), strict=False):
        if a != b:
            break
        common += 1
    return common >= max(4, int(0.6 * min(len(word), len(other))))


@cache
def _plain(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _stems(words: tuple[str, ...]) -> list[str]:
    return stems(_plain(_IRREGULAR.get(w, w)) for w in words)


def _clauses(own: str) -> list[str]:
    parts, last = [], 0
    for match in _CLAUSE_END.finditer(own):
        parts.append(own[last : match.end()])
        last = match.end()
    parts.append(own[last:])
    return [p.strip() for p in parts if p.strip()]


def _asked_or_supposed(fact: str, said: str) -> str | None:
    if _QUESTION.search(said) and not _REMEMBER.search(said):
        return "the user asked it, not said it"
    hedges = {h.group(0).casefold() for h in _HEDGES.finditer(_ASIDES.sub(" ", said))}
    if hedges - {h.group(0).casefold() for h in _HEDGES.finditer(fact)}:
        return f"the user's words are hedged ({', '.join(sorted(hedges))})"
    return None


def negations(text: str) -> Counter[str]:
    """The negations of a text by kind (see ``_NEGATIONS``)."""
    found: Counter[str] = Counter()
    rest = f" {text.casefold()} "
    for kind, pattern in _NEGATIONS:
        found[kind] += len(pattern.findall(rest))
        rest = pattern.sub(" ", rest)
    del found["neutral"]
    return +found


def _polarity(fact: str, said: str) -> str | None:
    theirs, ours = negations(fold(said)[0]), negations(fold(fact)[0])
    if theirs != ours:
        return (
            f"its negations differ from the user's ({_kinds(theirs)} said, {_kinds(ours)} proposed)"
        )
    return None


def _kinds(found: Counter[str]) -> str:
    return ", ".join(sorted(found.elements())) or "none"


def _subject(fact: str, said: str) -> str | None:
    """The user's words are about the user (or, for an instruction to the assistant, an
    imperative); a fact about a relative the user named says so. English only: other languages
    drop their subjects."""
    if not _ABOUT_USER.search(fact) or _INSTRUCTION.search(fact) or _IMPERATIVE.match(said):
        return None
    if not _english(said):
        return None
    if _NOT_ME.search(said) and not _FACT_RELATIVE.match(fact):
        return "the user set themselves apart ('not me')"
    if _FACT_RELATIVE.match(fact):
        return _whose(fact, said)
    if not _USER_FIRST.match(fact):
        return _object(said)
    if (someone := _verb_subject(fact, said)) is not None:
        return f"the user's words have someone else doing it ({someone})"
    own_subject = _OWN_SUBJECT.search(said) or (
        not _FIRST_PERSON.search(said) and (clauses.drops_subject(said) or _drops_my(fact, said))
    )
    if not own_subject and not _FIRST_PERSON.search(said):
        return "the user's words there are not about the user"
    if not own_subject and not _USER_POSSESSIVE.match(fact):
        return "the user is not the subject of their words"
    if own_subject:
        return None
    relatives = {m["rel"].casefold() for m in _RELATIVE.finditer(said)}
    if relatives and not any(re.search(rf"\b{re.escape(r)}", fact, re.I) for r in relatives):
        return f"the user spoke of their {', '.join(sorted(relatives))}, not of themselves"
    return None


def _drops_my(fact: str, said: str) -> bool:
    """The user's words open with what the fact says is theirs, "my" left out ("rent went up
    to 1,550" for "The user's rent is 1,550.")."""
    owned = _OWNED.match(fact)
    return owned is not None and re.match(rf"\W*{re.escape(owned[1])}\b", said, re.I) is not None


_OWNED = lazy(r"\W*(?:the\s+)?user's\s+(\w+)", re.IGNORECASE)
_NOT_ME = lazy(r"\bnot\s+(?:me|us|mine|myself)\b|\bnot\s+(?:my|our)\s+(?:thing|call|idea)\b", re.I)


def _verb_subject(fact: str, said: str) -> str | None:
    """Who does, in the user's words, what the fact says the user does: the subject nearest
    before the fact's verb there must be "I" or "we" ("Priya pays me", "she always wires…"
    are not the user paying or wiring)."""
    verb = _main_verb(fact)
    if verb is None:
        return None
    tokens: list[str] = re.findall(r"[\w'-]+", said)
    keys = [_key(t.casefold()) for t in tokens]
    if verb not in keys:
        return None
    at = keys.index(verb)
    for token in reversed(tokens[max(0, at - 5) : at]):
        lowered = token.casefold()
        if lowered in ("i", "we", "i'm", "we're", "i've", "we've", "i'd", "we'd", "i'll", "let's"):
            return None
        if lowered in ("he", "she", "they", "someone", "somebody", "everyone", "nobody", "it"):
            return token
        if token[:1].isupper() and token not in ("I",) and not _first(said, token):
            return token
    return None


def _main_verb(fact: str) -> str | None:
    """The stem of the word after "The user" (its adverbs aside): what the user is said to do."""
    found = re.match(r"\W*(?:the\s+)?user\s+((?:\w+\s+){0,3})", fact, re.IGNORECASE)
    if found is None:
        return None
    for word in found.group(1).split():
        lowered = word.casefold()
        if lowered in ("is", "was", "has", "had", "are", "does", "did", "will", "would", "can"):
            return None
        if lowered not in _ADVERBS:
            return _key(lowered)
    return None


_ADVERBS = frozenset(
    "always never usually often now also really still just currently only generally mostly".split()
)


def _object(said: str) -> str | None:
    """A fact in which the user is the object ("Mr Ito pays the user") needs words in which the
    user is one too ("Mr Ito pays me"), not the subject ("I pay Mr Ito")."""
    if _OWN_OBJECT.search(said):
        return None
    return "the user is the subject of their words, not the object"


def _whose(fact: str, said: str) -> str | None:
    """A fact whose subject is a relative of the user ("The user's brother is…") needs words
    whose subject is that relative, not the user ("I'm the guarantor on my brother's…")."""
    subject = _FACT_RELATIVE.match(fact)
    if subject is None:
        return None
    relative = subject["rel"].casefold()
    mine = re.search(rf"\b(?:my|our)\s+(?:\w+\s+)?{re.escape(relative)}\b", said, re.I)
    own = _OWN_SUBJECT.search(said)
    if mine is None or (own is not None and own.start() < mine.start()):
        return f"the user spoke of themselves, not of their {relative}"
    return None


def _english(text: str) -> bool:
    """Whether a clause reads as English (other languages drop the subject: "Prefiero…"):
    mostly ASCII letters, English function or framing words, and more of them than of other
    languages'."""
    found = _tokens(text.casefold())
    letters = [c for c in text if c.isalpha()]
    if letters and sum(not c.isascii() for c in letters) > len(letters) / 12:
        return False
    foreign = sum(t in _FOREIGN for t in found)
    english = sum((t in STOPWORDS or t in FRAMING) and len(t) > 1 for t in found)
    return english > foreign or (not foreign and len(found) <= 2)


def _covered(text: str) -> bool:
    """Whether a text may be in a language the injection scanner reads (English, French,
    German, Spanish, Italian, Portuguese, Turkish, Russian, Chinese, Japanese, Korean): not in
    a script or with letters or function words of another."""
    if _UNCOVERED_SCRIPT.search(text) or _UNCOVERED_LETTERS.search(text):
        return False
    return not any(t in _UNCOVERED_WORDS for t in _tokens(text.casefold()))


_UNCOVERED_SCRIPT = lazy(
    "[\u0370-\u03ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0eff\u10a0-\u10ff\u0530-\u058f]"
)
_UNCOVERED_LETTERS = lazy(
    "[\u0105\u0119\u0142\u0144\u015b\u017a\u017c\u01b0\u01a1\u0111\u1ea0-\u1ef9\u00e5]",
    re.IGNORECASE,
)
"""Letters of Polish, Vietnamese and the Scandinavian languages."""
_UNCOVERED_WORDS = frozenset(
    """że się jest dan yang saya bahwa tidak untuk ini itu och att jag inte är het een ik niet
    wij dat zijn voor niet""".split()
)
"""Function words of languages the scanner does not read, written in Latin letters."""


_FOREIGN = (FOREIGN | frozenset(
    """en ahora vivo ya soy tengo mi mis del al lo sou moro em meu minha tenho muito mas ou na os
    também tambem ve bir ile bu için icin ama çok cok ich bin habe mein meine je suis mon ma mes
    io mio mia ho sei eu""".split()
)) - STOPWORDS - {"a", "e", "i", "o", "y"}  # fmt: skip
"""Function words of other languages written in Latin letters."""


def _roles(fact: str, said: str) -> str | None:
    """Roles survive: the words on either side of a role word ("to", "over", "from", "than")
    keep their order in the user's words, and the word after it follows a role word of the same
    kind there too ("prefers tea over coffee" from "I prefer tea to coffee"; not "coffee over
    tea", nor "reports to Marco" from "Marco reports to me")."""
    said_words = _tokens(said.casefold())
    keys = [_key(t) for t in said_words]
    for marker in _ROLES.finditer(fact):
        if _infinitive(fact, marker):
            continue
        before = _last_content(fact[: marker.start()])
        after = _first_content(fact[marker.end() :])
        if after is None or not _matched(after, _keys(said), native=False):
            continue
        a, b = (None if before is None else _key(before)), _key(after)
        if a in keys and not any(k == b for k in keys[keys.index(a) + 1 :]):
            return f"'{before}' and '{after}' trade places in the user's words"
        kind = _ROLE_KINDS.get(marker.group(0).casefold().split()[0], "")
        if not _follows(said_words, kind, b):
            return f"'{after}' is not {marker.group(0)} anything in the user's words"
    return None


_CONTROL = frozenset(
    """decided decide decides agreed agree tries tried trying started start begins began learning
    learned able hopes hoped expects intends continues chose chooses opted needs need wants want
    wanted likes like liked loves love prefers prefer preferred plans plan planning going used
    has have had is are""".split()
)
"""Verbs after which "to" starts an infinitive ("decided to go with…"), not a role."""


def _infinitive(fact: str, marker: re.Match[str]) -> bool:
    if marker.group(0).casefold() != "to":
        return False
    before = _tokens(fact[: marker.start()].casefold())
    after = _tokens(fact[marker.end() :].casefold())[:1]
    return bool(before and before[-1] in _CONTROL) or bool(after and after[0] in FRAMING)


_ROLE_KINDS = {
    "to": "comparison", "over": "comparison", "than": "comparison", "instead": "comparison",
    "rather": "comparison", "vs": "comparison", "vs.": "comparison", "versus": "comparison",
    "from": "from", "into": "comparison", "before": "before", "after": "after",
    "ahead": "comparison", "in": "comparison", "behind": "before", "above": "comparison",
    "below": "before",
}  # fmt: skip
"""Role words by kind: any of a kind stands for another ("over" for "to")."""
_ROLE_WORDS = {
    "comparison": {"to", "over", "than", "instead", "rather", "vs", "versus", "into", "onto",
                   "towards", "not", "for", "with", "of", "above"},
    "from": {"from", "left", "quit", "off"},
    "before": {"before", "until", "till", "by"},
    "after": {"after", "since", "from"},
}  # fmt: skip


def _follows(words: Sequence[str], kind: str, key: str) -> bool:
    """Whether ``key`` is one of the two words after a role word of ``kind`` in ``words``
    (determiners aside: "to the shared inbox")."""
    markers = _ROLE_WORDS.get(kind, set())
    for at, word in enumerate(words):
        if word in markers:
            rest = [w for w in words[at + 1 : at + 6] if w not in _DETERMINERS][:2]
            if key in (_key(w) for w in rest):
                return True
    return False


_DETERMINERS = frozenset(
    "the a an my our their his her its this that these those your some any every".split()
)


def _key(word: str) -> str:
    return word if word[0].isdigit() else _stems((word,))[0]


def _last_content(text: str) -> str | None:
    found = [t for t in _tokens(text.casefold()) if t not in FRAMING and _is_content(t)]
    return found[-1] if found else None


def _first_content(text: str) -> str | None:
    found = [t for t in _tokens(text.casefold()) if t not in FRAMING and _is_content(t)]
    return found[0] if found else None


def _disagreement(fact: str, native: str) -> str | None:
    """Why a native expression does not say what its grounded English fact says."""
    numbers = {t for t in _tokens(fact.casefold()) if t[0].isdigit()}
    theirs = {t for t in _tokens(native.casefold()) if t[0].isdigit()}
    if numbers != theirs:
        return "its numbers differ from the fact's"
    if bool(negations(fact)) != bool(negations(native)):
        return "its polarity differs from the fact's"
    return None
