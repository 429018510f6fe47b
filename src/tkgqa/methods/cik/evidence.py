"""CIK-LLM §3.1.2: the evidence set as text, plain or compressed (Figure 3), and answer decompression.

Plain form (the paper's "w/o compression"): a JSON-like dictionary keyed by question entity, then by time
interval (``START/END``, ISO 8601 interval notation; a point is just its date), in increasing time order,
each fact written ``RELATION(HEAD,TAIL,START,END)`` with full labels::

    {"Darren Anderton": {"1990/1992": ["member of sports team(Darren Anderton,Tottenham,1990,1992)"]}}

Compressed form: every entity and relation is replaced by a short variable (question entities ``X1…``,
relations ``R1…``, other entities ``e1…``, numbered by first appearance); the *associative map* given to the
LLM holds the question entities and the relations only, as in the paper's Listing 2 — other entities stay
opaque and the LLM answers with their variables, which :meth:`AssociativeMap.decompress` maps back to labels.
Variables are identifiers, so compressed facts and keys need no quotes (as in Listing 2's ``{1958: [...]}``),
and the facts of each question entity are nested by year, then month, then day (as deep as the finest
point fact; ``..`` = unknown at that precision), intervals under their ``START/END`` key, so no time is
repeated inside a fact::

    {X1: {1990/1992: [R1(X1,e1)], 1992/2004: [R1(X1,e2)], 1993: [R2(X1,e3)]}}
    {X1: {2005: {09: {05: [R1(e1,X1)], 08: [R1(e3,X1), R1(X1,e4)]}}}}

``elide_times=False`` keeps the paper's exact compressed form: the plain grouping, variables only
(``"R1(X1,e1,1990,1992)"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...kg import Fact, KGStore
from ...llm.tokens import Tokenizer, count_tokens
from ...time import NEG_INF
from .pruning import EvidenceFact

_VAR = re.compile(r"\b([XRe][0-9]+)\b")


def time_key(fact: Fact) -> str:
    """``2005-01-03`` for a point, ``1990/1992`` for an interval, ``..`` for an open end, ``-`` if none."""
    if fact.start is None and fact.end is None:
        return "-"
    if fact.is_point:
        return str(fact.start)
    return f"{fact.start or '..'}/{fact.end or '..'}"


def _sort_key(key_fact: tuple[str, Fact]) -> tuple[int, str]:
    f = key_fact[1]
    return (f.start.first_day if f.start else NEG_INF, key_fact[0])


def group_by_entity_and_time(items: Sequence[EvidenceFact]) -> dict[str, dict[str, list[Fact]]]:
    """``{question entity: {time key: [facts]}}``, entities in first-seen order, keys in time order."""
    out: dict[str, list[tuple[str, Fact]]] = {}
    for it in items:
        out.setdefault(it.entity, []).append((time_key(it.fact), it.fact))
    grouped: dict[str, dict[str, list[Fact]]] = {}
    for entity, pairs in out.items():
        groups: dict[str, list[Fact]] = {}
        for key, f in sorted(pairs, key=_sort_key):
            groups.setdefault(key, []).append(f)
        grouped[entity] = groups
    return grouped


def _bound(t: object) -> str:
    return str(t) if t is not None else ".."


@dataclass
class AssociativeMap:
    """Name ↔ variable tables built while compressing; ``labels`` maps each name to its display label."""

    question_entities: dict[str, str] = field(default_factory=dict)
    relations: dict[str, str] = field(default_factory=dict)
    entities: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def var(self, name: str, kind: str) -> str:
        table, prefix = {
            "question": (self.question_entities, "X"),
            "relation": (self.relations, "R"),
            "entity": (self.entities, "e"),
        }[kind]
        if kind == "entity" and name in self.question_entities:
            return self.question_entities[name]
        found = table.get(name)
        if found is None:
            found = table[name] = f"{prefix}{len(table) + 1}"
        return found

    @property
    def variables(self) -> dict[str, str]:
        """Variable → name for every variable."""
        out: dict[str, str] = {}
        for table in (self.question_entities, self.relations, self.entities):
            out.update({v: k for k, v in table.items()})
        return out

    def prompt_text(self) -> str:
        """The map shown to the LLM: question entities and relations (``X1="Darren Anderton"; R1=…``)."""
        parts = [
            f"{v}={json.dumps(self.labels.get(k, k), ensure_ascii=False)}"
            for k, v in self.question_entities.items()
        ]
        parts += [
            f"{v}={json.dumps(self.labels.get(k, k), ensure_ascii=False)}" for k, v in self.relations.items()
        ]
        return "; ".join(parts)

    def decompress(self, text: str) -> str:
        """Replace every variable in ``text`` by its label (unknown variable-like words stay)."""
        variables = self.variables

        def sub(m: re.Match[str]) -> str:
            name = variables.get(m.group(1))
            return self.labels.get(name, name) if name is not None else m.group(0)

        return _VAR.sub(sub, text)

    def decompress_answer(self, answer: str) -> str:
        stripped = answer.strip()
        name = self.variables.get(stripped)
        if name is not None:
            return self.labels.get(name, name)
        return self.decompress(answer)


@dataclass(frozen=True)
class RenderedEvidence:
    text: str
    map: AssociativeMap | None
    n_facts: int

    @property
    def map_text(self) -> str:
        return self.map.prompt_text() if self.map is not None else ""

    def tokens(self, tokenizer: Tokenizer | None = None) -> int:
        """Tokens of the evidence block plus the associative map (what the prompt carries)."""
        return count_tokens(self.text, tokenizer) + count_tokens(self.map_text, tokenizer)


def _labels(kg: KGStore | None, names: Sequence[str]) -> dict[str, str]:
    return {n: (kg.label(n) if kg is not None else n.replace("_", " ")) for n in names}


def render_plain(items: Sequence[EvidenceFact], kg: KGStore | None) -> RenderedEvidence:
    """The uncompressed evidence set (module docstring)."""
    grouped = group_by_entity_and_time(items)
    names = {n for it in items for n in (it.entity, it.fact.subject, it.fact.relation, it.fact.object)}
    label = _labels(kg, sorted(names))
    out: dict[str, dict[str, list[str]]] = {}
    for entity, groups in grouped.items():
        out[label[entity]] = {
            key: [
                f"{label[f.relation]}({label[f.subject]},{label[f.object]},{_bound(f.start)},{_bound(f.end)})"
                for f in facts
            ]
            for key, facts in groups.items()
        }
    return RenderedEvidence(json.dumps(out, ensure_ascii=False), None, len(items))


def time_path(fact: Fact, depth: int) -> tuple[str, ...]:
    """Where a fact sits in the compressed time tree: ``(year, month, day)`` cut to ``depth`` for points
    (``..`` = not known at that precision), ``(START/END,)`` for intervals and open or missing times."""
    p = fact.start
    if p is None or not fact.is_point:
        return (time_key(fact),)
    parts = [p.iso().rsplit("-", 2)[0] if p.day else p.iso().rsplit("-", 1)[0] if p.month else p.iso()]
    parts.append(f"{p.month:02d}" if p.month else "..")
    parts.append(f"{p.day:02d}" if p.day else "..")
    return tuple(parts[:depth])


def _tree_depth(facts: Sequence[Fact]) -> int:
    points = [f.start for f in facts if f.start is not None and f.is_point]
    return max((int(p.granularity) for p in points), default=1)


def _render_tree(node: dict[str, Any] | list[str]) -> str:
    if isinstance(node, list):
        return "[" + ", ".join(node) + "]"
    return "{" + ", ".join(f"{k}: {_render_tree(v)}" for k, v in node.items()) + "}"


def render_compressed(
    items: Sequence[EvidenceFact],
    kg: KGStore | None,
    question_entities: Sequence[str] = (),
    *,
    elide_times: bool = True,
) -> RenderedEvidence:
    """The compressed evidence set and its associative map (module docstring)."""
    amap = AssociativeMap()
    for e in question_entities:
        amap.var(e, "question")
    for it in items:
        amap.var(it.entity, "question")
    grouped = group_by_entity_and_time(items)
    entity_blocks: list[str] = []
    for entity, groups in grouped.items():
        depth = _tree_depth([f for facts in groups.values() for f in facts])
        tree: dict[str, Any] = {}
        for key, facts in groups.items():
            terms = []
            for f in facts:
                r, h, t = (
                    amap.var(f.relation, "relation"),
                    amap.var(f.subject, "entity"),
                    amap.var(f.object, "entity"),
                )
                if elide_times:
                    terms.append(f"{r}({h},{t})")
                else:
                    terms.append(json.dumps(f"{r}({h},{t},{_bound(f.start)},{_bound(f.end)})"))
            if not elide_times:
                tree[json.dumps(key)] = terms
                continue
            *branch, leaf = time_path(facts[0], depth)
            node = tree
            for part in branch:
                node = node.setdefault(part, {})
            node.setdefault(leaf, []).extend(terms)
        entity_blocks.append(f"{amap.var(entity, 'question')}: {_render_tree(tree)}")
    names = [*amap.question_entities, *amap.relations, *amap.entities]
    amap.labels = _labels(kg, names)
    return RenderedEvidence("{" + ", ".join(entity_blocks) + "}", amap, len(items))


def token_counts(
    items: Sequence[EvidenceFact],
    kg: KGStore | None,
    question_entities: Sequence[str] = (),
    tokenizer: Tokenizer | None = None,
) -> dict[str, int]:
    """Tokens of the same facts rendered plain, compressed (ours) and compressed the paper's exact way."""
    if not items:
        return {"uncompressed": 0, "compressed": 0, "compressed_paper": 0}
    return {
        "uncompressed": render_plain(items, kg).tokens(tokenizer),
        "compressed": render_compressed(items, kg, question_entities).tokens(tokenizer),
        "compressed_paper": render_compressed(items, kg, question_entities, elide_times=False).tokens(
            tokenizer
        ),
    }
