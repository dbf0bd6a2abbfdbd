"""Erasure over REST, on real servers: a pending erasure is a 503 ErasureIncompleteError with
its receipt, finished by ``POST /v1/erase/finish``; an erased session's last extraction is gone
from every server process of the store, not only the one that erased."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import sqlean

from memvault import Memory, Settings
from memvault.errors import ErasureIncompleteError
from memvault.trust import erasure

from .conftest import ACME, memvault_serve

pytestmark = pytest.mark.slow  # several server processes

SECRET = "the spare key is under the blue flowerpot"


def test_a_pending_erasure_is_503_with_its_receipt_and_finished_later(
    serve: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "PURGE_ATTEMPTS", 2)
    url = serve(settings=Settings(sqlite_busy_timeout_ms=50))
    with Memory(url, api_key=ACME) as memory:
        memory.write(SECRET, scope="user:bob")
        reader = sqlean.connect(str(tmp_path / "server-0.db"), isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM entries").fetchone()  # holds the log
            with pytest.raises(ErasureIncompleteError) as raised:
                memory.erase(user="bob")  # 503 on the wire, this error here
            assert raised.value.residue > 0 and raised.value.receipt is not None
            assert raised.value.receipt["total"] == 1 and "flowerpot" not in str(raised.value)
            with pytest.raises(ErasureIncompleteError):
                memory.finish_erasures()
        finally:
            reader.close()
        ids_sha256 = raised.value.receipt["ids_sha256"]
        assert memory.finish_erasures().finished == (ids_sha256,)
        assert memory.finish_erasures().finished == ()
        assert memory.count("user:bob") == 0


def test_an_erased_sessions_extraction_is_gone_from_every_server_process(
    tmp_path: Path,
) -> None:
    keys = f"acme:{ACME}"
    with memvault_serve(tmp_path, keys) as first, memvault_serve(tmp_path, keys) as second:
        learner, eraser = Memory(second, api_key=ACME), Memory(first, api_key=ACME)
        with learner, eraser:
            session = learner.create_session("bob")
            turn = learner.add_turn(session.id, user="I am allergic to penicillin.")
            assert turn.extraction != "off" and learner.flush(60, session_id=session.id)
            learned = learner.last_extraction(session.id)  # GET …/extraction, the second server
            assert learned is not None and "penicillin" in repr(learned)
            assert eraser.erase(user="bob").residue == 0  # the first server erases
            assert learner.last_extraction(session.id) is None
            assert eraser.last_extraction(session.id) is None
