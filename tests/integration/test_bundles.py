"""Session bundles: a session exported with all it holds and imported as a new one (fresh ids,
every reference rewritten, the private flag kept, re-embedded), and every kind of bad bundle
refused with nothing imported."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import BundleError, Memory, NotFoundError, ValidationError
from memvault.testing import HashEmbedder, ManualClock
from memvault.trust.bundle_file import MAX_MEMBER_BYTES


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Memory]:
    with Memory(str(tmp_path / "a.db"), embedder=HashEmbedder(), clock=ManualClock()) as memory:
        yield memory


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Memory]:
    with Memory(str(tmp_path / "b.db"), embedder=HashEmbedder(dimension=32)) as memory:
        yield memory


def _session(memory: Memory) -> tuple[str, dict[str, Any]]:
    """A private session with records, notes, a superseded fact, a finding and an object."""
    session = memory.create_session("alice", title="trip planning", private=True)
    memory.append_record(session.id, "user", "I want to visit Lisbon in May")
    memory.append_record(session.id, "assistant", "Lisbon in May is lovely")
    note = memory.add_session_memory(session.id, "Alice plans a trip to Lisbon")
    newer = memory.supersede(note.id, "Alice plans a trip to Porto", reason="changed her mind")
    memory.set_data_loaded(session.id)
    finding = memory.add_finding(session.id, "Flights to Porto are cheapest on Tuesdays")
    ticket = memory.write(
        "Book the Porto hotel",
        scope="object:ticket:T-1",
        provenance={"created_in_session_id": session.id},
    )
    memory.write("Alice likes tea", scope="user:alice")  # not the session's
    return session.id, {"note": note, "newer": newer, "finding": finding, "ticket": ticket}


def test_a_session_travels_whole_with_fresh_ids(
    source: Memory, target: Memory, tmp_path: Path
) -> None:
    session_id, made = _session(source)
    path = tmp_path / "trip.mvbundle"
    exported = source.export_session(session_id, path)
    assert exported.path == str(path) and exported.total == 7 and exported.events >= 7
    imported = target.import_session(path)
    assert imported.session_id != session_id and imported.source_session_id == session_id
    assert imported.counts == exported.counts and imported.sha256 == exported.sha256

    session = target.get_session(imported.session_id)
    assert session.private and session.user_id == "alice" and session.title == "trip planning"
    records = target.records(imported.session_id)
    assert [r.content for r in records] == [
        "I want to visit Lisbon in May",
        "Lisbon in May is lovely",
    ]
    notes = target.session_memory(imported.session_id)
    assert [n.content for n in notes] == ["Alice plans a trip to Porto"]
    old = [
        e
        for e in target.list(f"session:{imported.session_id}", include_superseded=True).entries
        if e.superseded
    ]
    assert len(old) == 1 and old[0].superseded_by == notes[0].id  # the chain, under new ids
    assert notes[0].supersedes == (old[0].id,)
    source_ids = {made["note"].id, made["newer"].id, made["ticket"].id}
    every = target.list(include_superseded=True, include_expired=True).entries
    assert not source_ids & {e.id for e in every}
    (ticket,) = target.retrieve("object:ticket:T-1")
    assert ticket.provenance.created_in_session_id == imported.session_id
    assert target.count("user:alice") == 0  # only the session's things travel
    hits = target.search("hotel in Porto", "object:ticket:T-1")  # embedded by the target's model
    assert hits and hits[0].entry.id == ticket.id
    findings = target.findings(imported.session_id)
    assert [f.content for f in findings] == ["Flights to Porto are cheapest on Tuesdays"]

    events = target.audit(scope=f"session:{imported.session_id}", limit=1000).events
    assert {e.operation for e in events} >= {"import_session", "create_session", "supersede"}
    assert all(e.entry_id in {x.id for x in every} for e in events)
    assert "Lisbon" not in json.dumps([e.to_dict() for e in events])
    again = target.import_session(path)  # a second import is a second session
    assert again.session_id not in {imported.session_id, session_id}


def test_an_export_never_overwrites_and_names_a_session(source: Memory, tmp_path: Path) -> None:
    session_id, _ = _session(source)
    path = tmp_path / "b.zip"
    path.write_bytes(b"precious")
    with pytest.raises(ValidationError, match="exists already"):
        source.export_session(session_id, path)
    assert path.read_bytes() == b"precious"
    with pytest.raises(NotFoundError):
        source.export_session("no-such-session", tmp_path / "c.zip")


def _bundle(source: Memory, tmp_path: Path) -> bytes:
    session_id, _ = _session(source)
    path = tmp_path / "good.zip"
    source.export_session(session_id, path)
    return path.read_bytes()


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _zipped(members: dict[str, bytes], link: str | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            if name == link:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, data)
    return out.getvalue()


def _edited(data: bytes, name: str, edit: Callable[[bytes], bytes]) -> bytes:
    members = _members(data)
    members[name] = edit(members[name])
    return _zipped(members)


def _retitled(entries: bytes) -> bytes:
    return entries.replace(b"trip planning", b"trip plannin!")


def _resummed(data: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    """A consistent forgery: the entries edited and the manifest's hash made to match."""
    import hashlib

    members = _members(data)
    members["entries.jsonl"] = edit(members["entries.jsonl"])
    manifest = json.loads(members["manifest.json"])
    manifest["members"]["entries.jsonl"]["sha256"] = hashlib.sha256(
        members["entries.jsonl"]
    ).hexdigest()
    members["manifest.json"] = json.dumps(manifest).encode()
    return _zipped(members)


def _bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", b"{}")
        with archive.open("entries.jsonl", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(MAX_MEMBER_BYTES // len(block) + 2):
                member.write(block)
        archive.writestr("audit.jsonl", b"")
    return out.getvalue()


BAD: dict[str, Callable[[bytes], bytes]] = {
    "not a zip": lambda data: b"hello, I am not a zip file",
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "tampered": lambda data: _edited(data, "entries.jsonl", _retitled),
    "wrong version": lambda data: _edited(
        data, "manifest.json", lambda m: m.replace(b'"format_version": 1', b'"format_version": 9')
    ),
    "not a bundle": lambda data: _edited(
        data, "manifest.json", lambda m: m.replace(b"memvault-session-bundle", b"other")
    ),
    "path traversal": lambda data: _zipped({**_members(data), "../../evil.txt": b"x"}),
    "a member missing": lambda data: _zipped(
        {k: v for k, v in _members(data).items() if k != "audit.jsonl"}
    ),
    "symlink": lambda data: _zipped(_members(data), link="audit.jsonl"),
    "two sessions": lambda data: _resummed(
        data, lambda e: e + e.splitlines(keepends=True)[0].replace(b'"id":"', b'"id":"x')
    ),
    "bad entry": lambda data: _resummed(data, lambda e: e + b'{"id": 1}\n'),
    "counts differ": lambda data: _resummed(data, lambda e: b"".join(e.splitlines(True)[:-1])),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_bundle_is_refused_and_nothing_is_imported(
    source: Memory, target: Memory, tmp_path: Path, kind: str
) -> None:
    good = _bundle(source, tmp_path)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(BAD[kind](good))
    with pytest.raises(BundleError):
        target.import_session(bad)
    assert target.count(include_superseded=True) == 0
    assert target.list_sessions("alice") == []
    assert target.audit().events == ()


def test_a_zip_bomb_stops_at_the_cap(target: Memory, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(_bomb())
    with pytest.raises(BundleError, match="over"):
        target.import_session(bomb)
    assert target.count(include_superseded=True) == 0


def test_a_linked_bundle_file_is_refused(source: Memory, target: Memory, tmp_path: Path) -> None:
    real = tmp_path / "real.zip"
    real.write_bytes(_bundle(source, tmp_path))
    link = tmp_path / "link.zip"
    link.symlink_to(real)
    with pytest.raises(BundleError, match="regular file"):
        target.import_session(link)
    with pytest.raises(BundleError, match="regular file"):
        target.import_session(tmp_path / "missing.zip")
