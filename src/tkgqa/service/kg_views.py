"""The KG views the service's front ends share (``/api/kg/neighbors``, ``POST /api/kg/facts`` and the MCP
server's ``neighbors`` and ``append_facts`` tools): an entity's neighbourhood and appending facts under the
server's policy. No FastAPI here."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from ..api.views import labelled_fact
from ..errors import ConfigError
from ..kg.fact import Fact
from ..kg.neighborhood import entity_lifetime, subgraph
from .errors import NotAllowedError
from .live import LiveKG, parse_fact_lines, persists_appends
from .state import ServiceState

log = logging.getLogger("tkgqa.service")


def append_lines(state: ServiceState, lines: str) -> dict[str, Any]:
    """Append the facts of tab-separated ``lines`` to the served KG (the body of ``POST /api/kg/facts``):
    NotAllowedError unless the server allows appends to a store that keeps them (or accepts ephemeral ones);
    the method instances are dropped after an append (their per-KG caches are stale)."""
    live = state.live
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
    facts = parse_fact_lines(lines)
    added = live.append(facts)
    if added:
        state.pool.reset()  # method instances cache per-KG indexes: rebuild them on the next question
    log.info("append facts=%d added=%d persisted=%s", len(facts), added, persisted)
    note = None if persisted else "held in memory only (--ephemeral-append): lost when the server restarts"
    return {"added": added, "facts": len(live.kg), "persisted": persisted, "note": note}


def resolve_name(live: LiveKG, name: str) -> str:
    """The KG name of an entity ``name`` or label (exact, else a clear match); NotFoundError otherwise."""
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
    name = resolve_name(live, entity)
    facts = subgraph(kg, name, time=time)

    def other(f: Fact) -> str:
        return f.object if f.subject == name else f.subject

    by_relation = Counter(f.relation for f in facts)
    by_year = Counter(f.start.iso()[:4] for f in facts if f.start is not None)
    if relation:
        rel = relation if relation in by_relation else live.derived.linkers.relations.resolve(relation)
        facts = [f for f in facts if f.relation == rel]
    if counterpart:
        who = resolve_name(live, counterpart)
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
