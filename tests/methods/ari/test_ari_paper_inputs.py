"""ARI's paper inputs (``tkgqa reproduce``): which rows need the history memory, why a cell is n/a without
train/dev questions, and the error a run gets when the memory cannot be built."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkgqa.errors import ConfigError
from tkgqa.eval.reproduce.models import split_spec
from tkgqa.methods.ari.paper_inputs import PAPER_INPUTS, history_split, memory_path, needs_memory
from tkgqa.methods.paper_inputs import InputsRequest


def request(spec: str, root: Path, llm: str | None = None, output: Path | None = None) -> InputsRequest:
    _, options = split_spec(spec)
    return InputsRequest(spec, options, "multitq", root / "multitq", root, llm, output)


@pytest.mark.parametrize(
    ("spec", "needed"),
    [
        ("ari", True),
        ("ari:no_clustering=true", True),
        ("ari:no_incorrect=true", True),
        ("ari:policy=llm", True),
        ("ari:no_guidance=true", False),
        ("ari:policy=oracle", False),
        ("ari:symbolic", False),
    ],
)
def test_which_rows_need_the_memory(spec: str, needed: bool) -> None:
    assert needs_memory(split_spec(spec)[1]) is needed


def test_missing_without_train_dev_questions(tmp_path: Path) -> None:
    (tmp_path / "multitq" / "questions").mkdir(parents=True)
    (tmp_path / "multitq" / "questions" / "test.json").write_text("[]", "utf-8")
    reason = PAPER_INPUTS.missing(request("ari", tmp_path))
    assert reason == (
        "ARI needs its history memory, built from training/dev questions with the same LLM (§3.3); the data "
        "root has no multitq train/dev questions (train/dev/valid), and a memory from the test questions "
        "would leak into the evaluation"
    )
    assert PAPER_INPUTS.missing(request("ari:no_guidance=true", tmp_path)) is None
    (tmp_path / "multitq" / "questions" / "dev.json").write_text("[]", "utf-8")
    assert history_split(tmp_path / "multitq") == "dev"
    assert PAPER_INPUTS.missing(request("ari", tmp_path)) is None


def test_prepare(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert PAPER_INPUTS.prepare(request("ari", tmp_path, output=out)) == {}  # no LLM: nothing to build with
    assert PAPER_INPUTS.prepare(request("ari:policy=oracle", tmp_path, llm="fake", output=out)) == {}
    with pytest.raises(ConfigError, match=r"^could not build ARI's history memory: no multitq train/dev"):
        PAPER_INPUTS.prepare(request("ari", tmp_path, llm="fake", output=out))
    out.mkdir()
    memory_path(out, "multitq").write_text("{}", "utf-8")  # built before: reused
    added = PAPER_INPUTS.prepare(request("ari", tmp_path, llm="fake", output=out))
    assert added == {"memory": str(out / "ari-memory-multitq.json")}
