"""Relevance that fades with disuse and is reinforced by use (pure).

An entry's score in a search with ``decay=True`` is multiplied by ``0.5 ** (age / half-life)``,
its age the time since it was last *used* — returned by ``recall``/``build_context``, put in a
``system_prompt``, or reinforced — else since it was written; the half-life is its category's
(``Settings.decay``; 0 never decays). Nothing is deleted: an unused entry only ranks lower.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from ..config import DECAY_EVERY_CATEGORY

DAY_S = 86_400.0


def half_life(policy: Mapping[str, float], category: str | None) -> float:
    """The half-life in days of an entry of ``category`` (0: it never decays)."""
    if category is not None and category in policy:
        return policy[category]
    return policy.get(DECAY_EVERY_CATEGORY, 0.0)


def factor(half_life_days: float, since: datetime, now: datetime) -> float:
    """What a score is multiplied by, last used at ``since``, at ``now``: 1 with a half-life
    of 0 (and for a use after ``now``)."""
    if half_life_days <= 0:
        return 1.0
    age = max((now - since).total_seconds(), 0.0)
    return float(0.5 ** (age / (half_life_days * DAY_S)))
