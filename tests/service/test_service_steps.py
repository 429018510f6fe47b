"""Per-step streaming of multi-step methods (``step`` events of ``/api/ask/stream``), cancellation between
steps when the client closes the stream, and example questions taken from the server's benchmark."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs FastAPI: install tkgqa[service]")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx: install tkgqa[service]")

import httpx
from fastapi.testclient import TestClient

import tkgqa.testing
from tkgqa.datasets import load_dataset
from tkgqa.llm import LLMRequest
from tkgqa.methods.base import StepCancelled, StepEvent, StepKind
from tkgqa.service import create_app
from tkgqa.service.errors import status_for, type_name
from tkgqa.service.server import serve_in_thread
from tkgqa.service.stream import StepChannel

QUESTION = "Who visited China in November 2014?"
#: ARI with the dependency-free embedder (no model download) and FakeLLM as its LLM.
ARI = "ari:embedder=hashing"


def events_of(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Server-sent events as (name, data), as they arrive."""
    event = ""
    for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


@pytest.fixture
def first_action(monkeypatch: pytest.MonkeyPatch, isolated_home: Any) -> list[float]:
    """FakeLLM (the server's ``fake``) always picks ARI's first listed action; the call times are kept
    (an empty LLM cache per test, so every step calls it)."""
    calls: list[float] = []

    def reply(request: LLMRequest) -> str:
        calls.append(time.monotonic())
        return "Action: 1"

    monkeypatch.setattr(tkgqa.testing, "default_responder", reply)
    return calls


def test_an_ari_question_streams_its_steps_before_the_answer(first_action: list[float]) -> None:
    client = TestClient(create_app(default_method=ARI, llm="fake"))
    with client, client.stream("POST", "/api/ask/stream", json={"question": QUESTION}) as res:
        assert res.status_code == 200
        events = list(events_of(res.iter_lines()))
    names = [name for name, _ in events]
    steps = [data for name, data in events if name == "step"]
    assert names[0] == "queued" and names[-1] == "answer" and steps
    assert names.index("step") < names.index("answer")
    assert [s["seq"] for s in steps] == list(range(len(steps)))
    assert all(s["method"] == "ari" and s["kind"] == "action" for s in steps)
    trace_steps = [t for t in events[-1][1]["trace"] if t.get("type") == "step"]
    assert [s["label"] for s in steps] == [t["action"] for t in trace_steps]
    assert [s["count"] for s in steps] == [t["n_results"] for t in trace_steps]
    assert steps[0]["label"].startswith("get_") and "China" in steps[0]["label"]
    assert len(steps) == len(first_action)  # one LLM call per step


def test_a_method_without_steps_streams_none(first_action: list[float]) -> None:
    client = TestClient(create_app())
    with client, client.stream("POST", "/api/ask/stream", json={"question": QUESTION}) as res:
        names = [name for name, _ in events_of(res.iter_lines())]
    assert "step" not in names and names[-1] == "answer"


def test_closing_the_stream_stops_the_method_between_steps(
    monkeypatch: pytest.MonkeyPatch, first_action: list[float]
) -> None:
    def slow(request: LLMRequest) -> str:
        first_action.append(time.monotonic())
        time.sleep(0.3)
        return "Action: 1"

    monkeypatch.setattr(tkgqa.testing, "default_responder", slow)
    app = create_app(default_method=f"{ARI},t_max=10", llm="fake")
    pool = app.state.tkgqa.pool
    with serve_in_thread(app) as url:
        with (
            httpx.Client(base_url=url, timeout=30) as http,
            http.stream("POST", "/api/ask/stream", json={"question": QUESTION}) as res,
        ):
            for name, _ in events_of(res.iter_lines()):
                if name == "step":
                    break  # the client goes away after the first step
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(m["cancelled"] for m in pool.stats()["methods"]):
            time.sleep(0.05)
        (slot,) = pool.stats()["methods"]
    assert slot["cancelled"] == 1 and slot["answered"] == 0  # a cancelled status, not an answer
    assert 2 <= len(first_action) < 10  # stopped at a step boundary, long before t_max


def test_a_cancelled_channel_raises_at_the_next_step() -> None:
    channel = StepChannel(limit=2)
    for i in range(3):
        channel.report(StepEvent(StepKind.ACTION, i, f"step {i}", method="m"))
    assert [e.index for e in channel.drain()] == [1, 2] and channel.drain() == []  # bounded, oldest dropped
    channel.cancel()
    with pytest.raises(StepCancelled, match="after 3 step"):
        channel.report(StepEvent(StepKind.ACTION, 3, "step 3", method="m"))
    exc = StepCancelled("x")
    assert status_for(exc) == 499 and type_name(exc) == "Cancelled"


def test_steps_arrive_while_the_method_runs(monkeypatch: pytest.MonkeyPatch, isolated_home: Any) -> None:
    """Each step event is sent as soon as it is reported, not with the answer."""
    gate = threading.Event()
    calls: list[int] = []
    waits: list[bool] = []

    def reply(request: LLMRequest) -> str:
        calls.append(1)
        if len(calls) == 2:
            waits.append(gate.wait(10))  # the second step waits until the client has seen the first
        return "Action: 1"

    monkeypatch.setattr(tkgqa.testing, "default_responder", reply)
    app = create_app(default_method=f"{ARI},t_max=2", llm="fake")
    names = []
    with (
        serve_in_thread(app) as url,
        httpx.Client(base_url=url, timeout=30) as http,
        http.stream("POST", "/api/ask/stream", json={"question": QUESTION}) as res,
    ):
        for name, _ in events_of(res.iter_lines()):
            names.append(name)
            if name == "step":
                gate.set()
    assert waits == [True] and names.count("step") == 2 and names[-1] == "answer"


def test_examples_come_from_the_servers_dataset_one_per_question_type() -> None:
    ds = load_dataset("demo")
    with TestClient(create_app(dataset=ds)) as c:
        examples = c.get("/api/examples").json()["examples"]
        again = TestClient(create_app(dataset=ds)).get("/api/examples").json()["examples"]
        assert c.get("/api/kg").json()["facts"] > 0  # the dataset's KG is served
    types = {q.qtype or "?" for q in ds.questions}
    assert sorted(e["qtype"] for e in examples) == sorted(types)  # one per type
    by_id = {q.qid: q for q in ds.questions}
    for e in examples:
        q = by_id[e["qid"]]
        assert e["question"] == q.text and e["qtype"] == q.qtype and e["source"] == "demo"
    assert examples == again  # seeded


def test_examples_without_types_are_a_seeded_sample() -> None:
    from tkgqa.service.queries import dataset_examples

    qs = [q.model_copy(update={"qtype": None}) for q in load_dataset("demo").questions]
    picked = dataset_examples(qs, source="x", limit=5)
    assert len(picked) == 5 and picked == dataset_examples(qs, source="x", limit=5)
    assert picked != dataset_examples(qs, source="x", limit=5, seed=1)


def test_serve_with_a_dataset_offers_its_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import tkgqa.service.server
    from tkgqa.cli import _load_commands
    from tkgqa.cli import app as cli_app
    from tkgqa.errors import ConfigError

    served: list[Any] = []

    class NoServer:
        def run(self) -> None:
            pass

    def make_server(app: Any, *args: Any, **kwargs: Any) -> NoServer:
        served.append(app)
        return NoServer()

    monkeypatch.setattr(tkgqa.service.server, "make_server", make_server)
    _load_commands()
    out = CliRunner().invoke(cli_app, ["serve", "--dataset", "demo", "--port", "1"])
    assert out.exit_code == 0, out.output
    examples = TestClient(served[0], base_url="http://127.0.0.1").get("/api/examples").json()["examples"]
    assert examples and {e["source"] for e in examples} == {"demo"}
    bad = CliRunner().invoke(cli_app, ["serve", "--data-dir", ".", "--port", "1"])
    assert isinstance(bad.exception, ConfigError) and "--dataset" in str(bad.exception)


def test_multitq_examples_are_one_question_per_type(shared_data: Any) -> None:
    from tkgqa.service.queries import dataset_examples

    folder = shared_data / "multitq"
    if not folder.is_dir():
        pytest.skip(f"MultiTQ not found under {shared_data}")
    ds = load_dataset("multitq", folder)
    examples = dataset_examples(ds.questions, source=ds.name)
    types = {q.qtype for q in ds.questions}
    assert len(examples) == min(12, len(types)) and len({e["qtype"] for e in examples}) == len(examples)
    texts = {q.text for q in ds.questions}
    assert all(e["question"] in texts and e["source"] == "multitq" for e in examples)
