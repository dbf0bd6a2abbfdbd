"""The cues a user's way of working shows in their words (data): phrases that lean to speed or
to accuracy, corrections, cutting an answer short, basic and advanced questions, asking for
simpler or deeper answers; the specialist words and shapes of a vocabulary; and what is not the
user's own words (quotes, code, reported speech). Read by :mod:`.work_style`.
"""

from __future__ import annotations

import re

Cues = tuple[tuple[str, re.Pattern[str]], ...]


def cue_list(listed: str) -> Cues:
    """Cue phrases, ``|``-separated (a leading or trailing space is part of a cue), each with
    its pattern: the phrase, not inside a longer word."""
    return tuple(
        (cue, re.compile(rf"(?<![\w-]){re.escape(cue)}(?![\w-])")) for cue in listed.split("|")
    )


NEGATION = re.compile(
    r"\b(?:not|no|never|without|don'?t|doesn'?t|didn'?t|isn'?t|needn'?t|nothing|do not|"
    r"does not|need not)\b(?:\s+\w+){0,4}\s*$"
)
SPEED = cue_list(
    "quick|quickly|quickest|fast|faster|asap|rough|roughly|ballpark|brief|briefly|short "
    "version|keep it short|tl;dr|tldr|gist|one-liner|one liner|one line|just the|just tell "
    "me|just give me|gimme|yes or no|yes/no|no explanation|don't explain|skip the "
    "explanation|skip the summaries|skip the long|skip the caveats|hurry|in a rush|rushed|good "
    "enough|approximate|approximately|estimate|rough idea|quick and dirty|real quick|short "
    "pls|short please|in a minute|in 5|due in an hour|fast answer|the command|just the "
    "number|just the syntax|only the|no analysis|just confirm|y/n|just is it|the whole "
    "lecture|whole medical lecture|close enough|short answer"
)
ACCURACY = cue_list(
    "exact|exactly|precise|precisely|accurate|accurately|correct|careful|carefully|thorough|"
    "thoroughly|double-check|double check|verify|verified|confirm|make sure|be sure|"
    "to be sure|take your time|step by "
    "step|rigorous|every step|show your work|cite|citation|sources|no mistakes|a mistake|don't "
    "guess|not a paraphrase|be certain|sound|recheck|re-check|check again|check my|check "
    "that|check the|go over it|slow and correct|rather be|get this right|get it right|perfect"
)
CORRECTIONS = cue_list(
    "that's wrong|that is wrong|that's not right|not right|incorrect|doesn't match|does not "
    "match|don't match|you got a different|that's not what|redo|try again|do it "
    "again|wrong|mistake in|you said|that can't be"
)
CUT_SHORT = cue_list(
    "too long|too much info|too much|shorter|just the gist|skip it|that's enough|that's all i "
    "needed|nvm|never mind|stop|tl;dr"
)
BASICS = cue_list(
    "what is|what's a|what's an|whats a|whats an|what are|what does|what do you mean|what any "
    "of|mean?|i don't know|i dont know|no idea|don't understand|dont understand|new to|never "
    "done|never filed|first time|first ever|beginner|basic question|dumb question|sorry "
    "if|explain like|simple terms|simple words|plain english|simpler|layman|eli5|confused|not "
    "sure what|not really a|i'm not a|im not a|how do i|what should i|is it bad|help me "
    "understand|in simple|what even is|what mean|just started|i am new|i'm new|im new|started "
    "using"
)
ADVANCED = cue_list(
    "skip the basics|i'm familiar|im familiar| vs | versus |trade-off|tradeoff|at scale|in "
    "production|in prod|edge case|per current|under |benchmark|here. |here,|we currently|we're "
    "running|we run|our cluster|complexity|semantics|asymptotic|invariant|idempotent|concurrency"
)
SIMPLER = cue_list(
    "simpler|simple words|simple terms|plain english|less technical|too technical|dumb it "
    "down|like i'm five|eli5"
)
DEEPER = cue_list(
    "skip the basics|too basic|more depth|go deeper|more technical|i know that|i know joins|don't"
    " need the basics|assume i know"
)
SPECIALIST = frozenset(
    """
    api sdk cli latency throughput idempotent idempotency mutex deadlock cache caching regex
    kernel compiler runtime schema index query queries join joins postgres sql nosql shard
    sharding replica replication cluster kubernetes container docker terraform cron daemon
    async await thread threads pointer pointers allocation heap stack recursion algorithm
    hashing hash serialization deserialization protocol tcp udp http https dns tls ssl
    gradient regression classifier embedding embeddings tensor tensors inference overfitting
    variance covariance heteroscedasticity bayesian posterior prior likelihood p-value anova
    quantile percentile silhouette k-means clustering bootstrap stochastic
    contraindicated contraindication pharmacokinetics dosing titration inhibitor inhibition
    etiology prognosis differential diagnosis comorbidity renal hepatic cytokine antibody
    tort statute jurisdiction liability indemnity indemnification estoppel precedent
    plaintiff defendant fiduciary arbitration injunction covenant
    ebitda wacc dcf amortization depreciation accrual arbitrage derivative derivatives
    hedging liquidity valuation yield duration convexity tranche equity leverage
    emulsion emulsify gelatin braise roux mise maillard fermentation hydration lamination
    joist rafter load-bearing subfloor flashing grout drywall amperage breaker gfci
    wavelength spectroscopy titrate molarity stoichiometry enthalpy entropy isotope
    eigenvalue eigenvector manifold topology homomorphism lemma theorem
    hydrate hydration crdt crdts tombstone tombstones consensus raft paxos quorum
    monorepo microservice microservices orchestration observability telemetry
    """.split()
)
QUOTED = re.compile(
    r"```.*?```|`[^`\n]*`|\"[^\"\n]{3,}\"|\u201c[^\u201d\n]{3,}\u201d|"
    r"\u2018[^\u2019\n]{3,}\u2019|(?<![\w])'[^'\n]{3,}'(?![\w])",
    re.DOTALL,
)
REPORTED = re.compile(
    r"\b(?:says|said|say|saying|told me|tells me|wrote|writes|mentioned|insists|keeps saying|"
    r"according to|the (?:readme|docs|manual|runbook|ticket|email) (?:says|said))\b[^.!?\n]*",
    re.IGNORECASE,
)
PERSONAL = re.compile(r"\b(?:i|i'm|im|my|me|we|our|you|your|pls|please|can|could)\b", re.I)
SHAPES = re.compile(
    r"\b(?:[A-Z]{2,}[0-9A-Z]*s?|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w+_\w+|[a-z]+\d+\w*|"
    r"\w+\.\w+\(\)?|--\w[\w-]*)\b"
)
NOT_SHAPES = frozenset({"OK", "I", "US", "USA", "UK", "EU", "AM", "PM", "TV", "ID", "PDF"})
