"""The ``MEMVAULT_*`` environment variables: every one memvault knows, and refusing the rest.

A setting is read from ``MEMVAULT_<FIELD>`` (:class:`~memvault.config.Settings`); the variables
declared here are the others memvault, its server's workers and its test suite read. Any other
``MEMVAULT_*`` variable is a misspelling or a leftover, and would be silently ignored: it is a
ConfigError naming it and the closest known one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from .errors import ConfigError

PREFIX = "MEMVAULT_"
HOME = "MEMVAULT_HOME"
DEBUG = "MEMVAULT_DEBUG"
UI_SECRET = "MEMVAULT_UI_SECRET"
SERVE_HOST = "MEMVAULT_SERVE_HOST"

OTHER_VARIABLES: Mapping[str, str] = {
    HOME: "the data directory: where the default store lives",
    DEBUG: "the CLI shows an internal error's traceback",
    UI_SECRET: "signs the inspector's cookies (32+ characters)",
    SERVE_HOST: "set by memvault serve for its workers: the address it listens on",
    "MEMVAULT_TEST_POSTGRES_DSN": "tests and benchmarks: the PostgreSQL to use",
    "MEMVAULT_TEST_LLM_BASE_URL": "tests: a real OpenAI-compatible server for test_real_llm.py",
    "MEMVAULT_TEST_LLM_MODEL": "tests: the model of that server",
    "MEMVAULT_TEST_ARTIFACTS": "tests: where the inspector's screenshots go",
}
"""The ``MEMVAULT_*`` variables that are not settings, and what each does."""


def check_environment(environ: Mapping[str, str], settings: Iterable[str]) -> None:
    """Refuse (ConfigError) every ``MEMVAULT_*`` variable of ``environ`` that is neither a
    setting's (``settings``: their variable names) nor one of :data:`OTHER_VARIABLES`."""
    known = {*settings, *OTHER_VARIABLES}
    unknown = sorted(n for n in environ if n.startswith(PREFIX) and n not in known)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise ConfigError(
            f"unknown environment variable{plural} {', '.join(_guessed(n, known) for n in unknown)}"
            "; correct or unset it (the README's Settings section lists every MEMVAULT_* variable)"
        )


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known variable ``name`` most likely misspells (None: none is close)."""
    by_suffix = {k.removeprefix(PREFIX): k for k in known}
    found = difflib.get_close_matches(name.removeprefix(PREFIX), by_suffix, n=1, cutoff=0.6)
    return by_suffix[found[0]] if found else None


def _guessed(name: str, known: Iterable[str]) -> str:
    """``name``, and the known variable it may misspell."""
    guess = closest(name, known)
    return f"{name} (did you mean {guess}?)" if guess else name
