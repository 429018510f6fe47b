"""Read-only views of a KG for the service: the ``kg info`` summary, ARI operator queries, entity
autocomplete, the method catalogue and the demo questions. No FastAPI here."""

from __future__ import annotations

import inspect
import random
from collections.abc import Sequence
from typing import Any

from ..datasets.base import Question
from ..kg.base import KGStore
from ..kg.linking import EntityLinker, normalize
from ..kg.queries import QUERY_OPS, KGLinkers, kg_summary, run_operator

__all__ = ["QUERY_OPS", "EntityIndex", "KGLinkers", "kg_summary", "run_operator"]


class EntityIndex:
    """Autocomplete over entity names and labels, for text typed so far: exact and alias matches first, then
    labels starting with the text, then labels with a word starting with each typed word (shorter labels
    first), and only then close fuzzy matches (score >= :data:`MIN_FUZZY`) — a prefix is what a user is
    typing, so loose fuzzy hits never push it out."""

    MIN_FUZZY = 0.8

    def __init__(self, kg: KGStore, linker: EntityLinker) -> None:
        self._linker = linker
        rows = [(normalize(kg.label(name)), name, kg.label(name)) for name in kg.entities]
        self._rows = sorted(rows, key=lambda r: (len(r[0]), r[0]))

    def complete(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        key = normalize(query)
        if not key:
            return []
        words = key.split()
        linked = self._linker.link(query, k, min_score=0.5)
        out: dict[str, dict[str, Any]] = {}
        for c in linked:
            if c.method != "fuzzy":
                out[c.name] = {"name": c.name, "label": c.label, "score": c.score, "method": c.method}
        for score, test in (
            (0.95, lambda text: text.startswith(key)),
            (0.85, lambda text: all(f" {w}" in f" {text}" for w in words)),
        ):
            for text, name, label in self._rows:
                if len(out) >= k:
                    break
                if name not in out and test(text):
                    out[name] = {"name": name, "label": label, "score": score, "method": "prefix"}
        for c in linked:
            if len(out) >= k:
                break
            if c.name not in out and c.score >= self.MIN_FUZZY:
                out[c.name] = {"name": c.name, "label": c.label, "score": c.score, "method": c.method}
        return sorted(out.values(), key=lambda c: -float(c["score"]))[:k]


#: One line per built-in method for the web UI's picker (plugins fall back to their docstring's first
#: sentence).
DESCRIPTIONS = {
    "symbolic": "Offline reasoner: question → typed program → KG operators; abstains with a reason.",
    "ari": "Abstract Reasoning Induction: an LLM picks atomic KG actions step by step (ARI paper).",
    "timer4": "TimeR4: retrieve, rewrite implicit times, time-aware retrieve and rerank, then reason.",
    "cik": "CIK-LLM: relation paths, multi-hop traversal with time pruning, compressed evidence.",
    "llm_only": "Baseline: the LLM answers from the question alone (no KG).",
    "kg_rag": "Baseline: retrieved KG facts in the prompt, one LLM call.",
    "cot_kb": "Baseline: chain-of-thought over retrieved KG facts.",
    "react_kb": "Baseline: ReAct agent with KG lookup tools.",
    "hybrid": "Symbolic first; an LLM method answers when it abstains.",
    "r3": "Right for Right Reasons: axiom-guided sub-graph pruning and fact-cited answers.",
    "kaping": "Baseline: KAPING, retrieved facts prepended to a zero-shot prompt.",
    "cot0": "Baseline: zero-shot chain of thought.",
    "cot2": "Baseline: two-shot chain of thought.",
    "lpkg": "LPKG: a planner writes a code-formatted plan executed over the KG.",
}


#: One line per preset of :data:`tkgqa.service.policy.METHOD_PRESETS` (its method's line would mislead).
PRESET_DESCRIPTIONS = {
    "ari:policy=symbolic": "ARI with the offline symbolic reasoner choosing the KG actions (no LLM).",
}


def preset_catalog(presets: Sequence[str]) -> list[dict[str, Any]]:
    """Each preset spec with a one-line description, whether it takes an LLM and whether it needs one."""
    from ..api.resolve import needs_llm, takes_llm

    return [
        {
            "name": p,
            "description": PRESET_DESCRIPTIONS.get(p, p),
            "uses_llm": takes_llm(p),
            "needs_llm": needs_llm(p),
        }
        for p in presets
    ]


def _one_line(doc: str, limit: int = 120) -> str:
    text = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    sentence = text.split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def method_catalog() -> list[dict[str, Any]]:
    """The registered methods: name, a one-line description, whether they accept an ``llm`` and whether
    they need one (by their bare name: every method that accepts one does; see ``preset_catalog``)."""
    from ..api.resolve import takes_llm
    from ..methods.base import METHODS

    rows = []
    for name in METHODS.names():
        factory = METHODS.factory(name)
        own_doc = vars(factory).get("__doc__") if isinstance(factory, type) else factory.__doc__
        description = DESCRIPTIONS.get(name) or _one_line(own_doc or "") or name
        uses = takes_llm(name)
        rows.append({"name": name, "description": description, "uses_llm": uses, "needs_llm": uses})
    return rows


def llm_backends() -> list[str]:
    """Names of the registered LLM backends (``fake``, ``openai``, ``llamacpp``…)."""
    from ..llm.base import LLM_BACKENDS

    return LLM_BACKENDS.names()


_EXAMPLES: dict[int, list[dict[str, Any]]] = {}


def kg_examples(kg: KGStore, limit: int = 12) -> list[dict[str, Any]]:
    """A few questions generated from ``kg``'s facts with their answers (seeded, computed once per KG)."""
    key = id(kg)
    if key not in _EXAMPLES:
        from ..errors import TKGQAError
        from ..query.generate.questions import QuestionGenerator

        try:
            made = QuestionGenerator(kg, seed=0, max_answers=3).generate(limit)
        except TKGQAError:
            made = []
        _EXAMPLES[key] = [
            {"qid": g.question.qid, "question": g.question.text, "answers": list(g.question.answers)}
            for g in made[:limit]
        ]
    return _EXAMPLES[key]


def demo_examples(limit: int = 60) -> list[dict[str, Any]]:
    """Questions of the bundled demo set with their gold answers (for the web UI's example list)."""
    from ..datasets.demo import load_demo_questions

    return [
        {"qid": q.qid, "question": q.text, "answers": list(q.answers), "qtype": q.qtype}
        for q in load_demo_questions()[:limit]
    ]


def dataset_examples(
    questions: Sequence[Question], *, source: str, limit: int = 12, seed: int = 0
) -> list[dict[str, Any]]:
    """A few questions of a benchmark's own question set: one per question type (``qtype``, else the
    ``types`` labels) drawn with ``random.Random(seed)``, types in order of frequency (at most ``limit``);
    a seeded sample of ``limit`` when the questions have no types. Questions that carry their own facts
    (``context``) are left out: the server answers over its one KG."""
    from ..datasets.sampling import stratum

    pool = [q for q in questions if q.context is None and q.text.strip()]
    rng = random.Random(seed)
    by = next((field for field in ("qtype", "types") if any(stratum(q, field) != "?" for q in pool)), None)
    if by is None:
        chosen = rng.sample(pool, min(limit, len(pool)))
    else:
        groups: dict[str, list[Question]] = {}
        for q in pool:
            groups.setdefault(stratum(q, by), []).append(q)
        kinds = sorted(groups, key=lambda k: (k == "?", -len(groups[k]), k))[:limit]
        chosen = [rng.choice(groups[k]) for k in kinds]
    return [
        {
            "qid": q.qid,
            "question": q.text,
            "answers": list(q.answers)[:5],
            "qtype": stratum(q, by) if by is not None else q.qtype,
            "source": source,
        }
        for q in chosen
    ]
