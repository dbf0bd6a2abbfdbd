"""API-key grants on every backend and driver: a view limited to some scopes reads and writes
those and nothing else, and what it is refused changes nothing. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses; a suite
through a server gives the same grants to API keys (:data:`GRANTS`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ..errors import ForbiddenError
from ..store.grants import Grant

GRANTS = {
    "reader": ("user:alice|session:*", None),
    "writer": (None, "user:alice|session:*"),
}
"""The (read, write) fields of the limited keys the suite uses."""


def grant_of(name: str) -> Grant:
    read, write = GRANTS[name]
    return Grant.of(read, write)


class GrantConformance:
    """A key limited by ``read=``/``write=`` reaches exactly its scopes."""

    @pytest.fixture
    def granted(self, memory: Any) -> Callable[[str], Any]:
        """The memory as a key of :data:`GRANTS` sees it."""
        return lambda name: memory.with_grant(grant_of(name))

    def test_a_read_only_key_reads_its_scopes_and_changes_nothing(
        self, memory: Any, granted: Callable[[str], Any]
    ) -> None:
        alice = memory.write("Alice drinks green tea", scope="user:alice")
        bob = memory.write("Bob drinks black coffee", scope="user:bob")
        reader = granted("reader")
        assert [h.entry.id for h in reader.search("what does alice drink", scope="user:alice")] == [
            alice.id
        ]
        assert reader.get(alice.id).content == alice.content
        assert reader.count(scope="user:alice") == 1
        refused: list[Callable[[], Any]] = [
            lambda: reader.write("Alice drinks water", scope="user:alice"),
            lambda: reader.update(alice.id, tags=["x"]),
            lambda: reader.delete(alice.id),
            lambda: reader.search("coffee", scope="user:bob"),
            lambda: reader.get(bob.id),
            reader.list,
            lambda: reader.delete_by_scope("user:bob"),
        ]
        for call in refused:
            with pytest.raises(ForbiddenError, match="does not allow"):
                call()
        assert sorted(e.content for e in memory.list().entries) == [alice.content, bob.content]
        assert memory.get(alice.id).tags == ()

    def test_a_write_only_key_writes_its_scopes_and_reads_nothing(
        self, memory: Any, granted: Callable[[str], Any]
    ) -> None:
        bob = memory.write("Bob drinks black coffee", scope="user:bob")
        writer = granted("writer")
        alice = writer.write("Alice drinks green tea", scope="user:alice")
        assert writer.update(alice.id, tags=["checked"]).tags == ("checked",)
        session = writer.create_session("alice")
        writer.append_record(session.id, "user", "I like oolong")
        refused: list[Callable[[], Any]] = [
            lambda: writer.search("tea", scope="user:alice"),
            lambda: writer.get(alice.id),
            lambda: writer.records(session.id),
            lambda: writer.write("Bob drinks tea", scope="user:bob"),
            lambda: writer.delete(bob.id),
            lambda: writer.update(bob.id, tags=["x"]),
            writer.purge_expired,
        ]
        for call in refused:
            with pytest.raises(ForbiddenError, match="does not allow"):
                call()
        assert memory.get(bob.id) == bob
        assert [r.content for r in memory.records(session.id)] == ["I like oolong"]
        assert writer.delete(alice.id) is True
