"""What the web UI reads besides answers (issue 22): ``/api/status`` (version, the KG's fingerprint, models
loading), the ``loading`` event of ``/api/ask/stream`` while a model loads (a fake slow MiniLM through the
real load site), and the gold-answer facts of a run row."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient
from slow_loader import slow_minilm
from stubs import make_run
from test_service_api import events_of

from tkgqa import __version__
from tkgqa.loading import loading_now, model_loading
from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings

BASE = "http://127.0.0.1"


def _client(**settings: Any) -> TestClient:
    return TestClient(create_app(settings=ServiceSettings(**settings)), base_url=BASE)


@pytest.fixture(scope="module")
def runs_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("runs")
    make_run(root)
    other = make_run(root, "other_kg")
    rows = [json.loads(line) for line in (other / "results.jsonl").read_text().splitlines()[:2]]
    (other / "results.jsonl").write_text("\n".join(json.dumps(r | {"kg": "multitq"}) for r in rows))
    with _client(runs_dir=str(root)) as c:
        yield c


def test_status_names_the_version_and_the_kg_it_serves() -> None:
    with _client(allow_append=True, ephemeral_append=True) as c, _client() as twin:
        status = c.get("/api/status").json()
        assert status["version"] == __version__ and status["kg"] == "demo" and status["loading"] == []
        assert re.fullmatch(r"[0-9a-f]{16}", status["kg_fingerprint"])
        assert twin.get("/api/status").json()["kg_fingerprint"] == status["kg_fingerprint"]  # same facts
        line = "Width Tester\tMake a visit\tPeru\t2015-05-01"
        assert c.post("/api/kg/facts", json={"lines": line}).json()["added"] == 1
        after = c.get("/api/status").json()
        assert after["kg_fingerprint"] != status["kg_fingerprint"] and after["facts"] == status["facts"] + 1


def test_a_model_load_is_listed_while_it_runs() -> None:
    assert loading_now() == []
    with model_loading("Some model (test)"):
        (entry,) = loading_now()
        assert entry["what"] == "Some model (test)" and int(str(entry["elapsed_ms"])) >= 0
    assert loading_now() == []


def test_the_stream_says_which_model_is_loading() -> None:
    with slow_minilm() as method, _client(allow_methods=[method]) as c:
        body = {"question": "Who visited China?", "method": method}
        with c.stream("POST", "/api/ask/stream", json=body) as res:
            events = events_of(res.read().decode())
    names = [e for e, _ in events]
    loading = [d["loading"] for e, d in events if e == "loading"]
    assert names[-1] == "answer" and events[-1][1]["answers"] == ["Barack Obama"]
    assert loading[0][0]["what"] == "MiniLM (sentence-transformers)" and loading[-1] == []
    assert names.index("loading") < names.index("answer")
    progress = [d for e, d in events if e == "progress"]
    assert any(p["loading"] for p in progress)  # the load took seconds: progress said so meanwhile


def test_a_run_row_gets_the_facts_of_its_gold_answer(runs_client: TestClient) -> None:
    right = runs_client.get("/api/runs/mtq_symbolic/questions/1/gold-facts").json()
    assert right["gold"] == ["Barack Obama"] and right["entities"] == ["China"]
    assert 0 < len(right["facts"]) <= 3 <= right["total"]
    for f in right["facts"]:
        assert {f["subject_label"], f["object_label"]} == {"Barack Obama", "China"}
    assert right["facts"][0]["start"].startswith("2014-11")  # inside the question's time first
    assert "does not record its KG" in right["note"]
    none = runs_client.get("/api/runs/mtq_symbolic/questions/3/gold-facts").json()
    assert none["facts"] == [] and none["note"].startswith("no fact found")
    other = runs_client.get("/api/runs/other_kg/questions/1/gold-facts?limit=5").json()
    assert other["facts"] == [] and "the run used the KG multitq" in other["note"]
    assert runs_client.get("/api/runs/mtq_symbolic/questions/99/gold-facts").status_code == 404
    assert runs_client.get("/api/runs/mtq_symbolic/questions/1/gold-facts?limit=999").status_code == 422


def test_gold_facts_need_a_runs_folder(tmp_path: Path) -> None:
    with _client() as c:
        assert c.get("/api/runs/x/questions/1/gold-facts").status_code == 404
