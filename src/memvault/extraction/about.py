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
"""What a sentence about someone of the user's says of who they are ("is named", "turns 7")."""
KIN = re.compile(rf"^{REL}$|^(?:parent|child|kid|twin|baby|family|pronoun|name|birthday)s?$")
CONDITION = re.compile(
    r"(?:allerg|disease|disorder|syndrome|itis$|asthma|diabetes|adhd|autism|epilep|migraine"
    r"|cancer|sclerosis|intoleran|deficien|dyslexi|tinnitus|arthritis|condition|coeliac|celiac)"
)


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
        return root.lemma_ in _NAMING and _theirs(subject)
    if root.lemma_ == "be":
        return _what_they_are(root)
    if root.lemma_ == "have":
        return any(_someone_or_condition(t) for t in _objects(root))
    return root.lemma_ in WHO_VERBS


def _what_they_are(root: Token) -> bool:
    for child in root.children:
        if child.dep_ == "attr":
            return child.lemma_.casefold() not in _NOT_WHO
        if child.dep_ == "acomp":
            return child.lemma_.casefold() not in PASSING
    return False


def _objects(root: Token) -> list[Token]:
    found = [t for t in root.children if t.dep_ == "dobj"]
    return found + [c for t in found for c in t.conjuncts]


def _someone_or_condition(noun: Token) -> bool:
    lemma = noun.lemma_.casefold()
    named = any(c.dep_ in ("acl", "appos") for c in noun.children)
    return named or bool(KIN.match(lemma)) or bool(CONDITION.search(lemma))


def _theirs(token: Token) -> bool:
    """A sentence about someone or something of the user's ("The user's daughter …")."""
    owner = any(c.dep_ == "poss" and c.lemma_ == "user" for c in token.children)
    return owner and bool(KIN.match(token.lemma_.casefold()))
