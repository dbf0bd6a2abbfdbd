"""Every test runs with its own data directory and a clean memvault environment."""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith("MEMVAULT_") and not name.startswith("MEMVAULT_TEST_"):
            monkeypatch.delenv(name)
    home = tmp_path / "memvault-home"
    monkeypatch.setenv("MEMVAULT_HOME", str(home))
    return home
