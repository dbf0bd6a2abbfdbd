"""Write-time filters (pure): what is not worth remembering, and what is already remembered."""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

_ERROR_RESPONSE = re.compile(
    r"""^\s*(?:
        Traceback\ \(most\ recent\ call\ last\)
      | (?:[A-Za-z_.]*Error|[A-Za-z_.]*Exception|ERROR|FATAL|Error|Exception)\s*[:!]
      | HTTP/\d(?:\.\d)?\ [45]\d\d\b
      | \{\s*"error"\s*:
      | (?:[45]\d\d)\ (?:Internal\ Server\ Error|Bad\ Gateway|Service\ Unavailable|Not\ Found)
    )""",
    re.VERBOSE,
)


def is_error_response(text: str) -> bool:
    """Content that is a tool or server failure (traceback, ``Error:``, HTTP 4xx/5xx…)."""
    return bool(_ERROR_RESPONSE.match(text))


def is_too_short(text: str, min_chars: int) -> bool:
    """Saliency: fewer than ``min_chars`` non-space characters (0 disables the filter)."""
    return min_chars > 0 and len("".join(text.split())) < min_chars


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def same_numbers(a: str, b: str) -> bool:
    """Whether two texts state the same numbers: texts that differ in a number are never
    near-duplicates, however close their embeddings ("order 1234" is not "order 1235")."""
    return _NUMBER.findall(a) == _NUMBER.findall(b)


def earlier_duplicates(
    vectors: npt.NDArray[np.float32],
    texts: list[str],
    groups: list[object],
    eligible: npt.NDArray[np.bool_],
    *,
    threshold: float,
    block: int = 1024,
) -> list[int | None]:
    """For each row, the first earlier eligible, non-duplicate row of its group with cosine >=
    threshold and the same numbers (None if there is none). Rows are compared block by block.
    """
    n = len(vectors)
    twins: list[int | None] = [None] * n
    if threshold <= 0 or n < 2:
        return twins
    for start in range(0, n, block):
        similarity = vectors[start : start + block] @ vectors.T
        for offset, row in enumerate(similarity):
            i = start + offset
            if not eligible[i]:
                continue
            for j in np.flatnonzero(row[:i] >= threshold):
                if (eligible[j] and twins[j] is None and groups[j] == groups[i]
                        and same_numbers(texts[i], texts[j])):  # fmt: skip
                    twins[i] = int(j)
                    break
    return twins
