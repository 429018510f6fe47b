"""The KG endpoints: ARI operator queries, entity autocomplete, an entity's neighbourhood and (only with
``tkgqa serve --allow-append``) appending facts. Facts always carry their labels next to their names."""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Query

from ..errors import ConfigError
from ..kg.neighborhood import entity_lifetime, subgraph
from ..kg.queries import QUERY_OPS, run_operator
from .errors import NotAllowedError
from .live import parse_fact_lines, persists_appends
from .models import AppendIn, AppendOut, EntitiesOut, ErrorBody, FactsOut, NeighborsOut
from .views import labelled_fact

if TYPE_CHECKING:
    from .app import ServiceState

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
    return {code: {"model": ErrorBody, "description": text[code]} for code in codes}


def add_kg_routes(app: FastAPI, state: ServiceState) -> None:
    live = state.live

    @app.get("/api/kg/query", response_model=FactsOut, responses=_errors(400, 404))
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

    @app.get("/api/entities", response_model=EntitiesOut)
    def entities(
        q: str = Query(..., max_length=MAX_NAME_CHARS), k: int = Query(10, ge=1, le=50)
    ) -> dict[str, Any]:
        """Autocomplete: entities whose name or label matches ``q``, best first."""
        return {"query": q, "candidates": live.derived.entities.complete(q, k)}

    @app.get("/api/kg/neighbors", response_model=NeighborsOut, responses=_errors(404))
    def neighbors(
        entity: str = Query(..., min_length=1, max_length=MAX_NAME_CHARS, description="Name or label."),
        time: str | None = Query(None, max_length=60, description="Only facts overlapping this time."),
        limit: int = Query(20, ge=1, le=200),
    ) -> dict[str, Any]:
        """An entity's 1-hop neighbourhood (``tkgqa kg neighbors``): its facts, neighbours (most connected
        first) and lifetime."""
        kg = live.kg
        name = (
            entity
            if kg.has_entity(entity)
            else live.derived.linkers.entities.resolve(entity, fuzzy_threshold=2.0)
        )
        facts = subgraph(kg, name, time=time)
        counts = Counter(f.object if f.subject == name else f.subject for f in facts)
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
            "neighbors": [{"name": e, "label": kg.label(e), "facts": n} for e, n in near[:limit]],
            "facts": [labelled_fact(f, kg) for f in facts[:limit]],
        }

    @app.post("/api/kg/facts", response_model=AppendOut, responses=_errors(403, 413, 422))
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
