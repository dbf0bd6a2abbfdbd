"""The chat model the settings configure (``MEMVAULT_LLM_*``): the OpenAI-compatible client,
or none. Apart from :mod:`.base`, which the client itself builds on; the client (and httpx)
is imported only when one is configured."""

from __future__ import annotations

from ..config import Settings
from ..errors import ConfigError
from .base import ChatModel, check_base_url


def chat_model_from_settings(settings: Settings) -> ChatModel | None:
    """The OpenAI-compatible client ``MEMVAULT_LLM_*`` configure, or None when none is."""
    if not llm_configured(settings):
        return None
    from .openai_compat import OpenAICompatChat

    return OpenAICompatChat(
        check_base_url(settings.llm_base_url),
        settings.llm_model,
        api_key=settings.llm_api_key or None,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        max_request_bytes=settings.llm_max_request_bytes,
        max_tokens=settings.llm_max_tokens,
        structured=settings.llm_structured,
    )


def llm_configured(settings: Settings) -> bool:
    """Whether the settings name an LLM (a base URL and a model) or none (neither, nor a key);
    a part of one — which would silently learn without the LLM meant — is a ConfigError."""
    given = [name for name in ("llm_model", "llm_api_key") if getattr(settings, name)]
    if settings.llm_base_url and not settings.llm_model:
        raise ConfigError(
            "MEMVAULT_LLM_BASE_URL is set but MEMVAULT_LLM_MODEL is empty: set MEMVAULT_LLM_MODEL "
            "to the model to use, or unset MEMVAULT_LLM_BASE_URL"
        )
    if not settings.llm_base_url and given:
        variables = " and ".join(f"MEMVAULT_{name.upper()}" for name in given)
        raise ConfigError(
            f"{variables} {'are' if len(given) > 1 else 'is'} set but MEMVAULT_LLM_BASE_URL is "
            "empty: set it to the OpenAI-compatible server (e.g. http://localhost:11434/v1), "
            f"or unset {variables}"
        )
    return bool(settings.llm_base_url)
