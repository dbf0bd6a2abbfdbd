"""The README stays true: its quick start runs, offline, as written."""

import os
import re
import subprocess
import sys
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


def test_ci_runs_the_readmes_full_test_command() -> None:
    """The README gives the quick inner loop and the full run; CI runs the full one."""
    block = re.search(r"## Install and test.*?```bash\n(.*?)```", README.read_text("utf-8"), re.S)
    assert block, "README has no install and test commands"
    commands = [line.split("#")[0].strip() for line in block[1].splitlines()]
    assert commands[1:] == ["python -m pytest", "python -m pytest --runslow"]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert [line for line in ci if line.startswith("python -m pytest")] == [commands[2]]


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


@pytest.mark.slow
def test_several_processes_share_one_server(tmp_path: Path) -> None:
    """The README's two agents, each in a process of its own, on a real ``memvault serve``."""
    from .remote.conftest import memvault_serve

    text = README.read_text(encoding="utf-8")
    section = re.search(r"## Share one server from several processes\n(.*?)\n## ", text, re.S)
    assert section, "README has no section on sharing a server"
    writer, reader = re.findall(r"```python\n(.*?)```", section[1], re.S)
    key = "readme-key-0123456789abcdef"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    with memvault_serve(tmp_path, f"acme:{key}") as url:
        outputs = [
            subprocess.run(
                [sys.executable, "-c", code.replace("http://127.0.0.1:8765", url)],
                env=environment | {"MEMORY_KEY": key},
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            ).stdout
            for code in (writer, reader)
        ]
    assert outputs == ["", "Alice prefers green tea\n"]


TRUST = README.parent / "docs" / "trust.md"


@pytest.mark.parametrize(
    "heading", ["## The audit log", "**Tamper-evident.**", "## Session bundles"]
)
def test_trust_examples_print_what_they_say(
    isolated_environment: Path, capsys: pytest.CaptureFixture[str], heading: str
) -> None:
    text = TRUST.read_text(encoding="utf-8")
    block = re.search(re.escape(heading) + r".*?```python\n(.*?)```", text, re.S)
    assert block, f"docs/trust.md has no example under {heading}"
    exec(compile(block[1], f"docs/trust.md {heading}", "exec"), {})
    said = [line.strip()[2:] for line in block[1].splitlines() if line.strip().startswith("# ")]
    assert capsys.readouterr().out.splitlines() == said


def test_learning_page_example_runs(
    isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (README.parent / "docs" / "learning.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block, "docs/learning.md has no python example"
    exec(compile(block[1], "docs/learning.md example", "exec"), {})
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "The user lives in Paris. replaces The user lives in Berlin."


def test_agent_memory_example_runs(
    isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Agent memory.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no agent memory example"
    exec(compile(block[1], "README agent memory example", "exec"), {})
    assert capsys.readouterr().out.splitlines() == [
        "[]",
        "react untried | reused plan: False",
        "[]",
        "plan_and_execute untried | reused plan: True",
        "plan_and_execute * 1 1.0",
        "react * 1 1.0",
    ]


def test_the_architecture_page_names_every_module() -> None:
    """docs/architecture.md's module table stays true: each module of the package is named
    there (by its file, or as ``folder/file``)."""
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    package = root / "src" / "memvault"
    unnamed = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if path.name != "__init__.py"
        and f"`{path.name}`" not in page
        and f"{path.relative_to(package).parent}/{path.name}" not in page
        and f"`{path.relative_to(package).with_suffix('')}" not in page
    ]
    assert not unnamed, f"docs/architecture.md does not name: {unnamed}"
