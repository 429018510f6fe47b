"""The openai: backend against a scripted local HTTP server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from llm_http_fake import FakeServer, Reply, completion

from extras_marks import requires_extra
from tkgqa.errors import ContextWindowError, LLMError, ParseError, RateLimitError
from tkgqa.llm import complete_parsed, make_request, resolve_llm
from tkgqa.llm.openai_backend import OpenAIBackend

SECRET = "sk-test-SECRET-0123456789"


def backend(server: FakeServer, delays: list[float] | None = None, **kw: object) -> OpenAIBackend:
    sleeps = delays if delays is not None else []
    return OpenAIBackend(
        "gpt-4o-mini",
        base_url=server.url + "/v1",
        api_key=SECRET,
        sleep=sleeps.append,
        **kw,  # type: ignore[arg-type]
    )


def test_canned_completion_sends_key_but_never_stores_it(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("Paris", model="gpt-4o-mini-2024")))
    llm = resolve_llm(backend(fake_server))
    resp = llm.chat([{"role": "user", "content": "Capital of France?"}], max_tokens=5)  # type: ignore[list-item]
    assert resp.text == "Paris" and resp.model == "gpt-4o-mini-2024"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (11, 3)
    sent = fake_server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert sent["body"]["model"] == "gpt-4o-mini" and sent["body"]["max_tokens"] == 5
    again = llm.chat([{"role": "user", "content": "Capital of France?"}], max_tokens=5)  # type: ignore[list-item]
    assert again.cached and len(fake_server.requests) == 1
    db = (tkgqa_home / "llm.sqlite").read_bytes()
    assert SECRET.encode() not in db and b"SECRET" not in db
    assert SECRET not in repr(llm)


def test_env_vars_read_at_call_time(
    fake_server: FakeServer, tkgqa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = OpenAIBackend("local-model")  # constructed before the environment is set
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    fake_server.script(Reply(body=completion("ok")))
    assert llm.chat("hi").text == "ok"
    assert fake_server.requests[0]["headers"]["Authorization"] == "Bearer sk-env"
    assert fake_server.requests[0]["path"] == "/v1/chat/completions"


def test_no_key_sends_no_authorization(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("ok")))
    OpenAIBackend("m", base_url=fake_server.url).chat("hi")
    assert "Authorization" not in fake_server.requests[0]["headers"]


def test_429_then_200_retries(
    fake_server: FakeServer, tkgqa_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_server.script(
        Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.05"}),
        Reply(body=completion("done")),
    )
    delays: list[float] = []
    assert backend(fake_server, delays).chat("hi").text == "done"
    assert len(fake_server.requests) == 2 and len(delays) == 1
    assert 0.05 <= delays[0] <= 20
    assert SECRET not in caplog.text


def test_500s_exhaust_retries(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(500, {"error": {"message": "kaboom"}}))
    delays: list[float] = []
    with pytest.raises(LLMError, match=r"HTTP 500.*kaboom") as info:
        backend(fake_server, delays, max_retries=3, backoff_base=1.0, backoff_max=3.0).chat("hi")
    assert info.value.retryable
    assert len(fake_server.requests) == 4
    assert len(delays) == 3 and all(0.5 <= d <= 3.0 for d in delays)  # jittered, bounded
    assert delays[2] >= 1.5  # grows exponentially until the bound


def test_429_exhausted_is_rate_limit_error(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(429, {"error": {"message": f"rate limited for key {SECRET}"}}))
    with pytest.raises(RateLimitError) as info:
        backend(fake_server, max_retries=1).chat("hi")
    assert SECRET not in str(info.value) and "***" in str(info.value)


def test_context_length_400_is_not_retried(fake_server: FakeServer, tkgqa_home: Path) -> None:
    msg = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
    fake_server.script(Reply(400, {"error": {"message": msg, "code": "context_length_exceeded"}}))
    with pytest.raises(ContextWindowError, match="maximum context length"):
        backend(fake_server).chat("long")
    assert len(fake_server.requests) == 1


def test_other_400_is_plain_llm_error(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(400, {"error": {"message": "unknown parameter: foo"}}))
    with pytest.raises(LLMError, match="unknown parameter: foo") as info:
        backend(fake_server).chat("x")
    assert not info.value.retryable and not isinstance(info.value, ContextWindowError)


def test_timeout_is_retried(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("late"), delay=1.0), Reply(body=completion("fast")))
    assert backend(fake_server, timeout=0.3).chat("x").text == "fast"


@requires_extra("llm")
def test_connection_error_retried_then_raised(tkgqa_home: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    delays: list[float] = []
    llm = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}", max_retries=2, sleep=delays.append)
    with pytest.raises(LLMError, match="ConnectError") as info:
        llm.chat("x")
    assert info.value.retryable and len(delays) == 2


def test_json_schema_and_choices(fake_server: FakeServer, tkgqa_home: Path) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    fake_server.script(Reply(body=completion('{"a": 1}')), Reply(body=completion("The answer is Berlin.")))
    llm = backend(fake_server)
    llm.complete(make_request("json please", json_schema=schema))
    assert fake_server.requests[0]["body"]["response_format"]["json_schema"]["schema"] == schema
    resp = llm.complete(make_request("Capital of Germany?", choices=["Paris", "Berlin"]))
    assert resp.text == "Berlin"
    body = fake_server.requests[1]["body"]
    assert "Berlin" in body["messages"][-1]["content"] and "guided_choice" not in body


def test_choice_validation_failure(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("no idea")))
    with pytest.raises(ParseError, match="not one of the choices"):
        backend(fake_server).complete(make_request("?", choices=["Paris", "Berlin"]))


def test_guided_modes_add_extra_body(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("b")))
    backend(fake_server, guided="vllm").complete(make_request("?", choices=["a", "b"]))
    backend(fake_server, guided="llamacpp").complete(make_request("?", choices=["a", "b"]))
    assert fake_server.requests[0]["body"]["guided_choice"] == ["a", "b"]
    assert fake_server.requests[1]["body"]["grammar"].startswith("root ::=")


def test_backend_choice_failure_is_retried_by_complete_parsed(
    fake_server: FakeServer, tkgqa_home: Path
) -> None:
    fake_server.script(Reply(body=completion("no idea")), Reply(body=completion("Paris")))
    out = complete_parsed(resolve_llm(backend(fake_server)), "Capital?", str.strip, choices=["Paris", "Rome"])
    assert out.value == "Paris" and out.attempts == 2 and out.usage.parse_failures == 1
    retry = fake_server.requests[1]["body"]["messages"]
    assert retry[-3] == {"role": "assistant", "content": "no idea"}  # then the error, then the options
