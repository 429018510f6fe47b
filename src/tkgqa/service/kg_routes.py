"""The KG endpoints: ARI operator queries, entity autocomplete, an entity's neighbourhood and (only with
``tkgqa serve --allow-append``) appending facts. Facts always carry their labels next to their names."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from fastapi import APIRouter, Query

from ..errors import ConfigError
from ..eval.views import labelled_fact
from ..kg.fact import Fact
from ..kg.neighborhood import entity_lifetime, subgraph
from ..kg.queries import QUERY_OPS, run_operator
from .errors import NotAllowedError
from .live import LiveKG, parse_fact_lines, persists_appends
from .models import AppendIn, AppendOut, EntitiesOut, FactsOut, NeighborsOut, error_responses
from .state import ServiceState

log = logging.getLogger("tkgqa.service")

MAX_QUERY_FACTS = 1000
MAX_NAME_CHARS = 200


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
        head: str | None = Query(None, max_length=MAX_NAME_CHARS),
        rel: str | None = Query(None, max_length=MAX_NAME_CHARS),
        tail: str | None = Query(None, max_length=MAX_NAME_CHARS),
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
        q: str = Query(..., max_length=MAX_NAME_CHARS), k: int = Query(10, ge=1, le=50)
    ) -> dict[str, Any]:
        """Autocomplete: entities whose name or label matches ``q``, best first."""
        return {"query": q, "candidates": live.derived.entities.complete(q, k)}

    @router.get("/api/kg/neighbors", response_model=NeighborsOut, responses=_errors(404))
    def neighbors(
        entity: str = Query(..., min_length=1, max_length=MAX_NAME_CHARS, description="Name or label."),
        time: str | None = Query(None, max_length=60, description="Only facts overlapping this time."),
        relation: str | None = Query(None, max_length=MAX_NAME_CHARS, description="Only this relation."),
        counterpart: str | None = Query(
            None, max_length=MAX_NAME_CHARS, description="Only facts with this other entity."
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
        if not state.settings.allow_append:
            raise NotAllowedError(
                "appending facts is off on this server; start it with tkgqa serve --allow-append"
            )
        if not hasattr(live.kg, "add"):
            raise ConfigError(f"the KG {getattr(live.kg, 'name', '')!r} cannot take appends")
        persisted = persists_appends(live.kg)
        if not persisted and not state.settings.ephemeral_append:
            raise NotAllowedError(
                "this server's KG is held in memory only: appended facts would be lost at restart; serve a "
                "DuckDB store (tkgqa kg convert KG store.duckdb, then --kg store.duckdb), or start the "
                "server with --ephemeral-append to accept appends that last until restart"
            )
        facts = parse_fact_lines(body.lines)
        added = live.append(facts)
        if added:
            state.pool.reset()  # method instances cache per-KG indexes: rebuild them on the next question
        log.info("append facts=%d added=%d persisted=%s", len(facts), added, persisted)
        note = (
            None if persisted else "held in memory only (--ephemeral-append): lost when the server restarts"
        )
        return {"added": added, "facts": len(live.kg), "persisted": persisted, "note": note}

    return router


def _resolve(live: LiveKG, name: str) -> str:
    kg = live.kg
    return name if kg.has_entity(name) else live.derived.linkers.entities.resolve(name, fuzzy_threshold=2.0)


def neighbourhood(
    live: LiveKG,
    entity: str,
    time: str | None,
    relation: str | None,
    counterpart: str | None,
    offset: int,
    limit: int,
) -> dict[str, Any]:
    """The body of ``GET /api/kg/neighbors`` (see there)."""
    kg = live.kg
    name = _resolve(live, entity)
    facts = subgraph(kg, name, time=time)

    def other(f: Fact) -> str:
        return f.object if f.subject == name else f.subject

    by_relation = Counter(f.relation for f in facts)
    by_year = Counter(f.start.iso()[:4] for f in facts if f.start is not None)
    if relation:
        rel = relation if relation in by_relation else live.derived.linkers.relations.resolve(relation)
        facts = [f for f in facts if f.relation == rel]
    if counterpart:
        who = _resolve(live, counterpart)
        facts = [f for f in facts if other(f) == who]
    counts = Counter(other(f) for f in facts)
    counts.pop(name, None)
    near = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    life = entity_lifetime(kg, name).to_dict()
    return {
        "entity": name,
        "label": kg.label(name),
        "first": life["first"],
        "last": life["last"],
        "n_facts": len(facts),
        "n_neighbors": len(near),
        "offset": offset,
        "neighbors": [{"name": e, "label": kg.label(e), "facts": n} for e, n in near[:limit]],
        "facts": [labelled_fact(f, kg) for f in facts[offset : offset + limit]],
        "relations": [{"name": r, "label": kg.label(r), "facts": n} for r, n in by_relation.most_common(50)],
        "years": sorted(by_year.items()),
    }
