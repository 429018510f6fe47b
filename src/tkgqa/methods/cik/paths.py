"""CIK-LLM §3.1.1 "Building the Relational Path": relations around each question entity, a relation path per
entity (chosen by the LLM through Π_esg, or offline by a deterministic policy), its validation, and the
traversal that collects the evidence set hop by hop.

* :func:`relations_at_distance` — ``D1..Dn``: the relations on the facts first met at distance ``k`` from the
  entity (distance 1 = its own facts; 2 = its neighbours' other facts, …). Unlike
  :func:`tkgqa.kg.neighborhood.relations_by_hop` ("relations first met") a relation may appear at several
  distances, as in the paper's Listing 1 (``D2: [award received, winner]``), so a path may repeat a
  relation. At most ``max_frontier`` entities (most connected first, ties by name) are expanded per hop,
  which bounds the cost on hubs. Each hop is one :meth:`KGStore.hop` call, answered by the store's indexes.
* :func:`validate_path` — keeps a chosen path up to its first relation that is not in the right ``Dk`` (those
  dropped are reported); ``""`` ends a path early.
* :func:`traverse` — follows ``r1 → … → rk`` from the entity (both directions at each hop) and returns the
  facts of each hop. When the path is empty or yields no fact, *path selection failed* (``failed``): the
  paper then has no evidence for the entity (§3.1.1: invalid relations "do not yield any collectable
  facts"); with ``fallback`` (ours) the entity contributes every 1-hop fact instead.
* :class:`LexicalPathPolicy` — the offline policy: relations ranked by word overlap with the question (a light
  suffix-stripping stemmer); hop 1 takes the best matching relation of ``D1``, further hops only a relation
  scoring at least ``min_score``, up to ``hops`` hops. No match → no path → path selection failed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...kg import Fact, KGStore
from ...kg.linking import normalize
from ...kg.neighborhood import ranked

DEFAULT_MAX_FRONTIER = 1000
_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an the of or and to in on at by for with from as is was were be been did do does who whom whose "
    "what which when where why how than that this these those it its his her their there first last "
    "before after during while same time year month day date country"
)
_STOP = frozenset(_STOP_WORDS.split())
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ed", "es", "s", "e")


@dataclass(frozen=True, slots=True)
class EntityRelations:
    """``by_hop[k - 1]`` = the relations at distance ``k`` from ``entity`` (most frequent first)."""

    entity: str
    by_hop: tuple[tuple[str, ...], ...]

    def at(self, hop: int) -> tuple[str, ...]:
        return self.by_hop[hop - 1] if 0 < hop <= len(self.by_hop) else ()


@dataclass(frozen=True, slots=True)
class PathCheck:
    """A validated path and what was dropped from the proposal (``(hop, relation)`` pairs)."""

    entity: str
    path: tuple[str, ...]
    dropped: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class Traversal:
    """Facts collected along a path: ``hops[k - 1]`` = facts at hop ``k``. ``failed``: the path was empty
    or yielded no fact (path selection failed); ``fallback``: the 1-hop fallback then supplied the facts."""

    entity: str
    path: tuple[str, ...]
    hops: tuple[tuple[Fact, ...], ...] = field(default_factory=tuple)
    fallback: bool = False
    reached: Mapping[Fact, str] = field(default_factory=dict)  # the entity each fact led to
    failed: bool = False

    @property
    def n_facts(self) -> int:
        return sum(len(h) for h in self.hops)


def relations_at_distance(
    kg: KGStore, entity: str, hops: int = 3, *, max_frontier: int = DEFAULT_MAX_FRONTIER
) -> EntityRelations:
    """``D1..D_hops`` around ``entity`` (see the module docstring)."""
    visited: set[str] = set()  # entities expanded at earlier hops: their facts were met nearer
    frontier = [entity]
    by_hop: list[tuple[str, ...]] = []
    for hop in range(hops):
        if not frontier:
            by_hop.append(())
            continue
        last = hop == hops - 1
        step = kg.hop(
            frontier, visited=visited, new_facts_only=True, max_neighbors=0 if last else max_frontier
        )
        by_hop.append(tuple(r for r, _ in ranked(step.relations)))
        visited.update(frontier)
        frontier = list(step.neighbors)
    return EntityRelations(entity, tuple(by_hop))


def match_relation(proposed: str, allowed: Sequence[str], labels: Mapping[str, str]) -> str | None:
    """The relation of ``allowed`` that ``proposed`` names (raw name or label, normalised), else ``None``."""
    key = normalize(proposed)
    if not key:
        return None
    for rel in allowed:
        if proposed == rel or key == normalize(rel) or key == normalize(labels.get(rel, rel)):
            return rel
    return None


def validate_path(
    entity: str, proposed: Sequence[str], relations: EntityRelations, labels: Mapping[str, str]
) -> PathCheck:
    """Keep ``proposed`` up to its first relation missing from its hop's list; report what was dropped."""
    path: list[str] = []
    dropped: list[tuple[int, str]] = []
    stopped = False
    for hop, rel in enumerate(proposed, start=1):
        text = str(rel).strip()
        if not text:
            stopped = True
            continue
        if stopped:
            dropped.append((hop, text))
            continue
        found = match_relation(text, relations.at(hop), labels)
        if found is None:
            dropped.append((hop, text))
            stopped = True
        else:
            path.append(found)
    return PathCheck(entity, tuple(path), tuple(dropped))


def traverse(
    kg: KGStore, entity: str, path: Sequence[str], *, max_facts: int = 20_000, fallback: bool = True
) -> Traversal:
    """Facts along ``path`` from ``entity``. With no path, or a path yielding nothing, the traversal has
    ``failed``; with ``fallback`` it then holds the facts of every 1-hop relation, else none."""
    hops: list[tuple[Fact, ...]] = []
    frontier = [entity]
    seen_ent = {entity}
    reached: dict[Fact, str] = {}
    total = 0
    for rel in path:
        facts: list[Fact] = []
        nxt: list[str] = []
        for e in frontier:
            for f in kg.incident(e, relation=rel):
                if f in reached:
                    continue
                other = f.object if f.subject == e else f.subject
                reached[f] = other
                facts.append(f)
                if other not in seen_ent:
                    seen_ent.add(other)
                    nxt.append(other)
            if total + len(facts) >= max_facts:
                break
        facts = facts[: max(0, max_facts - total)]
        total += len(facts)
        if not facts:
            break
        hops.append(tuple(facts))
        frontier = nxt
    if not hops:
        if not fallback:
            return Traversal(entity, tuple(path), failed=True)
        one_hop = tuple(kg.incident(entity)[:max_facts])
        ends = {f: (f.object if f.subject == entity else f.subject) for f in one_hop}
        return Traversal(entity, tuple(path), (one_hop,), fallback=True, reached=ends, failed=True)
    return Traversal(entity, tuple(path), tuple(hops), reached=reached)


# --- the offline policy ---------------------------------------------------------------------------------
def _stem(word: str) -> str:
    """The offline policy's own suffix stripping (not :func:`tkgqa.query.text.words.stem`, whose rules differ:
    the policy's path choices were measured with these)."""
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    return {
        _stem(w) for w in _WORD.findall(text.replace("_", " ").lower()) if w not in _STOP and not w.isdigit()
    }


def lexical_score(question_stems: set[str], relation_label: str) -> float:
    """Fraction of the relation's content words found in the question (0 when none)."""
    rel = content_stems(relation_label)
    if not rel:
        return 0.0
    return len(rel & question_stems) / len(rel)


@dataclass(frozen=True)
class LexicalPathPolicy:
    """Deterministic, offline relation-path selection (see the module docstring)."""

    hops: int = 1
    min_score: float = 0.5

    def choose(self, question: str, relations: EntityRelations, labels: Mapping[str, str]) -> list[str]:
        q = content_stems(question)
        path: list[str] = []
        for hop in range(1, min(self.hops, len(relations.by_hop)) + 1):
            scored = [(lexical_score(q, labels.get(r, r)), -i, r) for i, r in enumerate(relations.at(hop))]
            if not scored:
                break
            score, _, best = max(scored)
            if score <= 0 or (hop > 1 and score < self.min_score):
                break
            path.append(best)
        return path
