"""Agent memory's counters on ``/metrics`` (``docs/operations.md``): executions by outcome, the
choices it made and why, and decomposition suggestions with and without a fit.

Read at each scrape from the store's counters (``Memory.stats()``), which the plans count as
they run — so an operation counts once in the process that ran it, whether REST, MCP or Python
called it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import get_args

from prometheus_client.core import CounterMetricFamily, Metric

from ..agents.choice import Reason

REASONS: tuple[str, ...] = get_args(Reason)
"""Why a choice was made: ``untried``, ``explore``, ``exploit``."""
CHOICES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("strategy", "strategy_choices_", REASONS),
    ("team", "team_choices_", (*REASONS, "none")),
)
"""(``what`` label, prefix of its ``Memory.stats()`` keys, the reasons that follow it) of each
thing agent memory chooses (a team suggestion with none known: ``none``)."""
OUTCOMES = (("success", "executions_succeeded"), ("failure", "executions_failed"))
"""(``outcome`` label, key of ``Memory.stats()``) of recorded executions."""
SUGGESTIONS = (("hit", "decomposition_suggestions_hit"), ("miss", "decomposition_suggestions_miss"))
"""(``result`` label, key of ``Memory.stats()``): a suggestion served with at least one fitting
decomposition, or none."""


def agent_counters(counts: Mapping[str, int]) -> Iterator[Metric]:
    """Executions by outcome, choices by what and why, suggestions by result (every label
    value present, 0 until counted)."""
    executions = CounterMetricFamily(
        "memvault_agent_executions",
        "Agent and tool executions recorded, by outcome.",
        labels=["outcome"],
    )
    for outcome, key in OUTCOMES:
        executions.add_metric([outcome], counts.get(key, 0))
    choices = CounterMetricFamily(
        "memvault_agent_choices",
        "Choices agent memory made, by what it chose and why (untried, explore, exploit).",
        labels=["what", "reason"],
    )
    for what, prefix, reasons in CHOICES:
        for reason in reasons:
            choices.add_metric([what, reason], counts.get(f"{prefix}{reason}", 0))
    suggestions = CounterMetricFamily(
        "memvault_agent_decomposition_suggestions",
        "Decomposition suggestions served, by whether a past decomposition fitted (hit) or none.",
        labels=["result"],
    )
    for result, key in SUGGESTIONS:
        suggestions.add_metric([result], counts.get(key, 0))
    yield from (executions, choices, suggestions)
