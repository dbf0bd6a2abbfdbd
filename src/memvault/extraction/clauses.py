"""The user's statements in a sentence, read from its parse: who says what of whom.

Word lists know the verbs they list; a parse knows any verb's subject. Each clause of a user's
sentence whose subject is the user — "I", "we", "Marco and I", "my daughter", a dropped subject
("living in Porto at the moment"), or a topic about them ("gluten doesn't agree with me") —
comes out as a third-person statement ("The user swears by pytest-style fixtures.") with the
features the learned stage (:mod:`~memvault.extraction.judge`) weighs. Coordinated verbs are
statements of their own ("I do keto, lift 4x a week" → two); a question yields only what its
lead states of the user ("Being a night-shift paramedic, how do I…" → "The user is a
night-shift paramedic.").

What is never read: clauses whose subject is someone else, imperatives, modal and conditional
clauses ("could", "if …"), and the question itself. What the sentence is (a hedge, a report,
quoted or pasted text) is the caller's veto (:mod:`~memvault.extraction.heuristic`), decided
before the parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..patterns import lazy
from . import about, nlp
from .english import IMPERATIVES, third_person

Token = Any
Span = Any
"""spaCy's token and span (spaCy is imported by the first parse only)."""


SOON = "soon"
"""The feature of a clause about now or the days ahead ("tomorrow", "this week")."""


@dataclass(frozen=True, slots=True)
class Statement:
    """One clause of the user's, in the third person, with what the learned stage weighs."""

    fact: str
    features: tuple[str, ...]


def statements(sentences: Sequence[tuple[str, bool]]) -> list[Statement]:
    """The statements of ``sentences`` (each with whether it asks a question), in order; only
    a sentence that may be the user's is parsed (:func:`may_be_theirs`)."""
    theirs = [(_completed(text), asks) for text, asks in sentences if may_be_theirs(text, asks)]
    if not theirs:
        return []
    texts, asks = [text for text, _ in theirs], [question for _, question in theirs]
    return nlp.read_each(texts, lambda docs, parse: _read_all(docs, asks, parse))


def may_be_theirs(text: str, asks: bool) -> bool:
    """Whether a sentence may state something of the user's: it speaks of them ("I", "my",
    "we"…), or states something with a dropped subject — it opens with no word that names
    another subject or asks ("The", "it", "you", "what", "can"…)."""
    if _ME.search(text):
        return True
    first = _WORD.search(text)
    return not asks and first is not None and first[0].casefold() not in _SOMEONE_FIRST


_ME = lazy(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours"
    r"|ourselves)\b|\bas\s+(?:someone|somebody|one|a|an)\b",
    re.IGNORECASE,
)
"""Words of the user's ("I", "my", "we"…), and a lead that stands for them ("as someone who")."""
_WORD = lazy(r"[\w']+")
_SOMEONE_FIRST = frozenset(
    """the a an this that these those it it's its there there's here he he's she she's they
    they're you you're your his her their what what's how why where when who which can could
    would should will is are was were do does did please thanks thank hi hello hey yes no ok
    okay sure""".split()
)


def _read_all(docs: Sequence[Span], asks: Sequence[bool], parse: Any) -> list[Statement]:
    """Every doc's statements; a sentence whose subject is dropped ("Type 1 diabetic since
    childhood", "turned 35 yesterday") is read with the user's "I'm" or "I"."""
    found: list[Statement] = []
    for doc, question in zip(docs, asks, strict=True):
        lead = None if question else _dropped(doc)
        read = parse(f"{lead} {_uncapitalised(doc)}") if lead else doc
        found.extend(_read(read, question))
    return found


def _uncapitalised(doc: Span) -> str:
    """The sentence without the capital it opens with, unless its first word is a name
    ("Type 1 diabetic" → "type 1 diabetic"; "SQLite for my side projects" as it is)."""
    first = doc[0]
    if first.tag_ in ("NNP", "NNPS") or not first.text[1:].islower():
        return str(doc.text)
    return f"{doc.text[:1].lower()}{doc.text[1:]}"


def drops_subject(text: str) -> bool:
    """Whether a sentence of ``text`` dropped its subject, the user ("down to 84 kg",
    "turned 35 yesterday"; see :func:`_dropped`); parsed only when it may."""
    if not may_be_theirs(text, asks=False):
        return False
    return nlp.read(text, lambda doc: any(_dropped(s) for s in doc.sents))


def of_the_user(text: str) -> bool:
    """Whether every sentence of ``text`` is the user's, not negated: its subject is "I" or
    "we", or it dropped its subject ("dropped Spanish, doing Italian now")."""
    if not may_be_theirs(text, asks=False):
        return False
    return nlp.read(text, lambda doc: all(_unnegated_own(s) for s in doc.sents))


def _unnegated_own(sentence: Span) -> bool:
    if any(t.dep_ == "neg" for t in sentence):
        return False
    subject = next((c for c in sentence.root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        return _dropped(sentence) is not None
    return subject.lower_ in ("i", "we") or _their_thing(subject)


def _their_thing(noun: Token) -> bool:
    """Something of the user's, not someone ("my rent", "our team"; not "my wife", "my boss")."""
    owned = any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in noun.children)
    lemma = noun.lemma_.casefold()
    return owned and noun.pos_ == "NOUN" and not about.KIN.match(lemma) and lemma not in _PEOPLE


_PEOPLE = frozenset(
    """friend colleague coworker co-worker neighbour neighbor roommate flatmate housemate
    landlord landlady client customer teammate doctor dentist therapist teacher coach ex
    mate buddy pal guy girl man woman person people""".split()
)
"""People of the user's whose doings are their own."""


def _dropped(doc: Span) -> str | None:
    """The subject a sentence dropped, if it did: "I'm" for a short one with no verb but in a
    clause of its own ("Type 1 diabetic since childhood", "down to 2 cats since Milo passed";
    not one headed by a task word, "List three fun facts") or one that opens with a subjectless
    "-ing" verb ("going with Neovim instead"; not the subject of another, "Learning Rust is
    hard"); "I" for one that opens with a subjectless past verb ("turned 35 yesterday")."""
    if all(_subordinate(t) for t in doc if t.pos_ in ("VERB", "AUX")):
        words = [t for t in doc if t.is_alpha]
        short = 2 <= len(words) <= FRAGMENT_WORDS
        first = words[0].lower_ if words else ""
        task = first in _TASKS and words[0].dep_ == "ROOT"  # "List three…", not "Type 1 diabetic"
        lead = short and first not in _NOT_LEADS and not task
        fragment = lead and any(not t.is_stop for t in words)
        return "I'm" if fragment else None
    first = next((t for t in doc if t.is_alpha), None)
    if first is None or _has_subject(first):
        return None
    if first.tag_ == "VBG" and first.dep_ in ("ROOT", "advcl"):
        return None if first.dep_ == "advcl" and _said_by_me(first.head) else "I'm"
    return "I" if first.tag_ == "VBD" and first.dep_ == "ROOT" else None


def _subordinate(verb: Token) -> bool:
    """Whether a verb is in a clause that hangs on a word ("… since Milo passed"), or joins a
    verbless one with no subject of its own ("Sixty-three and just retired")."""
    if verb.dep_ == "conj" and not _has_subject(verb) and verb.head.pos_ not in ("VERB", "AUX"):
        return True
    return any(t.dep_ in ("advcl", "relcl", "acl") for t in (verb, *verb.ancestors))


def _said_by_me(head: Token) -> bool:
    """Whether a clause's subject is the user ("Being vegan, I …": the lead is theirs already)."""
    return any(c.dep_ in _SUBJECTS and c.lower_ in ("i", "we") for c in head.children)


def _has_subject(token: Token) -> bool:
    return any(c.dep_ in _SUBJECTS for c in token.children)


# --- a sentence whose subject was dropped --------------------------------------------------------

_DROPPED = lazy(
    r"^(?:(?P<past>switched|moved|started|joined|quit|stopped|gave up|"
    r"signed up|took up|picked up|got|went|bought|sold|finished|left|relocated|migrated|changed|"
    r"adopted|decided|settled|ditched|dropped|cancell?ed|booked|ordered|upgraded|swapped)"
    r"|(?P<been>been)|(?P<state>originally|based|allergic|intolerant|pescatarian|vegetarian|"
    r"vegan|off|from|big on|huge fan|fan of|not a fan|married|single|divorced|retired|"
    r"self-employed|unemployed|between jobs|fluent|lactose|gluten-free|sober|teetotal|"
    r"mostly|currently|still|always|never|usually|half|living|working|learning))\b",
    re.I,
)


def _completed(text: str) -> str:
    """A sentence whose subject is dropped given its "I" ("living in Porto" → "I'm living in
    Porto", "been in Dublin 8 years" → "I've been in Dublin 8 years"); not one whose "-ing" is
    the subject ("Learning Rust is hard")."""
    found = _DROPPED.match(text)
    if found is None or (found[0].endswith("ing") and _IS_SUBJECT.search(text)):
        return text
    lead = "I've" if found["been"] else "I" if found["past"] else "I'm"
    return f"{lead} {text[:1].lower()}{text[1:]}"


_IS_SUBJECT = lazy(
    r"^[^\s,;]+(?:\s+[^\s,;]+){0,4}?\s+"
    r"(?:is|was|are|were|seems|feels|looks|sounds|gets|has been)\b",
    re.I,
)
"""An "-ing" phrase that is the subject of a verb of its own ("Learning Rust is hard")."""


# --- the clauses of a parse ----------------------------------------------------------------------

_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})
FRAGMENT_WORDS = 8
"""The longest sentence with no verb read as the user's ("night shift nurse, 12 hr shifts")."""
_TASKS = IMPERATIVES | frozenset("proofread edit rewrite shorten fix draft polish".split())
_NOT_LEADS = frozenset("like so and but or which who my our his her their the this that".split())
"""First words of a verbless sentence that is the rest of another ("— like, epipen-level
allergic") or has a subject of its own ("my sister's a dentist"), not the user's state."""
_HEADS = frozenset({"ROOT", "conj", "ccomp", "parataxis", "advcl", "dep"})
_UNSURE = frozenset("could would might may should must shall ought".split())
_BECAUSE = frozenset("since because as given".split())
_IF = frozenset("if unless whether though although as once until before after".split())
_STATES = frozenset(
    "live work be have own use study teach play run eat drink smoke attend stay belong".split()
)
_POINTERS = frozenset(
    """option version choice variant answer suggestion draft reply one ones it this that these
    those them first second third last latter former above below""".split()
)
_OTHERS = frozenset(
    """friend mate buddy pal boss coworker co-worker colleague manager landlord landlady
    therapist doctor dentist neighbour neighbor teacher professor lecturer client customer
    roommate flatmate housemate ex coach trainer mentor lawyer accountant team company employer
    doc gp""".split()
)
"""People (and bodies) of the user's who are not the user: "my friend Jake is a pilot" is Jake's."""
_WE_WORK = frozenset(
    """deploy ship release team stack code repo product customer client sprint startup
    company service app api database server hire hiring standup codebase backend frontend
    prod production infra microservice monolith pipeline ci office""".split()
)
_MINE = {
    "i": "the user",
    "me": "the user",
    "my": "their",
    "mine": "theirs",
    "myself": "themselves",
    "we": "they",
    "us": "them",
    "our": "their",
    "ours": "theirs",
    "ourselves": "themselves",
}
_CONTRACTED = {"'m": "am", "'re": "are", "'ve": "have", "'s": "is", "'ll": "will", "'d": "would"}
_SINGULAR = {"am": "is", "are": "is", "have": "has", "do": "does", "be": "is", "'m": "is"}
_LEADING = frozenset({"cc", "punct", "intj", "mark", "discourse", "prep"})
_TRAILING = frozenset({"punct", "cc", "intj"})
_FILLER = frozenset("btw lol haha tbh honestly ngl fwiw anyway anyways though ok okay".split())


def _read(doc: Span, asks: bool) -> Iterator[Statement]:
    heads = [t for t in doc if _is_head(t)]
    for head in heads:
        if asks and not _lead_of_question(head):
            continue
        found = _statement(head, heads)
        if found is not None:
            yield found


def _is_head(token: Token) -> bool:
    if token.dep_ not in _HEADS:
        return token.dep_ == "relcl" and _someone_like_me(token)
    return token.pos_ in ("VERB", "AUX") or token.dep_ == "ROOT"


def _lead_of_question(head: Token) -> bool:
    """In a question, only what leads it states: "Being a paramedic, …", "since I'm allergic
    to cats, …", "as someone who hates YAML, …"."""
    if head.dep_ == "relcl" or any(
        c.dep_ == "mark" and c.lower_ in _BECAUSE for c in head.children
    ):
        return True
    if head.dep_ != "advcl" or head.i > head.head.i:
        return False
    return not any(c.dep_ == "mark" and c.lower_ in _IF - {"as"} for c in head.children)


def _someone_like_me(relcl: Token) -> bool:
    """ "as someone who hates YAML": a relative clause the user says of themselves."""
    noun = relcl.head
    return (
        noun.lower_ in ("someone", "somebody", "person", "one")
        and noun.head.lower_ == "as"
        and any(c.lower_ in ("who", "that") and c.dep_ == "nsubj" for c in relcl.children)
    )


def _statement(head: Token, heads: Sequence[Token]) -> Statement | None:
    if _unsure(head) or _past_state(head) or _points_at_the_chat(head) or _this_hour(head):
        return None
    subject = _subject_of(head)
    who = _who(subject, head)
    if who is None:
        return None
    tokens = _own_tokens(head, heads, subject)
    if not any(t.pos_ not in ("PUNCT", "SPACE") for t in tokens):
        return None
    opening = _opening(who, subject, head)
    if who == "being":  # "Being a paramedic, …" → "The user is a paramedic."
        tokens = [t for t in tokens if t.i != head.i]
        opening = "The user is"
    words = _words(tokens, singular=who in ("i", "relcl"))
    fact = f"{opening} {words}".strip() if opening else words
    fact = re.sub(r"\s+", " ", fact).strip(" ,;:-")
    return Statement(f"{fact[:1].upper()}{fact[1:]}.", _features(head, tokens, who))


def _unsure(head: Token) -> bool:
    """A modal or conditional clause, or one under "if": not a statement of fact."""
    for child in head.children:
        if child.dep_ == "aux" and child.lower_ in _UNSURE | {"'d"}:
            return True
        if child.dep_ == "mark" and child.lower_ in ("if", "unless", "whether"):
            return True
    return head.lower_ in _UNSURE


def _past_state(head: Token) -> bool:
    """What held once ("I lived in Vienna for a few years", "I was a teacher"): not now."""
    return head.tag_ == "VBD" and head.lemma_.casefold() in _STATES


def _points_at_the_chat(head: Token) -> bool:
    """An object that points at the conversation ("option B", "this one", "the second"), not
    at something of the user's life."""
    for token in head.subtree:
        if token.dep_ not in ("dobj", "pobj", "attr") or (
            token.head.i != head.i and token.dep_ != "pobj"
        ):
            continue
        if token.lemma_.casefold() in _POINTERS:  # "the second", "option B", "this one"
            return True
        if any(c.dep_ == "compound" and c.lemma_.casefold() in _POINTERS for c in token.children):
            return True
        if any(
            c.dep_ == "det" and c.lower_ in ("this", "that", "these", "those")
            for c in token.children
        ):
            return True
    return False


def _this_hour(head: Token) -> bool:
    """What holds for minutes ("I have a meeting in five minutes"): the chat's moment, not
    something to remember."""
    return any(t.lemma_ in ("minute", "min", "sec") for t in head.subtree)


def _subject_of(head: Token) -> Token | None:
    """The clause's subject, or — for a verb coordinated with another ("… and work as…") —
    the subject of the verb it is coordinated with."""
    while True:
        own = next((c for c in head.children if c.dep_ in _SUBJECTS), None)
        if own is not None or head.dep_ != "conj" or head.head.i == head.i:
            return own
        head = head.head


def _who(subject: Token | None, head: Token) -> str | None:
    """Whose clause it is: "i", "we", "with" ("Marco and I"), "kin" ("my daughter"), "topic"
    ("… agrees with me"), "relcl", "being"; ``None`` for anyone else's, or for an imperative."""
    if head.dep_ == "relcl":
        return "relcl"
    if subject is None:
        if head.lower_ == "being" and head.dep_ == "advcl":
            return "being"
        return None
    lower = subject.lower_
    if lower == "i" and _companion(head):
        return "with"
    if lower == "i":
        return "i"
    if lower == "we":
        return "we"
    if any(c.lower_ == "i" for c in subject.conjuncts) or (
        subject.dep_ != "expl" and any(t.lower_ == "i" for t in subject.subtree)
    ):
        return "with"
    if any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in subject.children):
        return None if subject.lemma_.casefold() in _OTHERS else "kin"
    if lower in ("you", "he", "she", "they", "it", "this", "that", "there", "who", "which"):
        return None
    return "topic" if _about_me(head, subject) else None


def _companion(head: Token) -> list[Token]:
    """ "Marco (my partner) and I rent…", parsed with Marco as the root and "rent" coordinated
    with him: Marco's words."""
    other = head.head
    if head.dep_ != "conj" or other.pos_ not in ("PROPN", "NOUN") or other.i > head.i:
        return []
    inside = {t.i for t in head.subtree}
    return [t for t in other.subtree if t.i not in inside and t.dep_ != "cc"]


def _about_me(head: Token, subject: Token) -> bool:
    """Whether a clause with another subject is about the user: "… agree with me", "… are my
    most productive hours"."""
    skip = {t.i for t in subject.subtree}
    mine = ("me", "my", "mine", "i") if head.lemma_ == "be" else ("me", "my", "mine")
    return any(t.lower_ in mine for t in head.subtree if t.i not in skip)


def _own_tokens(head: Token, heads: Sequence[Token], subject: Token | None) -> list[Token]:
    """The clause's words: its subtree without the clauses of its own, its subject, and the
    connectives and fillers at its edges."""
    others = {t.i for h in heads if h.i != head.i and _inside(h, head) for t in h.subtree}
    if subject is not None and subject.head.i == head.i:
        others |= {t.i for t in subject.subtree}
    if head.dep_ == "relcl":
        others |= {c.i for c in head.children if c.dep_ == "nsubj"}
    tokens = [t for t in head.subtree if t.i not in others]
    while tokens and ((tokens[0].dep_ in _LEADING and tokens[0].i < head.i) or _filler(tokens[0])):
        tokens.pop(0)
    while tokens and (tokens[-1].dep_ in _TRAILING or _filler(tokens[-1])):
        tokens.pop()
    return tokens


def _inside(inner: Token, outer: Token) -> bool:
    return any(a.i == outer.i for a in inner.ancestors)


def _filler(token: Token) -> bool:
    """A discourse word, a punctuation mark, a symbol or an emoji at a clause's edge (not the
    sign of a number: "3.6%", "21°")."""
    if token.text in ("%", "°") and token.i > 0 and token.nbor(-1).like_num:
        return False
    if token.lower_ in _FILLER or token.is_punct or token.pos_ in ("SYM", "SPACE"):
        return True
    return not token.is_ascii and not any(c.isalnum() for c in token.text)


def _opening(who: str, subject: Token | None, head: Token) -> str:
    """The statement's subject in the third person ("my daughter" → "the user's daughter")."""
    if who in ("i", "relcl", "being"):
        return "The user"
    if who == "we":
        lemmas = {t.lemma_.casefold() for t in subject.head.subtree} if subject else set()
        return "The user and their " + ("team" if lemmas & _WE_WORK else "family")
    companion = _companion(head) if who == "with" else []
    if companion:
        return _words(companion, singular=False).strip(" ,") + " and the user"
    if subject is None:
        return ""
    words = _words(list(subject.subtree), singular=False)
    return re.sub(r"^(?:their|The user's)\b", "the user's", words, flags=re.I)


def _words(tokens: Sequence[Token], *, singular: bool) -> str:
    """The tokens as text, first person made third; the first verb agrees with "The user"."""
    out: list[str] = []
    agreed = not singular
    for token in tokens:
        lower, text = token.lower_, token.text
        if lower in _MINE and token.tag_ in ("PRP", "PRP$"):
            text = _MINE[lower]
        if not agreed and token.pos_ in ("AUX", "VERB"):
            agreed = True
            if token.tag_ == "VBP" or lower in _SINGULAR:
                text = _SINGULAR.get(lower) or third_person(_CONTRACTED.get(lower, text))
        if text == token.text and lower in _CONTRACTED:
            text = _CONTRACTED[lower]
        if lower.startswith("'") and text != token.text and out and not out[-1].endswith(" "):
            out.append(" ")
        out.append(text + token.whitespace_)
    return "".join(out)


# --- what the learned stage weighs ---------------------------------------------------------------

_NOW = frozenset("now currently today tonight tomorrow week moment atm rn weekend".split())
_SOON = frozenset("today tonight tomorrow weekend week month moment atm rn".split())
_LIKES = frozenset(
    """like love hate prefer enjoy adore dislike detest loathe avoid favourite favorite fave
    fan into obsessed swear stand can't rather allergic""".split()
)
_CHOSE = frozenset(
    """decide choose pick opt settle switch go move migrate ditch drop adopt sign book buy
    order upgrade swap replace commit""".split()
)


def _features(head: Token, tokens: Sequence[Token], who: str) -> tuple[str, ...]:
    """The clause's shape as named features: whose it is, its verb, tense and negation, its
    objects and every content word."""
    found = {f"who={who}", f"head={head.lemma_.casefold()}", f"tag={head.tag_}"}
    for child in head.children:
        dep, lemma = child.dep_, child.lemma_.casefold()
        if dep in ("aux", "auxpass", "neg", "prt"):
            found.add(f"{dep}={lemma}")
        if dep in ("dobj", "attr", "acomp", "prep", "xcomp", "oprd", "dative", "npadvmod"):
            found.add(f"{dep}={lemma}")
            found.add(f"{head.lemma_.casefold()}+{dep}={lemma}")
            for grandchild in child.children:
                if grandchild.dep_ in ("pobj", "dobj", "prep"):
                    found.add(f"{dep}.{grandchild.dep_}={grandchild.lemma_.casefold()}")
    for token in tokens:
        if token.is_alpha and not token.is_stop:
            found.add(f"w={token.lemma_.casefold()}")
        if token.pos_ in ("PROPN", "NUM"):
            found.add(f"pos={token.pos_}")
        if token.lower_ in _NOW:
            found.add("now")
        if token.lower_ in _SOON:
            found.add(SOON)
    if any(t.dep_ == "poss" and t.lower_ in ("my", "our") for t in tokens):
        found.add("mine")
    return tuple(sorted(found | _cues(head, tokens)))


def _cues(head: Token, tokens: Sequence[Token]) -> set[str]:
    """What word lists know of the clause: a liking, a choice, someone of the user's, a
    condition, a lasting or passing state, its tense."""
    lemmas = {t.lemma_.casefold() for t in tokens}
    found = {f"tense={head.tag_}"}
    if lemmas & _LIKES:
        found.add("cue=likes")
    if lemmas & _CHOSE:
        found.add("cue=chose")
    if any(about.KIN.match(lemma) for lemma in lemmas):
        found.add("cue=kin")
    if any(about.CONDITION.search(lemma) for lemma in lemmas):
        found.add("cue=condition")
    if head.lemma_ in about.WHO_VERBS:
        found.add("cue=who")
    if lemmas & about.PASSING:
        found.add("cue=passing")
    if any(c.dep_ == "aux" and c.lemma_ == "be" for c in head.children) and head.tag_ == "VBG":
        found.add("cue=doing")
    return found
