"""The memory the inspector tests look at: two tenants, sessions, notes, findings of every
severity, Global Memory with a superseded fact, agent memory's executions (two failed with one
error class), and content that tries to run a script."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memvault import Memory, Settings
from memvault.testing import HashEmbedder, ManualClock

ACME_KEY = "acme-key-0123456789abcdef"
GLOBEX_KEY = "globex-key-0123456789abcdef"
API_KEYS = f"acme:{ACME_KEY},globex:{GLOBEX_KEY}"
SETTINGS = Settings(near_duplicate_threshold=0.99)
HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
"""Memory content is untrusted text: an agent may have stored this."""


@dataclass(frozen=True)
class Seeded:
    session: str
    """acme's shared session of alice, with data loaded."""
    private_session: str
    other_tenant_session: str
    """globex's session (acme must never reach it)."""
    other_tenant_finding: str
    """The entry id of a globex finding."""
    hostile_execution: str
    """acme's execution whose input and output are :data:`HOSTILE`."""


def seed(path: Path) -> Seeded:
    """Fill the SQLite store at ``path`` (closed again before a server opens it)."""
    clock = ManualClock()
    memory = Memory(
        str(path), tenant="acme", settings=SETTINGS, embedder=HashEmbedder(), clock=clock
    )
    with memory:
        s = memory.create_session("alice", title="Q1 sales")
        memory.set_data_loaded(s.id)
        memory.append_record(s.id, "user", "I prefer Go. Please analyse the Q1 sales CSV.")
        memory.append_record(s.id, "assistant", "Loaded 3 tables.")
        memory.add_session_memory(s.id, "User is analysing Q1 sales", category="context")
        memory.add_session_memory(s.id, HOSTILE)
        for word in ("one", "two", "three"):
            memory.add_session_memory(s.id, f"Temporary scratch note {word}")
        for content, severity in (
            ("Osaka sold 1850 units in week 10", "critical"),
            ("Kyoto returns doubled in March", "high"),
            ("Osaka promotion ended a week early", "medium"),
            ("Nagoya stock ran low twice", "low"),
        ):
            memory.add_finding(s.id, content, tags=[severity])
        memory.add_global_memory("alice", "User prefers Go over Python", session_id=s.id)
        home = memory.add_global_memory("alice", "User lives in Berlin", category="identity")
        memory.supersede(home.id, "User lives in Paris", reason="moved in March")
        private = memory.create_session("alice", title="Scratch", private=True)
        memory.add_session_memory(private.id, "Never leaves this session")
        globex = memory.with_tenant("globex")
        secret = globex.create_session("bob", title="Globex secret plans")
        globex.set_data_loaded(secret.id)
        finding = globex.add_finding(secret.id, "Globex secret: merger in May")
        hostile = record_executions(memory, clock)
        globex.record_execution(
            workflow_id="globex-wf", agent_id="globex-agent", input="Globex merger", success=True
        )
    return Seeded(s.id, private.id, secret.id, finding.entry_id, hostile)


def record_executions(memory: Memory, clock: ManualClock) -> str:
    """Runs of agents in workflows wf-1 and wf-2, a minute apart; the hostile one's id."""
    clock.advance(minutes=1)
    memory.record_execution(
        workflow_id="wf-1",
        agent_id="researcher",
        input="Find the three largest customers",
        output="ACME, Globex, Initech",
        success=True,
        strategy="react",
        kind="lookup",
        tokens_in=1200,
        tokens_out=80,
        duration_ms=2150,
        cost=0.002,
        tool_calls=[{"name": "sql", "parameters": {"query": "select 3"}}],
        team=[
            {"role": "writer", "agent_id": "w-1"},
            {"role": "researcher", "agent_id": "r-1", "model": "<b>big</b>"},
        ],
    )
    for workflow, whose, tokens in (("wf-1", "customer", 5000), ("wf-2", "supplier", 3000)):
        clock.advance(minutes=1)
        memory.record_execution(
            workflow_id=workflow,
            agent_id="writer",
            input=f"Summarise the orders of every {whose} in parallel",
            success=False,
            strategy="plan_and_execute",
            kind="report",
            tokens_in=tokens,
            duration_ms=tokens * 5,
            error_class="RateLimitError",
            error_message="429 Too Many Requests",
        )
    clock.advance(minutes=1)
    return memory.record_execution(
        workflow_id="wf-2",
        agent_id="researcher",
        input=HOSTILE,
        output=HOSTILE,
        success=True,
        strategy="react",
        kind="lookup",
        tokens_in=300,
        duration_ms=850,
    ).id
