"""Two runs of the runs browser side by side: what ``tkgqa eval-compare`` computes
(:func:`tkgqa.eval.report.compare_runs`: strict Hits@1 of each, McNemar's test on the common questions),
plus, per common question, each run's outcome and answers and what changed. No FastAPI here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import NotFoundError
from ..eval.report import compare_runs, read_results
from ..outcomes import ResultRow
from ..sanitize import clean_json
from .runs import ResultsFilter, confined, run_dir, run_results

MAX_DIFF_QUESTIONS = 2000


def _change(a: ResultRow, b: ResultRow) -> str:
    hit_a, hit_b = a.strict_hit, b.strict_hit
    if hit_a and hit_b:
        return "both_right"
    if hit_a:
        return "only_a_right"
    if hit_b:
        return "only_b_right"
    return "both_wrong"


def _side(row: ResultRow) -> dict[str, Any]:
    return {"outcome": row.outcome.value, "answers": [str(p) for p in row.predictions][:5]}


def run_diff(root: Path, name_a: str, name_b: str) -> dict[str, Any]:
    """``compare_runs`` of runs ``name_a`` and ``name_b`` (named by run, never by server path) and the
    common questions, those the runs disagree on first (``change``: only_a_right, only_b_right,
    both_right, both_wrong)."""
    folder_a, folder_b = run_dir(root, name_a), run_dir(root, name_b)
    for name, folder in ((name_a, folder_a), (name_b, folder_b)):  # results read only inside the runs folder
        if confined(root, folder / "results.jsonl") is None:
            raise NotFoundError(f"run {name!r} has no results.jsonl inside the runs folder")
    summary = compare_runs(folder_a, folder_b)
    rows_b = {r.qid: r for r in read_results(folder_b)}
    questions: list[dict[str, Any]] = []
    for a in read_results(folder_a):
        b = rows_b.get(a.qid)
        if b is None:
            continue
        questions.append(
            {
                "qid": a.qid,
                "question": a.question,
                "gold": [str(g) for g in a.gold],
                "a": _side(a),
                "b": _side(b),
                "change": _change(a, b),
            }
        )
    order = {"only_a_right": 0, "only_b_right": 1, "both_wrong": 2, "both_right": 3}
    questions.sort(key=lambda q: order[q["change"]])
    return clean_json(
        {
            **summary,
            "run_a": name_a,
            "run_b": name_b,
            "questions": questions[:MAX_DIFF_QUESTIONS],
        }
    )


def run_question(root: Path, name: str, qid: str, label: Callable[[str], str]) -> dict[str, Any]:
    """One question of a run in the answer view's shape (a ``?run=&qid=`` link)."""
    offset = 0
    while True:
        page = run_results(root, name, ResultsFilter.ALL, offset, 200, label)
        for row in page["results"]:
            if row["qid"] == qid:
                return row
        offset += 200
        if offset >= page["total"]:
            raise NotFoundError(f"run {name!r} has no question {qid[:80]!r}")
