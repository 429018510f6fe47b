"""The automatic grounding score: the mechanical half of FActScore (R3 Table 2 has the human half).

An answer is *grounded* when it was given (not abstained), cites at least one fact, and every fact it cites
exists in the KG. What an answer cites: the ``cited_facts`` of its ``grounding`` trace step (R3, KAPING:
fact ids resolved to facts), else the ``(head, relation, tail)`` triples written in its raw output (any
other method, e.g. chain of thought), matched to KG facts by normalised labels (a relation's qualifiers are
ignored). The score is reported over answered questions and over all questions.

Without a KG (``kg=None``: the run summary in ``report.json``, :func:`run_summary`), a cited fact counts as
existing when the trace resolved it to a KG fact at answer time (R3 cites only facts it listed, which come
from the KG); triples written in free text cannot be checked then and count as not existing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...kg.base import KGStore
from ...kg.crlt import parse_kg_triples, parse_time_literal, split_relation
from ...kg.linking import normalize
from ...outcomes import ResultRow
from ...query import PerKG
from ...trace import RecordedStep, TraceStep
from ..base import Answer
from .steps import ChoiceGroundingStep, CitationStep, GroundingStep


@dataclass(frozen=True)
class Grounding:
    answered: bool
    cited: int = 0
    existing: int = 0
    source: str = "none"  # trace | text | none

    @property
    def grounded(self) -> bool:
        return self.answered and self.cited > 0 and self.existing == self.cited

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "grounded": self.grounded}


def _index(kg: KGStore) -> set[tuple[str, str, str]]:
    out = set()
    for f in kg:
        rel = split_relation(kg.label(f.relation))[0]
        out.add((normalize(kg.label(f.subject)), normalize(rel), normalize(kg.label(f.object))))
        out.add((normalize(f.subject), normalize(split_relation(f.relation)[0]), normalize(f.object)))
    return out


_INDEXES: PerKG[set[tuple[str, str, str]]] = PerKG(_index)


_QUOTES = "\"'“”‘’ "


def _spans(text: str) -> list[str]:
    """The top-level balanced ``( … )`` spans of ``text`` that hold at least two commas."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0 and text.count(",", start, i) >= 2:
                out.append(text[start : i + 1])
    return out


def triples_in_text(text: str) -> list[tuple[str, str, str]]:
    """``(head, relation, tail)`` triples written in ``text``, read like the dataset's ``KG Triples``
    (:func:`tkgqa.kg.crlt.parse_kg_triples`: qualifiers dropped, comma-containing relations known)."""
    out = []
    for span in _spans(text or ""):
        for item in parse_kg_triples(span).items:
            out.append((item.head.strip(_QUOTES), item.relation.strip(_QUOTES), item.tail.strip(_QUOTES)))
    return out


def triple_exists(kg: KGStore, head: str, relation: str, tail: str) -> bool:
    """A written triple names a KG fact (labels normalised; a date tail also by its ISO form)."""
    index = _INDEXES.get(kg.live)
    h, r = normalize(head), normalize(relation)
    if (h, r, normalize(tail)) in index:
        return True
    lit = parse_time_literal(tail)
    return lit is not None and (h, r, normalize(lit.name)) in index


def fact_exists(kg: KGStore, fact: Mapping[str, Any]) -> bool:
    """A cited fact dict (``subject``, ``relation``, ``object``) is a fact of ``kg``."""
    s, r, o = (str(fact.get(k, "")) for k in ("subject", "relation", "object"))
    return bool(kg.facts(subject=s, relation=r, object=o, limit=1)) if kg.has_entity(s) else False


def _cited_json(step: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], int] | None:
    """A JSON step's cited fact dicts and how many cited ids resolved to no fact (``None``: not a
    ``grounding`` step)."""
    if step.get("step") != "grounding":
        return None
    return list(step.get("cited_facts") or []), len(step.get("unknown_ids") or [])


def _cited_rows(trace: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], int] | None:
    """The cited fact dicts of a row's last ``grounding`` step and how many cited ids resolved to no
    fact."""
    found = None
    for step in trace:
        found = _cited_json(step) or found
    return found


def _cited_steps(trace: Iterable[TraceStep]) -> tuple[list[Mapping[str, Any]], int] | None:
    """The same of an answer's trace: its last citing step (:data:`~.steps.CitingStep`; a plugin's step
    known only by its JSON form is read as a row's)."""
    found = None
    for step in trace:
        if isinstance(step, CitationStep):
            found = (list(step.cited_facts), len(step.unknown_ids))
        elif isinstance(step, GroundingStep | ChoiceGroundingStep):
            found = (list(step.cited_facts), 0)
        elif isinstance(step, RecordedStep):
            found = _cited_json(step.data) or found
    return found


def _resolved(fact: Mapping[str, Any]) -> bool:
    return all(str(fact.get(k) or "") for k in ("subject", "relation", "object"))


def grounding_of(answer: Answer | ResultRow, kg: KGStore | None = None) -> Grounding:
    """The grounding of one answer (an :class:`Answer` or a ``results.jsonl`` row); ``kg=None``: see the
    module's note."""
    if isinstance(answer, Answer):
        raw, answered = answer.raw_output, bool(answer.answers) and not answer.abstained
        found = _cited_steps(answer.trace) if answered else None
    else:
        raw, answered = answer.raw_output, bool(answer.predictions) and not answer.abstained
        found = _cited_rows(answer.steps()) if answered else None
    if not answered:
        return Grounding(False)
    if found is not None:
        cited, unknown = found
        exists = (lambda f: fact_exists(kg, f)) if kg is not None else _resolved
        return Grounding(True, len(cited) + unknown, sum(exists(f) for f in cited), "trace")
    triples = triples_in_text(raw)
    if triples:
        existing = sum(triple_exists(kg, *t) for t in triples) if kg is not None else 0
        return Grounding(True, len(triples), existing, "text")
    return Grounding(True)


def grounding_score(groundings: Sequence[Grounding]) -> dict[str, float]:
    """``{"n", "answered", "grounded", "score_answered", "score_all"}`` over per-answer groundings."""
    n = len(groundings)
    answered = sum(g.answered for g in groundings)
    grounded = sum(g.grounded for g in groundings)
    return {
        "n": n,
        "answered": answered,
        "grounded": grounded,
        "score_answered": grounded / answered if answered else 0.0,
        "score_all": grounded / n if n else 0.0,
    }


def run_summary(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """R3's summary of a run's ``results.jsonl`` rows (``report.json``'s ``method_metrics``): the grounding
    score (:func:`grounding_score`; error rows count as not answered), the replies the citation check
    rejected, the questions answered per search depth, and the axioms that came back as a hint."""
    scored = [grounding_of(r) if not r.failed else Grounding(False) for r in rows]
    rejected = hints = 0
    depths: dict[str, int] = {}
    for row in rows:
        for step in row.steps("r3_tree"):
            for branch in step.get("branches") or ():
                hints += bool((branch.get("axiom") or {}).get("hint"))
                rejected += sum(len(n.get("rejected") or ()) for n in branch.get("nodes") or ())
            at = step.get("answered_at")
            if isinstance(at, Mapping):
                key = str(at.get("depth"))
                depths[key] = depths.get(key, 0) + 1
    return {
        "grounding": grounding_score(scored),
        "citation_rejections": rejected,
        "answered_at_depth": dict(sorted(depths.items())),
        "axiom_hints": hints,
    }
