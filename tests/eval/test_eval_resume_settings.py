"""Resuming a run folder: ``run.json`` records what the rows depend on (the method, the dataset and its
question file, the KG, the context mode, ``as_of``, ``obfuscate``) and a resume with any of them changed is
refused before anything is written; the question selection (``limit``) is not among them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tkgqa
from tkgqa.datasets import Dataset, load_dataset
from tkgqa.errors import ConfigError
from tkgqa.eval import evaluate
from tkgqa.eval.report import Report


def demo() -> Dataset:
    return load_dataset("demo")


def run(out: Path, data: Dataset | None = None, **kw: Any) -> Report:
    kw.setdefault("limit", 5)
    data = data if data is not None else demo()
    return evaluate("symbolic", data, kw.pop("kg", None), out, progress=False, **kw)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of ``folder`` (hidden ones too) and its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def run_file(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "run.json").read_text("utf-8"))
    return data


def tiny_kg(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.tsv"
    path.write_text("Ann\tmeet\tBob\t2001-01-01\n", "utf-8")
    return path


def test_a_changed_as_of_is_refused_and_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(out).metrics["strict_hits@1"] == 1.0
    before = snapshot(out)
    with pytest.raises(ConfigError) as refused:
        run(out, as_of=1990)
    message = str(refused.value)
    assert "as_of=None" in message and "as_of=1990" in message and "--no-resume" in message
    assert snapshot(out) == before  # results.jsonl, run.json, the lock and the marker: byte-identical
    fresh = run(out, as_of=1990, resume=False)
    assert fresh.selection["resumed"] == 0 and fresh.metrics["strict_hits@1"] == 0.0


def test_a_changed_kg_is_refused_through_the_library_entry_point(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tkgqa.evaluate("symbolic", demo(), None, out, limit=5, progress=False)
    results = (out / "results.jsonl").read_bytes()
    tiny = tiny_kg(tmp_path)
    with pytest.raises(ConfigError, match=r"kg=demo, this run asks kg=.*tiny\.tsv: use another output"):
        tkgqa.evaluate("symbolic", demo(), tiny, out, limit=5, progress=False)
    with pytest.raises(ConfigError, match="kg=demo"):  # the KG as the dataset's own (--kg FILE)
        run(out, load_dataset("demo", kg=str(tiny)))
    assert (out / "results.jsonl").read_bytes() == results


@pytest.mark.parametrize("change", ["obfuscate", "questions"])
def test_other_changed_settings_are_refused(tmp_path: Path, change: str) -> None:
    out = tmp_path / "run"
    run(out)
    before = snapshot(out)
    if change == "obfuscate":
        with pytest.raises(ConfigError, match="obfuscate=False, this run asks obfuscate=True"):
            run(out, obfuscate=True)
    else:
        lines = (Path(tkgqa.__file__).parent / "data" / "demo_questions.jsonl").read_text("utf-8")
        subset = tmp_path / "subset.jsonl"
        subset.write_text("".join(lines.splitlines(keepends=True)[:5]), "utf-8")
        with pytest.raises(ConfigError, match=r"questions_file=None, this run asks questions_file=.*subset"):
            run(out, load_dataset("demo", questions=str(subset)))
    assert snapshot(out) == before


def test_the_same_settings_resume_and_are_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    tiny = tiny_kg(tmp_path)
    run(out, kg=tiny, as_of="1990")
    info = run_file(out)
    assert info["as_of"] == "1990" and info["kg"] == str(tiny.resolve()) and info["dataset"] == "demo"
    assert info["obfuscate"] is False and info["context"] == "kg" and info["questions_file"] is None
    monkeypatch.chdir(tmp_path)  # the same KG named by a relative path, the cutoff as a number
    again = run(out, kg=Path("tiny.tsv"), as_of=1990)
    assert again.selection["resumed"] == 5 and len(run_file(out)["llm_sessions"]) == 2


def test_a_larger_limit_extends_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(out, limit=3, as_of=2000)
    more = run(out, limit=6, as_of=2000)
    assert more.selection["resumed"] == 3 and more.n == 6
    assert len((out / "results.jsonl").read_text("utf-8").splitlines()) == 6
    assert run_file(out)["as_of"] == "2000"  # recorded, so the next resume is compared against it
    with pytest.raises(ConfigError, match="as_of=2000, this run asks as_of=None"):
        run(out, limit=8)


def test_a_run_json_of_the_previous_version_still_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(out)
    old = {k: v for k, v in run_file(out).items() if k in ("method", "dataset", "llm_sessions")}
    (out / "run.json").write_text(json.dumps(old), "utf-8")  # what the previous version wrote
    with pytest.raises(ConfigError, match="dataset=demo, this run asks dataset=other"):  # a key it has
        run(out, Dataset("other", demo().questions, Path("demo")))
    assert run(out).selection["resumed"] == 5  # the keys it lacks are not compared
    assert run_file(out)["as_of"] is None  # and it now records them
    with pytest.raises(ConfigError, match="as_of=None, this run asks as_of=1990"):
        run(out, as_of=1990)
