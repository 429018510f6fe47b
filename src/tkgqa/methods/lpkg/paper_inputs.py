"""What LPKG is given in a paper row (:mod:`tkgqa.methods.paper_inputs`): ICL-LPKG plans with the authors'
planning prompt (their 10 demonstrations, Appendix C.2) as its demonstrations, read from the data root."""

from __future__ import annotations

from pathlib import Path

from ..paper_inputs import InputsRequest, PaperInputs

#: The LPKG authors' planning prompt (their 10 demonstrations) under the data root: what ICL-LPKG is given.
PLANNING_PROMPT = Path("llm_recordings") / "lpkg_official_planning_prompt.json"


def planning_prompt(root: Path) -> Path | None:
    """The LPKG authors' planning prompt under the data root ``root`` (``None``: not there)."""
    path = root / PLANNING_PROMPT
    return path if path.is_file() else None


def is_icl(request: InputsRequest) -> bool:
    """Whether the row plans in context (the default planner)."""
    return request.options.get("planner", request.options.get("", "icl")) == "icl"


def missing(request: InputsRequest) -> str | None:
    """Why the ICL-LPKG cell cannot be given the authors' planning prompt (``None``: it can, or it is not
    ICL-LPKG)."""
    if not is_icl(request) or planning_prompt(request.root) is not None:
        return None
    return (
        "ICL-LPKG plans with the authors' planning prompt (its 10 demonstrations, Appendix C.2); it is "
        f"not under the data root ({PLANNING_PROMPT.as_posix()})"
    )


def prepare(request: InputsRequest) -> dict[str, object]:
    """``{"demos": path}`` of the authors' planning prompt for an ICL-LPKG run, when it is under the root."""
    path = planning_prompt(request.root) if is_icl(request) else None
    return {"demos": str(path)} if path is not None else {}


PAPER_INPUTS = PaperInputs(missing=missing, prepare=prepare)
