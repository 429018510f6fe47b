"""CIK-LLM §3.1.2: the evidence set as text, plain or compressed (Figure 3), and its decompression.

Plain form (the paper's "w/o compression"): a JSON-like dictionary keyed by question entity, then by time
interval (``START/END``, ISO 8601 interval notation; a point is just its date), in increasing time order,
each fact written ``RELATION(HEAD,TAIL,START,END)`` with full labels::

    {"Darren Anderton": {"1990/1992": ["member of sports team(Darren Anderton,Tottenham,1990,1992)"]}}

Compressed form: every entity and relation is replaced by a short variable (question entities ``X1…``,
relations ``R1…``, other entities ``e1…``, numbered by first appearance); the *associative map* given to the
LLM (``VAR=label`` entries, no quotes, as in Listing 2) holds the question entities and the relations
only — other entities stay opaque and the LLM answers with their variables, which
:meth:`AssociativeMap.decompress_answer` maps back to labels. Two layouts:

* the paper's (``elide_times=False``, ``keep_times``; CIK-LLM's default, preset ``paper``): the plain
  grouping with variables, every term keeping its times, ``{"X1": {"1990/1992": ["R1(X1,e1,1990,1992)"]}}``,
  the map on one line (``X1=Darren Anderton; R1=member of sports team``);
* ours (``elide_times=True``, the ``tree`` option, preset ``ours``): the same grouping (question entity,
  then time) written as an indented tree so that what a group shares is written once:

  the time of a point fact is nested by year, then month, then day (as deep as the finest point fact of the
  entity; ``..`` = unknown at that precision); an interval (or open/missing time) is one ``START/END`` key;
  the facts of a leaf are separated by spaces and written ``R(HEAD,TAIL)`` without times, and the question
  entity of the group is left out of its own facts (``R1(,e1)`` under ``X1`` is ``R1(X1,e1)``)::

    X1:
     1990/1992: R1(,e1)
     1993: R2(,e3)
    X2:
     2005:
      09:
       05: R1(e1,) R3(e4,e5)

:func:`decompress_evidence` rebuilds the exact facts from this text and the full map (round trip).
On MultiTQ the tree takes 3.3–4.0× fewer tokens than the paper's form for the same facts
(``docs/cik_paper_vs_ours.md``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...kg import Fact, KGStore
from ...llm.tokens import Tokenizer, count_tokens
from ...time import NEG_INF, TimePoint
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

    def prompt_text(self, sep: str = "\n") -> str:
        """The map shown to the LLM: question entities, then relations, one ``VAR=label`` per entry
        (Listing 2's ``quF=Darren Anderton; R0=member of sports team``; line breaks inside a label become
        spaces)."""
        tables = (self.question_entities, self.relations)
        return sep.join(
            f"{v}={' '.join(self.labels.get(k, k).split())}" for table in tables for k, v in table.items()
        )

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
    map_sep: str = "\n"

    @property
    def map_text(self) -> str:
        return self.map.prompt_text(self.map_sep) if self.map is not None else ""

    def tokens(self, tokenizer: Tokenizer | None = None) -> int:
        """Tokens of the evidence block plus the associative map (what the prompt carries)."""
        return count_tokens(self.text, tokenizer) + self.map_tokens(tokenizer)

    def map_tokens(self, tokenizer: Tokenizer | None = None) -> int:
        return count_tokens(self.map_text, tokenizer)


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


def _render_tree(node: dict[str, Any], indent: int) -> list[str]:
    """One line per key, one more space of indentation per level; a leaf's facts follow its key."""
    pad = " " * indent
    lines: list[str] = []
    for key, child in node.items():
        if isinstance(child, list):
            lines.append(f"{pad}{key}: {' '.join(child)}")
        else:
            lines += [f"{pad}{key}:", *_render_tree(child, indent + 1)]
    return lines


def _term(amap: AssociativeMap, f: Fact, group: str | None) -> str:
    """``R(HEAD,TAIL)``; the group's question entity (``group``) is written as an empty slot."""
    r, h, t = amap.var(f.relation, "relation"), amap.var(f.subject, "entity"), amap.var(f.object, "entity")
    if group is None:
        return f"{r}({h},{t})"
    return f"{r}({'' if h == group else h},{'' if t == group else t})"


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
    if not elide_times:  # the paper's exact form: the plain grouping with variables
        flat = {
            json.dumps(amap.var(entity, "question")): {
                json.dumps(key): [
                    json.dumps(f"{_term(amap, f, None)[:-1]},{_bound(f.start)},{_bound(f.end)})")
                    for f in facts
                ]
                for key, facts in groups.items()
            }
            for entity, groups in grouped.items()
        }
        text = "{" + ", ".join(f"{e}: {_render_flat(g)}" for e, g in flat.items()) + "}"
        amap.labels = _labels(kg, [*amap.question_entities, *amap.relations, *amap.entities])
        return RenderedEvidence(text, amap, len(items), map_sep="; ")
    lines: list[str] = []
    for entity, groups in grouped.items():
        group = amap.var(entity, "question")
        depth = _tree_depth([f for facts in groups.values() for f in facts])
        tree: dict[str, Any] = {}
        for facts in groups.values():
            *branch, leaf = time_path(facts[0], depth)
            node = tree
            for part in branch:
                node = node.setdefault(part, {})
            node.setdefault(leaf, []).extend(_term(amap, f, group) for f in facts)
        lines += [f"{group}:", *_render_tree(tree, 1)]
    amap.labels = _labels(kg, [*amap.question_entities, *amap.relations, *amap.entities])
    return RenderedEvidence("\n".join(lines), amap, len(items))


def _render_flat(groups: dict[str, list[str]]) -> str:
    return "{" + ", ".join(f"{k}: [{', '.join(v)}]" for k, v in groups.items()) + "}"


_TERM = re.compile(r"(R[0-9]+)\(([Xe][0-9]+)?,([Xe][0-9]+)?\)")


def _point(iso: str) -> TimePoint:
    sign, body = (-1, iso[1:]) if iso.startswith("-") else (1, iso)
    parts = [int(p) for p in body.split("-")]
    return TimePoint(sign * parts[0], *parts[1:])


def _times(path: Sequence[str]) -> tuple[TimePoint | None, TimePoint | None]:
    """The (start, end) a leaf's key path stands for (inverse of :func:`time_path`)."""
    if len(path) == 1 and "/" in path[0]:
        start, _, end = path[0].partition("/")
        return (None if start == ".." else _point(start)), (None if end == ".." else _point(end))
    if tuple(path) == ("-",):
        return None, None
    year, *rest = path
    known = [year, *(p for p in rest if p != "..")]
    p = _point("-".join(known))
    return p, p


def decompress_evidence(text: str, amap: AssociativeMap) -> list[tuple[str, Fact]]:
    """``(question entity, fact)`` for every fact of a compressed evidence tree, names from ``amap``'s
    variables (all of them, not only the prompt's) — the exact facts :func:`render_compressed` was given."""
    names = amap.variables
    out: list[tuple[str, Fact]] = []
    stack: list[str] = []  # keys from the entity down to the current line
    for line in text.splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip(" "))
        key, _, rest = line.strip().partition(": ")
        del stack[depth:]
        if not rest:
            stack.append(key.removesuffix(":"))
            continue
        group = stack[0]
        start, end = _times([*stack[1:], key])
        for m in _TERM.finditer(rest):
            head, tail = m.group(2) or group, m.group(3) or group
            out.append((names[group], Fact(names[head], names[m.group(1)], names[tail], start, end)))
    return out


def token_counts(
    items: Sequence[EvidenceFact],
    kg: KGStore | None,
    question_entities: Sequence[str] = (),
    tokenizer: Tokenizer | None = None,
) -> dict[str, int]:
    """Tokens of the same facts rendered plain, compressed (ours; its associative map included, and apart in
    ``compressed_map``) and compressed the paper's exact way."""
    if not items:
        return {"uncompressed": 0, "compressed": 0, "compressed_map": 0, "compressed_paper": 0}
    compressed = render_compressed(items, kg, question_entities)
    return {
        "uncompressed": render_plain(items, kg).tokens(tokenizer),
        "compressed": compressed.tokens(tokenizer),
        "compressed_map": compressed.map_tokens(tokenizer),
        "compressed_paper": render_compressed(items, kg, question_entities, elide_times=False).tokens(
            tokenizer
        ),
    }
