"""Version plans driven by hand: the races a backend cannot stage on demand."""

from typing import Any

import pytest

from memvault import ConflictError, Settings
from memvault.core import Planner
from memvault.store.ops import GetOp, PutOp, ReplaceOp
from memvault.testing import HashEmbedder
from memvault.versions import VersionPlans

from .test_core import NOW, embed_step, entry


def lost_race(*reread: Any) -> Any:
    """Supersede E1, lose the write to a concurrent change, and answer the re-reads."""
    planner = Planner("t", Settings(near_duplicate_threshold=0), lambda: NOW, HashEmbedder())
    plan: Any = VersionPlans(planner).supersede("E1", "The user lives in Paris.")
    assert next(plan) == (GetOp("t", "E1"),)
    berlin = entry(content="The user lives in Berlin.")
    put, retire = embed_step(plan, plan.send([berlin]))
    assert isinstance(put, PutOp) and isinstance(retire, ReplaceOp)
    step, wanted = plan.throw(ConflictError("raced")), "E1"
    for found in reread:
        assert step == (GetOp("t", wanted),)
        step, wanted = plan.send([found]), found.superseded_by
    return step


def test_losing_a_supersede_race_to_another_supersede_names_the_winner() -> None:
    superseded = entry(revision=2, valid_to=NOW, superseded_by="E2")
    with pytest.raises(ConflictError, match=r"E1 was superseded by E3 meanwhile; supersede E3$"):
        lost_race(superseded, entry(id="E2", valid_to=NOW, superseded_by="E3"), entry(id="E3"))


def test_losing_a_supersede_race_to_another_change_is_a_plain_conflict() -> None:
    with pytest.raises(ConflictError, match=r"^raced$"):
        lost_race(entry(revision=2, content="The user lives in Bonn."))
