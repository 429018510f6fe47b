"""The runs browser's endpoints (``tkgqa serve --runs-dir DIR``): list the ``tkgqa eval`` folders, a run's
report and chart, its per-question results filtered by outcome. Without ``--runs-dir`` they answer 404.

What they serve goes through :func:`~tkgqa.credentials.redact` (a key a model echoed into an old
``results.jsonl`` is masked here too). A question id may contain ``/``: the routes take it as a path
(``{qid:path}``), and also as the query parameter ``?qid=`` (``/api/runs/{name}/question?qid=…``), which
the web UI uses (a browser rewrites ``.`` and ``..`` path segments, even percent-encoded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ..credentials import redact
from ..errors import NotFoundError
from .models import RunAnswerOut, RunDiffOut, RunReportOut, RunResultsOut, RunsOut, error_responses
from .run_diff import run_diff, run_question
from .runs import ResultsFilter, list_runs, run_chart, run_report, run_results
from .state import ServiceState

NOT_FOUND = error_responses({404: "No such run"})
#: The longest question id the runs routes look up.
MAX_QID_CHARS = 1000


def runs_router(state: ServiceState) -> APIRouter:
    router = APIRouter()

    def root() -> Path:
        if not state.settings.runs_dir:
            raise NotFoundError("this server has no runs folder; start it with tkgqa serve --runs-dir DIR")
        return Path(state.settings.runs_dir)

    @router.get("/api/runs", response_model=RunsOut, responses=NOT_FOUND)
    def runs() -> dict[str, Any]:
        """The ``tkgqa eval`` output folders under the server's ``--runs-dir``, newest first."""
        return {"runs": redact(list_runs(root()))}

    @router.get("/api/runs/{name}", response_model=RunReportOut, responses=NOT_FOUND)
    def report(name: str) -> dict[str, Any]:
        """A run's summary, its ``report.md``, whether it has a chart, and how many questions it got right,
        wrong, abstained on or failed."""
        return dict(redact(run_report(root(), name)))

    @router.get("/api/runs/{name}/chart", response_class=Response, responses=NOT_FOUND)
    def chart(name: str) -> Response:
        """The run's ``breakdown.png``."""
        return Response(run_chart(root(), name), media_type="image/png")

    @router.get("/api/runs/{name}/results", response_model=RunResultsOut, responses=NOT_FOUND)
    def results(
        name: str,
        outcome: ResultsFilter = Query(ResultsFilter.ALL),
        offset: int = Query(0, ge=0),
        limit: int = Query(50, ge=1, le=200),
    ) -> dict[str, Any]:
        """Per-question results with the given outcome, each in the answer view's shape."""
        return dict(redact(run_results(root(), name, outcome, offset, limit, state.live.kg.label)))

    @router.get("/api/runs/{name}/question", response_model=RunAnswerOut, responses=NOT_FOUND)
    def question_by_query(name: str, qid: str = Query(..., max_length=MAX_QID_CHARS)) -> dict[str, Any]:
        """One question of a run (its id as ``?qid=``: any id, ``/``, ``.`` and ``..`` included)."""
        return dict(redact(run_question(root(), name, qid, state.live.kg.label)))

    @router.get("/api/runs/{name}/questions/{qid:path}", response_model=RunAnswerOut, responses=NOT_FOUND)
    def question(name: str, qid: str) -> dict[str, Any]:
        """One question of a run, in the answer view's shape (an id with ``/`` percent-encoded or not)."""
        return question_by_query(name, qid)

    @router.get("/api/runs/{name}/diff/{other}", response_model=RunDiffOut, responses=NOT_FOUND)
    def diff(name: str, other: str) -> dict[str, Any]:
        """Run ``name`` (A) against run ``other`` (B): what ``tkgqa eval-compare`` computes (strict Hits@1
        of each and McNemar's test on the common questions) and, per common question, both outcomes."""
        return dict(redact(run_diff(root(), name, other)))

    return router
