"""What clients of the service may not do (issue #12): one error shape for every failure, a size limit, no
paths or unbounded numbers from requests, server-side allow-lists, an API token beyond loopback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient

from tkgqa.errors import ConfigError
from tkgqa.methods.client import client_options
from tkgqa.methods.symbolic import SymbolicConfig
from tkgqa.service import create_app
from tkgqa.service.errors import NotAllowedError
from tkgqa.service.guard import json_problem
from tkgqa.service.policy import RequestPolicy, ServiceSettings, forbidden_option
from tkgqa.service.server import check_binding, is_loopback

QUESTION = "Who visited China in November 2014?"
JSON = {"Content-Type": "application/json"}
TOKEN = "t0ken-for-the-tests-0123456789"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app()) as c:
        yield c


def assert_error(res: Any, status: int, kind: str) -> dict[str, Any]:
    assert res.status_code == status, res.text
    body = res.json()
    assert set(body) <= {"error", "type", "suggestions"} and body["type"] == kind, body
    assert isinstance(body["error"], str) and 0 < len(body["error"]) <= 600
    return dict(body)


@pytest.mark.parametrize(
    ("raw", "status", "kind"),
    [
        (b'{"question": "\xff\xfe"}', 422, "ValidationError"),  # not UTF-8
        (b"[" * 100_000, 413, "PayloadTooLarge"),
        (b"[" * 40 + b"]" * 40, 422, "ValidationError"),  # nested deeper than 32
        (b'{"question": {"a": ' * 20 + b"1" + b"}" * 21, 422, "ValidationError"),
        (b"not json", 422, "ValidationError"),
        (b"", 422, "ValidationError"),
        (b'{"question": ["a list"]}', 422, "ValidationError"),
        (b'{"question": "x' + b"y" * 10_000_000 + b'"}', 413, "PayloadTooLarge"),  # 10 MB: not parsed
    ],
)
def test_every_bad_body_gets_the_one_error_shape(
    client: TestClient, raw: bytes, status: int, kind: str
) -> None:
    res = client.post("/api/ask", content=raw, headers=JSON)
    assert_error(res, status, kind)
    assert len(res.content) < 1000  # never an echo of the input


def test_unknown_paths_and_verbs_use_the_error_shape(client: TestClient) -> None:
    assert_error(client.get("/no/such/path"), 404, "NotFound")
    assert_error(client.put("/api/ask"), 405, "MethodNotAllowed")
    assert_error(
        client.get("/api/kg/query", params={"op": "get_first", "head": "x" * 5000}), 422, "ValidationError"
    )
    res = client.post("/api/ask", content=b"{}", headers={**JSON, "Content-Length": "abc"})
    assert res.status_code in (400, 422) and res.json()["type"] in ("BadRequest", "ValidationError")


def test_json_problem_ignores_brackets_inside_strings() -> None:
    assert json_problem(b'{"q": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 32) is None
    assert json_problem(b"[[[]]]", 2) == "the JSON body is nested deeper than 2 levels"
    assert "not UTF-8" in str(json_problem(b"\xc3", 32))


def test_a_lone_surrogate_in_the_question_is_answered_not_a_500(client: TestClient) -> None:
    raw = json.dumps(
        {"question": "Who visited \ud800 China in November 2014?"}
    ).encode()  # ASCII \\ud800 escape
    res = client.post("/api/ask", content=raw, headers=JSON)
    assert res.status_code == 200, res.text
    assert res.json()["answers"] == ["Barack Obama"]


def test_paths_are_never_taken_from_requests(client: TestClient, tmp_path: Path) -> None:
    """options.memory used to open any file: existing, missing and non-JSON files answered differently."""
    existing = tmp_path / "memory.json"
    existing.write_text("[1, 2]")
    bodies = []
    for path in (str(existing), str(tmp_path / "missing.json"), "/etc/passwd"):
        res = client.post(
            "/api/ask", json={"question": QUESTION, "method": "ari", "options": {"memory": path}}
        )
        bodies.append(assert_error(res, 403, "NotAllowed"))
    assert bodies[0] == bodies[1] == bodies[2]  # no file-existence oracle
    res = client.post(
        "/api/ask", json={"question": QUESTION, "method": "llm_only", "llm": "llamacpp:/etc/passwd"}
    )
    assert_error(res, 403, "NotAllowed")
    res = client.post("/api/ask", json={"question": QUESTION, "method": "ari:memory=/etc/passwd"})
    assert_error(res, 403, "NotAllowed")
    body = {"question": QUESTION, "method": "ari", "options": {"policy": "../../etc/passwd"}}
    res = client.post("/api/ask", json=body)
    assert "paths are never taken" in assert_error(res, 400, "ConfigError")["error"]


def test_clients_cannot_pick_another_model_or_unbounded_numbers(client: TestClient) -> None:
    res = client.post("/api/ask", json={"question": QUESTION, "method": "llm_only", "llm": "openai:gpt-4o"})
    assert "--allow-llm" in assert_error(res, 403, "NotAllowed")["error"]
    for value in (1_000_000_000, "1000000000", 1e308):
        body = {"question": QUESTION, "method": "llm_only", "llm": "fake", "options": {"max_tokens": value}}
        assert "out of range" in assert_error(client.post("/api/ask", json=body), 400, "ConfigError")["error"]
    res = client.post(
        "/api/ask", content=b'{"question": "q", "method": "ari", "options": {"top_k": NaN}}', headers=JSON
    )
    assert_error(res, 400, "ConfigError")
    res = client.post("/api/ask", json={"question": QUESTION, "options": {"k" * 5000: 1}})
    assert_error(res, 403, "NotAllowed")
    ok = {"question": QUESTION, "method": "llm_only", "llm": "fake", "options": {"max_tokens": 32}}
    assert client.post("/api/ask", json=ok).status_code == 200


def test_unknown_method_is_400_and_an_unlisted_spec_403(client: TestClient) -> None:
    assert (
        "unknown method"
        in assert_error(
            client.post("/api/ask", json={"question": QUESTION, "method": "nope"}), 400, "ConfigError"
        )["error"]
    )
    assert (
        client.post("/api/ask", json={"question": QUESTION, "method": "ari:policy=symbolic"}).status_code
        == 200
    )


def test_the_operator_sets_the_allow_lists() -> None:
    settings = ServiceSettings(allow_methods=("symbolic",), allow_llms=("fake",), allow_options=("relax",))
    with TestClient(create_app(settings=settings)) as c:
        assert_error(c.post("/api/ask", json={"question": QUESTION, "method": "ari"}), 403, "NotAllowed")
        res = c.post("/api/ask", json={"question": QUESTION, "options": {"max_evidence": 3}})
        assert_error(res, 403, "NotAllowed")
        assert c.post("/api/ask", json={"question": QUESTION, "options": {"relax": False}}).status_code == 200
        info = c.get("/api/methods").json()
        assert [m["name"] for m in info["methods"]] == ["symbolic"] and info["presets"] == []
        assert info["allowed"]["options"] == ["relax"] and info["llm_presets"] == []  # fake: only for tests
    with pytest.raises(ConfigError, match="never taken from requests"):
        ServiceSettings(allow_options=("memory",))
    with pytest.raises(ConfigError, match="16 characters"):
        ServiceSettings(api_token="short")
    assert (
        forbidden_option("kg_path") and forbidden_option("embedder") and not forbidden_option("path_policy")
    )


def test_an_allowed_option_no_allowed_method_has_stops_the_start() -> None:
    # a typo in --allow-option let clients set nothing while the operator believed otherwise
    only_symbolic = ServiceSettings(allow_methods=("symbolic",), allow_options=("relx",))
    with pytest.raises(ConfigError, match=r"--allow-option relx: .* \(did you mean relax\?\)"):
        create_app(settings=only_symbolic)
    ari_setting = ServiceSettings(allow_methods=("symbolic",), allow_options=("t_max",))
    with pytest.raises(ConfigError, match="no method this server allows has such a setting"):
        create_app(settings=ari_setting)  # ARI has it, but this server serves only symbolic
    with TestClient(create_app(settings=ServiceSettings(allow_options=("t_max",)))) as c:  # every method
        assert c.get("/api/methods").json()["allowed"]["options"] == ["t_max"]


def test_each_method_takes_the_options_its_config_marks(client: TestClient) -> None:
    allowed = client.get("/api/methods").json()["allowed"]
    assert allowed["method_options"]["symbolic"] == sorted(client_options(SymbolicConfig))
    assert {"policy", "top_k", "max_tokens"} <= set(allowed["method_options"]["ari"])
    assert set(allowed["options"]) == {k for keys in allowed["method_options"].values() for k in keys}
    res = client.post("/api/ask", json={"question": QUESTION, "options": {"top_k": 5}})  # an ARI option
    error = assert_error(res, 403, "NotAllowed")["error"]
    assert "for method 'symbolic'" in error and "relation_candidates, relax, set_order" in error
    ok = {"question": QUESTION, "options": {"relation_candidates": 3, "relax": False}}
    assert client.post("/api/ask", json=ok).status_code == 200


def test_a_marked_option_that_names_a_file_is_still_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import tkgqa.methods.client

    monkeypatch.setattr(tkgqa.methods.client, "method_client_options", lambda name: ("relax", "model_path"))
    policy = RequestPolicy(ServiceSettings(), "symbolic", None)
    assert policy.options("symbolic") == {"relax"}
    with pytest.raises(NotAllowedError, match="names a file"):
        policy.check_options({"model_path": "x"}, "symbolic")


def test_an_api_token_guards_the_api_but_not_health() -> None:
    with TestClient(create_app(settings=ServiceSettings(api_token=TOKEN))) as c:
        res = c.post("/api/ask", json={"question": QUESTION})
        assert_error(res, 401, "Unauthorized")
        assert res.headers["WWW-Authenticate"] == "Bearer"
        assert_error(
            c.get("/api/kg", headers={"Authorization": "Bearer wrong-token-0123456789"}), 401, "Unauthorized"
        )
        assert c.get("/api/kg", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert c.get("/api/kg", headers={"X-API-Token": TOKEN}).status_code == 200
        assert c.get("/health").json()["status"] == "ok"
        schema = c.get("/openapi.json").json()
        assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert schema["paths"]["/api/ask"]["post"]["security"] == [{"bearer": []}]


def test_binding_beyond_loopback_needs_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.org")
    with pytest.raises(ConfigError, match="API token"):
        check_binding("0.0.0.0", None)
    check_binding("0.0.0.0", TOKEN)
    check_binding("127.0.0.1", None)


def test_serve_refuses_a_public_host_without_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands
    from tkgqa.cli import app as cli_app

    _load_commands()
    monkeypatch.delenv("TKGQA_API_TOKEN", raising=False)
    out = CliRunner().invoke(cli_app, ["serve", "--host", "0.0.0.0", "--port", "1"])
    assert isinstance(out.exception, ConfigError) and "API token" in str(out.exception)


def test_openapi_documents_the_error_shape_and_limits(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    ask = schema["paths"]["/api/ask"]["post"]
    assert {"403", "413", "422", "429", "504"} <= set(ask["responses"])
    assert "ErrorBody" in schema["components"]["schemas"]
    assert "timeout_s" in schema["components"]["schemas"]["AskRequest"]["properties"]


@given(
    text=st.text(min_size=1, max_size=300), method=st.sampled_from([None, "symbolic", "ari:policy=symbolic"])
)
@settings(max_examples=int(os.environ.get("TKGQA_FUZZ_EXAMPLES", "40")), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
def test_any_question_text_gets_an_answer_or_a_4xx_never_a_500(
    client: TestClient, text: str, method: str | None
) -> None:
    raw = json.dumps({"question": text, "method": method}).encode()  # lone surrogates as \\ud800 escapes
    res = client.post("/api/ask", content=raw, headers=JSON)
    assert res.status_code in (200, 400, 422), res.text
    if res.status_code != 200:
        assert set(res.json()) <= {"error", "type", "suggestions"}
