"""The extraction pipeline's decisions, free of I/O (seed 002 §8, hardened).

From the session's records to what is stored where:

1. :func:`window_of` — the last 4 user/assistant records; tool records are skipped, and an
   assistant turn that followed tool output is marked ``tool_influenced``.
2. An extractor (the LLM, or :mod:`~memvault.extraction.heuristic`) proposes
   :class:`~memvault.extraction.facts.Candidate` facts.
3. :func:`decide` — for each candidate: drop it if its category is not one of the four, if it
   talks about the assistant or the machinery (:mod:`~memvault.extraction.selfref`), if its own
   text or the turn it comes from carries an injection (:mod:`memvault.security.injection`);
   find the turn it comes from (the cited ``turn-N``, refined by content overlap); its trust is
   ``[user-stated]`` from a user turn, ``[derived]`` otherwise; route it.

Routing: ``preference``/``decision`` — and ``fact`` about who the user is (a durable slot:
name, home, work…) — go to the user's Global Memory, but only when the user said it in their
own words (a user turn, not quoted or pasted material, no tool influence) and the session is
not private; everything else goes to the session's Session Memory (``fact``/``context``). A
preference or decision that is not in the user's own words is dropped: a pasted e-mail's "I
prefer…" is someone else's, and an assistant's or a tool's claim about what the user wants is
exactly what an injection looks like. In a private session the user's own preferences and
decisions stay in Session Memory (as ``context``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from ..facilities.model import Record, Source
from ..patterns import lazy
from ..retrieval.text import STOPWORDS, stems, words
from ..security import injection, quoting
from ..security.spans import outside
from ..security.text import normalise
from ..types import MemoryEntry
from . import about, dialogue, grounding, selfref, slots, updates
from .facts import DURABLE, QUOTED, Candidate, FactCategory, Turn

WINDOW = 4
"""User/assistant records an extraction reads."""
BLOCKING_FLAGS = frozenset(
    {"override", "memory_write", "role_forgery", "tag_forgery", "exfiltration", "prompt_leak"}
)
"""Injection flags that make a turn contribute nothing at all."""
DURABLE_ATTRIBUTES = frozenset(
    {
        "name",
        "residence",
        "employer",
        "occupation",
        "birthday",
        "age",
        "nationality",
        "origin",
        "pronouns",
        "timezone",
        "diet",
        "allergy",
        "speaks",
    }
)
"""Slot attributes of the user that hold across sessions: such a ``fact`` is an ``identity``."""
IDENTITY = "identity"
MAX_REPLACED_PER_FACT = 2
"""Stored memories one fact may retire at most."""
MAX_REPLACED_PER_WINDOW = 3
"""Stored memories the facts of one window (one turn, usually) may retire at most."""
_IGNORED = STOPWORDS | {"user", "users", "user's", "the", "s"}


class Destination(StrEnum):
    GLOBAL = "global"
    SESSION = "session"


@dataclass(frozen=True, slots=True)
class Window:
    """The turns an extraction reads, with the records they come from."""

    turns: tuple[Turn, ...]
    records: tuple[Record, ...]
    positions: tuple[int, ...]
    """Each turn's position in the session's whole log (``source_turn_index``)."""
    fresh: int = 1
    """The number of the first turn no extraction has read: the turns before it are context,
    shown to the extractor but learned from already."""
    tools: tuple[str, ...] = ()
    """The tool outputs among the window's turns: never facts, but checked for injections and
    for the words a fact borrows from them."""

    def turn(self, number: int | None) -> Turn | None:
        if number is None or not 1 <= number <= len(self.turns):
            return None
        return self.turns[number - 1]


def window_of(records: Sequence[Record], size: int = WINDOW) -> Window:
    """The last ``size`` user/assistant records of a session's log, oldest first."""
    windows = windows_of(records, 0, size)
    return windows[-1] if windows else Window((), (), ())


def windows_of(records: Sequence[Record], fresh_from: int, size: int = WINDOW) -> list[Window]:
    """The windows that read every user/assistant record from ``records[fresh_from]`` on, oldest
    first: each holds up to ``size`` new turns, the first also up to ``size`` turns in all with
    the context before them."""
    said: list[tuple[int, Record, bool]] = []
    after_tool = False
    for position, record in enumerate(records):
        if record.role == "tool" or record.is_tool_call:  # a tool call's arguments are not words
            after_tool = True
        elif record.role == "user":
            after_tool = False
            said.append((position, record, False))
        elif record.role == "assistant":
            said.append((position, record, after_tool))
    first = next((n for n, (p, _, _) in enumerate(said) if p >= fresh_from), len(said))
    starts = range(first, len(said), size)
    return [_window(records, said, start, min(start + size, len(said)), size) for start in starts]


def _window(
    records: Sequence[Record],
    said: Sequence[tuple[int, Record, bool]],
    start: int,
    end: int,
    size: int,
) -> Window:
    """The window ending with ``said[end - 1]``: at most ``size`` turns, those before
    ``said[start]`` context."""
    begin = max(0, end - size)
    chosen = said[begin:end]
    turns = tuple(
        Turn(n, "user" if r.role == "user" else "assistant", r.content, influenced)
        for n, (_, r, influenced) in enumerate(chosen, start=1)
    )
    low = said[begin - 1][0] + 1 if begin else 0
    return Window(
        turns,
        tuple(r for _, r, _ in chosen),
        tuple(p for p, _, _ in chosen),
        fresh=start - begin + 1,
        tools=tuple(r.content for r in records[low : chosen[-1][0]] if r.role == "tool"),
    )


@dataclass(frozen=True, slots=True)
class Shown:
    """A stored memory shown to the extractor under a handle (``M1``…), so that it can say which
    one a new fact replaces."""

    handle: str
    entry: MemoryEntry


def shown(entries: Iterable[MemoryEntry]) -> tuple[Shown, ...]:
    return tuple(Shown(f"M{n}", e) for n, e in enumerate(entries, start=1))


@dataclass(frozen=True, slots=True)
class Situation:
    """What :func:`decide` needs to know besides the candidates."""

    window: Window
    memories: tuple[Shown, ...]
    private: bool
    tool_names: tuple[str, ...] = ()
    use_slots: bool = True
    """Find the memories a fact replaces by the slot heuristic (when no LLM decided)."""
    flags: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """Injection flag kinds of each turn (by number); computed by :func:`situation`."""
    quoted: Mapping[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    tainted: bool = False
    """A turn or tool output of the window carries instructions: nothing read with it counts
    as the user's own words."""


def situation(
    window: Window,
    memories: Sequence[Shown],
    *,
    private: bool,
    tool_names: Sequence[str] = (),
    use_slots: bool = True,
) -> Situation:
    """Scan every turn and tool output of the window once for injections and quoted material."""
    flags = {
        t.number: tuple(str(f.kind) for f in injection.scan(t.text, user_voice=_own_voice(t)))
        for t in window.turns
    }
    quoted = {t.number: tuple(quoting.quoted_regions(t.text)) for t in window.turns}
    tool_flags = [str(f.kind) for text in window.tools for f in injection.scan(text)]
    tainted = any(
        k in BLOCKING_FLAGS for k in (*tool_flags, *(k for f in flags.values() for k in f))
    )
    return Situation(
        window,
        tuple(memories),
        private,
        tuple(tool_names),
        use_slots,
        flags,
        quoted,
        tainted,
    )


def _own_voice(turn: Turn) -> bool:
    """Whether a turn is the user speaking (not an answer, not shaped by tool output)."""
    return turn.role == "user" and not turn.tool_influenced


@dataclass(frozen=True, slots=True)
class Decision:
    """What becomes of one candidate: stored (where, as what, replacing what) or dropped."""

    candidate: Candidate
    destination: Destination | None = None
    category: str | None = None
    source: Source | None = None
    turn: Turn | None = None
    tool_originated: bool = False
    replaces: tuple[str, ...] = ()
    """Ids of the stored entries it supersedes."""
    dropped: str | None = None
    """Why it is not stored."""
    content: str = ""
    """What is stored: the fact as checked (normalised; the native expression when only it is
    the user's words)."""
    native: str | None = None
    """The native expression kept: checked on its own and agreeing with the fact."""
    refused: tuple[tuple[str, str], ...] = ()
    """What the extractor proposed and the checks refused, as (what, why): a replacement
    (``replaces <id>``), the native expression (``native``), or the fact's wording (``fact``:
    the user's own words are stored instead)."""

    @property
    def stored(self) -> bool:
        return self.dropped is None

    @property
    def stated(self) -> bool:
        return self.source == Source.USER_TURN


def decide(candidates: Iterable[Candidate], where: Situation) -> list[Decision]:
    """The decision on every candidate, in order."""
    return capped([_decide(c, where) for c in candidates])


def _decide(candidate: Candidate, where: Situation) -> Decision:
    refusal = _refusal(candidate, where)
    if refusal is not None:
        return Decision(candidate, dropped=refusal)
    turn, checked = ground(candidate, where)
    if turn is None:
        return Decision(candidate, dropped="ungrounded: no turn says it")
    if turn.number < where.window.fresh:
        return Decision(candidate, turn=turn, dropped="said before: an earlier extraction read it")
    if any(kind in BLOCKING_FLAGS for kind in where.flags.get(turn.number, ())):
        return Decision(candidate, turn=turn, dropped="injection: its turn carries instructions")
    own = _own_voice(turn) and not where.tainted
    stated = own and checked.stated
    if candidate.category in DURABLE and not stated:
        if where.tainted:
            reason = "injection in the window: no preference or decision is learned from it"
        elif own and checked.reason:
            reason = f"not what the user said: {checked.reason}"
        else:
            reason = (
                "not the user's own words: only the user states their preferences and decisions"
            )
        return Decision(candidate, turn=turn, dropped=reason)
    source = Source.USER_TURN if stated else Source.ASSISTANT_TURN
    destination, category = route(candidate, stated and not where.private)
    refused = (checked.refused,) if stated and checked.refused else ()
    decision = Decision(
        candidate,
        destination,
        category,
        source,
        turn,
        tool_originated=turn.tool_influenced,
        content=checked.content if stated else grounding.learned_text(candidate.fact),
        native=checked.native if stated else None,
        refused=refused,
    )
    return _with_replacements(decision, where)


def _refusal(candidate: Candidate, where: Situation) -> str | None:
    if candidate.category not in set(FactCategory):
        return f"category {candidate.category!r} is not one of {', '.join(FactCategory)}"
    if not candidate.fact.strip():
        return "empty fact"
    if grounding.hides_meaning(f"{candidate.fact}\n{candidate.native or ''}"):
        return "invisible characters inside the fact: its meaning depends on them"
    if selfref.is_self_referential(candidate.fact, where.tool_names):
        return "self-referential: about the assistant or the machinery"
    text = f"{candidate.fact}\n{candidate.native or ''}"
    if any(f.kind in BLOCKING_FLAGS for f in injection.scan(text)):
        return "injection: the fact itself carries instructions"
    return None


_CJK = lazy(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{2,}")


def content_words(text: str) -> set[str]:
    """The words that carry a text's content; runs of Chinese, Japanese or Korean characters
    (written without spaces) as their character pairs."""
    text = normalise(text)
    found = {w for w in words(text.lower()) if w not in _IGNORED and len(w) > 1}
    for run in _CJK.findall(text):
        found |= {run[i : i + 2] for i in range(len(run) - 1)}
    return found


def ground(candidate: Candidate, where: Situation) -> tuple[Turn | None, grounding.Grounding]:
    """The turn a candidate comes from — the cited one unless another shares more of its
    words (ties go to user turns, then the latest) — and how the fact holds against what the
    user said there in their own words (:func:`grounding.check`)."""
    wanted = content_words(f"{candidate.fact} {candidate.native or ''}")
    scores = {t.number: len(wanted & content_words(t.text)) for t in where.window.turns}
    best = max(scores.values(), default=0)
    if best == 0:
        return None, grounding.Grounding(False, candidate.fact, reason="no turn says it")
    cited = where.window.turn(candidate.turn)
    if cited is not None and scores[cited.number] == best:
        turn = cited
    else:
        tied = [t for t in where.window.turns if scores[t.number] == best]
        turn = max(tied, key=lambda t: (t.role == "user", t.number))
    if candidate.accepts is not None and _accepted(candidate, turn, where):
        return turn, grounding.Grounding(True, candidate.fact)
    return turn, grounding.check(candidate.fact, candidate.native, _grounds(candidate, turn, where))


def _accepted(candidate: Candidate, turn: Turn, where: Situation) -> bool:
    """Whether the user's own reply in ``turn`` takes the option the candidate names, from a
    suggestion the assistant made just before (:func:`dialogue.accepted`): the user's
    acceptance grounds the decision, the user's naming of the option its content."""
    before = where.window.turn(turn.number - 1)
    if before is None or before.role != "assistant" or candidate.accepts is None:
        return False
    option = dialogue.accepted(own_text(turn, where), before.text)
    return option == candidate.accepts and candidate.fact == dialogue.choice(option)


def _grounds(candidate: Candidate, turn: Turn, where: Situation) -> str:
    """The user's own words a candidate rests on: its turn's, and — for a correction — those of
    the turn it corrects, as the user corrected them (the wrong value replaced by the right)."""
    own = own_text(turn, where)
    fix = candidate.correction
    corrected = where.window.turn(fix.turn) if fix else None
    if fix is None or corrected is None or corrected.number == turn.number:
        return own
    wrong = re.compile(rf"(?<!\w){re.escape(fix.wrong)}(?!\w)", re.I)
    return f"{wrong.sub(lambda _: fix.right, own_text(corrected, where))}\n{own}"


def own_text(turn: Turn, where: Situation) -> str:
    """What the user wrote in ``turn`` themselves: nothing of an answer or a turn shaped by
    tool output, and none of the material they quoted, pasted or handed over, or copied from
    a tool's output or an earlier turn (a later turn that echoes them copied them, not they
    it)."""
    if not _own_voice(turn):
        return ""
    own = outside(turn.text, where.quoted.get(turn.number, ()))
    earlier = (t.text for t in where.window.turns if t.number < turn.number)
    return _without_copies(own, [*where.window.tools, *earlier])


def _without_copies(own: str, others: Sequence[str]) -> str:
    """The user's words without the sentences they copied from ``others`` (five words or
    more, as written there)."""
    if not others:
        return own
    seen = " ".join(" ".join(normalise(text).casefold().split()) for text in others)
    kept = []
    for piece in _SENTENCE.finditer(own):
        plain = " ".join(normalise(piece["sentence"]).casefold().split()).strip(" .!?")
        if len(plain.split()) < 5 or not _copied(plain, seen):
            kept.append(piece[0])
        else:
            kept.append("\n")
    return "".join(kept)


_SENTENCE = lazy(r"(?P<sentence>.+?)(?:(?<=[.!?])\s+|\n+|$)", re.DOTALL)
"""A sentence and the space after it: what is kept is kept as written (one paragraph stays
one)."""


def _copied(sentence: str, seen: str) -> bool:
    """Whether five consecutive words of ``sentence`` stand in ``seen``."""
    words = sentence.split()
    return any(" ".join(words[i : i + 5]) in seen for i in range(len(words) - 4))


def route(candidate: Candidate, may_go_global: bool) -> tuple[Destination, str]:
    """Where a candidate goes, and as what category: a ``fact`` of what the user likes or
    avoids, though it reads as what they are ("is vegan", "not a night owl"), is a preference."""
    category = FactCategory(candidate.category)
    if category is FactCategory.FACT and about.what_they_prefer(candidate.fact):
        category = FactCategory.PREFERENCE
    if may_go_global and category in DURABLE:
        return Destination.GLOBAL, str(category)
    if (
        may_go_global
        and category is FactCategory.FACT
        and is_identity(candidate.fact, judged=candidate.identity)
    ):
        return Destination.GLOBAL, IDENTITY
    if category in DURABLE:
        return Destination.SESSION, str(FactCategory.CONTEXT)
    return Destination.SESSION, str(category)


def is_identity(fact: str, *, judged: bool | None = None) -> bool:
    """A fact about who the user is for good: one the extractor ``judged`` so, a durable slot
    of the user, or — when the extractor did not judge — a sentence whose shape says so
    (:func:`about.who_they_are`: "is a luthier", "has an axolotl named Gus")."""
    if judged:
        return True
    slot = slots.slot_of(fact)
    if slot is not None and slot.subject == "user" and slot.attribute in DURABLE_ATTRIBUTES:
        return True
    if judged is False or fact.startswith(QUOTED):
        return False
    return about.who_they_are(fact)


def _with_replacements(decision: Decision, where: Situation) -> Decision:
    """The stored entries the decision's fact replaces: those the extractor named and
    :func:`replacement_refusal` lets it retire, else — with the slot heuristic — those whose
    slot it changes; at most ``MAX_REPLACED_PER_FACT``. A stated fact bound for Session Memory
    that retires a Global Memory goes there itself: it updates something durable (a context,
    which holds for a while, never does)."""
    ended = _ended(decision, where)
    decision = _kept_replacements(decision, where, ended)
    if decision.replaces:
        return decision
    if decision.category == FactCategory.FACT and decision.stated and not where.private:
        promoted = replace(decision, destination=Destination.GLOBAL, category=IDENTITY)
        promoted = _kept_replacements(promoted, where, ended)
        if promoted.replaces:
            return promoted
    linked = _linked(decision, where) if where.use_slots else decision
    if decision.candidate.updates_only and not linked.replaces:
        return replace(linked, dropped="an update of nothing held: the change names no memory")
    return linked


def _linked(decision: Decision, where: Situation) -> Decision:
    """The decision updating the memory the user's words say changed (:mod:`.updates`), if
    any: it goes where that memory is, as what it is (a change to who the user is stays
    there; to a choice of the session, there)."""
    if not decision.stated or decision.turn is None:
        return decision
    said = _sentence_of(decision.content, own_text(decision.turn, where))
    change = updates.change_said(said)
    if change is None:
        return decision
    olds = [s.entry for s in where.memories if _may_update(s.entry, where.private)]
    about = [updates.Old(e.content, frozenset(topic(e.content))) for e in olds]
    named = frozenset(topic(change.ended if change.ended is not None else said))
    found = updates.updated(
        decision.content, named, about, change.least, must_name=change.ended is not None
    )
    if found is None:
        return decision
    old = olds[found]
    destination = Destination.GLOBAL if old.scope.kind == "user" else Destination.SESSION
    moved = replace(decision, destination=destination, category=str(old.category))
    why = replacement_refusal(moved, old, linked=True)
    if why is not None:
        return replace(decision, refused=(*decision.refused, (f"replaces {old.id}", why)))
    return replace(moved, replaces=(old.id,))


def _sentence_of(fact: str, own: str) -> str:
    """The sentences of the user's own words that say ``fact`` (share the most of its topic;
    not a question): where a change it states is said."""
    sentences = [m["sentence"] for m in _SENTENCE.finditer(own)]
    stated = [s for s in sentences if not s.rstrip(" )").endswith("?")]
    said = topic(fact)
    shared = [len(said & topic(s)) for s in stated]
    most = max(shared, default=0)
    return " ".join(s for s, n in zip(stated, shared, strict=True) if n == most and n)


def _may_update(entry: MemoryEntry, private: bool) -> bool:
    """Whether a stated change may update ``entry``: one the user stated, where the decision
    may go (a private session writes no Global Memory)."""
    stated = entry.provenance.source == Source.USER_TURN
    return stated and not (private and entry.scope.kind == "user")


def _ended(decision: Decision, where: Situation) -> frozenset[str]:
    """Ids of the shown memories the user's own words in the decision's turn end."""
    if decision.turn is None or not decision.stated:
        return frozenset()
    entries = [s.entry for s in where.memories]
    said = own_text(decision.turn, where)
    flags = grounding.retired([e.content for e in entries], said) if said else []
    return frozenset(e.id for e, flag in zip(entries, flags, strict=False) if flag)


def _kept_replacements(decision: Decision, where: Situation, ended: frozenset[str]) -> Decision:
    scope_kind = "user" if decision.destination is Destination.GLOBAL else "session"
    same_place = [s for s in where.memories if str(s.entry.scope.kind) == scope_kind]
    named = set(decision.candidate.replaces)
    if named:
        proposed = [s.entry for s in same_place if s.handle in named]
    elif where.use_slots:
        by_id = {s.entry.id: s.entry for s in same_place}
        changed = replaced_by_slot(decision.content, list(by_id.values()))
        changed += _corrected(decision.candidate, list(by_id.values()))
        proposed = [by_id[i] for i in dict.fromkeys([*changed, *(i for i in by_id if i in ended)])]
    else:
        proposed = []
    kept: list[str] = []
    refused = list(decision.refused)
    for old in proposed:
        why = replacement_refusal(decision, old, ended=old.id in ended)
        if why is None and len(kept) >= MAX_REPLACED_PER_FACT:
            why = f"a fact retires at most {MAX_REPLACED_PER_FACT} memories"
        if why is None:
            kept.append(old.id)
        else:
            refused.append((f"replaces {old.id}", why))
    return replace(decision, replaces=tuple(kept), refused=tuple(refused))


def replacement_refusal(
    decision: Decision, old: MemoryEntry, *, ended: bool = False, linked: bool = False
) -> str | None:
    """Why a fact may not retire ``old`` (None: it may). Only a statement of the user retires
    what the user stated, and only a memory about the same thing: one the user's own words in
    the turn end (``ended``, :func:`grounding.retires`: "I'm no longer vegetarian"), the same
    slot (subject and attribute; of an attribute the user has several of, only by negating the
    same value), or — where the slot rule cannot read one of them — at least half of the
    memory's content words; the user's own words kept as said, only when they say something
    changed. A correction retires the memory holding the value the user corrected; a change
    the user states, the memory it is ``linked`` to (:func:`_linked`), when about them both."""
    if old.provenance.source == Source.USER_TURN and decision.source != Source.USER_TURN:
        return "a derived fact never retires what the user stated"
    if ended or _corrects(decision.candidate, old):
        return None
    if _PAST.search(decision.content.removeprefix(QUOTED)):
        return "a fact about the past retires nothing current"
    new_slot, old_slot = slots.slot_of(decision.content), slots.slot_of(old.content)
    if new_slot is not None and old_slot is not None and new_slot.subject != old_slot.subject:
        return f"about someone else ({old_slot.subject})"
    if linked:
        return None
    if decision.content.startswith(QUOTED):
        return _quote_refusal(decision.content, old)
    if new_slot is not None and old_slot is not None:
        if new_slot.attribute in slots.MULTI_VALUED and not slots.conflicts(new_slot, old_slot):
            return f"the user has several at once ({old_slot.attribute})"
        if _related(new_slot.attribute, old_slot.attribute):
            return None
        if _known(new_slot.attribute) or _known(old_slot.attribute):
            return f"about something else ({old_slot.attribute})"
    theirs = topic(old.content)
    shared = topic(decision.content) & theirs
    if not shared or 2 * len(shared) < len(theirs):
        return "about something else: too few words in common"
    return None


_CHANGE = lazy(
    r"\b(?:now|no\s+longer|any\s?more|moved|switched|changed|instead|new|went\s+up|went\s+down"
    r"|raised|lowered|since|left|quit|stopped|started|after\s+all|again|anyway|changed\s+my\s+mind"
    r"|jetzt|nicht\s+mehr|ahora|ya\s+no"
    r"|maintenant|plus|agora|mais|ora|pi[uù]|теперь|больше|art[i\u0131]k)\b"
    r"|今は|もう|이제|더\s*이상|现在|不再",
    re.IGNORECASE,
)
"""Words saying something changed: the user's own words replace a memory only with one."""


def _quote_refusal(quote: str, old: MemoryEntry) -> str | None:
    """The user's own words (kept as said) retire a memory only when they say something
    changed and mention most of what the memory is about."""
    if not _CHANGE.search(quote):
        return "the user's words do not say it changed"
    theirs = topic(old.content)
    shared = topic(quote) & theirs
    if not theirs or 2 * len(shared) < len(theirs) or shared <= _COMMON_VERBS:
        return "about something else: too few words in common"
    return None


_COMMON_VERBS = frozenset(
    stems("live lives work works use uses like likes have has go goes get gets make take".split())
)
_PAST = lazy(
    r"\b(?:used\s+to|lived|worked|was|were|had|as\s+a\s+(?:kid|child|teenager)|years\s+ago|back\s+then"
    r"|in\s+the\s+past|growing\s+up|formerly|previously)\b",
    re.IGNORECASE,
)
"""A fact about the past ("The user lived in Dundee"): it cannot replace what holds now."""


_JOB = frozenset({"employer", "occupation"})


def _known(attribute: str) -> bool:
    """An attribute the slot rule names (residence, employer, an opinion of something…), not
    a predicate it kept as said."""
    return attribute in DURABLE_ATTRIBUTES or attribute.startswith(
        ("opinion of", "favourite", "preference:", "tool for")
    )


def _related(attribute: str, other: str) -> bool:
    """Attributes one change of the user's updates together (a new job: employer, occupation)."""
    return attribute == other or {attribute, other} <= _JOB


_FRAME_VERBS = frozenset(
    """user user's users said prefer prefers preferred like likes liked love loves want wants
    wanted enjoy enjoys dislike dislikes hate hates decided decide chose choose always never
    usually often really also now currently still""".split()
)


def topic(fact: str) -> set[str]:
    """The stems of what a fact is about: its content words but the verbs that frame it."""
    return _stemmed(content_words(fact) - _FRAME_VERBS)


def _stemmed(found: set[str]) -> set[str]:
    return set(stems(sorted(found)))


def capped(decisions: Sequence[Decision]) -> list[Decision]:
    """The decisions with at most ``MAX_REPLACED_PER_WINDOW`` retirements in all (the first
    proposed keep theirs); the rest refused."""
    left = MAX_REPLACED_PER_WINDOW
    result = []
    for decision in decisions:
        kept = decision.replaces[:left]
        over = [
            (f"replaces {i}", f"one turn retires at most {MAX_REPLACED_PER_WINDOW} memories")
            for i in decision.replaces[len(kept) :]
        ]
        left -= len(kept)
        result.append(replace(decision, replaces=kept, refused=(*decision.refused, *over)))
    return result


def _corrected(candidate: Candidate, entries: Sequence[MemoryEntry]) -> tuple[str, ...]:
    """Ids of ``entries`` holding the value a correcting candidate replaces."""
    return tuple(e.id for e in entries if _corrects(candidate, e))


def _corrects(candidate: Candidate, old: MemoryEntry) -> bool:
    """Whether ``old`` is the statement the user just corrected: it holds the wrong value
    ("Deloite" of "*Deloitte"), and with the right one in its place it says at least half of
    what the corrected fact says (an age of 34 corrected retires no "runs 34 km a week")."""
    fix = candidate.correction
    if fix is None:
        return False
    wrong = re.compile(rf"(?<!\w){re.escape(fix.wrong)}(?!\w)", re.I)
    if wrong.search(old.content) is None:
        return False
    said = topic(candidate.fact)
    return 2 * len(said & topic(wrong.sub(lambda _: fix.right, old.content))) >= len(said)


def replaced_by_slot(fact: str, entries: Sequence[MemoryEntry]) -> tuple[str, ...]:
    """Ids of ``entries`` whose slot ``fact`` changes (same subject and attribute, another
    value; see :mod:`~memvault.extraction.slots`)."""
    changed = slots.superseded_by(fact, [e.content for e in entries])
    return tuple(entries[i].id for i in changed)


def outdated(decisions: Sequence[Decision]) -> dict[int, int]:
    """Facts of one window that a later turn of the same window changes (the slot rule): the
    index of each such decision → the index of the latest one that changes it."""
    stored = [(i, d, d.turn.number) for i, d in enumerate(decisions) if d.stored and d.turn]
    found: dict[int, int] = {}
    for i, earlier, said in stored:
        before = slots.slot_of(earlier.candidate.fact)
        for j, later, said_later in stored:
            if before is None or said_later <= said:
                continue
            after = slots.slot_of(later.candidate.fact)
            same_place = later.destination == earlier.destination
            if same_place and after is not None and slots.conflicts(after, before):
                found[i] = j
    return found
