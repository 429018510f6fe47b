"""The runs browser's "gold facts" of a question, and the fingerprint of the served KG. No FastAPI here.

A run row shows what the method answered; :func:`gold_facts` shows what the KG says about the *gold*
answer for that question: the facts of the served KG that link an entity the question names to the gold
entity (or, for a time answer, the facts of the question's entities at the gold time), those inside the
question's time first. Only the run's own KG is searched: a run that used another KG gets none, with the
reason.

:func:`kg_fingerprint` names the KG a link was made on (``?kg=`` of a shared link): a hash of every fact
in the store's order, so two servers with the same facts agree and an append changes it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..api.views import labelled_fact
from ..datasets.base import Question
from ..errors import NotFoundError
from ..kg.base import KGStore
from ..kg.fact import Fact
from ..query.link import QuestionLinker
from ..query.resources import PerKG
from ..time import TimePoint, try_parse_time
from .queries import KGLinkers

#: Entities of the question searched for facts that link them to the gold answer.
MAX_QUESTION_ENTITIES = 3
_LINKER = QuestionLinker.anchors(MAX_QUESTION_ENTITIES)  # mention indexes cached per KG inside


def base_name(kg_name: str | None) -> str:
    """A KG's name without its as-of cut (``demo<2014-06`` → ``demo``)."""
    return str(kg_name or "").split("<")[0].strip()


def _gold_entities(kg: KGStore, linkers: KGLinkers, gold: list[str]) -> tuple[list[str], list[TimePoint]]:
    """The gold answers as KG entities (name or exact label) and as times (those that are dates)."""
    entities: list[str] = []
    times: list[TimePoint] = []
    for g in gold:
        if kg.has_entity(g):
            entities.append(g)
            continue
        try:
            entities.append(linkers.entities.resolve(g, fuzzy_threshold=2.0))  # exact name, label or alias
        except NotFoundError:
            point = try_parse_time(g)
            if point is not None:
                times.append(point)
    return list(dict.fromkeys(entities)), times


def _at(fact: Fact, point: TimePoint) -> bool:
    """Whether ``fact`` starts or ends within ``point`` (a day, month or year)."""
    iso = point.iso()
    return any(t is not None and t.iso().startswith(iso) for t in (fact.start, fact.end))


def supporting_facts(
    kg: KGStore, linkers: KGLinkers, question: str, gold: list[str]
) -> tuple[list[Fact], list[str]]:
    """The facts of ``kg`` that support ``gold`` for ``question`` (see the module docstring), and the
    question entities they were searched from."""
    anchors = _LINKER.link(Question(qid="gold", text=question), kg).anchors
    asked = set(anchors.entities)
    entities, times = _gold_entities(kg, linkers, gold)
    found: dict[Fact, None] = {}
    for g in entities:
        for f in kg.incident(g):
            other = f.object if f.subject == g else f.subject
            if other in asked and other != g:
                found[f] = None
    for point in times:
        for e in anchors.entities:
            for f in kg.incident(e):
                others = {f.subject, f.object} - {e}
                if _at(f, point) and (len(asked) < 2 or others & asked):
                    found[f] = None

    def key(f: Fact) -> tuple[bool, int]:
        inside = any(_at(f, t) for t in anchors.times)
        return (not inside, f.start.first_day if f.start is not None else 0)

    return sorted(found, key=key), list(anchors.entities)


def gold_facts(kg: KGStore, linkers: KGLinkers, row: dict[str, Any], limit: int) -> dict[str, Any]:
    """``{"qid", "gold", "total", "facts", "entities", "note"}`` for one run row (the answer view of
    :func:`tkgqa.service.run_diff.run_question`): at most ``limit`` labelled facts; ``note`` says why there
    are none (another KG, no entity in the question, no fact found)."""
    gold = [str(g) for g in row.get("gold") or []]
    out: dict[str, Any] = {"qid": row.get("qid", ""), "gold": gold, "total": 0, "facts": [], "entities": []}
    used = base_name(row.get("kg"))
    served = base_name(getattr(kg, "name", ""))
    if used and used != served:
        return out | {"note": f"the run used the KG {used}; this server serves {served}"}
    if not gold:
        return out | {"note": "the run gives no gold answer for this question"}
    facts, asked = supporting_facts(kg, linkers, str(row.get("question", "")), gold)
    out["entities"] = [kg.label(e) for e in asked]
    out["total"] = len(facts)
    out["facts"] = [labelled_fact(f, kg) for f in facts[:limit]]
    if not asked:
        out["note"] = "no fact found: the question names no entity of this KG"
    elif not facts:
        out["note"] = "no fact found linking " + ", ".join(out["entities"]) + " to the gold answer"
    elif not used:
        out["note"] = "the run does not record its KG: searched the served KG"
    return out


def kg_fingerprint(kg: KGStore) -> str:
    """16 hex digits of sha256 over every fact of ``kg`` in its order, computed once per store and again after
    an append (the one per-KG cache, :class:`~tkgqa.query.PerKG`)."""
    return _FINGERPRINTS.get(kg)


def _fingerprint_of(kg: KGStore) -> str:
    digest = hashlib.sha256()
    iso: dict[TimePoint | None, str] = {None: ""}  # a KG has far fewer distinct times than facts
    lines: list[str] = []
    for f in kg:
        start = iso.get(f.start)
        if start is None:
            start = iso[f.start] = f.start.iso()  # type: ignore[union-attr]
        end = iso.get(f.end)
        if end is None:
            end = iso[f.end] = f.end.iso()  # type: ignore[union-attr]
        lines.append(f"{f.subject}\t{f.relation}\t{f.object}\t{start}\t{end}\n")
        if len(lines) >= 4096:
            digest.update("".join(lines).encode())
            lines.clear()
    digest.update("".join(lines).encode())
    return digest.hexdigest()[:16]


_FINGERPRINTS: PerKG[str] = PerKG(_fingerprint_of, size=4)
