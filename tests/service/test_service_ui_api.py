"""What the web UI relies on at the HTTP level: a Content-Security-Policy without inline script on every
response, evidence for every answer, neighbour paging and filters, the method catalogue's LLM flag and
presets, a paired diff of two runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient
from stubs import make_run

from tkgqa.eval.report import compare_runs
from tkgqa.service import create_app
from tkgqa.service.headers import CSP, csp_with_script_hashes
from tkgqa.service.policy import ServiceSettings


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(settings=ServiceSettings(allow_append=True, ephemeral_append=True))) as c:
        yield c


def _directive(csp: str, name: str) -> list[str]:
    return next(d.split() for d in csp.split(";") if d.strip().startswith(name + " "))


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/api/kg", "/health", "/no/such/path"])
def test_every_response_has_a_csp_forbidding_inline_script(client: TestClient, path: str) -> None:
    res = client.get(path)
    csp = res.headers["content-security-policy"]
    assert _directive(csp, "script-src") == ["script-src", "'self'"]
    assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp
    assert res.headers["x-content-type-options"] == "nosniff"


def test_the_page_has_no_inline_script_nor_remote_asset(client: TestClient) -> None:
    page = client.get("/").text
    assert "<script>" not in page and " on" + "click=" not in page and "javascript:" not in page
    assert "http://" not in page and "https://" not in page  # everything served locally


def test_refusals_of_the_guard_carry_the_headers_too(client: TestClient) -> None:
    res = client.post("/api/ask", content=b"\xff\xfe", headers={"Content-Type": "application/json"})
    assert res.status_code == 422 and res.headers["content-security-policy"] == CSP


def test_an_inline_script_is_allowed_only_by_its_hash() -> None:
    csp = csp_with_script_hashes("<html><script>boot()</script><script src='/x.js'></script></html>")
    script = _directive(csp, "script-src")
    assert script[:2] == ["script-src", "'self'"] and len(script) == 3 and script[2].startswith("'sha256-")
    assert "'unsafe-inline'" not in csp.split("style-src")[0]


VISITS = "\n".join(f"Guest {i:02d}\tMake a visit\tJapan\t2013-03-{1 + i % 28:02d}" for i in range(56))


@pytest.fixture(scope="module")
def busy(client: TestClient) -> TestClient:
    assert client.post("/api/kg/facts", json={"lines": VISITS}).json()["added"] == 56
    return client


def test_every_answer_gets_evidence_or_is_counted(busy: TestClient) -> None:
    body = busy.post("/api/ask", json={"question": "Who visited Japan in March 2013?"}).json()
    cover = body["evidence_cover"]
    assert cover["answers"] == len(body["answers"]) >= 56
    assert len(body["evidence"]) == 50 and cover["with_evidence"] == 50  # one fact each, 50 at most
    assert len(cover["without"]) == cover["answers"] - 50
    more = busy.post(
        "/api/ask", json={"question": "Who visited Japan in March 2013?", "options": {"max_evidence": 1000}}
    ).json()
    assert more["evidence_cover"]["with_evidence"] == more["evidence_cover"]["answers"]
    assert more["evidence_cover"]["without"] == []


def test_a_few_answers_each_get_their_facts(client: TestClient) -> None:
    body = client.post("/api/ask", json={"question": "Who visited China in November 2014?"}).json()
    cover = body["evidence_cover"]
    assert cover["answers"] == len(body["answers"]) and cover["with_evidence"] == cover["answers"]


def test_a_first_question_carries_its_candidates_and_reference(client: TestClient) -> None:
    body = client.post("/api/ask", json={"question": "After Barack Obama, who was the first to visit Cuba?"})
    decision = body.json()["decision"]
    assert decision["pool"] >= len(decision["candidates"]) >= 2
    assert decision["reference"] and decision["reference"][0]["subject_label"] == "Barack Obama"
    assert all({"subject_label", "object_label", "start"} <= set(f) for f in decision["candidates"])


def test_neighbours_are_paged_counted_and_filtered(busy: TestClient) -> None:
    page1 = busy.get("/api/kg/neighbors", params={"entity": "Japan", "limit": 30}).json()
    total = page1["n_facts"]
    assert total > 60 and len(page1["facts"]) == 30 and page1["offset"] == 0
    page2 = busy.get("/api/kg/neighbors", params={"entity": "Japan", "limit": 30, "offset": 30}).json()
    assert page2["n_facts"] == total and page2["facts"][0] != page1["facts"][0] and page2["offset"] == 30
    visits = busy.get("/api/kg/neighbors", params={"entity": "Japan", "relation": "Make a visit"}).json()
    assert 56 <= visits["n_facts"] < total
    assert {f["relation_label"] for f in visits["facts"]} == {"Make a visit"}
    one = busy.get("/api/kg/neighbors", params={"entity": "Japan", "counterpart": "Guest 07"}).json()
    assert one["n_facts"] == 1 and one["facts"][0]["subject_label"] == "Guest 07"
    assert sum(n for _, n in page1["years"]) == total and page1["relations"][0]["facts"] >= 56


def test_methods_say_which_need_an_llm_and_whether_the_server_has_one() -> None:
    with TestClient(create_app()) as c:
        body = c.get("/api/methods").json()
    flags = {m["name"]: m["needs_llm"] for m in body["methods"]}
    assert flags["symbolic"] is False and flags["ari"] is True and flags["llm_only"] is True
    presets = {p["name"]: p for p in body["preset_details"]}
    assert presets["ari:policy=symbolic"]["needs_llm"] is False
    assert "no LLM" in presets["ari:policy=symbolic"]["description"]
    assert body["llm_available"] is False


def test_needs_llm_reads_the_options_that_switch_the_llm_off() -> None:
    from tkgqa.api.resolve import needs_llm

    assert needs_llm("ari") and needs_llm("hybrid") and needs_llm("ari:t_max=3")
    assert not needs_llm("ari:policy=symbolic") and not needs_llm("ari", {"policy": "symbolic"})
    assert not needs_llm("symbolic") and not needs_llm("ari:oracle")


def test_two_runs_are_diffed_per_question(tmp_path: Path) -> None:
    make_run(tmp_path, "a")
    b = make_run(tmp_path, "b")
    rows = [json.loads(x) for x in (b / "results.jsonl").read_text().splitlines()[:4]]
    rows[0].update(predictions=["Xi Jinping"], strict_hit=False)
    (b / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with TestClient(create_app(settings=ServiceSettings(runs_dir=str(tmp_path)))) as c:
        diff = c.get("/api/runs/a/diff/b").json()
        row = c.get("/api/runs/b/questions/1").json()
        missing = c.get("/api/runs/b/questions/99")
        outside = c.get("/api/runs/a/diff/no_such_run")
    expected = compare_runs(tmp_path / "a", tmp_path / "b")
    assert diff["mcnemar"] == expected["mcnemar"] and diff["n_common"] == 4
    assert diff["run_a"] == "a" and str(tmp_path) not in json.dumps(diff)  # names, never server paths
    assert diff["questions"][0] == {
        "qid": "1",
        "question": "Who visited China in November 2014?",
        "gold": ["Barack Obama"],
        "a": {"outcome": "correct", "answers": ["Barack Obama"]},
        "b": {"outcome": "wrong", "answers": ["Xi Jinping"]},
        "change": "only_a_right",
    }
    assert row["outcome"] == "wrong" and row["gold"] == ["Barack Obama"]
    assert missing.status_code == 404 and outside.status_code == 404


def test_a_run_written_before_rows_had_every_key_still_browses(tmp_path: Path) -> None:
    make_run(tmp_path, "a")
    old = make_run(tmp_path, "old")
    keep = ("qid", "question", "predictions", "gold", "strict_hit", "abstained", "reason")
    rows = [json.loads(x) for x in (old / "results.jsonl").read_text().splitlines()[:3]]
    rows = [{k: r[k] for k in keep if k in r} for r in rows]
    rows[2].update(predictions=[], abstained=True, reason="the program found no answer in the KG")
    (old / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with TestClient(create_app(settings=ServiceSettings(runs_dir=str(tmp_path)))) as c:
        report = c.get("/api/runs/old").json()
        page = c.get("/api/runs/old/results", params={"outcome": "abstained"}).json()
        diff = c.get("/api/runs/a/diff/old").json()
    assert report["counts"]["all"] == 3 and report["counts"]["abstained"] == 1
    view = page["results"][0]
    assert view["reason"] == "the program found no answer in the KG"
    assert view["usage"] == {} and view["kg"] is None and view["latency_ms"] == 0.0
    assert diff["n_common"] == 3 and {q["b"]["outcome"] for q in diff["questions"]} >= {"abstained"}


def test_an_unrecognised_name_gets_a_did_you_mean(client: TestClient) -> None:
    body = client.post("/api/ask", json={"question": "Who visited Irak in 2014?"}).json()
    assert body["abstained"] and {"mention": "Irak", "label": "Iran"} in body["suggestions"]
    found = client.post("/api/ask", json={"question": "Who visited China in November 2014?"}).json()
    assert found.get("suggestions") is None
