"""Every endpoint's success and error bodies checked against the app's own OpenAPI schema, and the issue #13
fixes: LLM failures are 502 errors (never abstentions), ``--llm`` only for LLM methods, one error shape,
labels next to names, cost and cache hits, the program tree, appends and as-of snapshots, local API docs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")
pytest.importorskip("jsonschema", reason="schema checks need jsonschema: install tkgqa[dev]")

import jsonschema
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from stubs import llm_stub, make_run

from tkgqa.api.views import program_tree
from tkgqa.errors import DataError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.outcomes import Outcome
from tkgqa.query.program.executor import Executor
from tkgqa.query.program.nodes import Entities, Match, from_dict, to_dict
from tkgqa.service import create_app
from tkgqa.service.policy import ServiceSettings
from tkgqa.time import TimePoint

QUESTION = "Who visited China in November 2014?"
ERROR_KEYS = {"error", "type"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(
        create_app(llm="fake", settings=ServiceSettings(allow_append=True, ephemeral_append=True))
    ) as c:
        yield c


@pytest.fixture(scope="module")
def spec(client: TestClient) -> dict[str, Any]:
    return dict(client.get("/openapi.json").json())


def conforms(spec: dict[str, Any], res: Any, path: str, method: str = "get") -> dict[str, Any]:
    """``res``'s JSON body, after checking it against the schema the OpenAPI document gives for its status."""
    responses = spec["paths"][path][method]["responses"]
    documented = responses.get(str(res.status_code))
    assert documented is not None, f"{method.upper()} {path} {res.status_code} is not documented"
    schema = documented["content"]["application/json"]["schema"]
    body = res.json()
    jsonschema.validate(body, {**schema, "components": spec["components"]})
    if res.status_code >= 400:
        assert set(body) >= ERROR_KEYS and set(body) <= ERROR_KEYS | {"suggestions"}
    return dict(body)


def test_openapi_documents_the_real_models(spec: dict[str, Any]) -> None:
    ask = spec["paths"]["/api/ask"]["post"]["responses"]
    assert ask["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/AnswerOut")
    for code in ("400", "403", "422", "429", "502", "504"):
        assert ask[code]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody"), code
    assert "404" in spec["paths"]["/api/kg/query"]["get"]["responses"]
    assert "404" in spec["paths"]["/api/kg/neighbors"]["get"]["responses"]
    error = spec["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == ERROR_KEYS
    assert "detail" not in json.dumps(spec["components"]["schemas"].get("HTTPValidationError", {}))  # unused
    results = spec["paths"]["/api/runs/{name}/results"]["get"]["parameters"]
    (which,) = [p for p in results if p["name"] == "outcome"]
    assert which["schema"]["$ref"].endswith("/ResultsFilter")  # the page filter, not tkgqa.outcomes.Outcome
    filters = spec["components"]["schemas"]["ResultsFilter"]["enum"]
    assert filters == ["all", *(o.value for o in Outcome)] and "Outcome" not in spec["components"]["schemas"]


def test_every_endpoint_conforms_on_success(client: TestClient, spec: dict[str, Any]) -> None:
    conforms(spec, client.get("/health"), "/health")
    conforms(spec, client.get("/api/kg"), "/api/kg")
    conforms(spec, client.get("/api/methods"), "/api/methods")
    conforms(spec, client.get("/api/examples"), "/api/examples")
    conforms(spec, client.get("/api/entities", params={"q": "obama"}), "/api/entities")
    query = {"op": "get_tail_entity", "head": "Barack Obama", "rel": "Make a visit", "time": "2014"}
    conforms(spec, client.get("/api/kg/query", params=query), "/api/kg/query")
    near = conforms(
        spec, client.get("/api/kg/neighbors", params={"entity": "barack obama"}), "/api/kg/neighbors"
    )
    assert (
        near["entity"] == "Barack Obama" and near["neighbors"][0]["facts"] >= near["neighbors"][-1]["facts"]
    )
    body = conforms(spec, client.post("/api/ask", json={"question": QUESTION}), "/api/ask", "post")
    assert body["answers"] == ["Barack Obama"] and body["grounded"]


def test_every_error_has_the_one_shape(client: TestClient, spec: dict[str, Any]) -> None:
    blank = [
        conforms(spec, client.post("/api/ask", json={"question": q}), "/api/ask", "post") for q in ("", "   ")
    ]
    assert blank[0] == blank[1] and blank[0]["type"] == "ConfigError" and "empty" in blank[0]["error"]
    bad = conforms(spec, client.post("/api/ask", json={"question": 3}), "/api/ask", "post")
    assert bad["type"] == "ValidationError"
    missing = client.get("/api/kg/neighbors", params={"entity": "Barak Obma"})
    assert conforms(spec, missing, "/api/kg/neighbors")["suggestions"][0] == "Barack Obama"
    unknown = client.get(
        "/api/kg/query", params={"op": "get_tail_entity", "head": "Nobody At All", "rel": "x"}
    )
    assert conforms(spec, unknown, "/api/kg/query")["type"] == "NotFoundError"
    for res in (client.get("/no/such/path"), client.get("/api/ask"), client.delete("/api/kg")):
        assert res.status_code in (404, 405) and set(res.json()) == ERROR_KEYS


def test_the_server_llm_goes_only_to_llm_methods() -> None:
    with TestClient(
        create_app(default_method="llm_only", llm="fake")
    ) as c:  # serve --method llm_only --llm fake
        body = c.post("/api/ask", json={"question": QUESTION, "method": "symbolic", "llm": "fake"}).json()
        assert body["answers"] == ["Barack Obama"] and body["llm"] is None and body["method"] == "symbolic"
        assert c.post("/api/ask", json={"question": QUESTION}).json()["llm"] == "fake"


@pytest.mark.parametrize(("mode", "status"), [("fail500", "500"), ("fail401", "401"), ("unreachable", "")])
def test_llm_failures_are_502_errors_never_abstentions(
    monkeypatch: pytest.MonkeyPatch, mode: str, status: str
) -> None:
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with llm_stub() as url:
        base = f"{url}/{mode}/v1" if mode != "unreachable" else "http://127.0.0.1:9/v1"
        monkeypatch.setenv("OPENAI_BASE_URL", base)
        with TestClient(create_app(llm="openai:gpt-4o-mini")) as c:
            spec = c.get("/openapi.json").json()
            for method in ("llm_only", "ari"):
                res = c.post("/api/ask", json={"question": QUESTION, "method": method})
                body = conforms(spec, res, "/api/ask", "post")
                assert res.status_code == 502 and body["type"] == "LLMError", (method, body)
                assert status in body["error"] and "abstain" not in body["error"]


def test_openai_without_key_or_base_url_is_a_config_error_before_any_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(httpx, "Client", lambda *a, **k: pytest.fail("no network call may be made"))
    with TestClient(create_app(llm="openai:gpt-4o-mini")) as c:
        res = c.post("/api/ask", json={"question": QUESTION, "method": "llm_only"})
    body = res.json()
    assert res.status_code == 400 and body["type"] == "ConfigError"
    assert "OPENAI_API_KEY" in body["error"] and "OPENAI_BASE_URL" in body["error"]


def test_cost_and_cache_hits_follow_the_one_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with llm_stub() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/ok/v1")
        with TestClient(create_app(llm="openai:gpt-4o-mini")) as c:
            asks = [
                c.post("/api/ask", json={"question": QUESTION, "method": "llm_only"}).json() for _ in range(2)
            ]
    fresh, cached = (a["usage"] for a in asks)
    assert (fresh["llm_calls"], fresh["cached_calls"]) == (1, 0)
    assert fresh["cost_usd"] == pytest.approx((12 * 0.15 + 3 * 0.60) / 1e6)
    assert (cached["llm_calls"], cached["cached_calls"], cached["cost_usd"]) == (1, 1, 0.0)
    assert asks[0]["answers"] == ["Barack Obama"] and asks[0]["llm"] == "openai:gpt-4o-mini"


def test_facts_carry_labels_next_to_names(tmp_path: Path) -> None:
    kg = tmp_path / "kg.txt"
    kg.write_text("Military_(Burundi)\tMake_a_visit\tChina\t2014-11-10\n", encoding="utf-8")
    with TestClient(create_app(kg=str(kg))) as c:
        facts = c.get("/api/kg/query", params={"op": "get_tail_entity", "head": "Military (Burundi)",
                                                "rel": "Make a visit"}).json()["facts"]  # fmt: skip
    assert facts[0]["subject"] == "Military_(Burundi)" and facts[0]["subject_label"] == "Military (Burundi)"
    assert facts[0]["relation_label"] == "Make a visit"


def test_an_abstention_says_what_is_missing(client: TestClient) -> None:
    body = client.post("/api/ask", json={"question": "When did Barack Obama visit Japan?"}).json()
    assert body["abstained"] and body["missing"] == "no fact (Barack Obama, Make a visit, Japan) in the KG"
    assert body["program"]["counted"] and body["program"]["empty_step"].startswith("match(Barack Obama")


def test_program_tree_counts_each_step(client: TestClient) -> None:
    tree = client.post("/api/ask", json={"question": QUESTION}).json()["program"]["tree"]
    assert tree["op"] == "entities" and tree["facts"] == 1

    def ops(node: dict[str, Any]) -> list[tuple[str, int | None]]:
        return [(node["op"], node["facts"])] + [x for c in node["children"] for x in ops(c)]

    assert ("match", 9) in ops(tree) and ("in", 1) in ops(tree)


def test_the_view_reads_the_program_the_executor_recorded() -> None:
    kg = TemporalKG([Fact("A", "Make a visit", "Military (Burundi)", TimePoint(2014), TimePoint(2014))])
    program = Entities(Match(None, "Make a visit", "Military (Burundi)"))
    trace = Executor(kg).run(program).steps
    view = program_tree(trace)
    assert view is not None and view["counted"]
    assert view["tree"]["children"][0]["args"] == [
        "?",
        "Make a visit",
        "Military (Burundi)",
    ]  # typed, not split
    assert view["tree"]["facts"] == view["tree"]["children"][0]["facts"] == 1
    assert program_tree([{"program": str(program)}]) is None  # text alone is not re-parsed


_NODE_KEYS = ["node", "rows", "op", "time", "subject", "relation", "object", "point", "which", "primary"]
_KINDS = st.sampled_from(["match", "filter", "const", "entities", "times", "select", "fallback", "bogus"])


@given(
    st.recursive(
        st.none() | st.text(max_size=12) | st.integers() | _KINDS,
        lambda inner: st.dictionaries(st.sampled_from(_NODE_KEYS), inner, max_size=6),
        max_leaves=30,
    )
)
def test_a_recorded_program_is_read_or_refused_never_raises(data: Any) -> None:
    view = program_tree(
        [{"executed": {"program": data, "facts": {"": 1}}}]
    )  # a run folder's trace: outside input
    assert view is None or view["tree"]["op"] in ("entities", "times")
    try:
        node = from_dict(data)
    except DataError:
        return
    assert to_dict(node) is not None and from_dict(to_dict(node)) == node  # what it reads, it writes back


def test_appends_are_visible_to_the_next_question(client: TestClient, spec: dict[str, Any]) -> None:
    question = "Who visited Iceland in January 2031?"
    assert client.post("/api/ask", json={"question": question}).json()["answers"] == []
    res = client.post(
        "/api/kg/facts", json={"lines": "# a comment\nAngela Merkel\tMake a visit\tIceland\t2031-01-05\n"}
    )
    assert conforms(spec, res, "/api/kg/facts", "post")["added"] == 1
    assert client.post("/api/ask", json={"question": question}).json()["answers"] == ["Angela Merkel"]
    bad = client.post("/api/kg/facts", json={"lines": "A\tB\tC\t2031\nA\tB\n\nA\tB\tC\tnot-a-date"})
    body = conforms(spec, bad, "/api/kg/facts", "post")
    assert (
        "request:2:" in body["error"] and "request:4:" in body["error"] and "request:1:" not in body["error"]
    )


def test_appends_are_off_unless_the_server_allows_them() -> None:
    with TestClient(create_app()) as c:
        res = c.post("/api/kg/facts", json={"lines": "A\tB\tC\t2031"})
        assert res.status_code == 403 and "--allow-append" in res.json()["error"]
        assert c.get("/api/kg").json()["appendable"] is False


def test_as_of_answers_over_a_snapshot(client: TestClient) -> None:
    now = client.post("/api/ask", json={"question": QUESTION, "as_of": "2020"}).json()
    assert now["answers"] == ["Barack Obama"] and now["as_of"] == "2020"
    before = client.post("/api/ask", json={"question": QUESTION, "as_of": "2010"}).json()
    assert before["answers"] == [] and "2010" in before["kg"]
    res = client.post("/api/ask", json={"question": QUESTION, "as_of": "someday"})
    assert res.status_code == 422 and res.json()["type"] == "DataError"


def test_api_docs_are_served_without_a_cdn(client: TestClient) -> None:
    pytest.importorskip(
        "fastapi_offline", reason="local API docs need fastapi-offline: install tkgqa[service]"
    )
    html = client.get("/docs").text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/static-docs/{asset}" in html
        assert client.get(f"/static-docs/{asset}").status_code == 200
    assert "cdn" not in html.lower() and "https://" not in html
    assert client.get("/redoc").status_code == 404  # ReDoc would load its logo from a CDN


def test_ask_cli_refuses_an_empty_question() -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    for text in ("", "   "):
        out = CliRunner().invoke(app, ["ask", text])
        assert out.exit_code != 0 and isinstance(out.exception, Exception)
        assert "empty" in str(out.exception)


def test_runs_browser_lists_reports_and_filters_results(tmp_path: Path) -> None:
    make_run(tmp_path)
    (tmp_path / "not_a_run").mkdir()
    with TestClient(create_app(settings=ServiceSettings(runs_dir=str(tmp_path)))) as c:
        spec = c.get("/openapi.json").json()
        runs = conforms(spec, c.get("/api/runs"), "/api/runs")["runs"]
        assert [r["name"] for r in runs] == ["mtq_symbolic"] and runs[0]["strict_hits_at_1"] == 0.25
        report = conforms(spec, c.get("/api/runs/mtq_symbolic"), "/api/runs/{name}")
        assert report["counts"] == {"all": 4, "correct": 1, "wrong": 1, "abstained": 1, "error": 1}
        assert report["has_chart"] and report["report_md"].startswith("# symbolic")
        assert c.get("/api/runs/mtq_symbolic/chart").headers["content-type"] == "image/png"
        for outcome, qid in (("correct", "1"), ("wrong", "2"), ("abstained", "3"), ("error", "4")):
            res = c.get("/api/runs/mtq_symbolic/results", params={"outcome": outcome})
            body = conforms(spec, res, "/api/runs/{name}/results")
            assert body["total"] == 1 and body["results"][0]["qid"] == qid
        first = c.get("/api/runs/mtq_symbolic/results", params={"outcome": "correct"}).json()["results"][0]
        assert first["evidence"][0]["subject_label"] == "Barack Obama" and first["method"] == "symbolic"
        for bad in ("not_a_run", "..", "..%2F..%2Fetc", "nope"):
            assert c.get(f"/api/runs/{bad}").status_code == 404
        assert c.get("/api/runs/mtq_symbolic/results", params={"outcome": "bogus"}).status_code == 422
    with TestClient(create_app()) as c:
        res = c.get("/api/runs")
        assert res.status_code == 404 and "--runs-dir" in res.json()["error"]


def test_appends_need_the_api_token_when_the_server_has_one() -> None:
    token = "t" * 24
    settings = ServiceSettings(allow_append=True, ephemeral_append=True, api_token=token)
    with TestClient(create_app(settings=settings)) as c:
        line = {"lines": "Angela Merkel\tMake a visit\tIceland\t2032-02-02"}
        assert c.post("/api/kg/facts", json=line).status_code == 401
        wrong = c.post("/api/kg/facts", json=line, headers={"Authorization": "Bearer " + "x" * 24})
        assert wrong.status_code == 401 and token not in wrong.text
        ok = c.post("/api/kg/facts", json=line, headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and ok.json()["added"] == 1


def events_of(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def test_ask_stream_sends_progress_then_the_answer(client: TestClient, spec: dict[str, Any]) -> None:
    with client.stream("POST", "/api/ask/stream", json={"question": QUESTION}) as res:
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/event-stream")
        events = events_of(res.read().decode())
    assert events[0][0] == "queued" and events[-1][0] == "answer"
    answer = events[-1][1]
    jsonschema.validate(answer, {"$ref": "#/components/schemas/AnswerOut", "components": spec["components"]})
    assert answer["answers"] == ["Barack Obama"]
    assert "text/event-stream" in spec["paths"]["/api/ask/stream"]["post"]["responses"]["200"]["content"]


def test_ask_stream_reports_errors_as_events_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with llm_stub() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/fail500/v1")
        with TestClient(create_app(llm="openai:gpt-4o-mini")) as c:
            with c.stream(
                "POST", "/api/ask/stream", json={"question": QUESTION, "method": "llm_only"}
            ) as res:
                events = events_of(res.read().decode())
            assert events[-1][0] == "error"
            assert events[-1][1]["status"] == 502 and events[-1][1]["type"] == "LLMError"
            before = c.post("/api/ask/stream", json={"question": "  "})  # refused before it is queued
            assert before.status_code == 400 and before.json()["type"] == "ConfigError"


@given(st.text(alphabet=st.sampled_from("ab \t\n#-0129\r"), max_size=120))
def test_fact_lines_parse_or_fail_with_a_data_error(text: str) -> None:
    from tkgqa.errors import DataError
    from tkgqa.service.live import parse_fact_lines

    try:
        facts = parse_fact_lines(text)
    except DataError as exc:
        assert str(exc).startswith("request")
    else:
        assert facts and all(f.start is not None and f.subject for f in facts)


def test_autocomplete_prefers_what_is_being_typed(client: TestClient) -> None:
    names = [
        c["label"] for c in client.get("/api/entities", params={"q": "chin", "k": 5}).json()["candidates"]
    ]
    assert names[0] == "China"
    assert (
        client.get("/api/entities", params={"q": "zzqx"}).json()["candidates"] == []
    )  # no loose fuzzy noise
