"""The retrieval commands of the CLI: search, import, reembed, bench locomo."""

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memvault import Memory
from memvault.cli import cli


def test_import_then_search(run: Any, tmp_path: Path) -> None:
    lines = [
        {"content": "Alice drinks green tea every morning", "tags": ["pref"]},
        {"content": "The deploy failed because the disk was full", "scope": "workspace:ops"},
        {
            "content": "Alice is allergic to peanuts",
            "created_at": "2025-01-02T10:00:00+00:00",
            "metadata": {"source": "intake"},
        },
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    result = json.loads(run("import", str(source), "--scope", "user:alice", "--json").stdout)
    assert (result["stored"], result["merged"], result["refused"]) == (3, 0, 0)
    assert [(line["line"], line["outcome"]) for line in result["items"]] == [
        (1, "stored"),
        (2, "stored"),
        (3, "stored"),
    ]
    hits = json.loads(run("search", "food allergy", "--scope", "user:alice", "--json").stdout)
    assert hits[0]["content"] == "Alice is allergic to peanuts"
    assert hits[0]["created_at"].startswith("2025-01-02")
    assert {"lexical", "dense", "recency", "fused"} <= set(hits[0]["components"])
    assert 0 < hits[0]["relevance"] < 1
    assert len(hits) == 2
    text = run("search", "tea", "--scope", "user:alice", "--tag", "pref").stdout
    assert "green tea" in text and "peanuts" not in text
    assert "(no hits)" in run("search", "x", "--scope", "user:nobody").stdout


def test_import_reports_stored_merged_and_refused_lines(run: Any) -> None:
    lines = [
        json.dumps({"content": "Grace bought green tea downtown on Monday.", "scope": "user:a"}),
        "not json",
        json.dumps({"content": "Grace sold green tea downtown on Monday.", "scope": "user:a"}),
        "",
        json.dumps({"content": "On Monday, Grace bought green tea downtown", "scope": "user:a"}),
        json.dumps({"content": "x \ud800 y", "scope": "user:a"}),
        json.dumps({"content": "no scope"}),
        json.dumps({"content": "Traceback (most recent call last):\n  File x", "scope": "user:a"}),
        json.dumps({"content": "fine", "scope": "user:a", "metadata": {"n": "NaN"}}),
    ]
    result = run("import", "-", input="\n".join(lines) + "\n", code=2)
    first = run("list", "--scope", "user:a", "--json").stdout
    ids = {e["content"]: e["id"] for e in json.loads(first)["entries"]}
    assert result.stdout.splitlines()[:3] == [
        "stored 3, merged 1, refused 4",
        "line 2: refused (ValidationError): not a JSON line: Expecting value: line 1 column 1 "
        "(char 0)",
        f"line 5: merged into {ids['Grace bought green tea downtown on Monday.']}",
    ]
    assert "line 6: refused (ValidationError): content is not valid Unicode" in (result.stdout)
    assert "line 7: refused (ValidationError): no scope" in result.stdout
    assert "line 8: refused (FilteredError)" in result.stdout
    assert run("count").stdout.strip() == "3"


def test_import_json_report_and_strict(run: Any) -> None:
    text = json.dumps({"content": "Maya is allergic to peanuts", "scope": "user:m"})
    report = json.loads(run("import", "-", "--json", input=f"{text}\n{text}\n").stdout)
    stored_id = report["items"][0]["id"]
    assert report["items"] == [
        {"line": 1, "outcome": "stored", "id": stored_id},
        {"line": 2, "outcome": "merged", "merged_into": stored_id},
    ]
    bad = json.dumps({"content": "", "scope": "user:m"})
    good = json.dumps({"content": "new one", "scope": "user:m"})
    result = run("import", "-", "--strict", input=f"{good}\n{bad}\n", code=2)
    assert "line 2" in result.stderr and "empty" in result.stderr
    assert run("count").stdout.strip() == "1"


def test_reembed_and_filters(run: Any) -> None:
    run("write", "Alice drinks green tea", "--scope", "user:a")
    result = json.loads(run("reembed", "--json").stdout)
    assert result == {"reembedded_chunks": 1, "model": "all-MiniLM-L6-v2-int8"}
    refused = run("write", "Traceback (most recent call last):", "--scope", "user:a", code=2)
    assert "error response" in refused.stderr


def test_search_validation(run: Any) -> None:
    assert "Missing option" in run("search", "tea", code=2).output
    assert (
        "not in the range"
        in run("search", "tea", "--scope", "user:a", "--diversity", "3", code=2).output
    )


def _tiny_locomo(path: Path) -> None:
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy called Rex!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! What breed is Rex?"},
            {
                "speaker": "Ann",
                "dia_id": "D1:3",
                "text": "A beagle, he loves the beach.",
                "blip_caption": "a dog on a beach",
            },
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "I started learning the violin."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Nice! I ran a marathon in Paris."},
        ],
    }
    qa = [
        {
            "question": "What is the name of Ann's dog?",
            "answer": "Rex",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "Which instrument does Ben play?",
            "answer": "violin",
            "evidence": ["D2:1", "D"],
            "category": 1,
        },
        {
            "question": "Where did Ben run a marathon?",
            "adversarial_answer": "Paris",
            "evidence": ["D2:2"],
            "category": 5,
        },
        {"question": "No evidence here", "answer": "x", "evidence": [], "category": 2},
    ]
    path.write_text(
        json.dumps(
            [
                {
                    "sample_id": "conv-x",
                    "conversation": conversation,
                    "qa": qa,
                    "observation": {"leak": "never read"},
                }
            ]
        )
    )


def test_bench_locomo(tmp_path: Path) -> None:
    data, out = tmp_path / "tiny.json", tmp_path / "result.json"
    _tiny_locomo(data)
    result = CliRunner().invoke(
        cli, ["bench", "locomo", "--data", str(data), "--k", "1,5", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "memvault" in result.stdout and "bm25" in result.stdout
    report = json.loads(out.read_text())
    printed = CliRunner().invoke(cli, ["bench", "locomo", "--data", str(data), "--json"])
    assert json.loads(printed.stdout)["questions"] == 3  # --json: the results, not the table
    assert {"answerable", "all", "by_category", "baselines", "ingest_s", "search_ms_p50"} <= set(
        report
    )
    assert report["questions"] == 3
    assert set(report["baselines"]) == {"no_rerank", "bm25", "dense"}
    assert set(report["by_category"]) == {"1", "4", "5"}
    assert report["answerable"]["turn_recall@5"] == 1.0
    assert report["answerable"]["session_any@1"] == 1.0
    for summary in (report["answerable"], report["all"], report["baselines"]["bm25"]["all"]):
        assert all(0.0 <= value <= 1.0 for value in summary.values())
    bad = CliRunner().invoke(cli, ["bench", "locomo", "--data", str(data), "--k", "0"])
    assert bad.exit_code == 2


def test_bench_ingests_through_the_public_api(tmp_path: Path) -> None:
    from memvault.bench import locomo

    data = tmp_path / "tiny.json"
    _tiny_locomo(data)
    conversation = locomo.load(data)[0]
    with Memory(":memory:") as memory:
        scope = locomo.ingest(memory, conversation)
        entries = memory.list(scope, order="oldest").entries
    assert [e.metadata["dia_id"] for e in entries] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert entries[2].content == (
        "1:56 pm on 8 May, 2023 Ann: A beagle, he loves the beach. [shares image: a dog on a beach]"
    )
    assert entries[1].context == "Ann: I adopted a puppy called Rex!"
    assert entries[3].context is None
    assert entries[3].created_at.isoformat() == "2023-06-20T10:00:00+00:00"
    assert "never read" not in json.dumps([e.to_dict() for e in entries])


def test_bench_refuses_a_file_that_is_not_locomo(run: Any, tmp_path: Path) -> None:
    for name, data in (("bin", b"\x7fELF\xf0\x28"), ("empty", b"{}"), ("odd", b'[{"x": 1}]')):
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        result = run("bench", "locomo", "--data", str(path), code=2)
        assert "LoCoMo" in result.stderr and "Traceback" not in result.output
