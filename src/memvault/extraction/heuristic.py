"""The extractor that needs no LLM: English first-person statements → candidate facts.

Pure and deterministic: regular expressions and small word lists over the *user* turns of the
window (assistant turns are never read: what the assistant says is not the user's word). English
only: a turn in another language yields nothing rather than a mistranslation. Precision first:
questions, hypotheticals, hedges, reported speech, quoted material, sarcasm and references to
the conversation itself ("the second option", "this version") yield nothing. Facts come out as
canonical third-person sentences ("The user lives in Paris."), with every value ("€1,250",
"5'11\"", "Python 3.11.4", "March 14, 2027") exactly as the user wrote it. docs/learning.md lists
the rules and their measured precision and recall.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.extraction import clauses, dialogue, judge, updates
from memvault.extraction.english import FOREIGN, IMPERATIVES, REL, third_person
from memvault.extraction.english import alternatives as _alternatives
from memvault.extraction.facts import QUOTED, Candidate, Correction, FactCategory, Turn
from memvault.extraction.slots import split_preference
from memvault.retrieval.text import STOPWORDS, words
from memvault.security import quoting

from ..patterns import lazy

PREF, DEC, FACT, CTX = (
    FactCategory.PREFERENCE,
    FactCategory.DECISION,
    FactCategory.FACT,
    FactCategory.CONTEXT,
)


# --- word lists --------------------------------------------------------------------------------

ADV = (
    "(?:"
    + _alternatives(
        """really|also|just|still|totally|absolutely|definitely|generally|honestly|truly|
        actually|personally|kind of|kinda|pretty much|much|strongly|currently|now|mainly|mostly|
        basically|originally|finally|eventually|ultimately|recently|already|all|both|usually|
        officially|happily|obviously"""
    )
    + " )*"
)
"""Adverbs that may sit between a subject and its verb ("I really like …"), any number."""
MY_REL = rf"my (?P<rel>{REL})(?: (?-i:[A-Z][a-z]+))?"
MY_PET = r"my (?P<rel>dog|cat|puppy|kitten|pet|rabbit|hamster|parrot)(?: (?-i:[A-Z][a-z]+))?"
NOT_KIN = r"(?:best |close |old )?(?:friend|boss|manager|colleague|co-?worker|co-?founder"
NOT_KIN += r"|roommate|flatmate|housemate|neighbou?r|landlord|landlady|client|ex|mate|buddy|pal)"
"""People in the user's life whose facts are theirs, not the user's."""
"""A relation of the user, optionally followed by their name ("my wife Jana")."""
STATES = _alternatives(
    """vegetarian|vegan|pescatarian|pescetarian|gluten[- ]free|lactose[- ]intolerant|diabetic|
    pre-?diabetic|celiac|coeliac|colou?r[- ]?blind|left[- ]handed|right[- ]handed|deaf|
    hard of hearing|blind|pregnant|dyslexic|autistic|sober|teetotal|retired|married|divorced|
    engaged|widowed|self[- ]employed|unemployed|freelance|on a diet|on keto|keto|halal|kosher|
    American|British|English|Scottish|Irish|Welsh|Canadian|Australian|German|French|Italian|
    Spanish|Portuguese|Dutch|Belgian|Swiss|Austrian|Polish|Czech|Swedish|Norwegian|Danish|
    Finnish|Greek|Turkish|Russian|Ukrainian|Brazilian|Mexican|Argentinian|Chilean|Colombian|
    Indian|Pakistani|Chinese|Japanese|Korean|Vietnamese|Thai|Filipino|Indonesian|Nigerian|
    Kenyan|Egyptian|Israeli|Iranian"""
)
"""What "I am …" says about the user for good: diets, health, family status, nationality."""
STATE_END = (
    r"(?=\s*$|\s*[,.;!?]|\s+(?:and|but|so|since|for|now|too|though|btw|lol|actually|as well)\b)"
)
"""After a state word: the end of its clause ("a freelance translator" is a role)."""
HAS_NOUN = _alternatives(
    r"""dogs?|cats?|pets?|pupp(?:y|ies)|kittens?|parrots?|rabbits?|hamsters?|horses?|goldfish|
    kids?|child(?:ren)?|sons?|daughters?|bab(?:y|ies)|twins|grandchildren|grandkids|wife|husband|
    partner|girlfriend|boyfriend|brothers?|sisters?|siblings?|car|bike|motorcycle|
    allerg(?:y|ies)|diabetes|asthma|adhd|add|autism|dyslexia|(?:celiac|coeliac|crohn'?s) disease|
    migraines?|arthritis|hypertension|high blood pressure|epilepsy|anxiety|depression|insomnia|
    tinnitus|phd|doctorate|master'?s(?: degree)?|bachelor'?s(?: degree)?|degree"""
)
"""What "I have …" says about the user for good: pets, family, health, degrees."""
HAVE_THING = (
    r"(?:(?!about|with|for|of|to|in|on|at|from|been|not|never)[\w'-]+\s+){0,4}"
    rf"{HAS_NOUN}\b(?! about).*"
)
"""A ``HAS_NOUN`` with up to four words before it ("a golden retriever", "type 1 diabetes")."""
LANGUAGES = frozenset(
    """english spanish french german italian portuguese dutch polish czech swedish norwegian
    danish finnish greek turkish russian ukrainian arabic hebrew persian farsi hindi urdu bengali
    punjabi tamil mandarin cantonese chinese japanese korean vietnamese thai indonesian malay
    tagalog swahili catalan basque romanian hungarian bulgarian serbian croatian sign""".split()
)
SKILL_WORDS = frozenset("beginner novice newbie expert pro amateur master regular".split())
"""Roles for which "at X" is a skill, not an employer ("a beginner at Python")."""
NOT_ROLES = frozenset("bit little lot tad few couple fan big huge total complete genius".split())
"""Words after "I am a" that do not start a role ("a bit tired", "a big fan of")."""
NOT_NAMES = frozenset(
    """back later tomorrow today tonight when whenever anytime maybe asap sir madam please here
    there home so not fine good done sorry ready happy sure okay ok looking trying glad new
    afraid confused lost tired stuck busy""".split()
)
"""Capitalised words that follow "call me" or "I am" without being a name."""
ACTIVITY = _alternatives(
    """working on|debugging|fixing|preparing(?: for)?|writing|building|developing|trying to|
    planning|cooking|baking|migrating|setting up|studying(?: for)?|training for|organi[sz]ing|
    reviewing|refactoring|designing|researching|drafting|looking into|investigating|testing|
    deploying|putting together|packing for|getting ready for|applying (?:for|to)|
    interviewing (?:for|at|with)|redesigning|rewriting|upgrading|porting|translating|
    analy[sz]ing|cleaning up|hosting|renovating|recovering from"""
)
"""What the user is busy with in this session: "I am debugging …" is context."""
ORGANISATION = (
    r"(?:(?:the )?(?-i:[A-Z])[\w.&'-]*(?: .+)?|[\w-]+\.(?:com|io|org|net|co|ai|dev)\b.*|"
    r"(?:a|an|the) [\w\s-]{0,30}?"
    + _alternatives(
        """startup|start-up|company|firm|agency|bank|lab|university|school|hospital|nonprofit|
        non-profit|ngo|studio|consultancy"""
    )
    + r"\b.*)"
)
"""What one joins or works for: a name, a domain, or "a … startup/company/…"."""
TECH = _alternatives(
    r"""kubernetes|k8s|aws|gcp|azure|github|gitlab|bitbucket|postgres(?:ql)?|mysql|mongo(?:db)?|
    sqlite|redis|kafka|python|java|rust|go|golang|typescript|javascript|node|react|vue|angular|
    svelte|docker|podman|linux|windows|macos|mac|ubuntu|debian|terraform|pulumi|slack|teams|
    jira|linear|notion|vercel|heroku|netlify|cloudflare|fly\.io|render|supabase|firebase|django|
    flask|fastapi|rails|laravel|spring|kotlin|swift|flutter|neovim|vim|emacs|vs ?code|pycharm|
    intellij|poetry|uv|pnpm|yarn|npm|bun|deno|graphql|grpc|rest|microservices|a monorepo|
    monorepo|the cloud|serverless|lambda|ecs|eks|gke"""
)
"""Technology names: "we moved to Kubernetes" is a switch, not a new home."""
QUANTITY = (
    r"(?:(?:monthly|annual|yearly|weekly|daily|hourly|current|new|base|gross|net|take-home|"
    r"usual|average|typical|target|goal|resting|ideal) )?"
    + _alternatives(
        """rent|salary|income|pay|wage|hourly rate|day rate|rate|mortgage(?: payment)?|savings|
        pension|bonus|height|weight|shoe size|dress size|size|commute|bedtime|wake-up time|
        alarm|step goal|heart rate|pulse|blood pressure|blood sugar|cholesterol|
        body temperature|screen time|credit limit|tax rate|phone number|mobile number|postcode|
        post code|zip code|employee id|student id|customer number|membership number|timezone|
        time zone|working hours|office hours|personal best|pb|5k time|10k time|marathon time|
        pace|mileage|thermostat|thermostat setting"""
    )
)
"""What "my … is <value>" measures about the user: money, body, time, ids."""
CHANGED = (
    r"(?:is|are|(?:has |have )?(?:gone|went) (?:up|down) to|"
    r"(?:has |have )?(?:increased|decreased|risen|rose|dropped|fallen|fell|changed) to)"
)
"""How "my rent …" gives its value, or its new value ("went up to")."""
BARE_QUANTITY = _alternatives(
    """rent|salary|income|pay|mortgage|mortgage payment|savings|commute|bedtime|weight|
    mileage|screen time|resting heart rate|step goal"""
)
"""What a user's sentence may measure with "my" left out ("rent went up to 1,550",
"commute's 15 minutes now"): no value of a place or a thing ("rent is 1,400 in Porto")."""
NEW_VALUE = _alternatives(
    """gone up|went up|gone down|went down|increased|decreased|risen|rose|dropped|fallen|fell|
    grown|grew|shrunk|shrank|doubled|halved|jumped|climbed|crept up|shot up"""
)
"""How a value of the user's changes ("my step count has doubled to 12k")."""
GROUP = _alternatives("team|family|household|class|startup|company|department|squad")
"""What of the user's grows or shrinks in number ("my team's grown to 7")."""
VALUE_VERBS = _alternatives(
    """weigh|earn|make|pay|spend|save|owe|charge|bill|invoice|budget|invest|donate|run|walk|
    cycle|bike|swim|row|hike|sleep|drive|commute|drink|eat|lift|bench|squat|deadlift|study|
    train|practi[cs]e|read|work|log|average|take"""
)
"""Verbs whose object is a quantity ("I earn $85k a year", "I sleep 7.5 hours")."""
AMOUNT_START = (
    r"(?:(?:about|around|roughly|approximately|approx\.?|nearly|almost|just over|just under|"
    r"over|under|up to|at least|at most|exactly|only) )?(?=(?:(?-i:[A-Z]{3}) )?\S*\d)"
)
"""The start of a value: a word with a digit in it, perhaps after "about" or a currency code."""
FREQ = r"(?:always|never|usually|normally|generally|typically|mostly|often|rarely|seldom)"
HABIT_BLOCK = frozenset(
    """know forget get got remember understand find feel seem mess wonder think struggle need
    end run hit lose miss screw break fail mix confuse make have am want try""".split()
)
"""Verbs after "I always …" that state a mishap, not a habit ("I always forget …")."""
PAST = frozenset(
    """thought said went got saw knew did had made took found felt told came gave left ran
    bought brought wrote spoke met lost kept began""".split()
)
ANYMORE = r"\s*,?\s*\bany ?more\b"

# --- text preparation --------------------------------------------------------------------------

_CODE = lazy(r"```.*?(?:```|$)", re.S)
_QUOTED_LINE = lazy(r"^\s*>.*$", re.M)
_DOUBLE = lazy('["\u201c\u00ab\u201e]([^"\u201d\u00bb\n]*)["\u201d\u00bb]')
_SINGLE = lazy("(?<![\\w'])['\u2018]([^'\u2019\n]+)['\u2019](?![\\w'])")
_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "", "\u00a0": " "})
_SARCASM = lazy(
    r"(?:^|\s)/s\b|\bjk\b|\bjust kidding\b|\byeah,? right\b|\boh,? (?:great|sure|joy|wonderful)"
    r"\b|\blove it when\b|[\U0001F644\U0001F643\U0001F60F\U0001F612\U0001F602\U0001F923]"
    r"|^\W*(?:(?:oh,? )?(?:sure|right|totally)|oh,? (?:yeah|yes)),? (?:because|since|'?cause|cuz)\b"
    r"|\bas if\b|\bmade of money\b|\bsaid no one\b|\b(?:obviously|clearly),? that's why\b"
    r"|\bsure,? I(?:'ll| will) just\b|\b(?:basically|obviously|literally|clearly)\b[^.!?\n]*"
    r"\b(?:lol|lmao|haha+|rofl)\b",
    re.I,
)
"""Cheap sarcasm and joke markers ("/s", "yeah right", "sure, because I'm a millionaire", an
eye-roll emoji): the turn is skipped."""
_RELEVANCE = lazy(
    r"[,;]?\s*\(?\b(?:if|in case) (?:that|it|this) (?:matters|helps|is relevant|is useful"
    r"|makes a difference)\b[^.!?)]*\)?",
    re.I,
)
"""An aside on why the user says it ("…, if that matters for the tyre question"): not a
condition on what they say."""
_PLAY = lazy(
    r"\brp\s*:|\b(?:act(?:ing)? as|pretend|role-?play(?:ing)?|in character|let's play|d&d|dnd"
    r"|dungeon master|game master|(?:a|the) (?:story|scene|game) (?:where|in which))\b"
    r"|\byou(?:'re| are) (?:now )?(?:my|a|an|the)\b[^.!?\n]{0,60}\b(?:and|,)\s*I(?:'m| am)\b"
    r"|^\W*(?:just )?test(?:ing)?\b|\bthis is (?:just )?a test\b|\blorem ipsum\b"
    r"|\ba test (?:string|message|sentence|input)\b",
    re.I,
)
"""Role play, fiction and test messages: nothing in the turn is meant of the user."""
_CONTRACTIONS = [
    (lazy(pattern, re.I), replacement)
    for pattern, replacement in [
        (r"\bi\b", "I"),
        (r"\b(?:I'm|im)\b", "I am"),
        (r"\bI've\b", "I have"),
        (r"\bI'd\b", "I would"),
        (r"\bI'll\b", "I will"),
        (r"\bwe're\b", "we are"),
        (r"\bwe've\b", "we have"),
        (r"\bwe'll\b", "we will"),
        (r"\bwe'd\b", "we would"),
        (r"\byou're\b", "you are"),
        (r"\blet's\b", "let us"),
        (r"\b(do|does|did|is|are|was|were|have|has|had|would|should|could)n't\b", r"\1 not"),
        (r"\b(?:can't|cannot|cant)\b", "can not"),
        (r"\bwon't\b", "will not"),
        (r"\b(do|does)nt\b", r"\1 not"),
        (r"\b(name|it|that|he|she|there|what|who|where)'s\b", r"\1 is"),
        (r"\bgonna\b", "going to"),
        (r"\bwanna\b", "want to"),
    ]
]


# --- values: one token each --------------------------------------------------------------------

_SYMBOL = "[$\u20ac\u00a3\u00a5\u20b9\u20a9\u20bd\u20ba\u20aa\u20ab\u0e3f\u20b1\u20a6\u00a2]"
"""Currency symbols: $ € £ ¥ ₹ ₩ ₽ ₺ ₪ ₫ ฿ ₱ ₦ ¢."""
_NUMERAL = (
    r"(?<!\d)[-\u2212+]?\d+(?:(?:[.,:/'\u2019\u2032-]|[\u00a0\u202f ](?=\d{3}(?!\d)))\d+)*"
    r"(?:(?:(?<=['\u2019\u2032]\d)|(?<=['\u2019\u2032]\d\d))(?:[\"\u2033\u201d]|''))?"
)
"""Digit groups and what joins them: 1,250 / 1.250,50 / 1 250 / 3.11.4 / 10:30 / 2024-03-14 /
5'11" (inches only after feet)."""
_AMOUNT = (
    rf"(?:(?-i:[A-Z]{{1,2}})?\$\s?|{_SYMBOL}\s?)?{_NUMERAL}(?:[kKmM]|bn|mn)?"
    rf"(?:\s?(?:%|\u2030|\u00b0\s?[CFcf]?|\u2103|\u2109|{_SYMBOL})"
    r"|\s?[ap](?:m\b|\.m\b(?:\.(?=\s+(?-i:[a-z\d])))?))?"
)
"""A number with its currency symbol, thousands or millions ("k", "m", "bn"), percent or degree
sign, or a.m./p.m."""
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(?:\.(?= \d)|[a-z]*)"
_DATE = (
    r"(?i:(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\.?,? )?"
    rf"(?:{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH})"
    r"(?:,? \d{4})?)"
)
"""A date with its weekday and year: "March 14, 2027", "Friday, 14 March"."""
_PHONE = r"\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){1,5}|\(\d{2,5}\)\s?\d{3}[ .-]?\d{4}"
_VALUE = lazy(
    rf"(?<![\w.,]){_PHONE}|\b{_DATE}(?!\w)|{_AMOUNT}(?:\s*[-\u2013\u2014]\s*{_AMOUNT})?(?!\w)"
)
"""A value written with signs a sentence or a clause could be cut at, or a quote seen in."""
_HIDDEN = lazy(r"(?i:qv((?:[0-9a-f]{2})+)vq)")
"""A hidden value; the user's own text of that form is hidden too, so that it comes back as is."""
_TO_HIDE = lazy(rf"{_HIDDEN.pattern}|{_VALUE.pattern}")
_DIGIT = lazy(r"\d")
_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " "})


def _hidden(text: str) -> str:
    """Each value that is more than letters, digits and spaces (``€1,250``, ``3.5``, ``5'11"``,
    ``10:30``, ``€10k-€20k``) as one word, so that splitting and quoting leave it whole."""

    def hide(match: re.Match[str]) -> str:
        value = match[0]
        if value.replace(" ", "").isalnum() and not match[1]:
            return value
        return f"qv{value.encode().hex()}vq"

    return _TO_HIDE.sub(hide, text) if _DIGIT.search(text) else text  # every value has a digit


def _shown(text: str) -> str:
    """The values of :func:`_hidden` back as the user wrote them (only text that decodes to a
    printable value: anything else the user wrote stays as it is)."""

    def show(match: re.Match[str]) -> str:
        value = bytes.fromhex(match[1]).decode("utf-8", "replace")
        printable = value.translate(_SPACES).isprintable()
        shown = printable and (_VALUE.match(value) or _HIDDEN.fullmatch(value))
        return value if shown else match[0]

    return _HIDDEN.sub(show, text)


def _visible(text: str) -> str:
    """The text without code blocks, '>' quotations, pasted material, text handed over for a
    task ("translate this: …") and quoted passages of three words or more (shorter quotes,
    often names, keep their words)."""

    def unquote(match: re.Match[str]) -> str:
        return match[1] if len(match[1].split()) <= 2 else " [quote] "

    for start, end in reversed(quoting.quoted_regions(text)):  # pasted or handed over
        text = f"{text[:start]} [quote] {text[end:]}"
    text = _QUOTED_LINE.sub("", _CODE.sub("\n", text))
    return _SINGLE.sub(unquote, _DOUBLE.sub(unquote, text)).translate(_TYPOGRAPHY)


def _expand(text: str) -> str:
    """Contractions spelt out, so that the rules see one form ("I am", "do not")."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


def _english(text: str) -> bool:
    """Cheap language gate: mostly ASCII letters, and no more function words of other European
    languages than of English."""
    letters = [c for c in text if c.isalpha()]
    if letters and sum(not c.isascii() for c in letters) > len(letters) / 4:
        return False
    tokens = words(text)
    foreign = sum(t in FOREIGN for t in tokens)
    return foreign == 0 or foreign <= sum(t in STOPWORDS for t in tokens)


# --- sentences and clauses ---------------------------------------------------------------------

_ABBREVIATIONS = ("approx", "ca", "e.g", "i.e", "vs", "est")
"""Words shortened with a full stop that often come before a value ("approx. 3.5 kg")."""
_SENTENCE = lazy(
    "(?<=[.!?])"
    + "".join(rf"(?<!\b(?i:{re.escape(short)})\.)" for short in _ABBREVIATIONS)
    + "\\s+|\\n+|;\\s+|\\s+[-\u2013\u2014]+\\s+"
)
"""Where a sentence ends; a value is one word by then (:func:`_hidden`), so "3.5" and "1,250"
are not cut."""
_FILLERS = """hi there|hello there|hey there|hi|hello|hey|hiya|ok so|okay so|ok|okay|so|well|
    oh and|oh also|oh|also|and|but|anyway|anyways|btw|by the way|just so you know|fyi|for context|
    just fyi|actually|honestly|tbh|imo|imho|fwiw|ngl|personally|in general|generally|basically|ps|
    ugh|yeah|yes|yep|sure|right|alright|cool|great|thanks|thank you|good morning|hmm|um|uh|ah|
    today|right now|now|currently|these days|nowadays|at the moment|this week|lately|in the end|
    ultimately|finally|sorry|oops|decision made|fun fact|side note|one more thing|quick note|
    heads up|update|correction"""
_DISCOURSE = lazy(
    r"^(?:(?:"
    + "|".join(sorted((f.strip() for f in _FILLERS.split("|")), key=len, reverse=True))
    + r"|after (?:a lot of|much|some) [\w\s-]+?(?=,|\s+(?:we|I)\b))\b[\s,:;.!-]*)+",
    re.I,
)
"""Greetings, fillers and time adverbs before a statement, longest alternatives first."""
_LABEL = lazy(r"^[\w\s'-]{1,40}:\s+(?=(?:I|my|we|our)\b)", re.I)
"""A heading before a statement ("here is my setup: I am on macOS")."""
_CONNECTOR = lazy(
    r"(?:,\s*(?:and |but |so |plus |also )?|\s+(?:and|but|so|plus|while|whereas|because|since|"
    r"although|though)\s+)(?=(?:I|we|my|our|he|she)\b)",
    re.I,
)
"""Where a new first-person statement starts inside a sentence ("…, and I live in …")."""
_ELLIPSIS = lazy(
    r"(?:,\s*|\s+)(?:and|but)\s+(?:now\s+|also\s+|then\s+)?(?=(?:live|lives|work|works|moved|"
    r"prefer|prefers|like|likes|love|loves|hate|hates|use|uses|speak|speaks|switched|joined)\s+"
    r"(?:at|in|for|to|with|a|an|the|my|it|on|from|as|our|this|that|them)\b)"
    r"|,\s*(?=(?:switched|moved|joined|started|quit|migrated|relocated)\s)",
    re.I,
)
"""Where a clause with no subject of its own starts ("… and works at RBC")."""
_SUBJECT = lazy(rf"^(?:I|we|{MY_REL})\b", re.I)
_ELLIPTIC_START = lazy(
    rf"^(?:(?:switched|moved|joined|relocated|migrated)\b|(?P<ing>{ACTIVITY})\b(?!.*\b(?:is|are|"
    r"was|were|can|could|will|would|has|have|helps?|makes?|sets?)\b))",
    re.I,
)
"""A clause that starts with its verb: "Currently studying for …", "switched to Linux"."""


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _clauses(sentence: str) -> list[str]:
    """A sentence cut where a new first-person statement starts; subjects of elliptic clauses
    ("… and works at RBC") and of he/she after "my sister …" are filled in."""
    clauses: list[str] = []
    for part in _CONNECTOR.split(sentence):
        subject = _SUBJECT.match(_strip_discourse(part))
        pieces = _ELLIPSIS.split(part) if subject else [part]
        clauses.append(pieces[0])
        clauses.extend(f"{subject[0]} {p}" for p in pieces[1:] if subject)
    return [_resolve_pronoun(c, clauses[i - 1] if i else "") for i, c in enumerate(clauses)]


def _resolve_pronoun(clause: str, previous: str) -> str:
    relation = re.match(rf"^{MY_REL}", _strip_discourse(previous), re.I)
    if relation and re.match(r"^(?:he|she)\b", clause, re.I):
        return re.sub(r"^(?:he|she)\b", f"my {relation['rel']}", clause, flags=re.I)
    return clause


def _strip_discourse(clause: str) -> str:
    """The clause without greetings, fillers and time adverbs in front; an elliptic clause that
    starts with a past verb or an activity ("Currently studying for …") gets its "I"."""
    clause = _LABEL.sub("", _DISCOURSE.sub("", clause.strip()).strip())
    found = _ELLIPTIC_START.match(clause)
    if found:
        return f"{'I am' if found['ing'] else 'I'} {clause[:1].lower()}{clause[1:]}"
    return clause


# --- what is not a statement about the user ----------------------------------------------------

_REQUEST = lazy(
    r"^(?:please )?(?:can|could|would|will) you (?:please )?(?:remember|note|keep in mind)", re.I
)
"""A memory request phrased as a question: read, not skipped."""
_QUESTION = lazy(
    r"^(?:do(?! not\b)|does|did|am|is|are|was|were|should|shall|can|could|would|will|what|"
    r"whats|where|who|whom|why|which|how|have|has)\b",
    re.I,
)
_OFF_RECORD = lazy(
    r"\b(?:if|unless|suppose|supposing|imagine|pretend|hypothetically|what if|let us say|"
    r"assume|assuming|in theory|role-?play|wish|would(?! rather| prefer| like you to)|"
    r"could(?! you)|maybe|perhaps|probably|possibly|might|not sure|unsure|thinking (?:about|of)|"
    r"considering|wondering|I guess|I think|I suppose|I believe|I feel like|eventually|"
    r"hopefully|should|ought to|planning to|hoping to|tempted to|want to|wanted to|"
    r"said|says|told|asked|asks|thinks|believes|claims|claimed|according to|heard|mentioned|"
    r"argues|insists|suggested|recommends|used to|when I was|back when|as a (?:kid|child|teen)|"
    r"toying with|back and forth|on the fence|(?:nothing|not|haven't|have not|not yet) decided|"
    r"undecided|can't decide|cannot decide|mulling)\b"
    r"|\b(?:need|want|looking for|would like)\b[^.!?]{0,40}\b(?:synonym|word|name|idea|regex"
    r"|function|script|snippet|haiku|poem|story|e-?mail|letter|summary|title|slogan|caption"
    r"|template|example|recipe|outline|translation|joke)s?\b",
    re.I,
)
"""Hypotheticals, hedges, other people's words, the past, and requests for something written
("I need 5 name ideas"): the whole sentence is skipped."""


def _off_record(sentence: str) -> bool:
    """A question, hypothetical, hedge, report of someone else's words, or the past."""
    if _REQUEST.match(_strip_discourse(sentence)):
        return False
    if _asks(sentence) or _QUESTION.match(_strip_discourse(sentence)):
        return True
    return bool(_OFF_RECORD.search(sentence))


# --- values ------------------------------------------------------------------------------------

_LIST = lazy(r"^(?:[\w'-]+(?: [\w'-]+){0,3}, )+(?:and|or) [^,;:]+", re.I)
"""A short list, kept whole: "the energy, diversity, and awesome food"."""
_BOUNDARY = lazy(
    r",|;|:|\(|\sand (?=(?:the|it|this|that|they|he|she|there|everything|everyone|people)\b)|"
    r"\s(?:because|since|so|but|although|though|which|unless|whereas|whenever|"
    r"as long as|even though|cause|cuz)\s",
    re.I,
)
"""Where an object ends and the next clause begins."""
_FILLER = lazy(
    r"\s+(?:btw|lol|haha|tbh|honestly|though|too|as well|now|these days|nowadays|anymore|"
    r"any more|either|please|originally|for now|thanks|thank you|ok|really|already|again|"
    r"i guess|\W+)$",
    re.I,
)
_WHEN = lazy(
    r"\s+(?:(?:last|this|next) (?:year|month|week|summer|winter|spring|autumn|fall|weekend|"
    r"sprint)|in (?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december|\d{4})|(?:a|one|two|three|four|five|six|a few|few|\d+|several|"
    r"a couple of) \w+ ago|recently|yesterday|today|(?:for|since) (?:\w+ )?(?:years?|months?|"
    r"weeks?|decades?|a while|ages|\d{4})|since \w+)$",
    re.I,
)
"""A trailing time ("in March", "two years ago"), dropped from places and employers."""
_DEICTIC = lazy(
    r"^(?:it|this|that|these|those|them|one|both|either|neither|yours|your|you|how|what|when|"
    r"why|to (?:think|say|admit|break|hear|see|know|ask|point out|mention|tell)|to$|too$|"
    r"(?:I|he|she|we|they)\b|(?:a few|a couple|some|several|many|lots|a lot|more|all)$|"
    r"where|whether|which|who|the way|the idea|the one|ones|"
    r"the (?:first|second|third|fourth|fifth|\d+(?:st|nd|rd|th)|last|latter|former|previous|next|"
    r"other|above|below|new|old|same|current|latest|original|revised|updated|final|shorter|"
    r"longer|better)|"
    r"(?:option|version|choice|variant|approach|plan|number|answer|suggestion|solution)"
    r"(?: \w{1,2})?$|[a-z]$|#?\d+$)\b",
    re.I,
)
"""Objects that only point at the conversation ("that", "the second option", "option B")."""
_LOCAL = lazy(
    r"\b(?:it|this|that|these|those|them|again|instead)$|\b(?:he|him|his|she|her|they|them|"
    r"their|its|it|there|here|above|below|for now|this time|"
    r"(?:this|that) (?:one|function|file|snippet|example|line|loop|test|query|case|method|class|"
    r"script|cell|step|bug|answer|version|reply|draft|paragraph))\b",
    re.I,
)
"""Objects about the conversation at hand or someone unnamed ("… like this", "… here",
"their work")."""
_SHIFTS = [
    (lazy(pattern, re.I), replacement)
    for pattern, replacement in [
        (r"\bmyself\b", "themselves"),
        (r"\bmine\b", "theirs"),
        (r"\b(?:my|our)\b", "their"),
        (r"\b(?:me|us)\b", "the user"),
        (r"\bours\b", "theirs"),
        (r"\byourself\b", "itself"),
        (r"\byour\b", "its"),
    ]
]
_SUBJECT_VERB = lazy(r"\b(I|you)\s+(\w+)", re.I)


def shift(text: str) -> str:
    """First and second person → third: "me" → "the user", "you write" → "the assistant
    writes", "my" → "their", "your" → "its"."""

    def subject(match: re.Match[str]) -> str:
        who = "the user" if match[1].lower() == "i" else "the assistant"
        return f"{who} {third_person(match[2])}"

    text = _SUBJECT_VERB.sub(subject, text)
    text = re.sub(r"\byou\b", "the assistant", text, flags=re.I)
    for pattern, replacement in _SHIFTS:
        text = pattern.sub(replacement, text)
    return text


def _trimmed(text: str) -> str:
    """The text up to its clause boundary, without trailing fillers ("lol", "now", "too")."""
    listed = _LIST.match(text)
    text = listed[0] if listed else _BOUNDARY.split(text, maxsplit=1)[0].strip()
    while (shorter := _FILLER.sub("", text).strip(" .!?")) != text:
        text = shorter
    return text


def _object(text: str | None) -> str | None:
    """What a rule's object names, cut at the clause boundary, in the third person; None if it
    is empty, too long, quoted or about the conversation rather than the user."""
    if text is None:
        return None
    text = _trimmed(text)
    if not text or _DEICTIC.match(text) or _LOCAL.search(text) or len(text.split()) > 12:
        return None
    return None if "[quote]" in text else shift(text)


def _place(text: str | None) -> str | None:
    """An object without a trailing time ("Lisbon in March" → "Lisbon")."""
    value = _object(text)
    while value and (shorter := _WHEN.sub("", value)) != value:
        value = shorter
    return value or None


def _name(text: str | None) -> str | None:
    """A person's name: up to three words, each capitalised in the output."""
    found = re.match(r"^[A-Za-z][\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*){0,2}", _trimmed(text or ""))
    first = found[0].split()[0].lower() if found else ""
    if not found or first in NOT_NAMES or first in STOPWORDS:
        return None
    return " ".join(w[:1].upper() + w[1:] for w in found[0].split())


def _capital_name(text: str | None) -> str | None:
    """A name the user wrote with a capital ("call me Jo", not "call me back")."""
    return _name(text) if text and text[:1].isupper() else None


def _verb(text: str | None) -> str | None:
    return third_person(text) if text else None


# --- rule machinery ----------------------------------------------------------------------------

Said = list[tuple[FactCategory, str]]
"""What a clause says: (category, fact) pairs, possibly none."""
Build = Callable[[re.Match[str]], Said | None]


@dataclass(frozen=True, slots=True)
class Rule:
    """A clause pattern and what a match says; the first rule that matches a clause decides."""

    pattern: re.Pattern[str]
    build: Build


def _quantity(text: str | None) -> str | None:
    """A value ("€1,250 a month", "5'11\""): an object that may be a bare number ("1250")."""
    value = _trimmed(text or "")
    return value if value.isdigit() else _object(text)


CLEAN: dict[str, Callable[[str | None], str | None]] = {
    "x": _object,
    "q": _quantity,
    "y": _object,
    "p": _place,
    "t": lambda text: _trimmed(text or "") or None,
    "name": _name,
    "cname": _capital_name,
    "v3": _verb,
}
"""How :func:`say` cleans each named group: objects, places, raw times, names, verbs; any other
group is used as matched."""


def say(category: FactCategory, template: str) -> Build:
    """A builder that fills ``template`` with the cleaned groups; ``[ over {y}]`` is left out
    when ``y`` did not match. A group that matched but cleans to nothing leaves the clause
    unread (``None``)."""

    def build(match: re.Match[str]) -> Said | None:
        values: dict[str, str] = {}
        for key, raw in match.groupdict().items():
            value = CLEAN[key](raw) if key in CLEAN else raw
            if value is None and raw is not None:
                return None
            values[key] = (value or "").strip()
        return [(category, _fill(template, values))]

    return build


def _someone_elses(_: re.Match[str]) -> Said:
    """A clause of someone else's (a relative's job, anything of a friend's or a boss's): read,
    and nothing in it is the user's (the parse does not read it again)."""
    return []


def _fill(template: str, values: dict[str, str]) -> str:
    def optional(match: re.Match[str]) -> str:
        keys = re.findall(r"{(\w+)}", match[1])
        return match[1] if all(values.get(k) for k in keys) else ""

    text = re.sub(r"\[([^\]]*)\]", optional, template).format_map(values)
    return re.sub(r"\s+", " ", text).strip()


def _role(match: re.Match[str]) -> Said | None:
    """ "I am a data engineer at Spotify" → the role, and the employer when one is named;
    "I am not / no longer a …" → the negated role."""
    role = _trimmed(match["role"])
    if not role or role.split()[0].lower() in NOT_ROLES:
        return None
    if match["neg"]:
        return [(FACT, f"The user is {match['neg'].strip()} {match['art']} {shift(role)}.")]
    parts = re.split(r"\s+(at|for)\s+", role, maxsplit=1)
    employer = len(parts) == 3 and (parts[1] == "at" or re.fullmatch(ORGANISATION, parts[2], re.I))
    if not employer or parts[0].split()[-1].lower() in SKILL_WORDS:
        return [(FACT, f"The user is {match['art']} {shift(role)}.")]
    said: Said = [(FACT, f"The user is {match['art']} {shift(parts[0])}.")]
    if where := _place(parts[2]):
        said.append((FACT, f"The user works at {where}."))
    return said


def _works(match: re.Match[str]) -> Said | None:
    """ "I work for the NHS as a nurse" → the employer and the role."""
    employer = _place(match["p"])
    if employer is None:
        return None
    said: Said = [(FACT, f"The user works at {employer}.")]
    if match["role"] and (role := _object(match["role"])):
        said.append((FACT, f"The user is {match['art'] or 'a'} {role}."))
    return said


def _lost(match: re.Match[str]) -> Said | None:
    """ "I no longer have a car" / "I do not have kids"."""
    thing = _object(match["x"])
    if thing is None:
        return None
    verb = "no longer has" if "no longer" in match[0].lower() else "does not have"
    return [(FACT, f"The user {verb} {thing}.")]


def _prefers(match: re.Match[str]) -> Said | None:
    """ "I prefer tea to coffee" → tea over coffee; "I prefer sending invoices to the shared
    inbox" → one preference, its destination kept (:func:`slots.split_preference`)."""
    x, y = split_preference(match["x"])
    first, second = _object(x), _object(y) if y is not None else ""
    if first is None or second is None:
        return None
    return [(PREF, _fill("The user prefers {x}[ over {y}].", {"x": first, "y": second}))]


_HEIGHT = lazy(
    r"[\d.,]+\s?(?:['\u2019\u2032]\s?\d{0,2}(?:[\"\u2033\u201d]|'')?|"
    r"(?:cm|m|metres?|meters?|ft|feet|foot)(?: \d{1,2}(?: ?(?:in|inches|\"))?)?)",
    re.I,
)
"""A height and nothing else: 5'11", 180 cm, 1.80 m, 5 ft 11 in."""


def _height(match: re.Match[str]) -> Said | None:
    """ "I am 5'11\"" / "I am 180 cm tall" → "The user is … tall." """
    height = _quantity(match["q"])
    if not height or not (match["tall"] or _HEIGHT.fullmatch(_shown(height))):
        return None
    return [(FACT, f"The user is {height} tall.")]


_BASE = {"going": "go", "sticking": "stick", "switching": "switch", "migrating": "migrate"}


def _deciding(match: re.Match[str]) -> Said | None:
    """ "We are going with Stripe" → "The user decided to go with Stripe." """
    thing = _object(match["x"])
    if thing is None:
        return None
    first, _, rest = match["v"].partition(" ")
    verb = _BASE.get(first.lower(), first.lower().removesuffix("ing"))
    return [(DEC, _fill(f"The user decided to {verb} {shift(rest)} {thing}.", {}))]


def _habit(match: re.Match[str]) -> Said | None:
    """ "I always write tests first" → "The user always writes tests first." """
    verb = match["verb"].lower()
    if verb in HABIT_BLOCK or verb in PAST or verb.endswith("ed"):
        return None
    rest = _object(match["rest"]) if match["rest"] else ""
    if rest is None:
        return None
    return [(PREF, _fill(f"The user {match['f']} {third_person(match['verb'])} {rest}.", {}))]


def _speaks(match: re.Match[str]) -> Said | None:
    """ "I speak Portuguese and a bit of French" (a language must be named)."""
    languages = _object(match["x"])
    if not languages or not LANGUAGES & set(words(languages)):
        return None
    return [(FACT, f"The user speaks {languages}.")]


# --- the rules, in the order they are tried ----------------------------------------------------

I_ = rf"^I {ADV}"
WE_ = rf"^(?:we|I|the team|our team|my team) (?:have |has )?{ADV}"
LIVE = (
    r"(?:live|am living|are living|am based|are based|reside|have lived|have been living|"
    r"have been based)"
)
MOVED = r"(?:have |had )?(?:moved|relocated|moved back)"
PREFER = r"(?:would )?(?:prefer|prefere|perfer)"
LIKE = (
    r"(?:like|love|enjoy|adore|am (?:a )?(?:big |huge |massive |great |real )?fan of|am into|"
    r"am obsessed with|am passionate about|am a sucker for|"
    r"am a (?:big |huge |firm |strong )?believer in)"
)
DISLIKE = (
    r"(?:dislike|hate|detest|loathe|despise|can not stand|can not bear|"
    r"am not (?:a |really a |a big |a huge |much of a )?fan of|am not into|"
    r"do not (?:really |particularly )?(?:like|love|enjoy|care for))"
)
CHOSE = r"(?:chose|chosen|picked|selected|opted for|settled on|went with|gone with|went for)"
JOINED = r"(?:joined|started (?:a new job |working |a job )?at|got a (?:new )?job at|started at)"
WORK = r"(?:work|am working|am employed)"
BASE = (
    r"(?P<n>office|company|team|school|university|home|gym|dentist|doctor|gp|vet|clinic|barber"
    r"|hairdresser|physio|therapist|studio|lab|workplace)"
)
ADOPT = r"(?:use|go with|stick with|stick to|switch to|adopt|migrate to)"
ADOPTING = r"(?:going with|sticking with|switching to|switching from .+? to|migrating to|adopting)"
SWITCHED = r"(?:switched|migrated|moved over|moved)"
EVERYTHING = r"(?:everything|it all|all of it|the lot|(?:all )?(?:my|our) (?:stuff|things|infra))"
"""What a switch moves as a whole ("moved everything off Heroku to Render")."""
FAVOURITE = r"(?:all[- ]time )?(?:favou?rite|fav|fave)"
ATTRIBUTE = r"(?P<a>[\w-]+(?: [\w-]+){0,2})"
SESSION_THING = (
    r"(?P<a>deadline|due date|budget|exam|interview|presentation|demo|flight|launch|release)"
)

_TABLE: list[tuple[str, Build]] = [
    # names
    (r"^my name is (?P<name>.+)", say(FACT, "The user's name is {name}.")),
    (r"^(?:please )?call me (?P<cname>.+)", say(FACT, "The user's name is {cname}.")),
    (
        r"^(?:people|everyone|friends) (?:all )?calls? me (?P<cname>.+)",
        say(FACT, "The user's name is {cname}."),
    ),
    (r"^I go by (?P<cname>.+)", say(FACT, "The user's name is {cname}.")),
    # relations
    (rf"^my (?:{NOT_KIN})(?: (?-i:[A-Z][a-z]+))?(?:'s)? (?!and\b)\w", _someone_elses),
    (
        rf"^my (?P<rel>{REL})'s name is (?P<name>.+)",
        say(FACT, "The user's {rel}'s name is {name}."),
    ),
    (
        rf"^my (?P<rel>{REL}) is (?:called|named) (?P<name>.+)",
        say(FACT, "The user's {rel}'s name is {name}."),
    ),
    (
        rf"^my (?P<rel>{REL})'s birthday is (?:on )?(?P<t>.+)",
        say(FACT, "The user's {rel}'s birthday is {t}."),
    ),
    (
        rf"^{MY_REL} {ADV}(?:lives|is living|is based|live|are based) in (?P<p>.+)",
        say(FACT, "The user's {rel} lives in {p}."),
    ),
    (
        rf"^{MY_REL} {ADV}(?:works|is working) (?:at|for) (?P<p>.+)",
        say(FACT, "The user's {rel} works at {p}."),
    ),
    (
        rf"^{MY_REL} (?:is|are) allergic to (?P<x>.+)",
        say(FACT, "The user's {rel} is allergic to {x}."),
    ),
    (rf"^{MY_PET} is (?P<art>an?) (?P<x>.+)", say(FACT, "The user's {rel} is {art} {x}.")),
    (rf"^{MY_REL} is an? ", _someone_elses),
    # residence and origin
    (
        rf"^(?:I|we|my {REL} and I) {ADV}{LIVE} (?:with [\w' ]{{1,30}}? )?in (?P<p>.+)",
        say(FACT, "The user lives in {p}."),
    ),
    (
        rf"^(?:I|we) {ADV}{MOVED} (?:from .+? )?to (?!{TECH}\b)(?P<p>(?-i:[A-Z]).+)",
        say(FACT, "The user lives in {p}."),
    ),
    (rf"{I_}no longer live in (?P<p>.+)", say(FACT, "The user no longer lives in {p}.")),
    (
        r"^I (?:have )?moved (?:out of|away from) (?P<p>.+)",
        say(FACT, "The user no longer lives in {p}."),
    ),
    (rf"^I am {ADV}from (?P<p>.+)", say(FACT, "The user is from {p}.")),
    (
        rf"^(?:our|my) {BASE} is (?:based |located )?in (?P<p>.+)",
        say(FACT, "The user's {n} is in {p}."),
    ),
    # work
    (
        rf"{I_}no longer work (?:at|for|with) (?P<p>.+)",
        say(FACT, "The user no longer works at {p}."),
    ),
    (
        r"^I am no longer (?:with|at|working at|working for|employed at|employed by) (?P<p>.+)",
        say(FACT, "The user no longer works at {p}."),
    ),
    (
        r"^I (?:have )?(?:just )?(?:quit|left) my (?:job|position|role) (?:at|with) (?P<p>.+)",
        say(FACT, "The user no longer works at {p}."),
    ),
    (
        rf"{I_}(?:work|am working) (?P<r>remotely |remote )?from (?P<p>.+)",
        say(FACT, "The user works {r}from {p}."),
    ),
    (
        rf"{I_}(?:work|am working) as (?P<art>an?) (?P<x>.+?)(?: (?:at|for) (?P<p>.+))?$",
        say(FACT, "The user is {art} {x}.[ The user works at {p}.]"),
    ),
    (
        rf"{I_}{WORK} (?:at|for|by) (?P<p>.+?)(?: as (?P<art>an?)? ?(?P<role>.+))?$",
        _works,
    ),
    (rf"{I_}{JOINED} (?P<p>{ORGANISATION})", say(FACT, "The user works at {p}.")),
    # states, health, age, birthday
    (
        rf"^I am no longer (?:an? )?(?P<s>{STATES}){STATE_END}",
        say(FACT, "The user is no longer {s}."),
    ),
    (rf"^I am not (?:an? )?(?P<s>{STATES}){STATE_END}", say(FACT, "The user is not {s}.")),
    (
        rf"^I (?:am|have been|have always been) (?:an? )?{ADV}(?P<s>{STATES}){STATE_END}",
        say(FACT, "The user is {s}."),
    ),
    (
        r"^I am (?:severely |very |mildly )?allergic to (?P<x>.+)",
        say(FACT, "The user is allergic to {x}."),
    ),
    (
        r"^I am (?P<n>\d{1,3})(?: years old| years| yo| y/o)?$",
        say(FACT, "The user is {n} years old."),
    ),
    (r"^I am (?P<cname>(?-i:[A-Z])[a-z]+)(?:,.*)?$", say(FACT, "The user's name is {cname}.")),
    (r"^my birthday is (?:on )?(?P<t>.+)", say(FACT, "The user's birthday is {t}.")),
    (r"^I was born (?P<on>on|in) (?P<t>.+)", say(FACT, "The user was born {on} {t}.")),
    # preferences
    (rf"{I_}no longer (?:like|love|enjoy) (?P<x>.+)", say(PREF, "The user no longer likes {x}.")),
    (rf"{I_}{PREFER} to (?P<x>.+)", say(PREF, "The user prefers to {x}.")),
    (rf"{I_}{PREFER} (?P<x>.+)", _prefers),
    (
        r"^I (?:would )?(?:much )?rather (?P<x>.+?) than (?P<y>.+)",
        say(PREF, "The user would rather {x} than {y}."),
    ),
    (
        r"^I (?:would )?(?:much )?rather (?P<x>(?!not\b)[\w'-]+ .+)",
        say(PREF, "The user would rather {x}."),
    ),
    (rf"{I_}{DISLIKE} (?P<x>.+)", say(PREF, "The user dislikes {x}.")),
    (rf"{I_}{LIKE} (?P<x>.+)", say(PREF, "The user likes {x}.")),
    (
        rf"^my {FAVOURITE} {ATTRIBUTE} (?:is|are) (?P<x>.+)",
        say(PREF, "The user's favourite {a} is {x}."),
    ),
    (rf"^my go-to {ATTRIBUTE} (?:is|are) (?P<x>.+)", say(PREF, "The user's go-to {a} is {x}.")),
    # roles (after "I am a big fan of")
    (
        r"^I (?:am|have been|have always been) (?P<neg>not |no longer )?(?P<art>an?) (?P<role>.+)",
        _role,
    ),
    # has, owns, speaks, learns, runs on
    (rf"{I_}(?:no longer|do not) have (?P<x>{HAVE_THING})", _lost),
    (
        rf"{I_}(?:have|have got|got) (?P<x>an? .+?) (?:named|called) (?P<cname>.+)",
        say(FACT, "The user has {x} named {cname}."),
    ),
    (rf"{I_}(?:have|have got|got) (?P<p>{HAVE_THING})", say(FACT, "The user has {p}.")),
    (
        rf"{I_}(?P<v3>own|drive|ride) (?P<x>(?:an?|two|three|\d+) .+)",
        say(FACT, "The user {v3} {x}."),
    ),
    (rf"{I_}speak (?P<x>.+)", _speaks),
    (rf"^I am {ADV}learning (?P<x>.+)", say(FACT, "The user is learning {x}.")),
    (r"^I am on (?P<x>(?-i:[A-Z0-9]|[a-z]+[A-Z]).+)", say(FACT, "The user is on {x}.")),
    # decisions
    (
        rf"{WE_}(?:decided|agreed) (?:(?P<neg>not) )?to (?P<x>.+)",
        say(DEC, "The user decided [{neg} ]to {x}."),
    ),
    (rf"{WE_}decided on (?P<x>.+)", say(DEC, "The user decided on {x}.")),
    (
        rf"{WE_}{CHOSE} (?P<x>.+?)(?: (?:over|instead of|rather than) (?P<y>.+))?$",
        say(DEC, "The user chose {x}[ over {y}]."),
    ),
    (
        r"^let us (?P<v>go with|use|stick with|stick to|pick|choose|switch to|adopt) (?P<x>.+)",
        say(DEC, "The user decided to {v} {x}."),
    ),
    (
        rf"^we (?:will|are going to|shall) {ADV}(?P<v>{ADOPT}) (?P<x>.+)",
        say(DEC, "The user decided to {v} {x}."),
    ),
    (
        rf"^(?:we|I) (?:are|am) {ADV}(?P<v>{ADOPTING}) (?P<x>.+)",
        _deciding,
    ),
    (
        rf"^(?:we|I) (?:have )?{ADV}{SWITCHED} (?:{EVERYTHING} )?(?:(?:from|off) (?P<y>.+?) )?"
        r"(?:to|onto) (?P<p>.+)",
        say(DEC, "The user switched [from {y} ]to {p}."),
    ),
    # context
    (rf"^I am {ADV}(?P<v>{ACTIVITY}) (?P<x>.+)", say(CTX, "The user is {v} {x}.")),
    (rf"^I am {ADV}using (?P<x>.+)", say(CTX, "The user is using {x}.")),
    (
        rf"^(?:my|our) {SESSION_THING}(?: (?P<r>for [^,]+?))? is (?P<q>.+)",
        say(CTX, "The user's {a}[ {r}] is {q}."),
    ),
    # quantities
    (
        rf"^my (?P<a>{QUANTITY})(?:'s| {CHANGED}) {ADV}"
        rf"(?P<q>(?:set (?:to|at) |at )?{AMOUNT_START}.+)",
        say(FACT, "The user's {a} is {q}."),
    ),
    (
        rf"^(?P<a>{BARE_QUANTITY})(?:'s| {CHANGED}) {ADV}"
        rf"(?P<q>{AMOUNT_START}(?:(?! (?:in|for|at) ).)+)$",
        say(FACT, "The user's {a} is {q}."),
    ),
    (
        rf"^my (?P<a>(?!{REL}\b)[\w-]+(?: [\w-]+)?) (?:has |have )?{NEW_VALUE} to "
        rf"(?P<q>{AMOUNT_START}.+)",
        say(FACT, "The user's {a} is {q}."),
    ),
    (
        rf"^(?:my|our) (?P<g>{GROUP})(?:'s| has| have) (?P<v>grown|shrunk|gone (?:up|down)) to "
        r"(?P<q>\d+(?: (?:people|engineers|developers|staff|employees|members|reports))?)",
        say(FACT, "The user's {g} has {v} to {q}."),
    ),
    (rf"^I am {ADV}(?P<q>{AMOUNT_START}.+?)(?P<tall> tall)?$", _height),
    (
        rf"^I (?:(?P<f>{FREQ}) )?{ADV}(?P<v3>{VALUE_VERBS}) (?P<q>{AMOUNT_START}.+)",
        say(FACT, "The user [{f} ]{v3} {q}."),
    ),
    # uses and habits
    (
        rf"{I_}no longer (?P<v3>use|eat|drink|smoke|play|watch|drive|wear) (?P<x>.+)",
        say(PREF, "The user no longer {v3} {x}."),
    ),
    (rf"^we {ADV}no longer use (?P<x>.+)", say(FACT, "The user no longer uses {x}.")),
    (rf"{I_}do not (?P<v>eat|drink|smoke) (?P<x>.+)", say(PREF, "The user does not {v} {x}.")),
    (rf"{I_}use (?P<x>.+)", say(PREF, "The user uses {x}.")),
    (rf"^we {ADV}use (?P<x>.+)", say(FACT, "The user uses {x}.")),
    (rf"^I (?P<f>{FREQ}) {ADV}(?P<verb>\w+)(?P<rest> .+)?$", _habit),
]
RULES = [Rule(lazy(pattern, re.I), build) for pattern, build in _TABLE]
"""Every clause rule, first match wins: more specific patterns come before general ones."""

# --- the readers that are more than one pattern ------------------------------------------------

_REMEMBER = lazy(
    r"^(?:please |pls |also |and )?(?:(?:can|could|would|will) you (?:please )?)?"
    r"(?P<m>remember|note|keep in mind|do not forget|never forget|make a note|take note|"
    r"for the record|for future reference|for your information)"
    r"(?P<that>,? that|:|,)?\s+(?P<x>.+)",
    re.I,
)
_STANDING = lazy(
    r"^(?:please |pls |kindly )?(?P<marker>(?:from now on|going forward|moving forward|"
    r"in (?:the )?future|for all future \w+|by default),?\s+)?(?:please )?"
    r"(?:I (?:want|would like|need) you to )?"
    r"(?:(?P<adv>always|never|do not ever|never ever)\s+)?(?P<vp>[a-z][\w'-]*\b.*)$",
    re.I,
)
_WHEN_YOU = lazy(r"^(?P<when>when(?:ever)? you [^,]+),\s*(?P<rest>.+)$", re.I)
_CORRECTION = lazy(
    r"^(?:it is|it was|I meant|I mean|make that|that is|I said .+? but I meant)\s+"
    r"(?P<x>[^,]{1,40}?),?\s+(?:not|rather than|instead of)\s+(?P<y>[^,.!?]{1,40}?)[.!]*$",
    re.I,
)
_ANYMORE_NEG = lazy(r"\b(?:do|does|am|is|are) not\b", re.I)
_STOPPED = lazy(r"\b(?:have |has )?(?:stopped|quit|gave up) (\w+?)ing\b", re.I)
_GERUND = {"us": "use", "liv": "live", "smok": "smoke", "driv": "drive", "writ": "write"}


def _remembered(clause: str) -> Said | None:
    """ "Remember that …" → what follows, read as a statement of its own; if no rule reads it,
    the statement itself in the third person (when it is about the user or says "that")."""
    found = _REMEMBER.match(clause)
    if not found or found["x"].lower().startswith("to "):
        return None
    said = _by_rules(_strip_discourse(found["x"]))
    if said:
        return said
    about_user = re.search(r"\b(?:I|my|we|our|me)\b", found["x"], re.I)
    if not (about_user or (found["that"] or "").strip(", ") == "that"):
        return []
    return [(FACT, _statement(found["x"]))]


def _statement(text: str) -> str:
    """A first-person statement as a third-person fact ("we deploy on Tuesdays" → "The user
    and their team deploy on Tuesdays.")."""
    text = _trimmed(text)
    text = re.sub(r"^we\b", "the user and their team", text, flags=re.I)
    text = re.sub(r"^(?:my|our)\b", "the user's", text, flags=re.I)
    text = shift(text)
    if not text.lower().startswith("the user"):
        text = f"the user noted that {text}"
    return text[0].upper() + text[1:] + "."


def _instruction(clause: str) -> Said | None:
    """ "Please always answer in Spanish" / "From now on, …" → a standing instruction."""
    when = _WHEN_YOU.match(clause)
    found = _STANDING.match(when["rest"] if when else clause)
    if not found or not (found["adv"] or found["marker"]):
        return None
    action = re.sub(r"\W*(?:please|thanks|thank you)?\W*$", "", found["vp"], flags=re.I)
    if found["vp"].split()[0].lower() not in IMPERATIVES or _LOCAL.search(action):
        return None
    adverb = "always" if (found["adv"] or "always").lower() == "always" else "never"
    condition = f" {when['when'][:1].lower()}{when['when'][1:]}" if when else ""
    action = shift(found["vp"].rstrip(" .!") + condition)
    return [(PREF, f"The user wants the assistant to {adverb} {action[0].lower()}{action[1:]}.")]


def _correction(clause: str, earlier: Sequence[Candidate]) -> Said | None:
    """ "Actually, it's Munich, not Berlin" → the latest earlier fact naming Berlin, corrected."""
    found = _CORRECTION.match(clause)
    if not found:
        return None
    right, wrong_value = _shown(found["x"].strip()), _shown(found["y"].strip())
    wrong = re.compile(rf"(?<!\w){re.escape(wrong_value)}(?!\w)", re.I)
    for candidate in reversed(earlier):
        if wrong.search(candidate.fact):
            fact = wrong.sub(lambda _: right, candidate.fact, count=1)
            return [(FactCategory(candidate.category), fact)]
    return []


def _lapsed(clause: str) -> str:
    """ "I do not use X anymore" / "I stopped using X" → "I no longer use X"."""
    if re.search(ANYMORE, clause, re.I) and _ANYMORE_NEG.search(clause):
        clause = re.sub(ANYMORE, "", clause, count=1, flags=re.I)
        clause = _ANYMORE_NEG.sub(lambda m: m[0].split()[0] + " no longer", clause, count=1)
        clause = re.sub(r"\b(?:do|does) no longer\b", "no longer", clause, flags=re.I)
    return _STOPPED.sub(lambda m: "no longer " + _GERUND.get(m[1].lower(), m[1]), clause)


def _by_rules(clause: str) -> Said | None:
    """What the first rule that matches the clause reads in it (possibly nothing: a rule may
    match and refuse); ``None`` when no rule matches, or the one that does cannot read its
    values ("I'm 34 and training for…"): the parse reads it then."""
    for rule in RULES:
        found = rule.pattern.match(clause)
        if found:
            return rule.build(found)
    return None


def _read(clause: str, earlier: Sequence[Candidate]) -> Said | None:
    """What one clause says about the user (possibly nothing), or ``None`` when no rule reads
    it at all."""
    clause = _lapsed(_strip_discourse(clause).rstrip(" .!"))
    if not clause:
        return None
    for reader in (_remembered, _instruction):
        said = reader(clause)
        if said is not None:
            return said
    corrected = _correction(clause, earlier)
    return corrected if corrected is not None else _by_rules(clause)


# --- the extractor -----------------------------------------------------------------------------


def _sentences_of(text: str) -> Iterator[tuple[str, bool]]:
    """The sentences of a user turn worth reading — visible, English, not sarcastic, and not a
    hypothetical, hedge or report — each with whether it asks a question (a question's lead,
    "since I'm allergic to cats, …?", may still state something of the user's)."""
    text = _visible(_hidden(text))
    if _SARCASM.search(text) or _PLAY.search(text) or not _english(text):
        return
    for sentence in _sentences(_expand(text)):
        said = _RELEVANCE.sub("", _before_the_question(sentence))
        if not _english(said):
            continue
        if not _off_record(said):
            yield said, False
        elif (now := _after_the_past(said)) is not None:
            yield now, False
        elif _asks(said) and "," in said and not _OFF_RECORD.search(said[: said.rindex(",")]):
            yield said, True


def _ruled(
    sentence: tuple[str, bool], earlier: Sequence[Candidate]
) -> tuple[list[tuple[str, Said]], bool]:
    """The clauses of a sentence a rule read, each with what it found (nothing: a refusal),
    and whether rules read every clause of it (then the parse need not)."""
    clauses = list(_statements([sentence]))
    read = [(clause, _read(clause, earlier)) for clause in clauses]
    found = [(clause, said) for clause, said in read if said is not None]
    return found, bool(clauses) and len(found) == len(clauses)


def _statements(sentences: Sequence[tuple[str, bool]]) -> Iterator[str]:
    """The clauses the rules read: those of the sentences that ask nothing."""
    for said, asks in sentences:
        if not asks:
            yield from _clauses(said)


def _parsed(sentences: Sequence[tuple[str, bool]]) -> list[clauses.Statement]:
    """The statements the parse finds in the sentences (none in quoted material), their
    values as the user wrote them ("£1,000", "7.5"): the parser reads words, not hidden ones."""
    readable = [
        (_LABEL.sub("", _DISCOURSE.sub("", _shown(said).strip()).strip()), asks)
        for said, asks in sentences
        if "[quote]" not in said
    ]
    return clauses.statements([r for r in readable if r[0]])


def _after_the_past(sentence: str) -> str | None:
    """What a sentence says holds now after what held before ("I used to live in Berlin but
    I've been in Munich for 4 years now", "Was a night guard until March, now I do days"): the
    part after the turn, when the past is all that kept the sentence off the record."""
    turn = next(reversed(list(_THEN_NOW.finditer(sentence))), None)  # the last one
    if turn is None or not _PAST_BEFORE.search(sentence[: turn.start()]):
        return None
    now = sentence[turn.end() :].strip()
    return now if now and not _off_record(now) else None


_THEN_NOW = lazy(r",?\s+but\s+(?:now\s+)?|;\s*(?:but\s+)?(?:now\s+)?|,\s*(?=now\b)", re.I)
_PAST_BEFORE = lazy(
    r"\b(?:used to|until|back when|when I was|formerly|previously"
    r"|for (?:a|\d+) (?:decade|years?))\b",
    re.I,
)


def _asks(sentence: str) -> bool:
    """Whether a sentence ends as a question."""
    return sentence.rstrip(" .!)").endswith("?")


def _before_the_question(sentence: str) -> str:
    """A question's lead when it states something of the user's ("I'm 52 and just took up
    swimming — how often should I go?", "Since I'm on an M2, should I…"): the statement before
    the question; any other sentence as it is."""
    if not _asks(sentence):
        return sentence
    cut = _ASKS_AFTER.search(sentence)
    if cut is None:
        return sentence
    lead = _BECAUSE.sub("", sentence[: cut.start()]).strip()
    return lead if _OWN_LEAD.match(lead) else sentence


_ASKS_AFTER = lazy(
    r"\s+[\u2014\u2013-]+\s+|;\s*|,\s*(?=(?:how|what|which|where|when|who|why|should|shall|can"
    r"|could|would|will|do|does|did|is|are|any|anything|enough|thoughts|ideas)\b)",
    re.I,
)
"""Where a question starts after a statement: a dash, a semicolon, a comma before its verb."""
_BECAUSE = lazy(r"^\s*(?:since|as|because|given\s+(?:that\s+)?|now\s+that)\s+", re.I)
_OWN_LEAD = lazy(r"(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b", re.I)


def extract(turns: Sequence[Turn]) -> list[Candidate]:
    """Candidate facts from the user turns of a window, in order, without duplicates: what the
    rules read, then what the parse finds that they missed, as the learned judge weighs it."""
    found: list[Candidate] = []
    seen: set[str] = set()

    def propose(category: FactCategory, fact: str, number: int, **more: Any) -> None:
        if fact.casefold() not in seen:
            seen.add(fact.casefold())
            found.append(Candidate(category.value, fact, turn=number, **more))

    previous: Turn | None = None
    for turn in turns:
        if turn.role != "user":
            previous = turn
            continue
        text = _visible(turn.text).strip()
        replied = _in_reply(turn.number, text, previous, found)
        turned_down = _turns_down(text, previous)
        previous = turn
        if replied is not None:
            category, fact, more = replied
            propose(category, fact, turn.number, **more)
        if replied is not None or turned_down:
            continue
        sentences = list(_sentences_of(turn.text))
        ruled: list[str] = []
        unread: list[tuple[str, bool]] = []
        for sentence in sentences:
            read, every = _ruled(sentence, found)
            ruled += [clause for clause, _ in read]
            for category, fact in (c for _, said in read for c in said):
                propose(category, _shown(fact), turn.number)
            if not every:
                unread.append(sentence)
        statements = [s for s in _parsed(unread) if not _covered(s.fact, ruled)]
        for statement, verdict in zip(statements, judge.verdicts(statements), strict=True):
            if verdict is not None:
                more = {"identity": verdict.identity, "vector": verdict.vector}
                propose(verdict.category, statement.fact, turn.number, **more)
        learned = [c.fact for c in found if c.turn == turn.number]
        for change in _changes(unread, learned):
            propose(FACT, f'{QUOTED}"{change}"', turn.number, updates_only=True)
    return found


def _changes(sentences: Sequence[tuple[str, bool]], learned: Sequence[str]) -> Iterator[str]:
    """The user's sentences that say something changed ("dropped Spanish, doing Italian now",
    "back on day shifts now") when nothing was learned from them: offered in the user's words,
    as an update only. Their words say a change outright (not only "now" or
    "joined"), the user is their subject (or they dropped it), and no sentence is negated ("not
    switching to Android")."""
    for said, asks in sentences:
        change = updates.change_said(said)
        if asks or change is None or change.least > updates.CLOSE:
            continue
        own = _content(said)
        if not any(own & _content(f) for f in learned) and clauses.of_the_user(said):
            yield said.strip().rstrip(".!")


def _in_reply(
    number: int, text: str, previous: Turn | None, earlier: Sequence[Candidate]
) -> tuple[FactCategory, str, dict[str, Any]] | None:
    """What a short reply (turn ``number``, its visible ``text``) means in the dialogue: the
    assistant's suggestion it takes (the user's decision, in the user's words), or the earlier
    statement of the user's it corrects."""
    if previous is not None and previous.role == "assistant" and _english(text):
        option = dialogue.accepted(text, previous.text)
        if option is not None:
            return DEC, dialogue.choice(option), {"accepts": option}
    stated = [c for c in earlier if c.turn is not None and c.turn < number]
    fixed = dialogue.corrected(text, [c.fact for c in stated])
    if fixed is None:
        return None
    old = stated[fixed.index]
    correction = Correction(old.turn or number, fixed.wrong, fixed.right)
    more = {"identity": old.identity, "correction": correction}
    return FactCategory(old.category), fixed.fact, more


def _turns_down(text: str, previous: Turn | None) -> bool:
    """Whether a short reply (its visible ``text``) turns down, or asks about, what the
    assistant just proposed ("Not intermittent fasting, no."): it states nothing of the user's."""
    if previous is None or previous.role != "assistant":
        return False
    return dialogue.refused(text, previous.text)


def _covered(fact: str, ruled: Sequence[str]) -> bool:
    """Whether a rule read the clause ``fact`` comes from (they share a content word): what a
    rule read or refused, the parse does not read again. A fact with no content is covered."""
    own = _content(fact)
    return not own or any(own & _content(clause) for clause in ruled)


def _content(fact: str) -> set[str]:
    return {w[:5] for w in words(fact.lower()) if w not in STOPWORDS} - {"user", "their"}
