"""The English parser of the offline learner: shipped, checked, loaded only when used."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from memvault.errors import ConfigError
from memvault.extraction import nlp


@pytest.fixture
def fresh_parser() -> Iterator[None]:
    nlp.parser.cache_clear()
    yield
    nlp.parser.cache_clear()


def _subjects(doc: object) -> dict[str, str]:
    return {t.text: t.head.lemma_ for t in doc if t.dep_ == "nsubj"}  # type: ignore[attr-defined]


def test_it_reads_who_does_what() -> None:
    subjects = nlp.read("Marco and I rent a flat in Ghent, but my sister lives in Lyon.", _subjects)
    assert subjects["I"] == "rent"
    assert subjects["sister"] == "live"
    assert nlp.read("I don't eat meat.", lambda doc: any(t.dep_ == "neg" for t in doc))


def test_no_word_of_what_it_read_stays_behind() -> None:
    """Erasure forgets every copy: the parser's string store keeps none of a user's words."""
    word = "Zorblaxianquux"
    assert nlp.read(f"I adopted a cat called {word}.", lambda doc: doc[-2].text) == word
    assert word not in nlp.parser().vocab.strings


def test_importing_memvault_does_not_load_it() -> None:
    code = "import memvault, sys; print(sorted({'spacy', 'thinc'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_changed_model_file_is_refused(
    fresh_parser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nlp, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ConfigError, match="sha256"):
        nlp.parser()


def test_a_missing_package_names_what_to_install(
    fresh_parser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nlp, "PACKAGE", "en_core_web_sm_missing")
    with pytest.raises(ConfigError, match=r"pip install en-core-web-sm-missing==3\.8\.0"):
        nlp.parser()
