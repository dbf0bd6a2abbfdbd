from datetime import UTC, datetime, timedelta, timezone

import pytest

from memvault import ConfigError, Provenance, Settings, ValidationError
from memvault import validation as check
from memvault.config import default_home
from memvault.llm.configured import chat_model_from_settings


def test_aware_converts_to_utc() -> None:
    tokyo = datetime(2026, 1, 1, 9, tzinfo=timezone(timedelta(hours=9)))
    assert check.aware("t", tokyo) == datetime(2026, 1, 1, 0, tzinfo=UTC)
    with pytest.raises(ValidationError, match="timezone-aware"):
        check.aware("t", datetime(2026, 1, 1))


def test_expiry_from_ttl_or_instant() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert check.expiry(None, 30, now) == now + timedelta(seconds=30)
    assert check.expiry(None, timedelta(minutes=1), now) == now + timedelta(minutes=1)
    with pytest.raises(ValidationError, match="not both"):
        check.expiry(now + timedelta(1), 5, now)
    with pytest.raises(ValidationError, match="future"):
        check.expiry(now, None, now)
    with pytest.raises(ValidationError):
        check.expiry(None, True, now)
    for unusable in (1e300, float("inf"), float("nan"), timedelta(days=999_999_999)):
        with pytest.raises(ValidationError, match="not a usable number"):
            check.expiry(None, unusable, now)


def test_content_limit_is_configurable() -> None:
    small = Settings(max_content_chars=5)
    assert check.content("12345", small) == "12345"
    with pytest.raises(ValidationError, match="MEMVAULT_MAX_CONTENT_CHARS"):
        check.content("123456", small)


def test_metadata_is_json_normalised() -> None:
    assert check.metadata({"t": (1, 2)}, Settings()) == {"t": [1, 2]}
    with pytest.raises(ValidationError):
        check.metadata({1: "x"}, Settings())  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match="larger"):
        check.metadata({"x": "y" * 100}, Settings(max_metadata_bytes=50))


def test_tag_limits() -> None:
    with pytest.raises(ValidationError, match="at most 2"):
        check.tags(["a", "b", "c"], Settings(max_tags=2))
    with pytest.raises(ValidationError):
        check.tags(["x" * 129], Settings())


def test_provenance_validation() -> None:
    assert Provenance.coerce({"confidence": 1}).confidence == 1
    for bad in (
        {"confidence": True},
        {"source_turn_index": -1},
        {"agent_id": ""},
        {"tool_originated": "yes"},
    ):
        with pytest.raises(ValidationError):
            Provenance.coerce(bad)


def test_settings_from_env_and_mapping(tmp_path: object) -> None:
    settings = Settings.from_env(
        {"MEMVAULT_MAX_TAGS": "8", "MEMVAULT_TENANT": "acme", "UNRELATED": "x"}
    )
    assert (settings.max_tags, settings.tenant) == (8, "acme")
    with pytest.raises(ConfigError, match="unknown settings: colour"):
        Settings.from_mapping({"colour": "blue"})
    with pytest.raises(ConfigError, match="integer"):
        Settings.from_env({"MEMVAULT_MAX_TAGS": "many"})
    with pytest.raises(ConfigError, match="integer >= 1"):
        Settings(max_limit=0)
    with pytest.raises(ConfigError):
        Settings(sqlite_synchronous="OFF")
    assert Settings().with_overrides(max_tags=3).max_tags == 3
    assert Settings.from_env({"MEMVAULT_SKIP_ERROR_RESPONSES": "off"}).skip_error_responses is False
    assert (
        Settings.from_env({"MEMVAULT_NEAR_DUPLICATE_THRESHOLD": "0.9"}).near_duplicate_threshold
        == 0.9
    )
    with pytest.raises(ConfigError, match="true or false"):
        Settings.from_env({"MEMVAULT_SKIP_ERROR_RESPONSES": "maybe"})
    with pytest.raises(ConfigError, match="between 0 and 1"):
        Settings(near_duplicate_threshold=1.5)


def test_structured_output_is_a_setting_that_reaches_the_client() -> None:
    settings = Settings.from_env(
        {
            "MEMVAULT_LLM_STRUCTURED": "off",
            "MEMVAULT_LLM_BASE_URL": "http://127.0.0.1:1/v1",
            "MEMVAULT_LLM_MODEL": "m",
        }
    )
    assert Settings().llm_structured == "auto" and settings.llm_structured == "off"
    chat = chat_model_from_settings(settings)
    assert chat is not None and not chat.structured_output
    chat.close()
    with pytest.raises(ConfigError, match="llm_structured must be one of auto, on, off"):
        Settings.from_env({"MEMVAULT_LLM_STRUCTURED": "json"})


def test_default_store_lives_under_memvault_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_HOME", "/data/mv")
    assert str(default_home()) == "/data/mv"
    assert Settings().store_url() == "sqlite:////data/mv/memvault.db"
    assert Settings(store="memory://").store_url() == "memory://"
