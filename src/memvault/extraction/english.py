"""English word forms and word lists the extractor's readers share."""

from __future__ import annotations


def alternatives(text: str) -> str:
    """A ``|``-separated word list written over several lines → one regex group."""
    return "(?:" + "|".join(part.strip() for part in text.split("|")) + ")"


REL = (
    r"(?:(?:older|younger|little|big|baby|eldest|youngest|oldest|twin|best|step-?|ex-?) ?)?"
    + alternatives(
        """wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|son|daughter|kid|child|
        mom|mum|mother|dad|father|brother|sister|sibling|grandma|grandmother|grandpa|grandfather|
        grandson|granddaughter|aunt|uncle|cousin|nephew|niece|friend|boss|manager|co-?founder|
        roommate|flatmate|dog|cat|puppy|kitten|pet"""
    )
)
"""The people (and pets) whose facts are the user's too: "my sister lives in Rome"."""
MODALS = frozenset("will would can could should must might may did was were had is".split())


def third_person(verb: str) -> str:
    """The verb after "the user" ("write" → "writes"; "go" → "goes"); modals stay."""
    lower = verb.lower()
    irregular = {"am": "is", "are": "is", "have": "has", "do": "does", "go": "goes", "be": "is"}
    if lower in irregular:
        return irregular[lower]
    if lower in MODALS or lower.endswith("ed"):
        return verb
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return verb[:-1] + "ies"
    return verb + "s"


IMPERATIVES = frozenset(
    """answer use write reply respond include give show tell explain format add keep cite ask
    check avoid provide put make be start end sign call refer address mention suggest recommend
    assume list summarize summarise translate double-check spell round return label highlight
    remind wrap comment document type name split sort stick default speak talk send let try
    consider do stop point link capitalize capitalise follow test run commit confirm offer flag
    warn note skip omit leave output quote prefix prioritize prioritise favour favor stay limit
    reference convert measure express present break number annotate lint indent greet
    treat""".split()
)
"""Verbs a standing instruction starts with ("always answer in Spanish")."""

FOREIGN = frozenset(
    """der das und ich nicht ist ein eine mit bei auf wir sie wohne le la les et je est une des
    du avec pour pas nous vous y el los las es que por para con muy mucho yo il che di per non
    sono della um uma não com eu het een ik niet wij och jag det är att inte""".split()
)
"""Function words of other European languages that English text does not use as words."""
