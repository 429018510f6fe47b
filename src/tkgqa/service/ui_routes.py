"""Endpoints the web UI reads besides the answer: ``GET /api/status`` (the server's version, the served KG's
fingerprint, the models loading right now) and ``GET /api/runs/{name}/questions/{qid}/gold-facts`` (the
facts of the served KG that support a run row's gold answer; see :mod:`tkgqa.service.gold_facts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query

from .. import __version__
from ..credentials import redact
from ..errors import NotFoundError
from ..loading import loading_now
from .gold_facts import gold_facts, kg_fingerprint
from .models import error_responses
from .run_diff import run_question
from .runs_routes import MAX_QID_CHARS
from .state import ServiceState

NOT_FOUND = error_responses({404: "No such run"})
MAX_GOLD_FACTS = 20


def ui_router(state: ServiceState) -> APIRouter:
    router = APIRouter()

    @router.get("/api/status")
    def status() -> dict[str, Any]:
        """``version`` (of tkgqa), ``kg`` and ``kg_fingerprint`` (16 hex digits of sha256 over the served
        KG's facts: a shared link carries it, so a page opened on another KG or after an append can say
        so), ``facts``, and ``loading``: the models this server is loading right now (``[{"what",
        "elapsed_ms"}]``; a first question to a method often loads one)."""
        kg = state.live.kg
        return {
            "version": __version__,
            "kg": getattr(kg, "name", None),
            "kg_fingerprint": kg_fingerprint(kg),
            "facts": len(kg),
            "loading": loading_now(),
        }

    @router.get("/api/runs/{name}/gold-facts", responses=NOT_FOUND)
    def run_gold_facts_by_query(
        name: str,
        qid: str = Query(..., max_length=MAX_QID_CHARS),
        limit: int = Query(3, ge=1, le=MAX_GOLD_FACTS),
    ) -> dict[str, Any]:
        """The facts that support question ``qid``'s gold answer in run ``name``: at most ``limit`` of the
        ``total`` facts of the served KG linking an entity the question names to the gold answer (for a
        time answer: the question's entities' facts at that time); ``note`` says why there are none (the run
        used another KG, the question names no entity, no such fact). The id as ``?qid=`` takes any id."""
        if not state.settings.runs_dir:
            raise NotFoundError("this server has no runs folder; start it with tkgqa serve --runs-dir DIR")
        live = state.live
        row = run_question(Path(state.settings.runs_dir), name, qid, live.kg.label)
        return dict(redact(gold_facts(live.kg, live.derived.linkers, row, limit)))

    @router.get("/api/runs/{name}/questions/{qid:path}/gold-facts", responses=NOT_FOUND)
    def run_gold_facts(name: str, qid: str, limit: int = Query(3, ge=1, le=MAX_GOLD_FACTS)) -> dict[str, Any]:
        """As ``/api/runs/{name}/gold-facts?qid=``, the id in the path (a ``/`` in it encoded or not)."""
        return run_gold_facts_by_query(name, qid, limit)

    return router
