"""The README stays true: its quick start runs, offline, as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_quick_start_runs(isolated_environment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no python quick start"
    assert len(block[1].strip().splitlines()) <= 10
    exec(compile(block[1], "README quick start", "exec"), {})
    out = capsys.readouterr().out
    assert "User prefers dark mode ← promoted from" in out
    assert "2 entries for alice" in out
    assert out.splitlines()[-1] == "User prefers dark mode"
    assert (isolated_environment / "memvault.db").exists()
    exec(compile(block[1], "README quick start", "exec"), {})  # a second run adds nothing
    assert capsys.readouterr().out == out


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert 'python -m pip install -e ".[dev]"' in text
    assert "python -m pytest" in text


def test_facilities_example_runs(
    isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Sessions, Records.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no facilities example"
    exec(compile(block[1], "README facilities example", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("You are an analyst.\n\nImportant facts you remember about the user:\n")
    assert (
        "- [user-stated] [decision] Osaka sold 1850 units in week 10 (promoted from Finding" in out
    )
    assert "Message(role='user', content='[" in out


def test_learning_example_runs(
    isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Learning from conversations.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no learning example"
    exec(compile(block[1], "README learning example", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert "preference | The user prefers dark mode." in out
    assert "identity | The user lives in Paris." in out
    assert out[-1] == "The user lives in Berlin. -> The user lives in Paris."
