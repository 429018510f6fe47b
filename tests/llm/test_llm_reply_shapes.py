"""Malformed replies of an OpenAI-compatible server (issue #23, item 6), against the scripted HTTP server:
``usage`` is read by type and never raises (a count that is not one is estimated locally), a reply body
that is not valid UTF-8 is read with U+FFFD (as the README promises), ``tkgqa ask`` shows no traceback and
``tkgqa serve`` answers 502 LLMError for a reply it cannot use, never a 500."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llm_http_fake import FakeServer, Reply, completion

from cli_run import run_cli
from tkgqa.errors import LLMError
from tkgqa.llm.openai_backend import MAX_USAGE_TOKENS, OpenAIBackend, token_count

QUESTION = "Who visited China in November 2014?"


def backend(server: FakeServer) -> OpenAIBackend:
    return OpenAIBackend("m", base_url=server.url, max_retries=0, sleep=lambda _s: None)


def with_usage(usage: Any, text: str = "Paris") -> dict[str, Any]:
    body = completion(text)
    body["usage"] = usage
    return body


BAD_USAGES = [
    "lots",
    ["prompt_tokens", 3],
    42,
    {"prompt_tokens": "abc", "completion_tokens": "x"},
    {"prompt_tokens": 1e308, "completion_tokens": 1e308},
    {"prompt_tokens": -5, "completion_tokens": -1},
    {"prompt_tokens": True, "completion_tokens": False},
    {"prompt_tokens": 1.5, "completion_tokens": [1]},
    {"prompt_tokens": {"n": 1}, "completion_tokens": None},
    {"prompt_tokens": 10**30, "completion_tokens": 2**63},
]


@pytest.mark.parametrize("usage", BAD_USAGES, ids=[json.dumps(u)[:40] for u in BAD_USAGES])
def test_malformed_usage_is_estimated_locally_never_raised(
    fake_server: FakeServer, tkgqa_home: Path, usage: Any
) -> None:
    fake_server.script(Reply(body=with_usage(usage)))
    reply = backend(fake_server).chat("What is the capital of France?")
    assert reply.text == "Paris"
    assert 0 < reply.usage.prompt_tokens < 100 and 0 < reply.usage.completion_tokens < 100
    assert reply.usage.calls == 1


def test_well_formed_usage_is_taken_as_sent(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=with_usage({"prompt_tokens": 7.0, "completion_tokens": 0})))
    usage = backend(fake_server).chat("x").usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (7, 0)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=6,
    )
)
def test_token_count_is_an_int_in_range_or_absent(value: Any) -> None:
    count = token_count(value, "prompt_tokens")
    assert count is None or (type(count) is int and 0 <= count <= MAX_USAGE_TOKENS)


def test_torn_utf8_reply_is_read_with_replacement_characters(
    fake_server: FakeServer, tkgqa_home: Path
) -> None:
    body = json.dumps(completion("Caf\u00e9 ok"), ensure_ascii=False).encode()
    torn = body.replace("\u00e9".encode(), b"\xc3")  # a two-byte character cut after its first byte
    assert torn != body
    fake_server.script(Reply(raw=torn))
    assert backend(fake_server).chat("x").text == "Caf\ufffd ok"
    fake_server.script(Reply(raw=b"\xef\xbb\xbf" + body))  # a BOM before the JSON
    assert backend(fake_server).chat("y").text == "Caf\u00e9 ok"


def test_a_reply_that_is_no_completion_is_an_llm_error(fake_server: FakeServer, tkgqa_home: Path) -> None:
    for raw in (b"\xff\xfe not json", b"[1, 2]", json.dumps({"choices": "none"}).encode()):
        fake_server.script(Reply(raw=raw))
        with pytest.raises(LLMError):
            backend(fake_server).chat(raw.decode("latin-1"))


@pytest.fixture
def openai_env(monkeypatch: pytest.MonkeyPatch, fake_server: FakeServer, tkgqa_home: Path) -> FakeServer:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url + "/v1")
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")
    return fake_server


@pytest.mark.parametrize("usage", ["lots", {"prompt_tokens": "abc"}, {"completion_tokens": 1e308}])
def test_ask_answers_despite_malformed_usage(
    openai_env: FakeServer, capsys: pytest.CaptureFixture[str], usage: Any
) -> None:
    openai_env.script(Reply(body=with_usage(usage, '["Barack Obama"]')))
    args = ["ask", QUESTION, "--method", "llm_only", "--llm", "openai:m", "--json"]
    code, stdout, stderr = run_cli(args, capsys)
    assert code == 0, stderr
    assert json.loads(stdout)["answers"] == ["Barack Obama"]


def test_ask_exits_2_without_a_traceback_for_an_unusable_reply(
    openai_env: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    openai_env.script(Reply(raw=b'{"choices": [{"message": "not an object"}], "usage": "lots"}'))
    code, _, stderr = run_cli(["ask", QUESTION, "--method", "llm_only", "--llm", "openai:m"], capsys)
    assert code == 2 and "unexpected reply shape" in stderr and "Traceback" not in stderr


def test_serve_answers_200_for_malformed_usage_and_502_for_an_unusable_reply(openai_env: FakeServer) -> None:
    pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
    from fastapi.testclient import TestClient

    from tkgqa.service import create_app
    from tkgqa.service.policy import ServiceSettings

    app = create_app(settings=ServiceSettings(allow_llms=("fake", "openai:m")))
    ask = {"question": QUESTION, "method": "llm_only", "llm": "openai:m"}
    with TestClient(app) as client:
        for usage in ("lots", {"prompt_tokens": "abc"}, {"prompt_tokens": 1e308}, {"prompt_tokens": -3}):
            openai_env.script(Reply(body=with_usage(usage, '["Barack Obama"]')))
            res = client.post("/api/ask", json={**ask, "question": f"{QUESTION} {json.dumps(usage)}"})
            assert res.status_code == 200 and res.json()["answers"] == ["Barack Obama"], res.text
        openai_env.script(Reply(raw=b'{"choices": []}'))
        res = client.post("/api/ask", json=ask)
        assert res.status_code == 502 and res.json()["type"] == "LLMError", res.text
