"""LPKG's paper inputs (``tkgqa reproduce``): ICL-LPKG is given the authors' planning prompt from the data
root, and is n/a without it; the other planners are given nothing."""

from __future__ import annotations

from pathlib import Path

from tkgqa.eval.reproduce.models import split_spec
from tkgqa.methods.lpkg.paper_inputs import PAPER_INPUTS, PLANNING_PROMPT
from tkgqa.methods.paper_inputs import InputsRequest


def request(spec: str, root: Path) -> InputsRequest:
    _, options = split_spec(spec)
    return InputsRequest(spec, options, "clqa", root / "clqa_wiki", root, "fake", root / "out")


def test_icl_lpkg_needs_the_planning_prompt(tmp_path: Path) -> None:
    reason = (
        "ICL-LPKG plans with the authors' planning prompt (its 10 demonstrations, Appendix C.2); it is not "
        "under the data root (llm_recordings/lpkg_official_planning_prompt.json)"
    )
    for spec in ("lpkg", "lpkg:planner=icl", "lpkg:icl"):
        assert PAPER_INPUTS.missing(request(spec, tmp_path)) == reason
        assert PAPER_INPUTS.prepare(request(spec, tmp_path)) == {}
    for spec in ("lpkg:planner=direct", "lpkg:planner=finetuned:x"):
        assert PAPER_INPUTS.missing(request(spec, tmp_path)) is None
    prompt = tmp_path / PLANNING_PROMPT
    prompt.parent.mkdir()
    prompt.write_text("{}", "utf-8")
    assert PAPER_INPUTS.missing(request("lpkg", tmp_path)) is None
    assert PAPER_INPUTS.prepare(request("lpkg", tmp_path)) == {"demos": str(prompt)}
    assert PAPER_INPUTS.prepare(request("lpkg:planner=direct", tmp_path)) == {}
