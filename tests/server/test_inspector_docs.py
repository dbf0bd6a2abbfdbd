"""The inspector behind a real ``memvault serve``: the README's "Open the inspector" runs as
written, and a visit holds across worker processes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import free_port, wait_until_up

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_block() -> str:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Open the inspector.*?```bash\n(.*?)```", text, re.S)
    assert block, "README has no inspector example"
    return block[1]


def readme_python(section: str) -> str:
    found = re.search(rf"## {section}.*?```python\n(.*?)```", README.read_text("utf-8"), re.S)
    assert found, f"README has no python example under {section}"
    return found[1]


@pytest.mark.slow
def test_the_readme_opens_the_inspector(isolated_environment: Path) -> None:
    """The walk-through is one story: the inspector shows what the earlier examples wrote."""
    exec(compile(readme_python("Sessions, Records"), "README facilities example", "exec"), {})
    port = free_port()
    script = readme_block().replace("memvault serve", f"exec memvault serve --port {port}")
    assert "exec memvault serve" in script
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    with subprocess.Popen(
        ["bash", "-c", script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            key = server.stdout.readline().removeprefix("log in with: ").strip()
            assert len(key) >= 16
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, alive=lambda: server.poll() is None)
            cookie = log_in(base, key, tenant="default")
            with httpx.Client(base_url=base, cookies={"memvault_ui": cookie}) as browser:
                assert "Q1 sales" in browser.get("/ui").text  # the facilities example's session
        finally:
            server.terminate()


def log_in(base: str, key: str, tenant: str = "acme") -> str:
    """Log in to ``/ui`` with ``key`` (of ``tenant``); the visit's cookie."""
    with httpx.Client(base_url=base, headers={"Origin": base}) as browser:
        assert browser.get("/ui").headers["location"] == "/ui/login"
        found = re.search(r'name="csrf" value="([^"]+)"', browser.get("/ui/login").text)
        assert found
        answer = browser.post("/ui/login", data={"csrf": found[1], "key": key})
        assert (answer.status_code, answer.headers["location"]) == (303, "/ui")
        page = browser.get("/ui")
        assert page.status_code == 200 and f"tenant <b>{tenant}</b>" in page.text
        return str(browser.cookies["memvault_ui"])


@pytest.mark.slow
def test_a_visit_holds_across_workers(tmp_path: Path) -> None:
    port, key = free_port(), "k" * 24
    env = {
        **os.environ,
        "MEMVAULT_API_KEYS": f"acme:{key}",
        "MEMVAULT_STORE": str(tmp_path / "w.db"),
    }
    command = [sys.executable, "-m", "memvault", "serve", "--port", str(port), "--workers", "2"]
    with subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL) as server:
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, alive=lambda: server.poll() is None)
            cookie = log_in(base, key)
            for _ in range(8):  # new connections, served by either worker
                with httpx.Client(base_url=base, cookies={"memvault_ui": cookie}) as browser:
                    assert browser.get("/ui").status_code == 200
        finally:
            server.terminate()


def test_the_inspector_doc_shows_its_screenshot() -> None:
    docs = README.parent / "docs"
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (docs / "inspector.md").read_text("utf-8"))
    assert images
    for image in images:
        assert (docs / image).is_file() and (docs / image).stat().st_size < 300_000, image
