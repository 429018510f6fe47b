"""KG inspection shared by the CLI (``tkgqa kg info``/``query``) and the service (``/api/kg``,
``/api/kg/query``): the summary of a store and one ARI operator run from user-given names or labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..time import parse_time
from . import operators as ops
from .base import KGStore
from .builder import load_warnings
from .fact import Fact
from .linking import EntityLinker, RelationLinker

QUERY_OPS = tuple(ops.OPERATORS)  # the ARI operators, in their order
FILTER_OPS = {"get_before": ops.get_before, "get_after": ops.get_after, "get_during": ops.get_during}


def check_operator_args(
    op: str,
    head: str | None,
    rel: str | None,
    tail: str | None,
    time: str | None,
    time2: str | None = None,
    *,
    flag: str = "",
) -> None:
    """Raise ConfigError naming what ``op`` lacks; ``flag`` prefixes argument names (``"--"`` in the CLI)."""
    if op not in QUERY_OPS:
        raise ConfigError(f"unknown operator {op!r}; use one of {', '.join(QUERY_OPS)}")
    needs = {
        "get_tail_entity": ("head", "rel"),
        "get_head_entity": ("tail", "rel"),
        "get_time": ("head", "rel", "tail"),
    }
    given = {"head": head, "rel": rel, "tail": tail}
    missing = [name for name in needs.get(op, ()) if given[name] is None]
    if missing:
        names = [flag + n for n in needs[op]]
        listed = " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"
        raise ConfigError(f"{op} needs {listed} (missing: {', '.join(flag + m for m in missing)})")
    if head is None and tail is None:
        raise ConfigError(
            f"{op} filters the facts of an entity lookup: give {flag}head and/or {flag}tail (and {flag}rel)"
        )
    if op in {"get_before", "get_after", "get_during", "get_between"} and time is None:
        raise ConfigError(f"{op} needs {flag}time")
    if op == "get_between" and time2 is None:
        raise ConfigError(f"get_between needs {flag}time and {flag}time2")
    _check_times(op, time, time2, flag)


#: The operators that read a time (``time2`` only ``get_between``).
TIMED_OPS = frozenset(
    {"get_tail_entity", "get_head_entity", "get_before", "get_after", "get_during", "get_between"}
)


def _check_times(op: str, time: str | None, time2: str | None, flag: str) -> None:
    """A time ``op`` would ignore, or a ``get_between`` window that ends before it starts, is a ConfigError
    (both answered silently before: the time dropped, or no fact)."""
    if time is not None and op not in TIMED_OPS:
        raise ConfigError(f"{op} takes no {flag}time (it picks from the facts of the lookup): drop it")
    if time2 is not None and op != "get_between":
        raise ConfigError(f"{flag}time2 is the end of get_between's window; {op} takes none: drop it")
    if op == "get_between" and time is not None and time2 is not None:
        start, end = parse_time(time), parse_time(time2)
        if start.first_day > end.last_day:
            raise ConfigError(f"get_between: {flag}time {time} is after {flag}time2 {time2}; swap them")


@dataclass(frozen=True)
class KGLinkers:
    """Entity and relation linkers of one KG, built once (they index every name and label)."""

    entities: EntityLinker
    relations: RelationLinker

    @classmethod
    def from_kg(cls, kg: KGStore) -> KGLinkers:
        return cls(EntityLinker.from_kg(kg), RelationLinker.from_kg(kg))


def run_operator(
    kg: KGStore,
    linkers: KGLinkers | None,
    op: str,
    *,
    head: str | None = None,
    rel: str | None = None,
    tail: str | None = None,
    time: str | None = None,
    time2: str | None = None,
) -> list[Fact]:
    """Run one ARI operator like ``tkgqa kg query``: entity lookups use head/rel/tail (and time for
    get_tail_entity/get_head_entity); the other operators filter the facts of the head/rel/tail lookup.
    Names or labels are accepted; an unknown one raises NotFoundError with near matches. ``linkers`` (built
    once per KG by a long-lived caller) are built here when ``None``."""
    linkers = linkers or KGLinkers.from_kg(kg)
    check_operator_args(op, head, rel, tail, time, time2)
    h = _resolve(kg, linkers.entities, head)
    t = _resolve(kg, linkers.entities, tail)
    r = _resolve(kg, linkers.relations, rel, relation=True)
    if op == "get_tail_entity":
        return ops.get_tail_entity(kg, h or "", r or "", time)
    if op == "get_head_entity":
        return ops.get_head_entity(kg, t or "", r or "", time)
    if op == "get_time":
        return ops.get_time(kg, h or "", r or "", t or "")
    base = kg.facts(subject=h, relation=r, object=t)
    if op in FILTER_OPS:
        return FILTER_OPS[op](base, time or "")
    if op == "get_between":
        return ops.get_between(base, time or "", time2 or "")
    return ops.get_first(base) if op == "get_first" else ops.get_last(base)


def _resolve(
    kg: KGStore, linker: EntityLinker | RelationLinker, mention: str | None, relation: bool = False
) -> str | None:
    if mention is None:
        return None
    if (kg.has_relation if relation else kg.has_entity)(mention):
        return mention
    return linker.resolve(mention, fuzzy_threshold=2.0)  # never guess: unknown → NotFoundError + suggestions


def kg_summary(kg: KGStore, path: str | None = None, top: int = 10) -> dict[str, Any]:
    """What ``tkgqa kg info --json`` prints: counts, time span and the ``top`` most frequent relations."""
    first, last = kg.time_span()
    counts = sorted(kg.relation_counts().items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    report = getattr(kg, "load_report", None)
    return {
        "name": getattr(kg, "name", None),
        "path": path or "demo",
        "format": report.format if report else None,
        "facts": len(kg),
        "entities": len(kg.entities),
        "relations": len(kg.relations),
        "labels": len(getattr(kg, "labels", {}) or {}),
        "start": first.iso() if first else None,
        "end": last.iso() if last else None,
        "top_relations": [{"relation": r, "label": kg.label(r), "count": n} for r, n in counts],
        "from_cache": bool(report and report.from_cache),
        "warnings": load_warnings(kg),  # the malformed entries the load skipped
    }
