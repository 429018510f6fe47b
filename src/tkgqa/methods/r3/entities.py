"""R3 step 1: the question's anchor entities, ``EL(q, K) ∪ LLM_E(q)`` (Eq. 1), each source reported.

The linker is the shared question linker (:class:`~tkgqa.query.QuestionLinker`: exact label n-grams, the
symbolic mention rules, fuzzy capitalised spans). The LLM names entities in free text; each name is linked
to a KG entity by :class:`~tkgqa.kg.EntityLinker` (exact, alias, then fuzzy at ``min_score``); names that
link to nothing are reported as ``unlinked``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...kg.base import KGStore
from ...kg.linking import EntityLinker
from ...query import PerKG, QuestionLinker, base_store
from .steps import EntitiesStep


@dataclass(frozen=True)
class EntityReport:
    """What each extractor found (KG names) and the union used."""

    linker: tuple[str, ...] = ()
    llm_names: tuple[str, ...] = ()
    llm: tuple[str, ...] = ()
    unlinked: tuple[str, ...] = ()
    union: tuple[str, ...] = ()
    llm_error: str = ""

    def step(self) -> EntitiesStep:
        """The report as its trace step (``{"step": "entities", …}``)."""
        return EntitiesStep(
            list(self.linker),
            list(self.llm_names),
            list(self.llm),
            list(self.unlinked),
            list(self.union),
            self.llm_error,
        )


class EntityFinder:
    """The linker half and the name → KG entity linking of the LLM half (one per method instance)."""

    def __init__(self, max_entities: int = 6, min_score: float = 0.85) -> None:
        self.detector = QuestionLinker(max_entities)
        self.min_score = min_score
        self._linkers: PerKG[EntityLinker] = PerKG(EntityLinker.from_kg)

    def linked(self, text: str, kg: KGStore) -> list[str]:
        """``EL(q, K)``: the KG entities the question mentions."""
        return self.detector.detect(text, kg)

    def link_name(self, name: str, kg: KGStore) -> str | None:
        """The KG entity a free-text name refers to (exact/alias, else a fuzzy match >= ``min_score``)."""
        if kg.has_entity(name):
            return name
        found = self._linkers.get(base_store(kg)).link(name, 1, min_score=self.min_score)
        return found[0].name if found else None

    def link_names(self, names: list[str], kg: KGStore) -> tuple[list[str], list[str]]:
        """``(linked KG names, names that link to nothing)``."""
        linked: list[str] = []
        unlinked: list[str] = []
        for n in names:
            e = self.link_name(n, kg)
            if e is None:
                unlinked.append(n)
            elif e not in linked:
                linked.append(e)
        return linked, unlinked
