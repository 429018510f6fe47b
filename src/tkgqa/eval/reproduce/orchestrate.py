"""``reproduce(paper)``: every cell of a paper's tables beside ours, written to ``reproduce.json`` and
``reproduce.md`` (the dry run: :mod:`.estimate`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import TKGQAError
from ...userfiles import claim_folder, parse_json, read_input, write_text
from ..runner import is_run_folder
from .models import describe_llm, recording_of
from .render import render_markdown
from .row_inputs import inputs_reason, prepare_inputs
from .run import (
    SAMPLE,
    SEED,
    Cell,
    MethodOptions,
    RunKey,
    RunOutcome,
    deviations_of,
    execute,
    fill,
    plan_cells,
    runs_of,
)
from .spec import Paper, load_paper, select_tables, split_spec

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
    recording = recording_of(llm)
    planned = plan_cells(
        spec, tables, llm=llm, root=root, recording=recording,
        ready=lambda row, column: inputs_reason(row, column, root),
    )  # fmt: skip
    out = claim_folder(output, REPRODUCE_COMMAND, force=force, legacy=is_reproduce_folder)
    keys = runs_of(planned)
    outcomes: dict[RunKey, RunOutcome] = {}
    for i, key in enumerate(keys, 1):
        if on_run is not None:
            on_run(key, i, len(keys))
        assert root is not None  # a planned run passed missing_data(root, …)
        outcomes[key] = _run(key, root, out, llm, limit, progress, warn, method_options)
    cells = tuple(
        fill(p, outcomes.get(p.run) if p.run else None, llm=llm, limit=limit, recording=recording)
        for p in planned
    )
    runs = tuple(
        RunSummary(
            run_id=key.run_id,
            method=key.method,
            dataset=key.dataset,
            as_of=key.as_of,
            model=(describe_llm(llm) if key.llm else "none (offline)"),
            n=len(o.rows),
            run_dir=str(o.run_dir),
            error=o.error,
            deviations=deviations_of(key, o, limit, recording) if not o.error else (),
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


def _run(
    key: RunKey,
    root: Path,
    out: Path,
    llm: str | None,
    limit: int | None,
    progress: bool,
    warn: Callable[[str], None] | None,
    method_options: MethodOptions | None,
) -> RunOutcome:
    """One run; an LLM run gets what its method's paper inputs add to its options (e.g. ARI its history
    memory, built first with the same LLM, once per dataset, kept in ``out``; ICL-LPKG the authors' planning
    prompt) — or fails with their error."""
    options: dict[str, dict[str, object]] = {k: dict(v) for k, v in (method_options or {}).items()}
    if key.llm:
        try:
            added = prepare_inputs(key.method, key.dataset, root, llm, out)
        except TKGQAError as exc:
            return RunOutcome(out / key.run_id, error=str(exc))
        if added:
            options.setdefault(split_spec(key.method)[0], {}).update(added)
    return execute(
        key, root=root, output=out, llm=llm, limit=limit, progress=progress, warn=warn, method_options=options
    )
