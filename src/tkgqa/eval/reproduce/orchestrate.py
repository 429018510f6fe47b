"""``reproduce(paper)``: every cell of a paper's tables beside ours, written to ``reproduce.json`` and
``reproduce.md``; ``dry_run(paper)``: what each run would cost, without calling a model."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...datasets.sampling import select_questions
from ...errors import TKGQAError
from ...userfiles import claim_folder, parse_json, read_input, write_text
from ..runner import evaluate, is_run_folder
from .render import render_markdown
from .run import (
    SAMPLE,
    SEED,
    Cell,
    MethodOptions,
    RunKey,
    RunOutcome,
    build,
    deviations_of,
    execute,
    fill,
    kg_for,
    open_dataset,
    plan_cells,
    runs_of,
)
from .spec import Paper, load_paper, select_tables

REPRODUCE_JSON = "reproduce.json"
REPRODUCE_MD = "reproduce.md"
#: What the marker of a reproduce folder names (:func:`tkgqa.userfiles.claim_folder`).
REPRODUCE_COMMAND = "tkgqa reproduce"


def is_reproduce_folder(folder: Path) -> bool:
    """Whether ``folder`` was written by ``tkgqa reproduce`` before folders carried an owner marker: its
    ``reproduce.json`` is one (an object with ``cells``), or it holds only ``tkgqa eval`` run folders."""
    try:
        data = parse_json(read_input(folder / REPRODUCE_JSON, what=REPRODUCE_JSON))
        return isinstance(data, dict) and "cells" in data
    except (TKGQAError, ValueError):
        entries = list(folder.iterdir())
        return bool(entries) and all(e.is_dir() and is_run_folder(e) for e in entries)


#: The LLM a dry run builds the prompts with (scripted replies, offline token counts; never a real model).
DRY_RUN_LLM = "fake"
DRY_RUN_QUESTIONS = 3


@dataclass(frozen=True)
class RunSummary:
    """One run folder: what it evaluated, with which model, and what differs from the paper."""

    run_id: str
    method: str
    dataset: str
    as_of: str | None
    model: str | None
    n: int
    run_dir: str
    error: str | None
    deviations: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "deviations": list(self.deviations)}


@dataclass(frozen=True)
class ReproduceResult:
    paper: Paper
    cells: tuple[Cell, ...]
    runs: tuple[RunSummary, ...]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper.paper,
            "title": self.paper.title,
            "source": self.paper.source,
            "paper_model": self.paper.model,
            "notes": list(self.paper.notes),
            "settings": self.settings,
            "cells": [c.to_dict() for c in self.cells],
            "runs": [r.to_dict() for r in self.runs],
        }


def reproduce(
    paper: str,
    *,
    output: str | Path,
    table: str | None = None,
    llm: str | None = None,
    limit: int | None = None,
    data_root: str | Path | None = None,
    progress: bool = False,
    on_run: Callable[[RunKey, int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    method_options: MethodOptions | None = None,
    force: bool = False,
) -> ReproduceResult:
    """Run every cell of ``paper``'s tables (or of ``table``) that can run here into ``output`` and write
    ``reproduce.json`` and ``reproduce.md`` there. ``on_run(key, i, total)`` is called before each run;
    ``method_options`` adds options by method name (e.g. an offline embedder), recorded in each run's
    report.json like any option. ``output`` must be new, empty or a reproduce folder (``force``: any)."""
    spec = load_paper(paper)
    tables = select_tables(spec, table)
    root = Path(data_root).expanduser() if data_root is not None else None
    out = claim_folder(output, REPRODUCE_COMMAND, force=force, legacy=is_reproduce_folder)
    planned = plan_cells(spec, tables, llm=llm, root=root)
    keys = runs_of(planned)
    outcomes: dict[RunKey, RunOutcome] = {}
    for i, key in enumerate(keys, 1):
        if on_run is not None:
            on_run(key, i, len(keys))
        assert root is not None  # a planned run passed missing_data(root, …)
        outcomes[key] = execute(
            key, root=root, output=out, llm=llm, limit=limit, progress=progress, warn=warn,
            method_options=method_options,
        )  # fmt: skip
    cells = tuple(fill(p, outcomes.get(p.run) if p.run else None, llm=llm, limit=limit) for p in planned)
    runs = tuple(
        RunSummary(
            run_id=key.run_id,
            method=key.method,
            dataset=key.dataset,
            as_of=key.as_of,
            model=(llm if key.llm else "none (offline)"),
            n=len(o.rows),
            run_dir=str(o.run_dir),
            error=o.error,
            deviations=deviations_of(key, o, limit) if not o.error else (),
        )
        for key, o in outcomes.items()
    )
    settings = {
        "tables": [t.id for t in tables],
        "llm": llm,
        "limit": limit,
        "sample": SAMPLE if limit else None,
        "seed": SEED,
        "data_root": str(root) if root is not None else None,
        "output": str(out),
    }
    result = ReproduceResult(spec, cells, runs, settings)
    write_text(out / REPRODUCE_JSON, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    write_text(out / REPRODUCE_MD, render_markdown(result.to_dict()))
    return result


@dataclass(frozen=True)
class Estimate:
    """A run's estimated cost: per question from a fake-LLM run on a few questions, times the questions."""

    run_id: str
    method: str
    dataset: str
    cells: int
    llm: bool
    questions: int  # how many the run would evaluate
    sampled: int  # how many the estimate ran
    calls_per_question: float = 0.0
    prompt_tokens_per_question: float = 0.0
    completion_tokens_per_question: float = 0.0
    note: str = ""

    @property
    def prompt_tokens(self) -> float:
        return self.prompt_tokens_per_question * self.questions

    @property
    def calls(self) -> float:
        return self.calls_per_question * self.questions

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "calls": self.calls, "prompt_tokens": self.prompt_tokens}


ESTIMATE_METHOD = (
    "each LLM run is answered on its first {k} sampled questions by the fake LLM (tkgqa.testing.FakeLLM: the "
    "first offered choice, '{{}}' for JSON, else 'OK'), with prompts built by the method itself and tokens "
    "counted offline (tkgqa.llm.tokens: cl100k when cached, else ~1.3 × words); calls and prompt tokens per "
    "question × the questions of the run. Steps that depend on real replies (more ARI actions, R3's tree, "
    "re-asks) are not foreseen, so multi-step methods may cost more; completions are not estimated."
)


def dry_run(
    paper: str,
    *,
    table: str | None = None,
    limit: int | None = None,
    data_root: str | Path | None = None,
    questions: int = DRY_RUN_QUESTIONS,
    method_options: MethodOptions | None = None,
) -> list[Estimate]:
    """The prompts and tokens each run of ``paper``'s tables would cost, estimated without a model."""
    spec = load_paper(paper)
    root = Path(data_root).expanduser() if data_root is not None else None
    planned = plan_cells(spec, select_tables(spec, table), llm=DRY_RUN_LLM, root=root)
    out: list[Estimate] = []
    for key in runs_of(planned):
        n_cells = sum(1 for p in planned if p.run == key)
        assert root is not None
        out.append(_estimate(key, root, limit, questions, n_cells, method_options))
    return out


def _estimate(
    key: RunKey, root: Path, limit: int | None, k: int, n_cells: int, method_options: MethodOptions | None
) -> Estimate:
    base = Estimate(key.run_id, key.method, key.dataset, n_cells, key.llm, questions=0, sampled=0)
    try:
        ds = open_dataset(root, key)
        chosen = select_questions(ds.questions, limit, SAMPLE if limit else None, SEED)
        if not key.llm:
            return replace(base, questions=len(chosen), note="no LLM: runs offline")
        few = chosen[:k]
        with tempfile.TemporaryDirectory(prefix="tkgqa-dry-run-") as tmp:
            method = build(key, DRY_RUN_LLM, method_options)
            kg = kg_for(ds, key) or ds.kg_path
            report = evaluate(
                method, few, kg, Path(tmp), progress=False, check_support=False, warn=lambda _m: None
            )
    except (TKGQAError, ImportError) as exc:
        return replace(base, note=f"cannot estimate: {type(exc).__name__}: {exc}")
    u = report.usage
    return replace(
        base,
        questions=len(chosen),
        sampled=len(few),
        calls_per_question=u["llm_calls_per_question"],
        prompt_tokens_per_question=u["prompt_tokens_per_question"],
        completion_tokens_per_question=u["completion_tokens_per_question"],
    )
