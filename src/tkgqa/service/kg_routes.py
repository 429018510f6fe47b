"""The KG endpoints: ARI operator queries, entity autocomplete, an entity's neighbourhood and (only with
``tkgqa serve --allow-append``) appending facts. Facts always carry their labels next to their names."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from ..api.views import labelled_fact
from ..kg.queries import QUERY_OPS, run_operator
from .kg_views import append_lines, neighbourhood
from .models import AppendIn, AppendOut, EntitiesOut, FactsOut, NeighborsOut, error_responses
from .policy import MAX_CLIENT_NAME_CHARS
from .state import ServiceState

MAX_QUERY_FACTS = 1000


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    text = {
        400: "Bad operator arguments",
        403: "Appending is off (--allow-append), or the KG cannot keep appends (--ephemeral-append)",
        404: "Unknown entity or relation (with suggestions)",
        413: "Body over the size limit",
        422: "Invalid request or bad fact lines (each reported as request:LINE)",
    }
    return error_responses({code: text[code] for code in codes})


def kg_router(state: ServiceState) -> APIRouter:
    router = APIRouter()
    live = state.live

    @router.get("/api/kg/query", response_model=FactsOut, responses=_errors(400, 404))
    def kg_query(
        op: str = Query(..., max_length=40, description="ARI operator: " + ", ".join(QUERY_OPS)),
        head: str | None = Query(None, max_length=MAX_CLIENT_NAME_CHARS),
        rel: str | None = Query(None, max_length=MAX_CLIENT_NAME_CHARS),
        tail: str | None = Query(None, max_length=MAX_CLIENT_NAME_CHARS),
        time: str | None = Query(None, max_length=60),
        time2: str | None = Query(None, max_length=60),
        limit: int = Query(100, ge=1, le=MAX_QUERY_FACTS),
    ) -> dict[str, Any]:
        """Run one ARI operator (``tkgqa kg query``); names or labels are accepted."""
        kg = live.kg
        facts = run_operator(
            kg, live.derived.linkers, op, head=head, rel=rel, tail=tail, time=time, time2=time2
        )
        return {"op": op, "count": len(facts), "facts": [labelled_fact(f, kg) for f in facts[:limit]]}

    @router.get("/api/entities", response_model=EntitiesOut)
    def entities(
        q: str = Query(..., max_length=MAX_CLIENT_NAME_CHARS), k: int = Query(10, ge=1, le=50)
    ) -> dict[str, Any]:
        """Autocomplete: entities whose name or label matches ``q``, best first."""
        return {"query": q, "candidates": live.derived.entities.complete(q, k)}

    @router.get("/api/kg/neighbors", response_model=NeighborsOut, responses=_errors(404))
    def neighbors(
        entity: str = Query(
            ..., min_length=1, max_length=MAX_CLIENT_NAME_CHARS, description="Name or label."
        ),
        time: str | None = Query(None, max_length=60, description="Only facts overlapping this time."),
        relation: str | None = Query(
            None, max_length=MAX_CLIENT_NAME_CHARS, description="Only this relation."
        ),
        counterpart: str | None = Query(
            None, max_length=MAX_CLIENT_NAME_CHARS, description="Only facts with this other entity."
        ),
        offset: int = Query(0, ge=0, description="Facts to skip (paging)."),
        limit: int = Query(20, ge=1, le=200),
    ) -> dict[str, Any]:
        """An entity's 1-hop neighbourhood (``tkgqa kg neighbors``): its facts (``n_facts`` of them after
        the filters, ``offset``/``limit`` a page of them), neighbours (most connected first), lifetime,
        facts per relation and per year (of all its facts in the time window)."""
        return neighbourhood(live, entity, time, relation, counterpart, offset, limit)

    @router.post("/api/kg/facts", response_model=AppendOut, responses=_errors(403, 413, 422))
    def append_facts(body: AppendIn) -> dict[str, Any]:
        """Append facts to the served KG (tab-separated lines); the next question sees them. Off unless the
        server was started with ``--allow-append`` (and, bound beyond loopback, behind its API token)."""
        return append_lines(state, body.lines)

    return router
