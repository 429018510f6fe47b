"""Issue #29: question ids containing ``/`` open in the runs browser (path or query parameter), and what the
runs browser serves never carries a key (one redaction rule: :func:`tkgqa.credentials.redact_text`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="needs the service extra")
from fastapi.testclient import TestClient

from tkgqa.credentials import REDACTED, redact, redact_text
from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings

KEY = "sk-reliab-canary-0123456789abcdef"
FACT = {"subject": "Barack_Obama", "relation": "Make_a_visit", "object": "China", "start": "2014-11-10"}


def _row(qid: str, **more: object) -> dict[str, object]:
    return {
        "qid": qid, "question": "Who visited China in November 2014?", "predictions": ["Barack Obama"],
        "gold": ["Barack Obama"], "strict_hit": True, "evidence": [FACT], "trace": [], "usage": {}, **more,
    }  # fmt: skip


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    run = tmp_path / "R"
    run.mkdir()
    report = {
        "n": 4,
        "metrics": {},
        "errors": 0,
        "method": {"method": "symbolic"},
        "dataset": {"name": "demo"},
    }
    (run / "report.json").write_text(json.dumps(report), encoding="utf-8")
    rows = [
        _row("../x"),
        _row("a/b"),
        _row(".."),
        _row("k", predictions=[f"the key is {KEY}"], trace=[{"reply": f"Authorization: Bearer {KEY}"}]),
    ]
    (run / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return TestClient(
        create_app(settings=ServiceSettings(runs_dir=str(tmp_path))), base_url="http://127.0.0.1"
    )


@pytest.mark.parametrize(
    ("url", "qid"),
    [
        ("/api/runs/R/questions/..%2Fx", "../x"),
        ("/api/runs/R/questions/a%2Fb", "a/b"),
        ("/api/runs/R/questions/a/b", "a/b"),
        ("/api/runs/R/question?qid=..%2Fx", "../x"),
        ("/api/runs/R/question?qid=..", ".."),
    ],
)
def test_a_question_id_with_a_slash_opens(client: TestClient, url: str, qid: str) -> None:
    res = client.get(url)
    assert res.status_code == 200, res.text
    assert res.json()["qid"] == qid


@pytest.mark.parametrize(
    "url",
    [
        "/api/runs/R/questions/..%2Fx/gold-facts",
        "/api/runs/R/questions/a/b/gold-facts?limit=2",
        "/api/runs/R/gold-facts?qid=..%2Fx",
        "/api/runs/R/gold-facts?qid=..",
    ],
)
def test_gold_facts_of_a_question_id_with_a_slash(client: TestClient, url: str) -> None:
    res = client.get(url)
    assert res.status_code == 200, res.text
    assert res.json()["gold"] == ["Barack Obama"]


def test_a_missing_id_is_still_404(client: TestClient) -> None:
    assert client.get("/api/runs/R/questions/no%2Fsuch").status_code == 404
    assert client.get("/api/runs/R/gold-facts?qid=nope").status_code == 404


def test_served_results_never_carry_a_key(client: TestClient) -> None:
    for url in ("/api/runs/R/results", "/api/runs/R/questions/k", "/api/runs/R", "/api/runs"):
        res = client.get(url)
        assert res.status_code == 200 and KEY not in res.text, url
    assert REDACTED in client.get("/api/runs/R/questions/k").text


@pytest.mark.parametrize(
    "text",
    [
        f"http://127.0.0.1:9/{KEY}/v1",
        "https://user:hunter2hunter2@example.org/v1",
        "http://h/v1?api_key=abc123secret&model=m",
        f"Authorization: Bearer {KEY}",
        f"the model said {KEY}.",
    ],
)
def test_one_redaction_rule_for_text_and_urls(text: str) -> None:
    masked = redact_text(text)
    assert REDACTED in masked
    for secret in (KEY, "hunter2hunter2", "abc123secret"):
        assert secret not in masked
    assert redact({"nested": [text]}) == {"nested": [masked]}
    assert redact_text("model=m&max_tokens=5 a=b") == "model=m&max_tokens=5 a=b"


def test_hostile_lines_in_results_are_skipped_not_raised(client: TestClient, tmp_path: Path) -> None:
    results = tmp_path / "R" / "results.jsonl"
    hostile = ["[" * 100_000, '{"qid": "big", "n": ' + "9" * 5000 + "}", '{"qid": "\xff"}']
    with results.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(hostile) + "\n")
    res = client.get("/api/runs/R/results")
    assert res.status_code == 200 and res.json()["total"] == 5  # the four rows, and the decodable third
    report = tmp_path / "R" / "report.json"
    report.write_text('{"n": ' + "9" * 5000 + "}", encoding="utf-8")
    assert client.get("/api/runs/R").status_code in (200, 400, 422)
