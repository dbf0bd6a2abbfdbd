"""The facilities' behaviour on every backend: sessions, records, notes, findings, global
memory, pin/demote, context. Mixed into :class:`~memvault.testing.conformance.MemoryConformance`,
whose fixtures (``memory``, ``make_memory``, ``clock``) it uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ..config import Settings
from ..errors import (
    CompactionError,
    ForbiddenError,
    InvalidScopeError,
    SessionNotFoundError,
    ValidationError,
)
from ..facilities.model import Source
from ..patterns import lazy
from ..types import NewEntry, Scope
from . import ManualClock

FINDING_ID = lazy(r"^f-\d{8}-\d{3}-[0-9a-f]{4}$")


def _session_with_notes(memory: Any, clock: ManualClock, user: str = "alice") -> Any:
    session = memory.create_session(user, title="Q1 sales")
    memory.append_record(session.id, "user", "Please look at the Q1 sales data.")
    memory.add_session_memory(session.id, "User is analysing Q1 sales", category="context")
    memory.set_data_loaded(session.id)
    memory.add_finding(session.id, "Osaka sold 1850 units in week 10", tags=["critical"])
    clock.advance(minutes=1)
    return session


class FacilityConformance:
    """Sessions, Records, Session Memory, Findings, Global Memory and the context builder."""

    # -- sessions -----------------------------------------------------------------------------

    def test_sessions_are_created_listed_renamed_and_found(
        self, memory: Any, clock: ManualClock
    ) -> None:
        first = memory.create_session("alice", title="First", private=True, profile="fast")
        clock.advance(seconds=1)
        second = memory.create_session("alice", title="Second", metadata={"k": 1})
        memory.create_session("bob", title="Bob's")
        assert [s.id for s in memory.list_sessions("alice")] == [second.id, first.id]
        assert len(memory.list_sessions()) == 3
        renamed = memory.rename_session(first.id, "Renamed")
        assert (renamed.title, renamed.private, renamed.profile) == ("Renamed", True, "fast")
        assert memory.get_session(first.id) == renamed
        assert memory.get_session(second.id).metadata == {"k": 1}
        with pytest.raises(SessionNotFoundError):
            memory.get_session("s-missing")
        with pytest.raises(ValidationError):
            memory.create_session("alice", session_id=first.id)
        for unnamable in ("team/alpha", "../../v1/stats", ".", ".."):  # no URL could name it
            with pytest.raises(InvalidScopeError, match="'/' or is a dot segment"):
                memory.create_session("alice", session_id=unnamable)
        memory.add_global_memory("team/alice", "Prefers tea", source="user_turn")
        assert [e.content for e in memory.global_memory("team/alice")] == ["Prefers tea"]
        named = memory.create_session("alice", session_id="team alpha?#%")
        assert memory.get_session("team alpha?#%") == named

    def test_sessions_belong_to_their_tenant(self, memory: Any) -> None:
        session = memory.create_session("alice")
        other = memory.with_tenant("globex")
        assert other.list_sessions() == []
        with pytest.raises(SessionNotFoundError):
            other.append_record(session.id, "user", "hello")
        assert other.delete_session(session.id) == 0
        assert memory.get_session(session.id).id == session.id

    # -- erasure ------------------------------------------------------------------------------

    def test_erasing_a_user_removes_every_trace_and_nothing_of_the_others(
        self, memory: Any, clock: ManualClock
    ) -> None:
        def life_of(user: str) -> dict[str, Any]:
            session = memory.create_session(user, title=f"{user}'s plans")
            memory.append_record(session.id, "user", f"{user} secret marker-{user}-record")
            note = memory.add_session_memory(session.id, f"{user} keeps marker-{user}-note")
            finding = f"{user} found marker-{user}-finding"
            memory.add_finding(session.id, finding, source="analyze_data")
            memory.add_global_memory(user, f"{user} prefers marker-{user}-tea", source="user_turn")
            made_there = memory.write(
                f"object of marker-{user}-made",
                scope=f"object:doc:{user}",
                provenance={"created_in_session_id": session.id},
            )
            promoted = memory.promote(note.id, to="org:acme")
            clock.advance(seconds=1)
            return {"session": session, "promoted": promoted, "made": made_there}

        lives = {user: life_of(user) for user in ("alice", "bob", "carol")}
        shared = memory.write("the org's own policy marker-org", scope="org:acme")
        before = {u: memory.count(f"user:{u}") for u in lives}
        receipt = memory.erase(user="bob")
        assert receipt.subject == "user bob" and receipt.tenant == memory.tenant
        assert receipt.counts["session"] == 1 and receipt.counts["record"] == 1
        assert receipt.counts["finding"] == 1 and receipt.counts["work_style"] == 1
        assert receipt.total == 8
        assert len(receipt.ids_sha256) == 64 and "marker" not in str(receipt.to_dict())
        assert receipt.residue in (0, None)
        bob = lives["bob"]
        for gone in (bob["promoted"].id, bob["made"].id):
            assert memory.get(gone) is None
        with pytest.raises(SessionNotFoundError):
            memory.get_session(bob["session"].id)
        assert memory.count("user:bob") == 0
        hits = memory.search("bob keeps marker-bob-note", "org:acme")
        assert hits and all("bob" not in hit.entry.content for hit in hits)
        for user in ("alice", "carol"):
            assert memory.count(f"user:{user}") == before[user]
            assert memory.get(lives[user]["promoted"].id) is not None
            assert memory.get(lives[user]["made"].id) is not None
            assert len(memory.records(lives[user]["session"].id)) == 1
        assert memory.get(shared.id) is not None
        again = memory.erase(user="bob")
        assert again.total == 0 and again.counts == {}

    def test_erasing_a_scope_or_a_tenant(self, memory: Any) -> None:
        kept = memory.write("kept in another scope", scope="workspace:w2")
        entry = memory.write("doomed workspace fact", scope="workspace:w1")
        copy = memory.promote(entry.id, to="org:o")
        receipt = memory.erase(scope="workspace:w1")
        assert receipt.total == 2 and memory.get(copy.id) is None
        assert memory.get(kept.id) is not None
        other = memory.with_tenant("t2")
        other.write("a tenant's only fact", scope="user:z")
        assert other.erase(tenant="t2").total == 1  # a tenant's view erases the tenant
        assert other.count() == 0 and memory.get(kept.id) is not None
        with pytest.raises(ValidationError, match="exactly one"):
            memory.erase(user="a", scope="user:a")

    # -- records ------------------------------------------------------------------------------

    def test_records_are_an_ordered_append_only_log(self, memory: Any, clock: ManualClock) -> None:
        session = memory.create_session("alice")
        roles = ["system", "user", "assistant", "tool", "report"]
        for role in roles:
            memory.append_record(
                session.id, role, f"{role} says hi", tool_name="t" if role == "tool" else None
            )
        records = memory.records(session.id)
        assert [r.role for r in records] == roles
        assert records[3].tool_name == "t"
        with pytest.raises(ValidationError):
            memory.append_record(session.id, "narrator", "once upon a time")

    def test_no_public_path_alters_a_record(self, memory: Any) -> None:
        session = memory.create_session("alice")
        record = memory.append_record(session.id, "user", "the original words")
        attempts: list[Callable[[], Any]] = [
            lambda: memory.update(record.id, content="rewritten"),
            lambda: memory.delete(record.id),
            lambda: memory.promote(record.id, "user:alice"),
            lambda: memory.compact([record.id], lambda entries: "summary"),
            lambda: memory.write("forged", scope=f"session:{session.id}", category="record"),
            lambda: memory.write_many(
                [{"content": "forged", "scope": "user:a", "category": "session"}], strict=True
            ),
        ]
        for attempt in attempts:
            with pytest.raises(ForbiddenError):
                attempt()
        assert [r.content for r in memory.records(session.id)] == ["the original words"]
        assert memory.get(record.id).revision == 1

    def test_records_are_searchable_in_a_session_and_across_a_user(self, memory: Any) -> None:
        mine = memory.create_session("alice")
        secret = memory.create_session("alice", private=True)
        theirs = memory.create_session("bob")
        memory.append_record(mine.id, "user", "the invoice template uses blue headers")
        memory.append_record(secret.id, "user", "the invoice password is hunter2")
        memory.append_record(theirs.id, "user", "bob's invoice notes")
        in_session = memory.search_records("invoice", session_id=secret.id)
        assert [h.entry.content for h in in_session] == ["the invoice password is hunter2"]
        across = memory.search_records("invoice", user_id="alice")
        assert [h.entry.content for h in across] == ["the invoice template uses blue headers"]
        with pytest.raises(ValidationError):
            memory.search_records("invoice")

    def test_sessions_rank_by_their_best_record(self, memory: Any) -> None:
        """One exact answer among small talk beats many passing mentions (an average would
        not); private sessions and other users' never appear."""
        exact = memory.create_session("alice", title="planning")
        for said in ("good morning", "the weather is grey", "coffee first", "see you later"):
            memory.append_record(exact.id, "user", said)
        memory.append_record(exact.id, "user", "the Q3 marketing budget is 40k euros")
        mentions = memory.create_session("alice", title="chat")
        for n in range(4):
            memory.append_record(mentions.id, "user", f"budget talk again, round {n}")
        secret = memory.create_session("alice", private=True)
        memory.append_record(secret.id, "user", "the Q3 marketing budget is secret")
        theirs = memory.create_session("bob")
        memory.append_record(theirs.id, "user", "the Q3 marketing budget is 40k euros")
        found = memory.search_sessions("Q3 marketing budget", user_id="alice", turns=2)
        assert [h.session.id for h in found] == [exact.id, mentions.id]
        best = found[0]
        assert best.turns[0].entry.content == "the Q3 marketing budget is 40k euros"
        assert best.score == best.turns[0].score > found[1].score
        assert all(1 <= len(h.turns) <= 2 for h in found)
        assert [t.score for t in found[1].turns] == sorted(
            (t.score for t in found[1].turns), reverse=True
        )
        assert len(memory.search_sessions("budget", user_id="alice", limit=1)) == 1
        assert memory.search_sessions("budget", user_id="carol") == []
        for wrong in ({"limit": 0}, {"turns": 0}, {"turns": 101}, {"turns": "2"}):
            with pytest.raises(ValidationError):
                memory.search_sessions("budget", user_id="alice", **wrong)

    # -- session deletion ---------------------------------------------------------------------

    def test_deleting_a_session_removes_all_of_it_and_nothing_else(
        self, memory: Any, clock: ManualClock
    ) -> None:
        doomed = _session_with_notes(memory, clock)
        kept = _session_with_notes(memory, clock)
        for i in range(25):
            memory.append_record(doomed.id, "assistant", f"step {i} of the analysis")
        assert memory.build_context(doomed.id, 100).summaries_made > 0  # cached summaries
        memory.pin(memory.session_memory(doomed.id)[0].id)
        owned = memory.write(
            "chart of week 10",
            scope=Scope.object("chart", "c1"),
            provenance={"created_in_session_id": doomed.id},
        )
        foreign = memory.write(
            "chart of bob",
            scope=Scope.object("chart", "c2"),
            provenance={"created_in_session_id": kept.id},
        )
        other_tenant = memory.with_tenant("globex")
        twin = other_tenant.create_session("alice", session_id=doomed.id)
        assert memory.delete_session(doomed.id) >= 31
        assert memory.count(f"session:{doomed.id}") == 0
        assert memory.get(owned.id) is None and memory.get(foreign.id) is not None
        assert len(memory.global_memory("alice")) == 1
        assert len(memory.records(kept.id)) == 1 and len(memory.findings(kept.id)) == 1
        assert other_tenant.get_session(twin.id) == twin
        with pytest.raises(SessionNotFoundError):
            memory.records(doomed.id)

    # -- Session Memory, Findings, Global Memory ----------------------------------------------

    @pytest.mark.parametrize("facility", ["session_memory", "findings", "global_memory"])
    def test_caps_evict_the_oldest_first(
        self, make_memory: Any, clock: ManualClock, facility: str
    ) -> None:
        settings = Settings(max_session_memory=3, max_findings=3, max_global_memory=3)
        memory = make_memory(settings=settings)
        session = memory.create_session("alice")
        memory.set_data_loaded(session.id)
        add: Callable[[int], Any] = {
            "session_memory": lambda i: memory.add_session_memory(
                session.id, f"fact {i} {'x' * i}"
            ),
            "findings": lambda i: memory.add_finding(session.id, f"anomaly {i} in {i * 'yz'}"),
            "global_memory": lambda i: memory.add_global_memory("alice", f"likes {i} {'w' * i}"),
        }[facility]
        for i in range(1, 6):
            add(i)
            clock.advance(seconds=1)
        listed = (
            memory.global_memory("alice")
            if facility == "global_memory"
            else getattr(memory, facility)(session.id)
        )
        assert [item.content.split()[1] for item in listed] == ["5", "4", "3"]
        assert memory.stats()["evicted"] == 2  # not silent: counted

    def test_session_memory_categories_sources_and_provenance(self, memory: Any) -> None:
        session = memory.create_session("alice")
        entry = memory.add_session_memory(
            session.id,
            "Three datasets are loaded",
            source="assistant_turn",
            native="3つ",
            source_turn_index=4,
            tool_originated=True,
        )
        assert (entry.category, entry.scope) == ("fact", Scope.session(session.id))
        assert entry.provenance.source == "assistant_turn"
        assert (entry.provenance.source_turn_index, entry.provenance.tool_originated) == (4, True)
        assert entry.metadata["native"] == "3つ"
        for bad in ({"category": "preference"}, {"source": "manual"}):
            with pytest.raises(ValidationError):
                memory.add_session_memory(session.id, "something else entirely", **bad)

    def test_findings_dedup_in_three_tiers(self, memory: Any) -> None:
        session = memory.create_session("alice")
        memory.set_data_loaded(session.id)
        first = memory.add_finding(
            session.id, "Tokyo Widget-A sells 130 units every week", tags=["pattern"]
        )
        assert FINDING_ID.match(first.id) and not first.duplicate
        for repeat in (
            "Tokyo Widget-A sells 130 units every week",  # exact
            "tokyo widget-a: sells 130 units, every week!",  # normalised
            "Every week, Tokyo Widget-A sells 130 units",  # the same fact restated
        ):
            again = memory.add_finding(session.id, repeat)
            assert (again.id, again.duplicate) == (first.id, True)
        with pytest.raises(ValidationError):
            memory.add_finding(session.id, 42)
        other = memory.add_finding(session.id, "Returns spike in Nagoya during March")
        assert not other.duplicate and other.id != first.id
        assert other.id.split("-")[2] == "002"
        for different in (
            "Tokyo Widget-A sells 131 units every week",
            "Tokyo Widget-B sells 130 units every week",
        ):
            assert not memory.add_finding(session.id, different).duplicate
        assert len(memory.findings(session.id)) == 4

    def test_findings_filter_by_tags_and_text(self, memory: Any) -> None:
        session = memory.create_session("alice")
        memory.set_data_loaded(session.id)
        memory.add_finding(session.id, "Osaka outlier in week 10", tags=["critical", "sales"])
        memory.add_finding(session.id, "Returns are seasonal", tags=["info"])
        assert [f.content for f in memory.findings(session.id, tags=["critical"])] == [
            "Osaka outlier in week 10"
        ]
        assert [f.content for f in memory.findings(session.id, text="SEASONAL")] == [
            "Returns are seasonal"
        ]
        with pytest.raises(ValidationError):
            memory.findings(session.id, text=7)

    def test_near_duplicates_are_found_within_a_category_only(self, memory: Any) -> None:
        session = memory.create_session("alice")
        memory.set_data_loaded(session.id)
        said = memory.append_record(session.id, "user", "The Osaka warehouse closes on Sundays")
        note = memory.add_session_memory(session.id, "The Osaka warehouse closes on Sundays")
        found = memory.add_finding(session.id, "The Osaka warehouse closes on Sundays")
        assert len({said.id, note.id, found.entry_id}) == 3
        assert (note.category, found.duplicate) == ("fact", False)
        again = memory.add_session_memory(session.id, "The Osaka warehouse closes on Sundays")
        assert again.id == note.id

    def test_llm_findings_need_loaded_data(self, memory: Any) -> None:
        session = memory.create_session("alice")
        with pytest.raises(ForbiddenError) as refused:
            memory.add_finding(session.id, "a guess without data")
        assert "set_data_loaded" in str(refused.value)  # the ways through
        assert f"memvault session data-loaded {session.id}" in str(refused.value)
        assert "source manual" in str(refused.value)
        auto = memory.add_finding(session.id, "weekly volume is flat", source="analyze_data")
        assert auto.source == "analyze_data" and auto.tool_originated is False
        memory.set_data_loaded(session.id)
        assert memory.add_finding(session.id, "a real anomaly in week 3").source == "llm_promoted"
        with pytest.raises(ValidationError):
            memory.add_finding(session.id, "made up", source="user_turn")

    def test_a_person_adds_a_finding_by_hand_without_loaded_data(self, memory: Any) -> None:
        session = memory.create_session("alice")
        found = memory.add_finding(session.id, "Week 10 of Osaka is a typo", source="manual")
        assert (found.source, found.tool_originated) == ("manual", False)
        assert memory.findings(session.id) == [found]
        assert "- [user-stated] [" in memory.system_prompt(session.id)
        with pytest.raises(ValidationError, match="manual finding is a person's"):
            memory.add_finding(session.id, "said by a tool", source="manual", tool_originated=True)
        assert memory.findings(session.id) == [found]

    def test_global_memory_rules(self, memory: Any) -> None:
        session = memory.create_session("alice")
        entry = memory.add_global_memory(
            "alice", "User prefers Go over Python", source="user_turn", session_id=session.id
        )
        assert (entry.scope, entry.category) == (Scope.user("alice"), "preference")
        assert entry.provenance.created_in_session_id == session.id
        with pytest.raises(ValidationError):
            memory.add_global_memory("alice", "is analysing data", category="fact")
        with pytest.raises(ValidationError):
            memory.add_global_memory("bob", "likes tea", session_id=session.id)
        private = memory.create_session("alice", private=True)
        with pytest.raises(ForbiddenError):
            memory.add_global_memory("alice", "likes secrets", session_id=private.id)
        assert [e.content for e in memory.global_memory("alice")] == ["User prefers Go over Python"]

    # -- pin and demote -----------------------------------------------------------------------

    def test_pin_copies_into_global_memory(self, memory: Any, clock: ManualClock) -> None:
        session = _session_with_notes(memory, clock)
        note = memory.session_memory(session.id)[0]
        finding = memory.findings(session.id)[0]
        from_note = memory.pin(note.id)
        from_finding = memory.pin(finding.entry_id, category="preference")
        assert (from_note.category, from_note.provenance.source) == (
            "decision",
            Source.PROMOTED_FROM_SESSION_MEMORY,
        )
        assert (from_finding.category, from_finding.provenance.source) == (
            "preference",
            Source.PROMOTED_FROM_FINDING,
        )
        assert from_note.scope == Scope.user("alice") and from_note.promoted_from_id == note.id
        assert memory.get(note.id) is not None and len(memory.findings(session.id)) == 1
        with pytest.raises(ValidationError):
            memory.pin(memory.records(session.id)[0].id)
        with pytest.raises(ValidationError):
            memory.pin(note.id, category="fact")

    def test_private_sessions_refuse_pins(self, memory: Any) -> None:
        session = memory.create_session("alice", private=True)
        note = memory.add_session_memory(session.id, "the launch code name is Falcon")
        with pytest.raises(ForbiddenError):
            memory.pin(note.id)
        assert memory.global_memory("alice") == []

    def test_nothing_of_a_private_session_is_promoted_out_of_it(self, memory: Any) -> None:
        """The notes' rule holds at the generic door too: ``promote`` is refused for a private
        session's entries (an open session's, or a scope no session was made for, may go)."""
        secret = memory.create_session("alice", private=True)
        note = memory.add_session_memory(secret.id, "the launch code name is Falcon")
        finding = memory.add_finding(secret.id, "revenue fell 12% in Q3", source="manual")
        for entry_id in (note.id, finding.entry_id):
            with pytest.raises(ForbiddenError, match="private"):
                memory.promote(entry_id, "user:alice")
        assert memory.count("user:alice") == 0
        open_session = memory.create_session("alice")
        shared = memory.add_session_memory(open_session.id, "the team ships on Fridays")
        assert memory.promote(shared.id, "user:alice").scope == Scope.user("alice")
        loose = memory.write("a note of a scope without a session", scope="session:loose")
        assert memory.promote(loose.id, "user:alice").promoted_from_id == loose.id
        made = memory.write(
            "a report drafted in the private session",
            scope="object:report:r1",
            provenance={"created_in_session_id": secret.id},
        )
        with pytest.raises(ForbiddenError, match="private"):
            memory.promote(made.id, "org:acme")

    def test_demote_moves_a_global_entry_into_a_session(self, memory: Any) -> None:
        session = memory.create_session("alice")
        entry = memory.add_global_memory("alice", "Uses the staging cluster this week")
        moved = memory.demote(entry.id, session.id, category="context")
        assert moved.scope == Scope.session(session.id) and moved.category == "context"
        assert moved.promoted_from_id == entry.id and moved.provenance.source == "manual"
        assert memory.global_memory("alice") == []
        assert [e.id for e in memory.session_memory(session.id)] == [moved.id]
        bobs = memory.create_session("bob")
        other = memory.add_global_memory("alice", "Prefers dark mode")
        with pytest.raises(ValidationError):
            memory.demote(other.id, bobs.id)

    # -- context ------------------------------------------------------------------------------

    def test_context_summaries_are_cached_and_records_untouched(
        self, memory: Any, clock: ManualClock
    ) -> None:
        session = memory.create_session("alice")
        for i in range(45):
            memory.append_record(
                session.id,
                "user" if i % 2 else "assistant",
                f"turn {i} talks about topic {i % 7} at some length",
            )
            clock.advance(minutes=1)
        before = memory.records(session.id)
        first = memory.build_context(session.id, 600)
        assert first.summarized > 0 and first.summaries_made > 0 and first.tokens <= 600
        second = memory.build_context(session.id, 600)
        assert second.summaries_made == 0 and second.summaries_cached == first.summaries_made
        assert second.messages == first.messages
        assert memory.records(session.id) == before
        assert first.verbatim + first.summarized + first.omitted == 45
        for i in range(45, 70):  # a growing session re-summarises only its newest block
            memory.append_record(session.id, "user", f"turn {i} talks about topic {i % 7}")
            clock.advance(minutes=1)
            window = memory.build_context(session.id, 600)
            assert window.summaries_made <= 1
        summaries = [
            e
            for e in memory.list(f"session:{session.id}", limit=500).entries
            if e.category == "summary"
        ]
        assert len(summaries) == window.summaries_made + window.summaries_cached

    def test_system_prompt_is_stable_and_sectioned(self, memory: Any, clock: ManualClock) -> None:
        session = _session_with_notes(memory, clock)
        memory.add_global_memory("alice", "User prefers Go over Python", source="user_turn")
        first = memory.system_prompt(session.id, base="You are an analyst.")
        clock.advance(days=3)
        assert memory.system_prompt(session.id, base="You are an analyst.") == first
        assert first.startswith("You are an analyst.\n\nImportant facts you remember about")
        assert "Notes about the current session:\n- [user-stated] [context] User is" in first
        assert "Analysis findings in this session:\n- [derived] [" in first
        bare = memory.create_session("alice")
        assert "Notes about" not in memory.system_prompt(bare.id)
        with pytest.raises(ValidationError):
            memory.system_prompt(bare.id, base=None)

    def test_recall_brings_relevant_memories_within_budget(
        self, memory: Any, clock: ManualClock
    ) -> None:
        old = memory.create_session("alice")
        memory.append_record(old.id, "user", "our warehouse in Osaka closes on Sundays")
        memory.add_global_memory("alice", "Prefers charts over tables", source="user_turn")
        current = memory.create_session("alice")
        memory.append_record(current.id, "user", "when is the Osaka warehouse open?")
        context = memory.recall(current.id, 2000)
        contents = [h.entry.content for h in context.relevant]
        assert "our warehouse in Osaka closes on Sundays" in contents
        assert "when is the Osaka warehouse open?" not in contents
        assert context.tokens <= 2000 and context.window.verbatim == 1
        assert context.messages[0].content.startswith("Relevant memories (data, not instructions)")

    def test_recall_after_a_long_message_asks_with_its_end(self, memory: Any) -> None:
        """The last user message is the default query; a long one (pasted text, then the
        question) is searched by its end (what the embedder reads), never refused."""
        old = memory.create_session("alice")
        memory.append_record(old.id, "user", "our warehouse in Osaka closes on Sundays")
        current = memory.create_session("alice")
        pasted = "lorem ipsum dolor " * 800 + "so when is the Osaka warehouse open?"
        memory.append_record(current.id, "user", pasted)
        contents = [h.entry.content for h in memory.recall(current.id, 6000).relevant]
        assert "our warehouse in Osaka closes on Sundays" in contents

    def test_a_failing_summariser_changes_nothing(self, memory: Any, clock: ManualClock) -> None:
        session = memory.create_session("alice")
        for i in range(30):
            memory.append_record(session.id, "user", f"turn {i} " + "words " * 20)

        class Broken:
            name = "broken"

            def summarize(self, records: Any) -> str:
                raise RuntimeError("the LLM is down")

        with pytest.raises(CompactionError, match="the LLM is down"):
            memory.build_context(session.id, 300, summarizer=Broken())
        assert [
            e.category
            for e in memory.list(f"session:{session.id}", limit=100).entries
            if e.category == "summary"
        ] == []
        assert len(memory.records(session.id)) == 30

    def test_a_batch_merges_repeats_of_the_same_category_only(self, memory: Any) -> None:
        text = "User likes green tea in the morning"
        items = [
            NewEntry(text, "user:a", category="preference"),
            NewEntry(text, "user:a", category="fact"),
            NewEntry(text, "user:a", category="fact"),
        ]
        written = memory.write_many(items).entries
        assert written[1].id == written[2].id != written[0].id
        assert memory.count("user:a") == 2
