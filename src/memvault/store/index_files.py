"""Scope indexes on disk beside a SQLite database, memory-mapped when read (I/O).

One file per (tenant, scope, dimension) in ``<database>-index/`` (named by a hash of the tenant
and scope, and the dimension): a JSON header (format,
analyzer, the scope version it was built from, each array's type, shape and offset) and the
arrays of a :class:`~memvault.store.scope_index.ChunkTable`, 64-byte aligned. Reading maps the
file and wraps the arrays without copying them, so the first search after a process starts pays
for the pages it touches, not for a rebuild. A file is written beside its final name and renamed
into place; one that does not match what the reader expects is ignored and rebuilt. Entry ids
are stored as ASCII, so the erasure's residue scan can find them.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from ..retrieval.entities import ENTITY_ANALYZER
from ..retrieval.lexical import LexicalIndex, Postings, TextIndex
from ..retrieval.text import ANALYZER
from .coarse import Coarse, rotation_for
from .scope_index import ChunkTable
from .spare import COLUMNS

FORMAT = 2
_ANALYZERS = f"{ANALYZER} {ENTITY_ANALYZER}"
"""The analyzers of the words and the entity keys; a file made by others is rebuilt."""
_MAGIC = b"MVINDEX1"
_ALIGN = 64


def directory_for(database: str) -> Path:
    return Path(f"{database}-index")


def _prefix(tenant: str, scope: str) -> str:
    return hashlib.sha256(f"{tenant}\0{scope}".encode()).hexdigest()[:32]


def file_for(directory: Path, tenant: str, scope: str, dimension: int) -> Path:
    return directory / f"{_prefix(tenant, scope)}-{dimension}.mvindex"


def remove_unnamed(directory: Path) -> None:
    """Delete index files not named as :func:`file_for` names them (made by an earlier
    version: never read, so never caught up with deletions)."""
    for path in directory.glob("*.mvindex"):
        if "-" not in path.stem:
            path.unlink(missing_ok=True)


def remove_scope(directory: Path, tenant: str, scope: str) -> None:
    """Delete the scope's index files (entries were deleted from it: no file keeps them)."""
    for path in directory.glob(f"{_prefix(tenant, scope)}-*.mvindex"):
        path.unlink(missing_ok=True)


def _arrays(table: ChunkTable) -> dict[str, np.ndarray]:
    arrays = {name: getattr(table, name) for name in COLUMNS}
    arrays["entry_ids"] = table.entry_ids.astype("S")
    if table.lexical is not None:
        for n, segment in enumerate(table.lexical.indexes):
            for part, index in (("lexical", segment.words), ("entities", segment.entities)):
                arrays |= {
                    f"{part}.{n}.{f.name}": getattr(index, f.name) for f in fields(LexicalIndex)
                }
            arrays[f"traits.{n}"] = segment.traits
    if table.coarse is not None:
        arrays |= {"coarse.center": table.coarse.center, "coarse.bits": table.coarse.bits}
    return arrays


def save(path: Path, table: ChunkTable, version: Any) -> None:
    """Write ``table`` (built from the scope ``version``) to ``path``, atomically (without
    the entries deleted since it was built)."""
    arrays = {name: np.ascontiguousarray(a) for name, a in _arrays(table.compacted()).items()}
    layout: dict[str, list[Any]] = {}
    offsets: dict[str, int] = {}
    offset = 0
    for name, array in arrays.items():
        offsets[name] = offset
        layout[name] = [array.dtype.str, list(array.shape), offset]
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    header = json.dumps(
        {"format": FORMAT, "analyzer": _ANALYZERS, "version": version, "arrays": layout}
    ).encode()
    start = -(-(len(_MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    with partial.open("wb") as handle:
        handle.write(_MAGIC + len(header).to_bytes(8, "little") + header)
        for name, array in arrays.items():
            handle.seek(start + offsets[name])
            handle.write(array.tobytes())
        handle.truncate(start + offset)
    os.replace(partial, path)


def load(path: Path, version: Any) -> ChunkTable | None:
    """The table in ``path`` if it was built from the scope ``version``, else None."""
    found = read(path)
    return found[1] if found is not None and found[0] == tuple(version) else None


def read(path: Path) -> tuple[tuple[Any, ...], ChunkTable] | None:
    """The scope version the table in ``path`` was built from, and the table; None when
    missing, damaged, or made by another format or analyzer (the caller rebuilds)."""
    try:
        with path.open("rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return _read(mapped)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read(mapped: mmap.mmap) -> tuple[tuple[Any, ...], ChunkTable] | None:
    if mapped[: len(_MAGIC)] != _MAGIC:
        return None
    size = int.from_bytes(mapped[len(_MAGIC) : len(_MAGIC) + 8], "little")
    header = json.loads(mapped[len(_MAGIC) + 8 : len(_MAGIC) + 8 + size])
    if header.get("format") != FORMAT or header.get("analyzer") != _ANALYZERS:
        return None
    start = -(-(len(_MAGIC) + 8 + size) // _ALIGN) * _ALIGN
    arrays = {
        name: np.frombuffer(mapped, np.dtype(dtype), int(np.prod(shape)), start + offset).reshape(
            shape
        )
        for name, (dtype, shape, offset) in header["arrays"].items()
    }
    lexical = None
    if "lexical.0.keys" in arrays:
        segments, n = [], 0
        while f"lexical.{n}.keys" in arrays:
            words, entities = (
                LexicalIndex(
                    **{f.name: arrays.pop(f"{part}.{n}.{f.name}") for f in fields(LexicalIndex)}
                )
                for part in ("lexical", "entities")
            )
            segments.append(TextIndex(words, entities, arrays.pop(f"traits.{n}")))
            n += 1
        lexical = Postings.of(segments)
    coarse = None
    if "coarse.bits" in arrays:
        center, bits = arrays.pop("coarse.center"), arrays.pop("coarse.bits")
        coarse = Coarse(center, rotation_for(len(center)), bits)
    ids = arrays.pop("entry_ids").astype(str)
    table = ChunkTable.of(arrays | {"entry_ids": ids}, lexical, coarse)
    return tuple(header["version"]), table


def remove_all(directory: Path) -> None:
    """Delete every index file (an erasure: no copy of erased vectors may stay on disk)."""
    shutil.rmtree(directory, ignore_errors=True)
