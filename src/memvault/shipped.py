"""Files shipped with the install (models, tokenizers), checked by sha256 before they are used:
a damaged or substituted file is a :class:`~memvault.errors.ConfigError`, never a silent load."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .errors import ConfigError

REINSTALL = "reinstall memvault (python -m pip install --force-reinstall -e .)"


def sha256_of(path: Path) -> str:
    """The hex sha256 of one file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(folder: Path) -> str:
    """One sha256 for every file under ``folder``: their relative paths and contents, in order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(bytes.fromhex(sha256_of(path)))
    return digest.hexdigest()


def verified(path: Path, expected: str, what: str) -> Path:
    """``path`` when its sha256 (a folder's :func:`tree_sha256`) is ``expected``."""
    actual = tree_sha256(path) if path.is_dir() else sha256_of(path)
    if actual != expected:
        raise ConfigError(f"{what} at {path} has sha256 {actual}, expected {expected}; {REINSTALL}")
    return path
