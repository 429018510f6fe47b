"""The HTTP service (``tkgqa.service``) over the bundled demo KG: in-process with FastAPI's TestClient, and
one end-to-end run of ``tkgqa serve`` as a subprocess over real HTTP."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient

from tkgqa.api.resolve import answer_payload
from tkgqa.cli import app as cli_app
from tkgqa.credentials import redact
from tkgqa.service import create_app

QUESTION = "Who visited China in November 2014?"
ANSWER_KEYS = {"answers", "evidence", "trace", "usage", "abstained", "reason", "latency_ms"}
ANSWER_KEYS |= {"question", "method", "llm", "kg", "grounded", "program", "missing"}
FACT_KEYS = {
    "subject",
    "relation",
    "object",
    "start",
    "end",
    "subject_label",
    "relation_label",
    "object_label",
}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


def test_health(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok"
    assert body["kg"] == "demo" and body["facts"] == 400


def test_kg_info_matches_the_cli_summary(client: TestClient) -> None:
    body = client.get("/api/kg").json()
    assert body["facts"] == 400 and body["entities"] == 198 and body["relations"] == 27
    assert (body["start"], body["end"]) == ("1964", "2025-08-15")
    top = body["top_relations"]
    assert len(top) == 10 and top[0]["count"] >= top[-1]["count"]
    assert {r["relation"] for r in top[:2]} == {"Host a visit", "Make a visit"}
    assert len(client.get("/api/kg", params={"top": 3}).json()["top_relations"]) == 3


def test_ask_symbolic_on_the_demo_kg(client: TestClient) -> None:
    res = client.post("/api/ask", json={"question": QUESTION, "method": "symbolic"})
    assert res.status_code == 200
    body = res.json()
    assert set(body) >= ANSWER_KEYS
    assert body["answers"] == ["Barack Obama"]
    assert not body["abstained"]
    assert body["evidence"] and all(set(f) == FACT_KEYS for f in body["evidence"])
    assert body["evidence"][0] == {
        "subject": "Barack Obama",
        "relation": "Make a visit",
        "object": "China",
        "start": "2014-11-10",
        "end": "2014-11-10",
        "subject_label": "Barack Obama",
        "relation_label": "Make a visit",
        "object_label": "China",
    }
    assert (body["question"], body["method"], body["llm"], body["kg"]) == (QUESTION, "symbolic", None, "demo")
    assert body["grounded"] is True and body["program"]["counted"] is True
    assert any("program" in step for step in body["trace"])
    assert body["usage"]["llm_calls"] == 0
    assert isinstance(body["latency_ms"], float) and body["latency_ms"] >= 0


def test_ask_uses_the_default_method_and_method_specs(client: TestClient) -> None:
    assert client.post("/api/ask", json={"question": QUESTION}).json()["answers"] == ["Barack Obama"]
    body = client.post("/api/ask", json={"question": QUESTION, "method": "ari:policy=symbolic"}).json()
    assert body["answers"] == ["Barack Obama"]
    assert body["trace"][0]["policy"] == "symbolic"


def test_ask_with_an_llm_method_and_the_fake_llm(client: TestClient) -> None:
    body = client.post("/api/ask", json={"question": QUESTION, "method": "llm_only", "llm": "fake"}).json()
    assert body["usage"]["llm_calls"] == 1


def test_ask_json_matches_the_cli_json(client: TestClient) -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands

    _load_commands()
    out = CliRunner().invoke(cli_app, ["ask", QUESTION, "--json"])
    assert out.exit_code == 0, out.output
    cli = json.loads(out.stdout)
    api = client.post("/api/ask", json={"question": QUESTION}).json()
    assert set(cli) == set(api)
    cli.pop("latency_ms"), api.pop("latency_ms")
    assert cli == api


def test_unknown_entity_is_404_with_suggestions(client: TestClient) -> None:
    res = client.get(
        "/api/kg/query", params={"op": "get_tail_entity", "head": "Barak Obma", "rel": "Make a visit"}
    )
    assert res.status_code == 404
    body = res.json()
    assert body["type"] == "NotFoundError"
    assert "Barack Obama" in body["suggestions"]
    assert "Barak Obma" in body["error"]


def test_bad_method_is_a_clear_4xx(client: TestClient) -> None:
    res = client.post("/api/ask", json={"question": QUESTION, "method": "no_such_method"})
    assert res.status_code == 400
    body = res.json()
    assert body["type"] == "ConfigError"
    assert "unknown method 'no_such_method'" in body["error"] and "symbolic" in body["error"]
    res = client.post("/api/ask", json={"question": QUESTION, "method": "llm_only"})  # needs an LLM
    assert res.status_code == 400 and "LLM" in res.json()["error"]


def test_invalid_requests_are_422_json(client: TestClient) -> None:
    for payload in ({}, {"question": QUESTION, "options": {"x": [1]}}):
        res = client.post("/api/ask", json=payload)
        assert res.status_code == 422, payload
        assert res.json()["type"] == "ValidationError"


def test_kg_query_operators(client: TestClient) -> None:
    params = {"op": "get_tail_entity", "head": "barack obama", "rel": "make a visit", "time": "2016"}
    body = client.get("/api/kg/query", params=params).json()
    assert body["count"] == 4 and {f["object"] for f in body["facts"]} == {"Cuba", "Germany", "China"}
    first = client.get("/api/kg/query", params={"op": "get_first", "head": "Barack Obama"}).json()
    assert first["facts"][0]["start"] == "1981"
    limited = client.get("/api/kg/query", params={**params, "limit": 1}).json()
    assert limited["count"] == 4 and len(limited["facts"]) == 1
    bad = client.get("/api/kg/query", params={"op": "get_between", "head": "Barack Obama", "time": "2010"})
    assert bad.status_code == 400 and "time2" in bad.json()["error"]
    assert client.get("/api/kg/query", params={"op": "bogus", "head": "Cuba"}).status_code == 400


def test_entity_autocomplete_ranks_candidates(client: TestClient) -> None:
    names = [
        c["name"] for c in client.get("/api/entities", params={"q": "angla merkel"}).json()["candidates"]
    ]
    assert names[0] == "Angela Merkel"
    exact = client.get("/api/entities", params={"q": "barack obama"}).json()["candidates"]
    assert exact[0] == {"name": "Barack Obama", "label": "Barack Obama", "score": 1.0, "method": "exact"}
    prefix = client.get("/api/entities", params={"q": "bar", "k": 3}).json()["candidates"]
    assert prefix[0]["name"] == "Barack Obama" and len(prefix) <= 3
    scores = [c["score"] for c in prefix]
    assert scores == sorted(scores, reverse=True)


def test_methods_and_examples(client: TestClient) -> None:
    body = client.get("/api/methods").json()
    by_name = {m["name"]: m for m in body["methods"]}
    assert body["default"] == "symbolic"
    assert {"symbolic", "ari", "timer4"} <= set(by_name)
    assert by_name["symbolic"]["uses_llm"] is False and by_name["ari"]["uses_llm"] is True
    assert by_name["symbolic"]["description"].startswith("Offline reasoner")
    assert all(len(m["description"].splitlines()) == 1 for m in body["methods"])
    assert "fake" not in body["llm_backends"] and "fake" not in body["llm_presets"]  # hidden outside tests
    examples = client.get("/api/examples").json()["examples"]
    assert examples[0]["question"] == QUESTION and examples[0]["answers"] == ["Barack Obama"]


def test_ui_page_is_self_contained(client: TestClient) -> None:
    res = client.get("/")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/html")
    html = res.text
    assert '<form id="ask-form"' in html and 'id="question"' in html
    assert 'id="method"' in html and 'id="llm"' in html and 'id="evidence"' in html
    script = client.get("/static/app.js").text
    assert "/api/ask" in script and "/api/examples" in script
    assert "/static/vendor/echarts.min.js" in html
    echarts = client.get("/static/vendor/echarts.min.js")
    assert echarts.status_code == 200 and len(echarts.content) > 500_000  # vendored Apache ECharts, no CDN
    assert "Apache License" in client.get("/static/vendor/echarts.LICENSE.txt").text
    for text in (html, script, client.get("/static/app.css").text):
        assert "http://" not in text and "https://" not in text  # no CDN, no network


def test_bad_default_method_fails_at_startup() -> None:
    from tkgqa.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown method"):
        create_app(default_method="nope")


def test_secrets_are_masked() -> None:
    text = "key sk-abcdefghijklmnopqrst used"
    data = {"api_key": "abc", "nested": [{"Authorization": "x"}], "text": text, "n": 1}
    assert redact(data) == {
        "api_key": "***",
        "nested": [{"Authorization": "***"}],
        "text": "key *** used",
        "n": 1,
    }
    from tkgqa.methods.base import Answer

    trace = [{"api_key": "sk-secretsecretsecret", "when": object()}]
    payload = answer_payload(Answer(["a"], trace=trace), 1.0)
    assert payload["trace"][0]["api_key"] == "***" and isinstance(payload["trace"][0]["when"], str)


def test_missing_service_extra_is_a_clear_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import tkgqa.service as service
    from tkgqa.errors import ConfigError

    monkeypatch.setattr(service.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r"tkgqa\[service\]"):
        service.require_service(server=True)


BLOCK_FASTAPI = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"fastapi", "uvicorn", "starlette"}:
            raise ModuleNotFoundError(name, name=name)
sys.meta_path.insert(0, Block())
import tkgqa, tkgqa.service, tkgqa.api.resolve, tkgqa.cli.ask_cmd
print("ok")
"""


def test_core_and_ask_import_without_fastapi() -> None:
    out = subprocess.run([sys.executable, "-c", BLOCK_FASTAPI], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --- tkgqa serve over real HTTP ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(url: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read().decode())


def test_tkgqa_serve_subprocess_over_http() -> None:
    if importlib.util.find_spec("uvicorn") is None:
        pytest.skip("uvicorn is not installed (install tkgqa[service]); cannot run `tkgqa serve`")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "tkgqa", "serve", "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                output = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"tkgqa serve exited with {proc.returncode}: {output}")
            try:
                health = _http(base + "/health")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    pytest.fail("tkgqa serve did not answer /health within 60 s")
                time.sleep(0.2)
        assert health["status"] == "ok"
        body = _http(base + "/api/ask", {"question": QUESTION})
        assert body["answers"] == ["Barack Obama"]
        assert body["evidence"][0]["start"] == "2014-11-10"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
