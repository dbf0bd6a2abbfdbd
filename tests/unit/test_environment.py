"""``MEMVAULT_*`` variables: a misspelt one is refused with the closest real one, through the
settings and the API; every one the project uses is declared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memvault import AsyncMemory, ConfigError, Memory, Settings
from memvault.environment import OTHER_VARIABLES

ROOT = Path(__file__).resolve().parents[2]
MISSPELT = frozenset({"MEMVAULT_TENNANT", "MEMVAULT_LLM_MODLE", "MEMVAULT_ZZZ"})
"""The misspellings the tests set on purpose."""


def test_a_misspelt_variable_is_refused_with_the_closest_real_one() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"MEMVAULT_TENNANT": "acme", "MEMVAULT_HOME": "/tmp/x"})
    message = str(refused.value)
    assert "MEMVAULT_TENNANT (did you mean MEMVAULT_TENANT?)" in message
    assert "MEMVAULT_HOME" not in message and "acme" not in message  # values are never echoed


def test_every_unknown_variable_is_named_and_a_guess_only_when_close() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"MEMVAULT_ZZZ": "1", "MEMVAULT_LLM_MODLE": "m"})
    message = str(refused.value)
    assert "variables MEMVAULT_LLM_MODLE (did you mean MEMVAULT_LLM_MODEL?), MEMVAULT_ZZZ;" in (
        message
    )


def test_declared_variables_and_other_prefixes_are_not_settings_nor_refused() -> None:
    declared = dict.fromkeys(OTHER_VARIABLES, "x")
    others = {"MEMVAULTX": "1", "memvault_tennant": "1", "HOME": "/"}
    assert Settings.from_env({**declared, **others, "MEMVAULT_TENANT": "acme"}).tenant == "acme"


@pytest.mark.parametrize("opener", [Memory, AsyncMemory])
def test_the_api_refuses_a_misspelt_variable(
    opener: type[Memory] | type[AsyncMemory], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_TENNANT", "acme")
    with pytest.raises(ConfigError, match=r"did you mean MEMVAULT_TENANT\?"):
        opener("memory://")


def test_every_memvault_variable_the_project_uses_is_known() -> None:
    settings = {f"MEMVAULT_{name.upper()}" for name in Settings.__dataclass_fields__}
    files = [ROOT / "README.md", ROOT / ".ci" / "run"]
    for folder in ("src", "tests", "docs", "benchmarks"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md"}]
    used = {
        name
        for path in files
        for name in re.findall(r"\bMEMVAULT_[A-Z0-9_]+", path.read_text("utf-8"))
        if not name.endswith("_")  # a prefix: MEMVAULT_LLM_*, f"MEMVAULT_{name}"
    }
    assert "MEMVAULT_TEST_POSTGRES_DSN" in used and "MEMVAULT_TENANT" in used
    assert used - settings - set(OTHER_VARIABLES) - MISSPELT == set()
