"""The session bundle's file: one zip holding ``manifest.json``, ``entries.jsonl``,
``audit.jsonl`` and (format version 2) the session's folder of files under ``files/``; the
manifest names the format and its version, the memvault that wrote it, the embedding model of
the exporting store, counts, and the SHA-256 and size of every other member. Version 1 bundles
(no files) are read too.

Reading trusts nothing in the file: a bundle is refused (:class:`BundleError`, nothing imported)
unless it is a zip of exactly those members — no directories, links or other names; a file's
name is a relative path of plain parts (no ``..``, no hidden part), written only inside the new
session's folder — within the size caps before and while they
are read (a zip bomb stops at the cap, whatever sizes it declares), its manifest of a known
format version, and every member's SHA-256 the manifest's. Writing goes to a temporary file
beside the target, synced and linked into place: a crash leaves no half bundle.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BundleError, ValidationError
from ..patterns import lazy

FORMAT = "memvault-session-bundle"
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
"""Versions this memvault reads: 1 has no files."""
MANIFEST = "manifest.json"
ENTRIES = "entries.jsonl"
AUDIT = "audit.jsonl"
MEMBERS = (MANIFEST, ENTRIES, AUDIT)
FILES = "files/"
"""Where the session folder's files stand in the zip."""
FILE_NAME = lazy(r"(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}/){0,3}[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
"""A file of a session folder a bundle carries: up to four plain parts, none hidden."""
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
"""Largest bundle file read."""
MAX_MEMBER_BYTES = 512 * 1024 * 1024
"""Most bytes one member may expand to (checked while it is read, not just as declared)."""
MAX_RATIO = 32
"""The members together expand to at most this many times the bundle's size (and 1 MB): text
compresses a few times, a zip bomb a thousand."""
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_ENTRIES = 200_000
"""Most entries a bundle holds."""
MAX_EVENTS = 2_000_000
"""Most audit events a bundle holds."""
MAX_LINE_BYTES = 2 * 1024 * 1024
"""Longest line of a JSON-lines member: an entry at the settings' largest content and metadata
fits many times over; lines are parsed (and checked) one at a time, so parsing costs what a
line costs, not what the member does."""


@dataclass(frozen=True, slots=True)
class BundleFile:
    """What a bundle holds: its manifest, checked, and its JSON-lines members, read one record
    at a time (each a BundleError if it is not a JSON object)."""

    manifest: Mapping[str, Any]
    entries_jsonl: bytes = field(repr=False)
    events_jsonl: bytes = field(repr=False)
    sha256: str
    """Of the whole file: names the bundle in the audit log of an import."""
    files: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    """The session folder's files, by their path in it."""

    def entries(self) -> Iterator[Mapping[str, Any]]:
        return _records(self.entries_jsonl, ENTRIES)

    def events(self) -> Iterator[Mapping[str, Any]]:
        return _records(self.events_jsonl, AUDIT)


def _jsonl(records: list[Mapping[str, Any]]) -> bytes:
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    return "".join(f"{line}\n" for line in lines).encode("utf-8", "surrogatepass")


def bundle_bytes(
    manifest: Mapping[str, Any],
    entries: list[Mapping[str, Any]],
    events: list[Mapping[str, Any]],
    files: Mapping[str, bytes] | None = None,
) -> bytes:
    """The zip of a bundle: ``manifest`` with the SHA-256 and size of each member added;
    ``files``: the session folder's, by their path in it."""
    members = {ENTRIES: _jsonl(entries), AUDIT: _jsonl(events)}
    members |= {FILES + name: data for name, data in (files or {}).items()}
    listed = {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for name, data in members.items()
    }
    whole = {**manifest, "members": listed}
    members[MANIFEST] = json.dumps(whole, ensure_ascii=False, indent=2).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in (*MEMBERS, *sorted(set(members) - set(MEMBERS))):
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, members[name])
    return out.getvalue()


def read_folder(folder: Path) -> dict[str, bytes]:
    """The regular files under a session's folder, by their path in it (none: no folder);
    BundleError for what a bundle cannot carry (a link, a name not of plain parts)."""
    if not folder.is_dir():
        return {}
    found: dict[str, bytes] = {}
    try:
        for path in sorted(folder.rglob("*")):
            name = path.relative_to(folder).as_posix()
            if path.is_dir() and not path.is_symlink():
                continue
            if path.is_symlink() or not path.is_file() or not FILE_NAME.fullmatch(name):
                raise BundleError(f"the session's folder holds {name!r}, which no bundle carries")
            found[name] = path.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read the session's folder: {exc.strerror or exc}") from None
    return found


def write_folder(folder: Path, files: Mapping[str, bytes]) -> None:
    """Write a bundle's files into a new session's folder (names checked when it was read)."""
    try:
        for name, data in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    except OSError as exc:
        raise BundleError(
            f"the session is imported, but its files could not be written to {folder}: "
            f"{exc.strerror or exc}"
        ) from None


def write_new_file(path: str | Path, data: bytes) -> str:
    """Write ``data`` to a new file at ``path`` — through a temporary file beside it, synced,
    then linked into place, so a crash leaves no half file — never over an existing one. The
    path written."""
    target = Path(path).expanduser()
    taken = ValidationError(f"{target} exists already: a bundle never overwrites a file")
    if target.exists() or target.is_symlink():
        raise taken
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise ValidationError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "wb") as raw:
            raw.write(data)
            raw.flush()
            os.fsync(raw.fileno())
        _place(temporary, target)
    except FileExistsError:
        raise taken from None
    except OSError as exc:
        raise ValidationError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        Path(temporary).unlink(missing_ok=True)
    return str(target)


def _place(temporary: str, target: Path) -> None:
    """Give the written file its name: a hard link, which fails if the name was taken
    meanwhile; where the file system has none, a rename after a last look."""
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and FAT file systems)
        if target.exists():
            raise FileExistsError(target) from None
        os.rename(temporary, target)


def read_file(path: str | Path) -> bytes:
    """The bytes of the bundle file at ``path`` (a regular file within the size cap)."""
    source = Path(path).expanduser()
    try:
        if source.is_symlink() or not source.is_file():
            raise BundleError(f"{source} is not a regular file")
        if source.stat().st_size > MAX_BUNDLE_BYTES:
            raise BundleError(f"{source} is over {MAX_BUNDLE_BYTES:,} bytes")
        return source.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read {source}: {exc.strerror or exc}") from None


def parse_bundle(data: bytes) -> BundleFile:
    """A bundle's bytes, checked whole; BundleError otherwise."""
    contents = zip_members(data, frozenset(MEMBERS), carried)
    manifest = _manifest(contents[MANIFEST])
    files = {n.removeprefix(FILES): b for n, b in contents.items() if n.startswith(FILES)}
    if files and manifest["format_version"] < 2:
        raise BundleError("a bundle of format version 1 holds no files")
    for name in set(contents) - {MANIFEST}:
        listed = manifest["members"].get(name)
        digest = hashlib.sha256(contents[name]).hexdigest()
        if not isinstance(listed, Mapping) or listed.get("sha256") != digest:
            raise BundleError(f"{name} is not what the manifest says (tampered with or damaged)")
    for name, most in ((ENTRIES, MAX_ENTRIES), (AUDIT, MAX_EVENTS)):
        if contents[name].count(b"\n") > most:
            raise BundleError(f"{name} holds over {most:,} lines")
    digest = hashlib.sha256(data).hexdigest()
    return BundleFile(manifest, contents[ENTRIES], contents[AUDIT], digest, files)


def carried(name: str) -> bool:
    """Whether a zip member's name is a session folder's file a bundle may carry."""
    return name.startswith(FILES) and bool(FILE_NAME.fullmatch(name.removeprefix(FILES)))


def zip_members(
    data: bytes,
    required: frozenset[str],
    optional: frozenset[str] | Callable[[str], bool] = frozenset(),
) -> dict[str, bytes]:
    """The members of a zip that holds the ``required`` ones, maybe some ``optional`` ones (a
    set, or a test of a name) and nothing else — regular files, not encrypted, within the caps
    and together within
    :data:`MAX_RATIO` times the zip's size (a zip bomb stops there, whatever it declares);
    BundleError otherwise. ``manifest.json`` is capped at :data:`MAX_MANIFEST_BYTES`."""
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleError(f"a bundle is at most {MAX_BUNDLE_BYTES:,} bytes")
    budget = [MAX_RATIO * len(data) + (1 << 20)]  # what all members may still expand to
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = _checked_members(archive.infolist(), required, optional)
            return {name: _read(archive, info, budget) for name, info in infos.items()}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise BundleError(f"not a whole zip file (corrupt or truncated): {exc}") from None
    except (RuntimeError, NotImplementedError) as exc:  # encrypted, unknown compression
        raise BundleError(f"a member cannot be read: {exc}") from None


def _checked_members(
    infos: list[zipfile.ZipInfo],
    required: frozenset[str],
    optional: frozenset[str] | Callable[[str], bool],
) -> dict[str, zipfile.ZipInfo]:
    names = [info.filename for info in infos]
    allowed = optional if callable(optional) else optional.__contains__
    strange = sorted(n for n in set(names) - required if not allowed(n))
    if len(set(names)) != len(names) or not required <= set(names) or strange:
        said = strange[:3] or "a member twice or missing"
        raise BundleError(
            f"a bundle holds exactly {', '.join(sorted(required))} (and its files); this "
            f"one: {said}"
        )
    for info in infos:
        kind = stat.S_IFMT(info.external_attr >> 16)
        if info.is_dir() or kind not in (0, stat.S_IFREG):
            raise BundleError(f"{info.filename} is not a regular file (a link or a directory)")
        if info.flag_bits & 0x1:
            raise BundleError(f"{info.filename} is encrypted")
        if info.file_size > MAX_MEMBER_BYTES:
            raise BundleError(f"{info.filename} expands to over {MAX_MEMBER_BYTES:,} bytes")
    return {info.filename: info for info in infos}


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> bytes:
    """A member's bytes, read in pieces and stopped at its cap or when all members together
    pass the ``budget`` left (whatever sizes they declare)."""
    cap = MAX_MANIFEST_BYTES if info.filename == MANIFEST else MAX_MEMBER_BYTES
    out = bytearray()
    with archive.open(info) as member:
        while piece := member.read(1 << 20):
            out += piece
            budget[0] -= len(piece)
            if len(out) > cap or budget[0] < 0:
                raise BundleError(
                    f"{info.filename} expands to over {min(cap, len(out)):,} bytes, more than "
                    "a bundle of this size holds (a zip bomb?)"
                )
    return bytes(out)


def _manifest(data: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"the manifest is not JSON: {str(exc)[:80]}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError("this is not a memvault session bundle (its manifest says otherwise)")
    version = manifest.get("format_version")
    if type(version) is not int or version not in READ_VERSIONS:
        raise BundleError(
            f"bundle format version {version!r:.20} is not one this memvault reads "
            f"({', '.join(map(str, READ_VERSIONS))}); export it again with this version, or "
            "upgrade"
        )
    if not isinstance(manifest.get("members"), dict):
        raise BundleError("the manifest lists no members")
    return manifest


def _records(data: bytes, name: str) -> Iterator[Mapping[str, Any]]:
    """The JSON objects of a JSON-lines member, one a line (lines end at ``\n`` only: text may
    hold any other line separator), parsed as they are asked for."""
    start = 0
    for number in itertools.count(1):
        if start >= len(data):
            return
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line, start = data[start:end], end + 1
        if len(line) > MAX_LINE_BYTES:
            raise BundleError(f"{name} line {number} is over {MAX_LINE_BYTES:,} bytes")
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise BundleError(f"{name} line {number} is not JSON: {str(exc)[:80]}") from None
        if not isinstance(record, dict):
            raise BundleError(f"{name} line {number} is not a JSON object")
        yield record
