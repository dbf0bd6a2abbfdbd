"""Whether a fact says who the user is (read from its parse): their work, family, pets, health,
languages, home, age, name — an ``identity``, kept in Global Memory whatever its words.

The slot rule (:mod:`~memvault.extraction.slots`) knows a fixed set of attributes; this reads
the shape of the sentence instead: "The user is a luthier" (what they are), "The user is
autistic" (lasting, unlike "tired"), "The user has an axolotl named Gus" (someone of theirs,
named), "The user has multiple sclerosis" (a condition), "The user speaks Welsh", "The user's
daughter is named Ilse".
"""

from __future__ import annotations

import re
from typing import Any

from ..patterns import lazy
from . import nlp
from .english import REL

Token = Any
"""A spaCy token (spaCy is imported by the first parse only)."""

WHO_VERBS = frozenset(
    """live grow bear come hail originate speak identify work study teach train practise
    practice manage own run found volunteer serve moonlight""".split()
)
"""What the user does that says who they are ("speaks Welsh", "works at…", "runs a bakery")."""
_NOT_WHO = frozenset(
    """fan lover believer user customer member supporter follower subscriber bit lot
    person one kind type""".split()
)
"""Nouns of "The user is a …" that say what they like, not who they are."""
PASSING = frozenset(
    """tired busy sick ill stressed bored hungry late ready excited sad happy nervous worried
    free away available here home online offline back sleepy jetlagged sore cold hot upset
    angry annoyed curious confused stuck done behind ahead early interested keen sure unsure
    glad sorry grateful thankful fine ok okay good great""".split()
)
"""How the user is now, not who they are ("tired", "busy")."""
_NAMING = frozenset("be name call turn".split())
_NOT_KIN = frozenset("friend boss manager cofounder co-founder roommate flatmate".split())
"""People of the user's whose lives are their own ("The user's boss lives in Leeds")."""
"""What a sentence about someone of the user's says of who they are ("is named", "turns 7")."""
KIN = lazy(rf"^{REL}$|^(?:parent|child|kid|twin|baby|family|pronoun|name|birthday)s?$")
CONDITION = lazy(
    r"(?:allerg|disease|disorder|syndrome|itis$|asthma|diabetes|adhd|autism|epilep|migraine"
    r"|cancer|sclerosis|intoleran|deficien|dyslexi|tinnitus|arthritis|condition|coeliac|celiac"
    r"|pressure|cholesterol|thyroid|hypertension|anaemi|anemi|apnoea|apnea)"
)
LASTING = frozenset(
    """married engaged divorced widowed separated retired employed unemployed self-employed
    based located adopted diagnosed qualified certified licensed registered left-handed
    right-handed colour-blind color-blind""".split()
)
"""Participles of "The user is …" that say who they are ("is engaged", "is based in Leeds")."""
STUDIES = frozenset("phd doctorate master masters degree mba apprenticeship residency".split())
"""What "The user is doing a …" studies for ("is doing a PhD in marine biology")."""
DOSE = lazy(r"\b\d+(?:\.\d+)? ?(?:mg|mcg|µg|ml|iu)\b", re.IGNORECASE)
"""A medicine's dose ("takes 50mg sertraline"): the user's health."""
PREFERENCE = lazy(
    r"^The user is (?:not )?(?:an? )?(?:vegetarian|vegan|pescatarian|pescetarian|keto|paleo"
    r"|omnivore|carnivore|halal|kosher|gluten[- ]free|teetotal|sober"
    r"|night owl|morning person|early bird|early riser|night person|[\w-]+ person)\.?$",
    re.IGNORECASE,
)
"""A fact of the user's ways that says what they like or avoid, not who they are (their diet,
their hours, "a plan-everything person"): a ``preference``. A diet of health ("lactose
intolerant", "coeliac") is who they are."""


def what_they_prefer(fact: str) -> bool:
    """Whether ``fact`` says what the user likes or avoids though it reads as what they are."""
    return bool(PREFERENCE.match(fact))


def who_they_are(fact: str) -> bool:
    """Whether ``fact`` ("The user …", "The user's …") says who the user is."""
    return nlp.read(fact, _says_who)


def _says_who(doc: Any) -> bool:
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return False
    subject = next((t for t in root.children if t.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        return _theirs(root)
    if subject.lemma_ != "user":
        return _theirs(subject) and (
            root.lemma_ in _NAMING or (root.lemma_ in WHO_VERBS and subject.lemma_ not in _NOT_KIN)
        )
    if root.lemma_ == "be":
        return _what_they_are(root)
    if _passive(root):
        return bool({root.text.casefold(), _participle(root)} & LASTING)
    if root.lemma_ == "have" or _has(root):
        return any(_someone_or_condition(t) for t in _objects(root))
    if root.lemma_ == "take":
        return bool(DOSE.search(root.doc.text))
    if root.lemma_ == "do":
        return any(t.lemma_.casefold() in STUDIES for t in _objects(root))
    return root.lemma_ in WHO_VERBS


def _passive(root: Token) -> bool:
    return any(c.dep_ == "auxpass" for c in root.children)


def _participle(root: Token) -> str:
    """The participle as written ("left-handed", which the parse splits)."""
    words = [t for t in root.subtree if t.i >= root.i and (not t.is_punct or t.text == "-")]
    return "".join(t.text_with_ws for t in words).strip().casefold()


def _has(root: Token) -> bool:
    """A "has" the parse made an auxiliary ("The user has type 2 diabetes": "type" the verb)."""
    return any(c.dep_ == "aux" and c.lemma_ == "have" for c in root.children) and root.tag_ == "VB"


def _what_they_are(root: Token) -> bool:
    if _home(root):
        return True
    for child in root.children:
        if child.dep_ == "attr":
            return child.lemma_.casefold() not in _NOT_WHO
        if child.dep_ == "acomp":
            return child.lemma_.casefold() not in PASSING
    return False


def _home(root: Token) -> bool:
    """ "The user is in Lagos": a place named, and nothing of when or why ("in Paris this week",
    "in Leeds for a conference" are visits)."""
    others = [c for c in root.children if c.dep_ not in ("nsubj", "punct")]
    if len(others) != 1 or others[0].dep_ != "prep" or others[0].lower_ != "in":
        return False
    place = [t for t in others[0].children if t.dep_ == "pobj"]
    return (
        len(place) == 1
        and place[0].pos_ == "PROPN"
        and all(c.dep_ == "compound" for c in place[0].children)
    )


def _objects(root: Token) -> list[Token]:
    found = [t for t in root.children if t.dep_ == "dobj"]
    return found + [c for t in found for c in t.conjuncts]


def _someone_or_condition(noun: Token) -> bool:
    lemma = noun.lemma_.casefold()
    named = any(c.dep_ in ("acl", "appos") for c in noun.children)
    return named or bool(KIN.match(lemma)) or bool(CONDITION.search(lemma))


def _theirs(token: Token) -> bool:
    """A sentence about someone of the user's, or their name ("The user's daughter …", "The
    user's daughter's name …")."""
    if not KIN.match(token.lemma_.casefold()):
        return False
    owner = next((c for c in token.children if c.dep_ == "poss"), None)
    return owner is not None and (owner.lemma_ == "user" or _theirs(owner))
