"""Hypothesis over the service's request models and query parameters beyond the question text (fuzzed in
test_service_limits): any body for ``POST /api/ask`` / ``POST /api/kg/facts`` and any parameters of the KG
endpoints get a 2xx or a 4xx with the one error shape, never a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings

JSON_HEADERS = {"Content-Type": "application/json"}
ERROR_KEYS = {"error", "type", "suggestions"}
FUZZ = settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

_SCALAR = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats() | st.text(max_size=30)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_WORDS = st.sampled_from(
    ["symbolic", "ari:policy=symbolic", "fake", "nope", "symbolic:relax=maybe", "2014", "2014-11", "-1", "",
     "Barack Obama", "China", "Make a visit", "get_tail_entity", "get_head_entity", "\x00", "x" * 300]
)  # fmt: skip
_VALUE = _WORDS | _JSON
_OPTIONS = st.dictionaries(st.text(max_size=12) | _WORDS, _VALUE, max_size=4) | _JSON
_ASK = st.fixed_dictionaries(
    {"question": st.just("Who visited China in November 2014?") | st.text(max_size=40) | _JSON},
    optional={"method": _VALUE, "llm": _VALUE, "options": _OPTIONS, "timeout_s": _VALUE, "as_of": _VALUE,
              "extra_field": _VALUE},
)  # fmt: skip


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(
        create_app(llm="fake", settings=ServiceSettings(allow_append=True, ephemeral_append=True))
    ) as c:
        yield c


def _ok_or_4xx(res: Any) -> None:
    assert res.status_code < 500, res.text
    if res.status_code >= 400 and res.headers.get("content-type", "").startswith("application/json"):
        body = res.json()
        assert {"error", "type"} <= set(body) <= ERROR_KEYS, body


@FUZZ
@given(body=_ASK)
def test_any_ask_body_gets_an_answer_or_a_4xx(client: TestClient, body: dict[str, Any]) -> None:
    raw = json.dumps(body, allow_nan=True).encode()
    _ok_or_4xx(client.post("/api/ask", content=raw, headers=JSON_HEADERS))


@FUZZ
@given(body=_JSON | st.fixed_dictionaries({"lines": st.text(max_size=200) | _JSON}))
def test_any_append_body_gets_a_2xx_or_a_4xx(client: TestClient, body: Any) -> None:
    raw = json.dumps(body, allow_nan=True).encode()
    _ok_or_4xx(client.post("/api/kg/facts", content=raw, headers=JSON_HEADERS))


_PARAMS = st.dictionaries(
    st.sampled_from(["op", "head", "tail", "rel", "time", "entity", "q", "limit", "as_of", "hops", "k"]),
    _WORDS | st.text(max_size=20) | st.integers(-5, 10**6).map(str),
    max_size=6,
)


@FUZZ
@given(
    path=st.sampled_from(["/api/kg/query", "/api/kg/neighbors", "/api/entities", "/api/kg"]), params=_PARAMS
)
def test_any_kg_query_parameters_get_a_2xx_or_a_4xx(
    client: TestClient, path: str, params: dict[str, str]
) -> None:
    _ok_or_4xx(client.get(path, params=params))
