"""Which stored facts a new fact supersedes, without an LLM: the slot rule.

A fact sentence is read into a :class:`Slot` — subject, attribute, value, negated — ("The user
lives in Berlin." → ``user`` / ``residence`` / ``Berlin``). A new fact supersedes an old one when
both have the same subject and attribute and either

- they give different values and the attribute holds one value at a time ("lives in Paris"
  supersedes "lives in Berlin"), or
- they give the same value and exactly one of them negates it ("no longer lives in Berlin"
  supersedes "lives in Berlin").

A negation retracts only its own value: "no longer lives in Berlin" does not touch "lives in
Paris". Attributes in :data:`MULTI_VALUED` (languages, pets, allergies…) hold several values at
once, so they conflict only by negation. A choice or preference between two things ("decided to
use PostgreSQL instead of MySQL") also supersedes an earlier plain choice of the rejected one
("decided to use MySQL"). Values compare without case, articles, punctuation or a trailing time
("Paris now"), and a value that extends the other ("Paris, France") is the same value; values
with numbers are the same only with the same numbers ("€1,250" is "1250 euros", not "€1").

Pure, English only, and deliberately narrow: a sentence it cannot read gives ``None``, and
``None`` never conflicts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ..patterns import lazy

MULTI_VALUED = frozenset({"speaks", "has", "allergy", "learning", "is a", "owns"})
"""Attributes that hold several values at once: they conflict only by negation."""

PAIRED = frozenset({"preference", "choice"})
"""Kinds whose attribute is keyed by the unordered pair of options ("X vs Y")."""

OCCUPATIONS = frozenset(
    """engineer developer dev programmer coder designer manager scientist analyst teacher
    professor lecturer student nurse doctor physician surgeon dentist vet veterinarian pharmacist
    therapist psychologist psychiatrist lawyer attorney accountant consultant architect writer
    author journalist editor translator researcher chef cook baker artist musician photographer
    pilot electrician plumber mechanic carpenter farmer founder cofounder co-founder ceo cto cfo
    director administrator admin sysadmin technician intern freelancer contractor paramedic
    firefighter officer librarian recruiter marketer salesperson entrepreneur barista waiter
    waitress cashier driver tutor coach trainer pm sre devops specialist coordinator lead owner
    economist statistician mathematician physicist chemist biologist postdoc clerk""".split()
)
"""Head nouns of "is a …" that name a job: a person has one occupation at a time."""

KEYS = {
    "name": "name",
    "first name": "name",
    "full name": "name",
    "location": "residence",
    "residence": "residence",
    "city": "residence",
    "home": "residence",
    "home city": "residence",
    "current city": "residence",
    "lives in": "residence",
    "based in": "residence",
    "employer": "employer",
    "company": "employer",
    "workplace": "employer",
    "works at": "employer",
    "works for": "employer",
    "job": "occupation",
    "occupation": "occupation",
    "role": "occupation",
    "profession": "occupation",
    "job title": "occupation",
    "age": "age",
    "birthday": "birthday",
    "date of birth": "birthday",
    "dob": "birthday",
    "diet": "diet",
    "allergy": "allergy",
    "allergies": "allergy",
    "language": "speaks",
    "languages": "speaks",
    "nationality": "nationality",
    "hometown": "origin",
    "origin": "origin",
    "timezone": "timezone",
    "time zone": "timezone",
    "pronouns": "pronouns",
    "email": "email",
    "salary": "income",
    "income": "income",
    "height": "height",
    "weight": "weight",
}
"""Attribute names as people write them (keys of "Key: value" facts, "the user's <key> is …")
→ the attribute the rule compares."""

DIETS = (
    r"(?:vegetarian|vegan|pescatarian|pescetarian|keto|paleo|omnivore|carnivore|halal|kosher|"
    r"gluten[- ]free|lactose[- ]intolerant|teetotal|sober)"
)
REL = (
    r"(?:(?:older|younger|little|big|baby|eldest|youngest|oldest|twin|best|step-?|ex-?) ?)?"
    r"(?:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|son|daughter|kid|child|"
    r"mom|mum|mother|dad|father|brother|sister|sibling|grandma|grandmother|grandpa|grandfather|"
    r"grandson|granddaughter|aunt|uncle|cousin|nephew|niece|friend|boss|manager|co-?founder|"
    r"roommate|flatmate|dog|cat|puppy|kitten|pet)"
)
_RELATIVES = {"mom": "mother", "mum": "mother", "dad": "father", "kid": "child"}
_SPELLING = {"favorite": "favourite", "color": "colour", "flavor": "flavour", "fave": "favourite"}


@dataclass(frozen=True, slots=True)
class Slot:
    """What a fact says, as subject / attribute / value (e.g. user / residence / Berlin)."""

    subject: str
    """``user``, or ``user's <relation>`` (``user's sister``)."""
    attribute: str
    """Normalised across synonyms: ``residence``, ``employer``, ``favourite colour``…"""
    value: str
    """As written, without a trailing time; empty when the attribute is the whole statement
    ("always writes tests first")."""
    negated: bool = False
    """The fact denies or retracts the value ("no longer lives in Berlin")."""


# --- reading a fact ----------------------------------------------------------------------------

_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "", "\u00a0": " "})
_KEY_VALUE = lazy(
    r"^(?:(?:the )?user'?s? )?(?P<k>[a-z][\w '-]{0,30}?)\s*(?:(?<!\d):|:(?!\d))\s*(?P<v>.+)$",
    re.I,
)
_SUBJECTS = [
    (lazy(rf"^(?:the )?user's (?P<rel>{REL})\b", re.I), "user's {rel}"),
    (lazy(rf"^my (?P<rel>{REL})\b", re.I), "user's {rel}"),
    (lazy(r"^(?:the )?user\b", re.I), "user"),
    (lazy(r"^(?:I|we)\b", re.I), "user"),
    (lazy(r"^my\b", re.I), "user's"),
]
_NEGATIONS = [
    (lazy(p, re.I), r)
    for p, r in [
        (r"^(?:is|am|are) (?:no longer|not)\s+", "is "),
        (r"^(?:isn't|aren't)\s+", "is "),
        (r"^(?:does|do) not\s+", ""),
        (r"^(?:doesn't|don't)\s+", ""),
        (r"^(?:has|have) (?:stopped|quit)\s+", ""),
        (r"^(?:no longer|never|stopped|quit)\s+", ""),
        (r"^decided not to\s+", "decided to "),
    ]
]
_FIRST_PERSON = [(lazy(r"^(?:am|'m)\b", re.I), "is"), (lazy(r"^have\b", re.I), "has")]
_FREQUENCY = lazy(
    r"^(?:always|usually|normally|generally|typically|mostly|often|now|still|also|really|"
    r"currently|mainly)\s+",
    re.I,
)


def slot_of(fact: str) -> Slot | None:
    """The slot a fact sentence fills, or None if the rule cannot read it.

    Reads the extractor's canonical sentences ("The user lives in Paris.") and free-form ones
    ("User lives in Berlin", "Lives in Berlin.", "Favourite colour: blue", "I live in Berlin").
    """
    text = re.sub(r"\s+", " ", fact.translate(_TYPOGRAPHY)).strip(" .!;")
    if not text:
        return None
    keyed = _KEY_VALUE.match(text)
    if keyed:
        return _keyed(keyed["k"], keyed["v"])
    subject, rest = _subject(text)
    instruction = _instruction(rest, explicit=subject is not None)
    if instruction is not None:
        return Slot(subject or "user", *instruction[:2])
    negated, rest = _negation(rest)
    read = _predicate(rest, explicit=subject is not None)
    if read is None:
        return None
    attribute, value, denies = read
    return Slot(subject or "user", attribute, _value(value), negated != denies)


def _keyed(key: str, value: str) -> Slot | None:
    attribute = _attribute_name(key)
    if attribute is None:
        return None
    return Slot("user", attribute, _value(value))


def _attribute_name(key: str) -> str | None:
    key = " ".join(_SPELLING.get(w, w) for w in key.lower().split())
    if key.startswith(("favourite ", "go-to ")):
        return "favourite " + key.split(" ", 1)[1]
    return KEYS.get(key)


def _subject(text: str) -> tuple[str | None, str]:
    """The normalised subject and the rest; None when the fact names none ("Lives in Berlin")."""
    for pattern, template in _SUBJECTS:
        found = pattern.match(text)
        if found:
            rest = text[found.end() :]
            if template == "user's":
                return "user", "'s " + rest.strip()
            relation = (found.groupdict().get("rel") or "").lower()
            subject = template.format(rel=_RELATIVES.get(relation, relation))
            return subject, _first_person(rest.strip())
    return None, text


def _first_person(rest: str) -> str:
    for pattern, replacement in _FIRST_PERSON:
        rest = pattern.sub(replacement, rest)
    return rest


def _negation(rest: str) -> tuple[bool, str]:
    for pattern, replacement in _NEGATIONS:
        if pattern.match(rest):
            return True, pattern.sub(replacement, rest, count=1)
    return False, rest


Read = tuple[str, str, bool]
"""attribute, value, whether the predicate itself denies the value ("moved out of …")."""


def _predicate(rest: str, explicit: bool) -> Read | None:
    """The attribute and value of a predicate; unknown predicates only with a named subject."""
    rest = _FREQUENCY.sub("", rest)
    for reader in (_possessive, _person, _opinion, _pair, _choice, _is):
        read = reader(rest, explicit)
        if read is not None:
            return read
    if not explicit or not rest or rest.startswith("'s"):
        return None
    return _statement(rest), "", False


def _possessive(rest: str, explicit: bool) -> Read | None:
    """ "'s name is Ana", "'s favourite colour is blue", "'s birthday is …"."""
    found = re.match(r"^'s (?P<k>[\w' -]+?) (?:is|are|was) (?:called |named )?(?P<v>.+)$", rest)
    if not found:
        return None
    attribute = _attribute_name(found["k"]) or " ".join(_norm(found["k"]).split())
    return attribute, found["v"], False


_LIVES = r"(?:lives?|is living|resides?|(?:is )?based|(?:is )?located|has lived|lived)"
_PERSON = [
    (r"^(?:is )?(?:called|named) (?P<v>.+)", "name", False),
    (r"^goes by (?P<v>.+)", "name", False),
    (r"^(?:please )?call me (?P<v>.+)", "name", False),
    (
        rf"^{_LIVES} in (?P<v>.+)",
        "residence",
        False,
    ),
    (
        r"^(?:has |have )?(?:moved|relocated)(?: back)? (?:from .+? )?to (?P<v>.+)",
        "residence",
        False,
    ),
    (r"^(?:has |have )?moved (?:out of|away from) (?P<v>.+)", "residence", True),
    (r"^(?:is|comes|come) (?:originally )?from (?P<v>.+)", "origin", False),
    (r"^(?:works?|is working) (?:remotely )?(?:at|for) (?P<v>.+)", "employer", False),
    (r"^(?:is )?employed (?:at|by) (?P<v>.+)", "employer", False),
    (r"^(?:has |have )?(?:joined|started (?:a new job |working )?at) (?P<v>.+)", "employer", False),
    (r"^(?:has |have )?(?:quit|left) (?:\w+ )?job (?:at|with) (?P<v>.+)", "employer", True),
    (r"^works? as (?:an? )?(?P<v>.+)", "occupation", False),
    (r"^(?:is|am) (?P<v>\d{1,3})(?: years old| years)?$", "age", False),
    (r"^(?:is|am) (?P<v>.+?) tall$", "height", False),
    (r"^weighs? (?P<v>.+)", "weight", False),
    (r"^(?:earns?|makes?) (?P<v>(?:about |around |over |roughly )?\S*\d.*)", "income", False),
    (r"^was born (?:in )?(?P<v>\d{4})$", "birth year", False),
    (r"^was born on (?P<v>.+)", "birthday", False),
    (r"^was born in (?P<v>.+)", "birthplace", False),
    (rf"^is (?:an? )?(?P<v>{DIETS})$", "diet", False),
    (r"^is allergic to (?P<v>.+)", "allergy", False),
    (r"^has (?:an? )?(?P<v>.+?) allergy$", "allergy", False),
    (r"^speaks? (?P<v>.+)", "speaks", False),
    (r"^is learning (?P<v>.+)", "learning", False),
    (r"^(?:has|have) (?P<v>.+)", "has", False),
    (r"^owns? (?P<v>.+)", "owns", False),
]
_PERSON_RULES = [(lazy(p, re.I), a, d) for p, a, d in _PERSON]


def _person(rest: str, explicit: bool) -> Read | None:
    """Who the subject is: name, residence, employer, occupation, age, diet, languages…"""
    for pattern, attribute, denies in _PERSON_RULES:
        found = pattern.match(rest)
        if found:
            return attribute, found["v"], denies
    return None


_LIKE = lazy(
    r"^(?:likes?|loves?|enjoys?|adores?|(?:is )?(?:a )?(?:big |huge )?fan of|(?:is )?into) "
    r"(?P<v>.+)",
    re.I,
)
_DISLIKE = lazy(
    r"^(?:dislikes?|hates?|detests?|loathes?|despises?|can't stand|cannot stand|can not stand|"
    r"is not (?:a )?(?:big )?fan of) (?P<v>.+)",
    re.I,
)


def _opinion(rest: str, explicit: bool) -> Read | None:
    """ "likes jazz" / "dislikes jazz" → ``opinion of jazz`` = like / dislike."""
    for pattern, value in ((_DISLIKE, "dislike"), (_LIKE, "like")):
        found = pattern.match(rest)
        if found:
            return f"opinion of {_norm(found['v'])}", value, False
    return None


_DECIDED = r"(?:decided|agreed) (?:to )?(?:use|go with|stick with|adopt|switch to)"
_CHOSE = r"(?:chose|picked|selected|opted for|settled on|went with|went for)"
_OVER = r"(?:over|to|than|rather than|instead of|more than)"
_PAIRS = [
    (lazy(p, re.I), kind)
    for p, kind in [
        (
            rf"^{_DECIDED} (?P<x>.+?),? (?:instead of|over|rather than) (?P<y>.+)",
            "choice",
        ),
        (
            rf"^{_CHOSE} (?P<x>.+?),? (?:over|instead of|rather than) (?P<y>.+)",
            "choice",
        ),
        (r"^(?:has |have )?(?:switched|migrated|moved) from (?P<y>.+?) to (?P<x>.+)", "choice"),
    ]
]
_SINGLES = [
    (lazy(p, re.I), kind)
    for p, kind in [
        (r"^prefers? (?P<x>.+)", "preference"),
        (
            rf"^{_DECIDED} (?P<x>.+)",
            "choice",
        ),
        (r"^decided on (?P<x>.+)", "choice"),
        (rf"^{_CHOSE} (?P<x>.+)", "choice"),
        (r"^(?:has |have )?(?:switched|migrated) to (?P<x>.+)", "choice"),
    ]
]


_PREFERS = lazy(r"^(?:prefers?|would rather) (?!to )(?P<x>.+)", re.I)
_MARKER = lazy(rf",? \b(?P<o>{_OVER}) ", re.I)
_COMPLEMENT = lazy(r" (?=(?:to|for|with|via|by) )", re.I)
_NOT_GERUNDS = frozenset(
    """thing anything something everything nothing king ring spring string wing morning evening
    ceiling building wedding pudding accounting marketing engineering billing shipping
    banking catering hosting parking printing funding training clothing heating lighting
    plumbing housing staging""".split()
)
"""Nouns that end in "-ing": "to accounting" is a destination, not an activity."""
_PARTICIPLES = frozenset(
    """sent delivered forwarded emailed mailed addressed shipped posted routed given handed
    passed returned assigned copied written paid""".split()
)


def _gerund(phrase: str) -> bool:
    first = (phrase.split(maxsplit=1) or [""])[0].lower()
    return len(first) > 4 and first.endswith("ing") and first not in _NOT_GERUNDS


def _compares(x: str, y: str) -> bool:
    """Whether "prefer X to Y" weighs X against Y ("tea to coffee", "walking to driving") rather
    than saying where X goes ("sending invoices to the shared inbox", "invoices sent to …")."""
    last = (x.rsplit(maxsplit=1) or [""])[-1].lower()
    if last in _PARTICIPLES or y.lower().startswith(("be ", "stay ", "remain ")):
        return False
    return _gerund(x) == _gerund(y)


def split_preference(text: str) -> tuple[str, str | None]:
    """What "prefer …" is about, and what it is preferred to (None when nothing is): "tea to
    coffee" → tea, coffee; "sending invoices to the shared inbox" → the whole, None."""
    markers = sorted(_MARKER.finditer(text), key=lambda m: m["o"].lower() == "to")
    for marker in markers:  # "over", "rather than" … first: "X to Z over Y" weighs X to Z
        x, y = text[: marker.start()], text[marker.end() :]
        if marker["o"].lower() != "to" or _compares(x, y):
            return x, y
    return text, None


def _pair(rest: str, explicit: bool) -> Read | None:
    """ "prefers X over Y" / "chose X over Y" → keyed by the unordered pair, value X;
    "prefers doing X to Z" → ``preference: doing x``, value "to Z"."""
    found = _PREFERS.match(rest)
    if found:
        return _preferred(*split_preference(found["x"]))
    for pattern, kind in _PAIRS:
        found = pattern.match(rest)
        if found:
            return _paired(kind, found["x"], found["y"])
    return None


def _paired(kind: str, x: str, y: str) -> Read | None:
    first, second = _member(x), _member(y)
    if first and second and first != second:
        return f"{kind}: {' vs '.join(sorted((first, second)))}", x, False
    return None


def _preferred(x: str, y: str | None) -> Read | None:
    if y is not None:
        return _paired("preference", x, y)
    doing, *where = _COMPLEMENT.split(x, maxsplit=1) if _gerund(x) else [x]
    if not where or not _norm(doing):
        return None
    return f"preference: {_norm(doing)}", where[0], False


def _choice(rest: str, explicit: bool) -> Read | None:
    """ "prefers X" / "decided to use X" → ``preference: x`` / ``choice: x``."""
    found_tool = re.match(r"^uses? (?P<x>.+?) for (?P<y>.+)", rest, re.I)
    if found_tool:
        return f"tool for {_norm(found_tool['y'])}", found_tool["x"], False
    for pattern, kind in _SINGLES:
        found = pattern.match(rest)
        if found and _member(found["x"]):
            return f"{kind}: {_member(found['x'])}", "", False
    return None


def _instruction(rest: str, explicit: bool) -> Read | None:
    """ "wants the assistant to always answer in Spanish", or an imperative "Always …"."""
    pattern = r"^(?:wants (?:the assistant|you) to )" + ("" if explicit else "?")
    found = re.match(pattern + r"(?P<adv>always|never) (?P<v>.+)", rest, re.I)
    if not found:
        return None
    return f"instruction: {_norm(found['v'])}", found["adv"].lower(), False


def _is(rest: str, explicit: bool) -> Read | None:
    """ "is a teacher" → occupation; any other "is a …" → ``is a`` (several at once)."""
    found = re.match(r"^is (?:an? )(?P<v>.+)", rest, re.I)
    if not found:
        return None
    head = re.split(r"\s+(?:in|at|for|with|of)\s+", _norm(found["v"]))[0].split()
    if head and head[-1] in OCCUPATIONS:
        return "occupation", found["v"], False
    return "is a", found["v"], False


# --- comparing values --------------------------------------------------------------------------

_TAIL = lazy(
    r"\s+(?:now|too|also|as well|these days|nowadays|currently|originally|anymore|any more|"
    r"again|at the moment|(?:last|this) (?:year|month|week|summer|winter|spring|autumn|fall)|"
    r"in (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|\d{4})|(?:since|for) [\w ]{1,20}?(?:years?|months?|weeks?|\d{4})|recently)$",
    re.I,
)
_ARTICLES = lazy(r"\b(?:a|an|the)\b")
_ASIDE = lazy(r"\s+(?:for|in|on|at|when|during|with|because|since|as|whenever)\s+")


def _value(value: str) -> str:
    """The value as written, without a trailing time or filler ("Paris now" → "Paris")."""
    value = value.strip(" .,!;")
    while (shorter := _TAIL.sub("", value).strip(" .,!;")) != value:
        value = shorter
    return value


def _norm(text: str) -> str:
    """Case, accents' forms, articles and punctuation folded away; spelling variants unified."""
    folded = unicodedata.normalize("NFKC", _value(text)).casefold()
    folded = re.sub(r"[^\w\s]", " ", folded)
    return " ".join(_SPELLING.get(w, w) for w in _ARTICLES.sub(" ", folded).split())


def _member(text: str) -> str:
    """One option of a pair, without its aside ("Python for backend work" → "python")."""
    return _norm(_ASIDE.split(_value(text), maxsplit=1)[0]) or _norm(text)


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


def _statement(rest: str) -> str:
    """Any other predicate is its own attribute: its words, the verb stemmed."""
    words = _norm(rest).split()
    return " ".join([_stem(words[0]), *words[1:]]) if words else ""


_NUMBER = lazy(
    r"(?P<n>\d+(?:(?:[.,]|[ \u00a0\u202f](?=\d{3}(?!\d)))\d+)*)"
    r"(?:\s?(?P<x>k|thousand|mn?|million|bn|billion)(?![^\W\d_]))?",
    re.I,
)
"""A number as people write it (1,250 / 1.250,50 / 1 250 / 85k / 1.2 million)."""
_SCALE = {"k": 3, "thousand": 3, "m": 6, "mn": 6, "million": 6, "bn": 9, "billion": 9}
_UNITS = {
    **dict.fromkeys(["€", "eur", "euro", "euros"], "EUR"),
    **dict.fromkeys(["$", "usd", "dollar", "dollars", "bucks"], "USD"),
    **dict.fromkeys(["£", "gbp", "quid"], "GBP"),
    **dict.fromkeys(["¥", "jpy", "yen"], "JPY"),
    **dict.fromkeys(["chf", "francs"], "CHF"),
    **dict.fromkeys(["₹", "inr", "rupees"], "INR"),
    **dict.fromkeys(["%", "percent"], "%"),
    **dict.fromkeys(["'", "\u2019", "\u2032", "ft", "feet", "foot"], "ft"),
    **dict.fromkeys(['"', "\u201d", "\u2033", "inch", "inches"], "in"),
    **dict.fromkeys(["kg", "kgs", "kilo", "kilos", "kilogram", "kilograms"], "kg"),
    **dict.fromkeys(["km", "kilometre", "kilometres", "kilometer", "kilometers"], "km"),
    **dict.fromkeys(["cm", "centimetre", "centimetres", "centimeter", "centimeters"], "cm"),
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours"], "h"),
    **dict.fromkeys(["min", "mins", "minute", "minutes"], "min"),
    **dict.fromkeys(["c", "celsius", "\u2103"], "°C"),
    **dict.fromkeys(["f", "fahrenheit", "\u2109"], "°F"),
    "°": "",
}
"""Currency and unit spellings → one name each ("€", "EUR", "euros" → EUR)."""


@dataclass(frozen=True, slots=True)
class _Amounts:
    """The numbers of a value, its currencies and units, and its other words."""

    numbers: tuple[str, ...]
    units: frozenset[str]
    words: str


def _amounts(value: str) -> _Amounts:
    """ "€1,250 a month" → 1250, {EUR}, "a month"; "5'11\"" → 5, 11, {ft, in}."""
    value = re.sub(r"\b([ap])\.m\b\.?", r"\1m", value, flags=re.I)
    numbers = tuple(_number(m["n"], m["x"]) for m in _NUMBER.finditer(value))
    rest = re.findall(r"[^\W\d_]+|[^\w\s]", _NUMBER.sub(" ", value).casefold())
    units = frozenset(_UNITS[t] for t in rest if _UNITS.get(t))
    words = " ".join(t for t in rest if t not in _UNITS and t.isalpha())
    return _Amounts(numbers, units, words)


def _number(text: str, scale: str | None) -> str:
    """One canonical form per number: "1,250" / "1.250,00" / "1 250" → 1250, "85k" → 85000;
    a decimal keeps its written digits ("3.10" is not "3.1"); versions stay as written."""
    text = re.sub(r"[ \u00a0\u202f]", "", text)
    marks = re.findall(r"[.,]", text)
    groups = re.split(r"[.,]", text)
    if len(set(marks)) == 2 or (marks == [","] and len(groups[1]) != 3) or marks == ["."]:
        whole, fraction = "".join(groups[:-1]), groups[-1]  # the last mark is the decimal one
    elif all(len(group) == 3 for group in groups[1:]):
        whole, fraction = "".join(groups), ""  # thousands
    else:
        return text  # a version: 3.11.4
    if scale:
        amount = Decimal(f"{whole}.{fraction or 0}").scaleb(_SCALE[scale.lower()])
        return format(amount.normalize(), "f")
    fraction = fraction if fraction.strip("0") else ""
    return (whole.lstrip("0") or "0") + (f".{fraction}" if fraction else "")


def same_value(a: str, b: str) -> bool:
    """Equal after normalising, or one extends the other ("Paris" / "Paris, France"). Values
    with numbers are the same only with the same numbers ("€1,250" / "1250 euros" /
    "€1,250.00"), no other currency or unit, and words that agree ("€1,250 a month")."""
    left, right = _amounts(a), _amounts(b)
    if not (left.numbers or right.numbers):
        return _same_words(a, b)
    units = left.units <= right.units or right.units <= left.units
    words = not (left.words and right.words) or _same_words(left.words, right.words)
    return left.numbers == right.numbers and units and words


def _same_words(a: str, b: str) -> bool:
    left, right = _norm(a), _norm(b)
    return left == right or left.startswith(right + " ") or right.startswith(left + " ")


# --- the rule ----------------------------------------------------------------------------------


def conflicts(new: Slot, old: Slot) -> bool:
    """Whether ``new`` supersedes ``old`` (see the module's docstring for the rule)."""
    if new.subject != old.subject:
        return False
    if new.attribute != old.attribute:
        return _rejects(new, old) or _rejects(old, new)
    if same_value(new.value, old.value):
        return new.negated != old.negated
    return not (new.negated or old.negated or new.attribute in MULTI_VALUED)


def _rejects(pair: Slot, single: Slot) -> bool:
    """A choice between X and Y that is not Y, against a plain choice of Y (either order)."""
    kind, _, options = pair.attribute.partition(": ")
    other_kind, _, option = single.attribute.partition(": ")
    members = options.split(" vs ")
    return (
        kind in PAIRED
        and kind == other_kind
        and len(members) == 2
        and " vs " not in option
        and option in members
        and option != _member(pair.value)
        and not (pair.negated or single.negated)
    )


def superseded_by(new_fact: str, old_facts: Sequence[str]) -> list[int]:
    """Indexes of the ``old_facts`` that ``new_fact`` supersedes under the slot rule."""
    new = slot_of(new_fact)
    if new is None:
        return []
    return [i for i, old in enumerate(old_facts) if (slot := slot_of(old)) and conflicts(new, slot)]
