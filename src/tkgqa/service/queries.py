"""Read-only views of a KG for the service: the ``kg info`` summary, ARI operator queries, entity
autocomplete, the method catalogue and the demo questions. No FastAPI here."""

from __future__ import annotations

import inspect
from typing import Any

from ..kg.base import KGStore
from ..kg.linking import EntityLinker, normalize
from ..kg.queries import QUERY_OPS, KGLinkers, kg_summary, run_operator

__all__ = ["QUERY_OPS", "EntityIndex", "KGLinkers", "kg_summary", "run_operator"]


class EntityIndex:
    """Autocomplete over entity names and labels: exact/alias/fuzzy matches from the linker, then names
    whose label starts with (or has a word starting with) the typed text."""

    def __init__(self, kg: KGStore, linker: EntityLinker) -> None:
        self._linker = linker
        rows = [(normalize(kg.label(name)), name, kg.label(name)) for name in kg.entities]
        self._rows = sorted(rows, key=lambda r: (len(r[0]), r[0]))

    def complete(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        key = normalize(query)
        if not key:
            return []
        out: dict[str, dict[str, Any]] = {}
        for c in self._linker.link(query, k, min_score=0.5):
            out[c.name] = {"name": c.name, "label": c.label, "score": c.score, "method": c.method}
        for text, name, label in self._rows:
            if len(out) >= k:
                break
            if name in out:
                continue
            if text.startswith(key):
                out[name] = {"name": name, "label": label, "score": 0.8, "method": "prefix"}
            elif f" {key}" in f" {text}":
                out[name] = {"name": name, "label": label, "score": 0.7, "method": "prefix"}
        return sorted(out.values(), key=lambda c: -float(c["score"]))[:k]


def method_catalog() -> list[dict[str, Any]]:
    """The registered methods: name, first docstring line and whether they accept an ``llm``."""
    from ..methods import _builtin  # noqa: F401  (registers the built-in methods)
    from ..methods.base import METHODS

    rows = []
    for name in METHODS.names():
        factory = METHODS.factory(name)
        own_doc = vars(factory).get("__doc__") if isinstance(factory, type) else factory.__doc__
        doc = inspect.cleandoc(own_doc or "").splitlines()
        try:
            params = inspect.signature(factory).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        rows.append({"name": name, "doc": doc[0] if doc else "", "uses_llm": "llm" in params})
    return rows


def llm_backends() -> list[str]:
    """Names of the registered LLM backends (``fake``, ``openai``, ``llamacpp``…)."""
    from ..llm.base import LLM_BACKENDS

    return LLM_BACKENDS.names()


def demo_examples(limit: int = 60) -> list[dict[str, Any]]:
    """Questions of the bundled demo set with their gold answers (for the web UI's example list)."""
    from ..datasets.demo import load_demo_questions

    return [
        {"qid": q.qid, "question": q.text, "answers": list(q.answers), "qtype": q.qtype}
        for q in load_demo_questions()[:limit]
    ]
