"""``tkgqa reproduce`` without running the tables: the dry run (prompts estimated, no model loaded) and what
is printed and written (valid Markdown tables, no escapes on the terminal, whole-word summaries). The papers'
fixtures are :mod:`test_reproduce`'s."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_reproduce import data_root
from typer.testing import CliRunner

from tkgqa.eval.reproduce import REPRODUCE_JSON, REPRODUCE_MD, dry_run, reproduce

__all__ = ["data_root"]  # the fixture, shared with test_reproduce


def test_dry_run_estimates_prompts_without_a_model(data_root: Path) -> None:
    estimates = {e.run_id: e for e in dry_run("ari", table="T2", limit=3, data_root=data_root)}
    assert "multitq__ari" not in estimates  # ARI needs its memory: no train/dev questions here
    ari = estimates["multitq__ari_no_guidance=true"]
    assert ari.llm and ari.questions == 3 and ari.sampled == 3
    assert ari.calls_per_question >= 1 and ari.prompt_tokens == pytest.approx(
        3 * ari.prompt_tokens_per_question
    )
    assert "cronquestions__ari_no_guidance=true" not in estimates  # no data: nothing to estimate


def test_dry_run_reads_only_the_neighbourhood_of_a_large_kg(data_root: Path, monkeypatch: Any) -> None:
    from tkgqa.eval.reproduce import estimate

    monkeypatch.setattr(estimate, "SMALL_KG_BYTES", 10)  # the 6-fact KG counts as large
    found = {e.run_id: e for e in dry_run("timer4", table="T3", limit=2, data_root=data_root)}
    timer4 = found["multitq__timer4"]
    assert timer4.sampled == 2 and timer4.prompt_tokens_per_question > 0, timer4.note


def test_dry_run_loads_no_model_and_sets_every_embedder_to_hashing(data_root: Path, monkeypatch: Any) -> None:
    """What the dry run's note says ("no model: every embedder setting is the hashing one") holds for every
    method it builds, ARI's ``cot_kb`` and ``react_kb`` included (they loaded MiniLM)."""
    from tkgqa import loading
    from tkgqa.eval.reproduce import ESTIMATE_METHOD, estimate

    monkeypatch.setenv("TKGQA_ARI_EMBEDDER", "minilm")  # ARI's automatic choice with MiniLM installed
    built: list[Any] = []
    original = estimate.build
    monkeypatch.setattr(estimate, "build", lambda *a: built.append(original(*a)) or built[-1])
    loads: list[str] = []
    stop = loading.add_listener(lambda event, work, _s: loads.append(work.what) if event == "start" else None)
    try:
        found = {e.run_id for e in dry_run("ari", table="T1", limit=2, data_root=data_root)}
    finally:
        stop()
    assert {"multitq__cot_kb", "multitq__react_kb", "multitq__kg_rag"} <= found
    assert "no model" in ESTIMATE_METHOD and loads == []
    for method in built:
        settings = method.config.model_dump(mode="json")
        embedders = {k: v for k, v in settings.items() if k == "embedder" or k.endswith("_embedder")}
        assert set(embedders.values()) <= {"hashing"}, (method.name, embedders)


def test_a_dry_run_that_loads_a_model_says_so_in_its_note(data_root: Path, monkeypatch: Any) -> None:
    from tkgqa.eval.reproduce import estimate
    from tkgqa.loading import model_loading

    original = estimate.neighbourhood_kg

    def loading_kg(*args: Any) -> Any:
        with model_loading("a test model"):
            return original(*args)

    monkeypatch.setattr(estimate, "neighbourhood_kg", loading_kg)
    found = {e.run_id: e for e in dry_run("ari", table="T2", limit=2, data_root=data_root)}
    assert "loaded a model all the same: a test model" in found["multitq__ari_no_guidance=true"].note


#: A GFM table's delimiter row (``|---|---|`` or ``| --- | :---: |``).
DELIMITER = re.compile(r"^\|(?: *:?-{3,}:? *\|)+$")


def rules_under_headers(text: str) -> list[str]:
    """The line under each table header (reproduce.md's cells and the dry run's runs)."""
    lines = text.splitlines()
    return [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith(("| row |", "| run |"))]


def test_tables_have_a_delimiter_row_and_the_terminal_shows_no_markdown_escapes(
    data_root: Path, tmp_path: Path
) -> None:
    from tkgqa.cli import _load_commands, app

    _load_commands()
    out = tmp_path / "lpkg"
    args = ["reproduce", "lpkg", "--llm", "fake", "--limit", "2", "--data-root", str(data_root)]
    result = CliRunner().invoke(app, [*args, "--output", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    dry = CliRunner().invoke(app, ["reproduce", "ari", "--table", "T2", "--dry-run", "--limit", "2",
                                   "--data-root", str(data_root)])  # fmt: skip
    assert dry.exit_code == 0, dry.output
    md = (out / REPRODUCE_MD).read_text("utf-8")
    for text in (md, result.output, dry.output):
        rules = rules_under_headers(text)
        assert rules and all(DELIMITER.match(rule) for rule in rules), rules
    assert "\\[" in md  # the file is Markdown: a CI's brackets are escaped there
    for shown in (result.output, dry.output):  # the terminal: the values as they are
        assert "\\" not in shown, shown
    assert re.search(r"\| \[\d+\.\d+, \d+\.\d+\] \|", result.output) and "  - --limit 2: " in result.output


def test_the_na_summary_keeps_whole_words_and_names_the_papers_file(data_root: Path, tmp_path: Path) -> None:
    from tkgqa.eval.reproduce import render_markdown

    out = tmp_path / "ari"
    reproduce("ari", table="T2", llm="fake", limit=2, data_root=data_root, output=out)
    data = json.loads((out / REPRODUCE_JSON).read_text("utf-8"))
    text = render_markdown(data, all_cells=False)
    summary = next(line for line in text.splitlines() if line.startswith("n/a:"))
    assert "would leak into the evaluation (4)" in summary, summary  # the whole reason: there is room
    assert f"the paper's text `{data['source']}`" in text and f"../shared/papers/{data['source']}" not in text
    from tkgqa.eval.reproduce.render import clip_words  # where there is no room: cut at a word

    assert clip_words("the data root has no questions", 16) == "the data root…"
    assert clip_words("alpha, beta gamma", 9) == "alpha…" and clip_words("alpha, beta", 11) == "alpha, beta"
