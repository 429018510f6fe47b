"""The KG a run answers over when it is not the KG as given: ``as_of`` (the KG's ``as_of`` view, ends clipped
at the cutoff; the CIK-LLM paper's ``K<2000``) and ``obfuscate`` (Q′ over ``K_all ∪ K′``, CIK-LLM Fig. 6), and
what was done — ``report.json``'s ``kg_view``, recorded by :func:`tkgqa.evaluate` itself.

``as_of`` is read by :func:`tkgqa.time.parse_as_of`, the one rule: a year, month or date is a cutoff; ``all``
is the whole KG (``K_all``, recorded as such); ``None`` is no view at all. :func:`obfuscated_alone` is the
measurements' variant (``tkgqa analyze coverage --obfuscate``): ``Q′`` over ``K′`` alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..datasets.base import Question
from ..datasets.core import Dataset
from ..errors import ConfigError
from ..kg.base import KGStore
from ..time import TimePoint, parse_as_of

#: How an ``as_of`` view treats facts that overlap the cutoff (recorded in ``kg_view``).
AS_OF_RULE = "facts starting before the cutoff; an end on or after it is open ('still true at the cutoff')"


def apply_kg_view(
    ds: Dataset,
    kg: KGStore | str | Path | None,
    *,
    as_of: str | int | TimePoint | None,
    obfuscate: bool,
    source: str = "as_of",
) -> tuple[Dataset, KGStore | str | Path | None, dict[str, Any] | None]:
    """The dataset and KG a run uses, with ``obfuscate`` and ``as_of`` applied, and what was done (the
    ``kg_view`` of ``report.json``). Without either, the inputs unchanged and ``None``. ``source`` names the
    option in errors (``--as-of`` for the CLI)."""
    if as_of is None and not obfuscate:
        return ds, kg, None
    cut = parse_as_of(as_of, source)  # a bad time fails before anything is loaded
    obfuscation = "--obfuscate" if source.startswith("--") else "obfuscate"
    flags = " and ".join(f for f, on in ((source, as_of is not None), (obfuscation, obfuscate)) if on)
    if any(q.context is not None for q in ds.questions):
        raise ConfigError(f"{flags} needs a shared KG, not per-question facts: add --context kg")
    where = kg if kg is not None else ds.kg_path
    if where is None:
        raise ConfigError(f"{flags} needs a KG: the dataset has no KG file; pass --kg PATH")
    store = where if isinstance(where, KGStore) else _load(where)
    size = len(store)
    view: dict[str, Any] = {
        "source": str(where) if not isinstance(where, KGStore) else type(where).__name__,
        "source_facts": size,
        "live_facts": size,
        "obfuscated": False,
    }
    if obfuscate:
        from ..query.obfuscate import obfuscate_setting

        setting = obfuscate_setting(ds.questions, store)
        ds = ds.with_questions(setting.questions, obfuscated=True)
        store = setting.kg
        view.update(setting.describe(), live_facts=len(store))
    if cut is None:
        view.update(as_of="all", setting="K_all ∪ K′" if obfuscate else "K_all", facts=len(store), clipped=0)
        return ds, store, view
    day = cut.first_day
    clipped = sum(
        1
        for f in store
        if f.end is not None and f.end.last_day >= day and (f.start is None or f.start.first_day < day)
    )
    snapshot = store.as_of(cut)
    view.update(
        as_of=str(cut),
        setting=f"(K_all ∪ K′)<{cut}" if obfuscate else f"K<{cut}",
        facts=len(snapshot),
        clipped=clipped,
        rule=AS_OF_RULE,
    )
    return ds, snapshot, view


def _load(path: str | Path) -> KGStore:
    from ..kg.loaders import load_kg

    return load_kg(path)


def obfuscated_alone(questions: list[Question], store: KGStore | None) -> tuple[list[Question], KGStore]:
    """K′/Q′: question entities linked on the original KG first, then every label obfuscated."""
    from ..query.link import QuestionLinker
    from ..query.obfuscate import entity_label_words, obfuscate_kg, obfuscate_question

    if store is None:
        raise ConfigError("--obfuscate needs a shared KG (not per-question contexts)")
    linker = QuestionLinker()
    new_kg, mapping = obfuscate_kg(store)
    vocab = entity_label_words(store)
    linked = [q.model_copy(update={"entities": linker(q, store)}) for q in questions]
    return [obfuscate_question(q, vocab, mapping) for q in linked], new_kg
