"""Issue #29: no key in any output of a recorded run. A fake OpenAI-compatible server on 127.0.0.1 echoes its
``Authorization`` header and its path — which holds a key, through ``OPENAI_BASE_URL`` — in every reply;
``tkgqa eval --record``, ``tkgqa llm export``, ``tkgqa llm log``, the run folder, the LLM cache and run log
(``$TKGQA_HOME/llm.sqlite``) and the runs browser's API are then searched for the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_http_fake import FakeServer, Reply
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.credentials import REDACTED

KEY = "sk-reliab-canary-0123456789abcdef"


def _dataset(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"qid": f"q{i}", "question": f"Who won in {2000 + i}?", "answers": ["OK"]} for i in range(2)]
    (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (data / "kg.tsv").write_text("Ann\tmeet\tBob\t2001\n", "utf-8")
    return data


def _every_file(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_no_key_in_any_output_of_a_recorded_run(
    tmp_path: Path, tkgqa_home: Path, fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load_commands()
    fake_server.script(Reply(echo=True))
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake_server.url}/{KEY}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    data = _dataset(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    run, cassette, exported = out / "run", out / "rec.jsonl", out / "export.jsonl"
    args = ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "llm_only", "--no-progress"]
    runner = CliRunner()
    outputs: dict[str, str] = {}
    result = runner.invoke(
        app, [*args, "--llm", "openai:m", "--output", str(run), "--record", str(cassette), "--json"]
    )
    assert result.exit_code == 0, result.output
    outputs["eval"] = result.output
    assert fake_server.requests and KEY in fake_server.requests[0]["path"]  # the key did reach the server
    assert KEY in json.dumps(fake_server.requests[0]["headers"])
    for name, command in {
        "export": ["llm", "export", str(run), "--output", str(exported)],
        "export stdout": ["llm", "export", str(run)],
        "log": ["llm", "log", "--qid", "q0", "--json"],
        "log text": ["llm", "log", "--qid", "q0"],
    }.items():
        result = runner.invoke(app, command)
        assert result.exit_code == 0, result.output
        outputs[name] = result.output
    files = _every_file(out) | _every_file(tkgqa_home)  # the LLM cache and run log too
    assert str(cassette) in files and str(exported) in files and str(run / "results.jsonl") in files
    leaks = [where for where, text in {**outputs, **files}.items() if KEY.encode() in _bytes(text)]
    assert leaks == []
    assert REDACTED.encode() in files[str(cassette)]  # the echo was kept, the key masked
    assert b"called at /***/v1" in files[str(cassette)]
    pytest.importorskip("fastapi", reason="needs the service extra")
    from fastapi.testclient import TestClient

    from tkgqa.service import create_app
    from tkgqa.service.policy import ServiceSettings

    client = TestClient(create_app(settings=ServiceSettings(runs_dir=str(out))), base_url="http://127.0.0.1")
    for url in ("/api/runs", "/api/runs/run", "/api/runs/run/results", "/api/runs/run/questions/q0"):
        res = client.get(url)
        assert res.status_code == 200 and KEY not in res.text, url


def _bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "replace")
