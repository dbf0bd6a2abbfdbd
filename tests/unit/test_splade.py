"""The numpy SPLADE encoder gives what the reference implementation (transformers on torch)
gave for the same texts (tests/data/splade_reference.json, made once with both installed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memvault.embeddings import splade
from memvault.errors import ConfigError

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "splade_reference.json").read_text())


def test_vectors_match_the_reference_implementation() -> None:
    encoder = splade.SpladeEncoder()
    texts = [case["text"] for case in REFERENCE["vectors"]]
    for case, vector in zip(REFERENCE["vectors"], encoder.encode(texts), strict=True):
        assert vector.ids.tolist() == case["ids"]
        assert np.allclose(vector.weights, case["weights"], atol=1e-4)


def test_match_scores_like_the_dot_product_of_full_vectors() -> None:
    encoder = splade.SpladeEncoder()
    texts = [case["text"] for case in REFERENCE["vectors"]]
    query = encoder.encode(["When did she go to the support group?"])[0]
    full = [query.dot(v) for v in encoder.encode(texts)]
    assert np.allclose(encoder.match(query, texts), full, rtol=1e-4, atol=1e-5)
    assert encoder.match(query, []).tolist() == []
    assert splade.SparseVector(np.zeros(0, np.int32), np.zeros(0, np.float32)).dot(query) == 0


def test_a_tampered_model_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("model.safetensors", "tokenizer.json", "LICENSE"):
        (tmp_path / name).write_bytes((splade.model_dir() / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 64)
    monkeypatch.setattr(splade, "model_dir", lambda: tmp_path)
    with pytest.raises(ConfigError, match="sha256"):
        splade.SpladeEncoder().encode(["x"])


def test_the_licence_ships_beside_the_weights() -> None:
    assert "Apache License" in (splade.model_dir() / "LICENSE").read_text()
