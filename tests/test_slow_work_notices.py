"""Slow work announces itself (issue #32, the first hour): a model load or distillation and each call to a
local LLM start with what they are and an estimate, and say how long they took; ``tkgqa ask`` shows a
multi-step method's steps as they run; loops without a bar print their pace and the time left."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import tkgqa.cli.ask_cmd  # noqa: F401  (registers `ask`)
from tkgqa.cli import SLOW_WORK, app
from tkgqa.cli.terminal import SlowWorkNotices, StageProgress
from tkgqa.loading import add_listener, loading_now, model_loading, slow_call


def test_listeners_hear_start_and_end_with_the_estimate_and_calls_are_not_loads() -> None:
    heard: list[tuple[str, str, str | None, Any]] = []
    remove = add_listener(lambda event, work, s: heard.append((event, work.what, work.estimate, s)))
    try:
        with model_loading("MiniLM", "about 10 s"):
            assert [x["what"] for x in loading_now()] == ["MiniLM"]
            assert loading_now()[0]["estimate"] == "about 10 s"
        with slow_call("smollm2 call 1", "tens of seconds"):
            assert loading_now() == []  # a call to a loaded model is no load
    finally:
        remove()
    assert [(e, w, est) for e, w, est, _ in heard] == [
        ("start", "MiniLM", "about 10 s"),
        ("end", "MiniLM", "about 10 s"),
        ("start", "smollm2 call 1", "tens of seconds"),
        ("end", "smollm2 call 1", "tens of seconds"),
    ]
    assert heard[0][3] is None and heard[1][3] >= 0


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None), out


def test_the_terminal_notice_names_the_work_and_its_estimate_and_calls_only_when_asked() -> None:
    console, out = _console()
    notices = SlowWorkNotices(console)
    remove = add_listener(notices)
    try:
        with model_loading("model2vec: distilling it from MiniLM (once)", "about 6 min on 2 cores"):
            pass
        with slow_call("smollm2 call 1 (llama.cpp, CPU)", "tens of seconds"):
            pass
        notices.calls = True
        with slow_call("smollm2 call 2 (llama.cpp, CPU)", "about 20 s each so far"):
            pass
    finally:
        remove()
    text = out.getvalue()
    assert "model2vec: distilling it from MiniLM (once)… (about 6 min on 2 cores)" in text
    assert "call 1" not in text and "smollm2 call 2 (llama.cpp, CPU)… (about 20 s each so far)" in text


def test_the_distillation_is_announced_with_its_estimate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("model2vec", reason="the model2vec embedder needs tkgqa[retrieval]")
    from tkgqa.retrieval import embedders

    def fake_distill(target: Path, **_: Any) -> Path:
        assert next(x["what"] for x in loading_now()).startswith("model2vec: distilling")
        target.mkdir(parents=True)
        (target / "config.json").write_text("{}")
        return target

    class FakeStatic:
        @staticmethod
        def from_pretrained(path: str) -> str:
            return path

    monkeypatch.setenv("TKGQA_HOME", str(tmp_path))
    monkeypatch.setattr(embedders, "distill_model2vec", fake_distill)
    monkeypatch.setattr("model2vec.StaticModel", FakeStatic)
    heard: list[Any] = []
    remove = add_listener(lambda event, work, s: heard.append((event, work)))
    try:
        embedders.Model2VecEmbedder().model  # noqa: B018 (loads it)
    finally:
        remove()
    starts = [w for e, w in heard if e == "start"]
    assert (
        starts[0].what.startswith("model2vec: distilling")
        and starts[0].estimate == embedders.DISTILL_ESTIMATE
    )
    assert "min" in embedders.DISTILL_ESTIMATE


def test_ask_shows_a_multi_step_methods_steps_as_they_run() -> None:
    result = CliRunner().invoke(
        app, ["ask", "Who visited China in November 2014?", "--method", "ari:policy=symbolic", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert "action: get_head_entity(China, Make a visit, 2014-11)" in result.stderr
    assert json.loads(result.stdout)["answers"] == ["Barack Obama"]  # stdout stays one JSON object
    assert SLOW_WORK.calls is False  # turned off again after the question


def test_stage_progress_prints_the_pace_and_the_time_left_when_items_are_slow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter([0.0, 30.0, 60.0, 90.0, 120.0])
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    console, out = _console()
    progress = StageProgress(console)
    for i in range(1, 5):
        progress("history", i, 4)
    lines = out.getvalue().splitlines()
    assert lines[1] == "history 2/4 (30.0 s each, ~60 s left)" and lines[-1] == "history 4/4"


def test_minilm_is_named_as_loading_before_torch_is_imported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A first stream said ``"loading": []`` for 9 s while sentence-transformers (torch) imported: the load
    is now announced before the import, so a client sees "MiniLM" at once."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    fake = tmp_path / "fake" / "sentence_transformers"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "from tkgqa.loading import loading_now\n"
        "SEEN_AT_IMPORT = [x['what'] for x in loading_now()]\n"
        "class SentenceTransformer:\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "fake"))
    # the stand-in leaves sys.modules as it found it (imported or not), so later tests get the real module
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.delitem(sys.modules, "sentence_transformers")
    from tkgqa.retrieval.embedders import SentenceTransformerEmbedder

    SentenceTransformerEmbedder(model).model  # noqa: B018 (loads it)
    import sentence_transformers

    assert sentence_transformers.SEEN_AT_IMPORT == ["model (sentence-transformers)"]
