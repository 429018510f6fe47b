"""Run a paper's tables: plan every cell, evaluate each distinct (method, dataset, KG cutoff) once with the
``tkgqa eval`` runner, and read every cell's number off its run.

A cell's status says exactly what happened (:data:`STATUSES`):

* ``ran`` — the paper's row, run with the paper's model family (or a recording of it, every call matched by
  its exact prompt or a parse re-ask of one) in the paper's setting, with no error row;
* ``ran-other-model`` — it ran without error, with another model than the paper's (which: ``model``);
* ``ran-fake-llm`` — it ran without error with tkgqa's fake test LLM (``--llm fake``: canned replies, not a
  model): its number is no model's accuracy;
* ``failed`` — the run could not start, or some of its questions ended in errors (how many, and the first);
* ``reference`` — an offline method of ours shown for orientation (the symbolic reasoner, ARI's symbolic
  policy, R3's embedding judge): not the paper's method, not an LLM accuracy;
* ``bound`` — a true upper bound (ARI's oracle policy over the same action space);
* ``n/a`` — not measurable here, with the reason (the column's metric is human-evaluated or its queries are
  not published, the row's method is not implemented, the data is missing, the method needs an LLM or a
  history memory it was not given, a ``replay:`` recording that is not of this cell).

Cells that share a method and dataset share one run folder (``OUTPUT/<run id>/``, a normal ``tkgqa eval``
folder: it resumes, and ``tkgqa eval-compare`` takes any two); a column is a subset of that run's questions
(its ``filter``).

``--limit N`` evaluates a stratified sample (by question type, seed 0) of N questions per run, as the ARI
paper samples its test sets; the 95% CI is Wilson's for hit rates and a seeded bootstrap for set scores.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, assert_never, get_args

from ...datasets import load_dataset
from ...datasets.base import Question
from ...datasets.core import Dataset
from ...datasets.sampling import select_questions
from ...errors import TKGQAError
from ...kg.base import KGStore
from ...outcomes import ResultRow
from ..report import REPORT_JSON, read_results
from ..runner import evaluate
from ..scoring import row_values
from .data import DATA, dataset_dir, missing_data
from .models import TEST_LLM_FAMILY, Recording, describe_llm, model_family, run_family
from .spec import Column, Metric, Paper, PaperRow, Scale, Table
from .stats import mean_interval

Status = Literal["ran", "ran-other-model", "ran-fake-llm", "failed", "reference", "bound", "n/a"]
#: Every status, in the order the summary counts them.
STATUSES: tuple[Status, ...] = get_args(Status)
SAMPLE = "stratified"
SEED = 0
OFFLINE_MODEL = "none (offline)"


@dataclass(frozen=True)
class RunKey:
    """What one run folder evaluates: a method spec on a dataset (over the KG as of ``as_of``)."""

    method: str
    dataset: str
    as_of: str | None
    llm: bool
    split: str = "test"

    @property
    def run_id(self) -> str:
        cut = f"-asof{self.as_of}" if self.as_of else ""
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{self.dataset}{cut}__{self.method}").strip("_")


@dataclass(frozen=True)
class Cell:
    """One cell: the published number beside ours (``reproduce.json``'s ``cells``)."""

    id: str
    table: str
    row: str
    column: str
    dataset: str
    split: str
    metric: str
    scale: str
    method: str | None
    paper: float | None
    ours: float | None = None
    n: int = 0
    ci: tuple[float, float] | None = None
    model: str | None = None
    status: Status = "n/a"
    reason: str = ""
    run_dir: str | None = None
    deviations: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci"] = list(self.ci) if self.ci is not None else None
        data["deviations"] = list(self.deviations)
        return data


@dataclass(frozen=True)
class PlannedCell:
    table: Table
    row: PaperRow
    column: Column
    paper: float | None
    run: RunKey | None  # None: n/a for ``reason``
    reason: str = ""

    @property
    def cell_id(self) -> str:
        return slug(f"{self.table.id}.{self.row.id}.{self.column.id}")

    def base(self) -> Cell:
        return Cell(
            id=self.cell_id,
            table=self.table.id,
            row=self.row.id,
            column=self.column.id,
            dataset=self.column.dataset,
            split=self.column.split,
            metric=str(self.column.metric or self.table.metric),
            scale=str(self.table.scale),
            method=self.row.method,
            paper=self.paper,
        )


@dataclass
class RunOutcome:
    """What a run gave: its rows (the selected questions, in order), the questions, report.json, or why it
    could not run."""

    run_dir: Path
    rows: list[ResultRow] = field(default_factory=list)
    questions: dict[str, Question] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def plan_cells(
    paper: Paper,
    tables: Sequence[Table],
    *,
    llm: str | None,
    root: Path | None,
    recording: Recording | None = None,
    ready: Callable[[PaperRow, Column], str | None] | None = None,
) -> list[PlannedCell]:
    """Every cell of ``tables``: the published cells of each row (all columns for a row without any), each
    with its run or the reason it is n/a. ``recording``: what a ``replay:`` LLM holds (it fills only the
    cells it is a recording of, with its own run spec); ``ready``: a further check of an LLM cell (the reason
    it cannot run as the paper did, e.g. ARI without a history memory)."""
    out: list[PlannedCell] = []
    for table in tables:
        for row in table.rows:
            columns = [c for c in table.columns if c.id in row.cells] if row.cells else list(table.columns)
            for column in columns:
                reason = _why_not(row, column, llm=llm, root=root, recording=recording)
                if reason is None and row.llm and ready is not None:
                    reason = ready(row, column)
                run = None
                if reason is None and row.method is not None:
                    method = row.method
                    if row.llm and recording is not None and recording.run_spec:
                        method = recording.run_spec
                    run = RunKey(method, column.dataset, column.as_of, row.llm, column.split)
                out.append(PlannedCell(table, row, column, row.cells.get(column.id), run, reason or ""))
    return out


def _why_not(
    row: PaperRow, column: Column, *, llm: str | None, root: Path | None, recording: Recording | None
) -> str | None:
    if column.na:
        return column.na
    if row.reason:
        return row.reason
    missing = missing_data(root, column.dataset, as_of=column.as_of)
    if missing:
        return missing
    if row.llm and not llm:
        return f"needs an LLM: pass --llm SPEC (the paper used {row.paper_model or 'an LLM'})"
    if row.llm and recording is not None and row.method is not None:
        return recording.why_not(row.method, row.paper_model, column.dataset)
    return None


def runs_of(planned: Sequence[PlannedCell]) -> list[RunKey]:
    """The distinct runs of ``planned``, in first-use order."""
    return list(dict.fromkeys(p.run for p in planned if p.run is not None))


def open_dataset(root: Path, key: RunKey) -> Dataset:
    return load_dataset(key.dataset, dataset_dir(root, key.dataset), split=key.split)


#: Extra options per method name (``{"r3": {"embedder": "hashing"}}``), applied on top of a row's spec.
MethodOptions = Mapping[str, Mapping[str, Any]]


def build(key: RunKey, llm: str | None, method_options: MethodOptions | None = None) -> Any:
    """The method of ``key`` (with ``llm`` when it needs one, and any ``method_options`` of its name)."""
    from ...methods.base import resolve_method

    extra = dict((method_options or {}).get(key.method.partition(":")[0].strip(), {}))
    if key.llm:
        extra["llm"] = llm
    return resolve_method(key.method, **extra)


def kg_for(ds: Dataset, key: RunKey) -> KGStore | None:
    """The KG as of ``key.as_of`` (None: the dataset's own KG)."""
    if key.as_of is None:
        return None
    from ...kg.loaders import load_kg
    from ...time import try_parse_time

    cut = try_parse_time(key.as_of)
    if cut is None or ds.kg_path is None:
        raise TKGQAError(f"cannot cut the {key.dataset} KG as of {key.as_of!r}")
    return load_kg(ds.kg_path).as_of(cut)


def execute(
    key: RunKey,
    *,
    root: Path,
    output: Path,
    llm: str | None,
    limit: int | None,
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
    method_options: MethodOptions | None = None,
) -> RunOutcome:
    """Evaluate ``key`` into ``output/<run id>`` (resuming what is there); the error when it cannot run."""
    outcome = RunOutcome(output / key.run_id)
    try:
        ds = open_dataset(root, key)
        method = build(key, llm, method_options)
        chosen = select_questions(ds.questions, limit, SAMPLE if limit else None, SEED)
        evaluate(
            method, ds, kg_for(ds, key), outcome.run_dir, limit=limit, sample=SAMPLE if limit else None,
            seed=SEED, progress=progress, warn=warn or (lambda _m: None),
        )  # fmt: skip
    except (TKGQAError, ImportError) as exc:
        outcome.error = f"could not run: {type(exc).__name__}: {exc}"
        return outcome
    wanted = {q.qid: q for q in chosen}
    order = {qid: i for i, qid in enumerate(wanted)}
    rows = [r for r in read_results(outcome.run_dir) if r.qid in wanted]
    outcome.rows = sorted(rows, key=lambda r: order[r.qid])
    outcome.questions = wanted
    with contextlib.suppress(OSError, ValueError):
        outcome.report = json.loads((outcome.run_dir / REPORT_JSON).read_text("utf-8"))
    return outcome


def matches(row: ResultRow, question: Question | None, flt: Mapping[str, str]) -> bool:
    """Whether a results row (and its question) falls in a column's ``filter``."""
    for key, want in flt.items():
        if key == "entities":
            count = len(question.entities) if question is not None else 0
            if (count == 1) != (want == "single") or count == 0:
                return False
        elif want not in row_values(row, key):
            return False
    return True


def metric_values(rows: Sequence[ResultRow], metric: Metric) -> list[float]:
    """The per-question values a cell averages."""
    match metric:
        case Metric.STRICT_HIT:
            return [float(r.strict_hit) for r in rows]
        case Metric.LENIENT_HIT:
            return [float(r.lenient_hit) for r in rows]
        case Metric.STRICT_HIT_ANSWERED:
            return [float(r.strict_hit) for r in rows if r.answered]
        case Metric.RECALL:
            return [float(r.recall or 0.0) for r in rows]
        case Metric.PRECISION:
            return [float(r.precision or 0.0) for r in rows]
        case _:
            assert_never(metric)


def deviations_of(
    key: RunKey, outcome: RunOutcome, limit: int | None, recording: Recording | None = None
) -> tuple[str, ...]:
    """What differs from the paper for this run: what the recording it replays leaves out, the method's
    deviations in force (report.json), the missing inputs it warned about, and how the data differs."""
    method = outcome.report.get("method") or {}
    found = list(recording.deviations) if recording is not None and key.llm else []
    found += [str(d) for d in method.get("deviations") or []]
    found += [f"warning: {w}" for w in outcome.report.get("warnings") or []]
    found += list(DATA[key.dataset].notes)
    meta = (outcome.report.get("dataset") or {}).get("meta") or {}
    if meta.get("kg_partial"):
        found.append("KG: kg/full_partial.txt, 49% of the paper's KG (the full KG is not in the shared data)")
    if limit is not None:
        found.append(f"--limit {limit}: a stratified sample (by question type, seed {SEED})")
    return tuple(found)


def first_error(rows: Sequence[ResultRow]) -> str:
    """How many of ``rows`` ended in an error, and the first error."""
    failed = [r for r in rows if r.failed]
    if not failed:
        return ""
    text = " ".join(str(failed[0].error or failed[0].error_type or "an error").split())
    text = text if len(text) <= 200 else text[:199] + "…"
    return f"{len(failed)} of {len(rows)} questions ended in errors; first ({failed[0].qid}): {text}"


def earned(
    planned: PlannedCell, outcome: RunOutcome, rows: Sequence[ResultRow], llm: str | None
) -> tuple[Status, str]:
    """The status a run's cell has earned, with why (see the module docstring)."""
    row = planned.row
    if planned.run is not None and not planned.run.llm:
        note = row.note or "offline, not an LLM accuracy"
        return ("bound", note) if row.bound else ("reference", note)
    errors = first_error(outcome.rows)
    if errors:
        return "failed", errors
    replay = outcome.report.get("replay") or {}
    if replay.get("by_id"):
        return "failed", (
            f"{replay['by_id']} replayed calls were answered by question id, not by their prompt: the "
            "replies were not given to the prompts tkgqa sent"
        )
    ours, theirs = run_family(llm), model_family(row.paper_model)
    if ours == TEST_LLM_FAMILY:
        return "ran-fake-llm", (
            f"{describe_llm(llm)}: tkgqa's test LLM (canned replies, not a model; the paper used "
            f"{row.paper_model or 'an unnamed model'}): ran without error, its number is no model's accuracy"
        )
    if theirs is None or ours != theirs:
        return "ran-other-model", (
            f"the paper used {row.paper_model or 'an unnamed model'}; this run used {describe_llm(llm)}"
        )
    note = ""
    if replay:
        note = f"replayed: {replay.get('exact', 0)} calls by their exact prompt"
        note += f", {replay['reask']} parse re-asks of a recorded exchange" if replay.get("reask") else ""
    return "ran", note


def fill(
    planned: PlannedCell,
    outcome: RunOutcome | None,
    *,
    llm: str | None,
    limit: int | None,
    recording: Recording | None = None,
) -> Cell:
    """The cell with our number read off its run, and the status it earned (or n/a with the reason)."""
    cell = planned.base()
    if planned.run is None or outcome is None:
        return _replace(cell, reason=planned.reason)
    run_dir = str(outcome.run_dir)
    key = planned.run
    model = describe_llm(llm) if key.llm else OFFLINE_MODEL
    if outcome.error:
        return _replace(cell, status="failed", reason=outcome.error, run_dir=run_dir, model=model)
    rows = [r for r in outcome.rows if matches(r, outcome.questions.get(r.qid), planned.column.filter)]
    values = metric_values(rows, Metric(cell.metric))
    if not values:
        return _replace(cell, reason="no question of this column in the run (n = 0)", run_dir=run_dir)
    status, reason = earned(planned, outcome, rows, llm)
    scale = 100.0 if planned.table.scale is Scale.PERCENT else 1.0
    lo, hi = mean_interval(values)
    all_failed = all(r.failed for r in rows)
    return _replace(
        cell,
        ours=None if all_failed else round(scale * sum(values) / len(values), 4),
        n=len(values),
        ci=None if all_failed else (round(scale * lo, 4), round(scale * hi, 4)),
        model=model,
        status=status,
        reason=reason,
        run_dir=run_dir,
        deviations=deviations_of(key, outcome, limit, recording),
    )


def _replace(cell: Cell, **changes: Any) -> Cell:
    return replace(cell, **changes)
