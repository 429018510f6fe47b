"""Cache keys: only credentials are left out; everything that changes the request body is in the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_http_fake import FakeServer, Reply, completion

from tkgqa.credentials import is_secret_field, without_secrets
from tkgqa.llm import SECRET_FIELDS, LLMRequest, Message, make_request, resolve_llm
from tkgqa.llm.llamacpp_backend import LlamaCppBackend
from tkgqa.llm.openai_backend import OpenAIBackend

MESSAGES = "Capital of France?"


def req(**kw: Any) -> LLMRequest:
    return make_request(MESSAGES, **kw)


def test_every_body_field_changes_the_key() -> None:
    variants = {
        "base": req(),
        "messages": make_request("Capital of Spain?"),
        "system message": make_request([Message.system("Be brief."), Message.user(MESSAGES)]),
        "model": req(model="gpt-4o"),
        "temperature": req(temperature=0.5),
        "max_tokens": req(max_tokens=10),
        "no max_tokens": req(max_tokens=None),
        "max_completion_tokens=10": req(extra={"max_completion_tokens": 10}),
        "max_completion_tokens=4000": req(extra={"max_completion_tokens": 4000}),
        "max_new_tokens": req(extra={"max_new_tokens": 10}),
        "logit_bias by token id": req(extra={"logit_bias": {"1234": -100}}),
        "stop": req(stop=["\n"]),
        "seed": req(seed=7),
        "response format": req(json_schema={"type": "object"}),
        "other response format": req(json_schema={"type": "array"}),
        "grammar": req(grammar='root ::= "a"'),
        "choices": req(choices=["Paris", "Lyon"]),
        "extra_body-like field": req(extra={"top_p": 0.5}),
    }
    keys = {name: r.cache_key("openai:m@http://h/v1") for name, r in variants.items()}
    assert len(set(keys.values())) == len(keys), keys
    assert req().cache_key("a") != req().cache_key("b")  # the backend namespace is in the key


def test_only_credentials_are_left_out() -> None:
    plain = req(extra={"top_p": 1})
    with_secrets = req(
        extra={
            "top_p": 1,
            "api_key": "sk-AAA",
            "Api-Key": "sk-BBB",
            "token": "t",
            "extra_headers": {"Authorization": "Bearer sk-CCC"},
        }
    )
    assert with_secrets.cache_key("x") != plain.cache_key("x")  # extra_headers itself stays (emptied)
    other = req(extra={"top_p": 1, "api_key": "sk-ZZZ", "extra_headers": {"authorization": "Bearer sk-Y"}})
    assert other.cache_key("x") == req(extra={"top_p": 1, "extra_headers": {}}).cache_key("x")
    stored = str(with_secrets.stored())
    assert "sk-" not in stored and "Bearer" not in stored and "top_p" in stored
    assert is_secret_field("API-KEY") and is_secret_field("authorization")
    assert not any(
        is_secret_field(f) for f in ("max_tokens", "max_completion_tokens", "tokenizer", "logit_bias")
    )
    assert "token" in SECRET_FIELDS and "max_tokens" not in SECRET_FIELDS
    assert without_secrets([{"password": 1, "n": 2}]) == [{"n": 2}]


def test_openai_backend_settings_are_in_the_namespace() -> None:
    def ns(**kw: Any) -> str:
        return OpenAIBackend(
            kw.pop("model", "gpt-4o-mini"), **{"base_url": "http://h:1/v1", **kw}
        ).cache_namespace()

    variants = {
        "base": ns(),
        "model": ns(model="gpt-4o"),
        "base url": ns(base_url="http://other:1/v1"),
        "guided vllm": ns(guided="vllm"),
        "guided llamacpp": ns(guided="llamacpp"),
        "extra_body": ns(extra_body={"top_k": 1}),
        "other extra_body": ns(extra_body={"top_k": 2}),
    }
    assert len(set(variants.values())) == len(variants), variants
    assert ns(api_key="sk-1") == ns(api_key="sk-2") == ns()
    assert ns(extra_body={"top_k": 1, "api_key": "sk-SECRET"}) == ns(extra_body={"top_k": 1})
    assert "sk-" not in ns(extra_body={"api_key": "sk-SECRET"})
    assert ns(base_url="http://user:pw@h:1/v1?key=sk-Q") == ns()  # credentials in the URL never go in


def test_llamacpp_settings_are_in_the_namespace(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 60)
    base = LlamaCppBackend(model_path=model).cache_namespace()
    assert LlamaCppBackend(model_path=model, n_ctx=512).cache_namespace() != base
    assert LlamaCppBackend(model_path=model, chat_format="chatml").cache_namespace() != base
    assert LlamaCppBackend(model_path=model, rope_freq_base=1e4).cache_namespace() != base
    assert LlamaCppBackend(model_path=model, n_threads=1).cache_namespace() == base  # speed only


def test_token_limits_do_not_share_a_cache_entry(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("short")), Reply(body=completion("a much longer answer")))
    llm = resolve_llm(OpenAIBackend("gpt-4o-mini", base_url=fake_server.url, api_key="sk-x"))
    short = llm.complete(req(extra={"max_completion_tokens": 10}))
    long = llm.complete(req(extra={"max_completion_tokens": 4000}))
    assert (short.text, long.text) == ("short", "a much longer answer") and not long.cached
    assert [r["body"]["max_completion_tokens"] for r in fake_server.requests] == [10, 4000]
    assert llm.complete(req(extra={"max_completion_tokens": 4000})).cached
    assert len(fake_server.requests) == 2


def test_backend_body_settings_do_not_share_a_cache_entry(fake_server: FakeServer, tkgqa_home: Path) -> None:
    fake_server.script(Reply(body=completion("Paris")))

    def backend(**kw: Any) -> Any:
        return resolve_llm(OpenAIBackend("gpt-4o-mini", base_url=fake_server.url, **kw))

    for kw in ({}, {"extra_body": {"top_k": 1}}, {"guided": "vllm"}, {"extra_body": {"top_k": 2}}):
        assert not backend(**kw).complete(req(choices=["Paris", "Lyon"])).cached
    assert backend(guided="vllm").complete(req(choices=["Paris", "Lyon"])).cached
    bodies = [r["body"] for r in fake_server.requests]
    assert len(bodies) == 4 and bodies[1]["top_k"] == 1 and bodies[2]["guided_choice"] == ["Paris", "Lyon"]


@pytest.mark.parametrize("field", ["api_key", "authorization"])
def test_secret_extras_share_the_entry_and_are_not_stored(
    field: str, fake_server: FakeServer, tkgqa_home: Path
) -> None:
    fake_server.script(Reply(body=completion("ok")))
    llm = resolve_llm(OpenAIBackend("gpt-4o-mini", base_url=fake_server.url))
    assert not llm.complete(req(extra={field: "sk-ONE-secret"})).cached
    assert llm.complete(req(extra={field: "sk-TWO-secret"})).cached
    assert b"-secret" not in (tkgqa_home / "llm.sqlite").read_bytes()
