"""The built-in dataset loaders, registered in :data:`~tkgqa.datasets.core.DATASETS` when
:mod:`tkgqa.datasets` is imported (as lazy references: a loader module is imported when first used).

A loader is ``load(data_dir=None, questions=None, split="test", *, kg=None, context=None, **options)`` →
:class:`~tkgqa.datasets.core.Dataset` (the built-in ones are written as ``load(request: DatasetRequest, *,
own options…)`` under :func:`~tkgqa.datasets.core.dataset_loader`, which makes that signature). Third-party
loaders register through the ``tkgqa.datasets`` entry-point group (``my_set = "my_pkg.module:load_my_set"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .core import DATASETS, Dataset, DatasetRequest, check_context, dataset_loader

#: name → ``"module:attr"`` of the loader
BUILTIN_DATASETS: dict[str, str] = {
    "multitq": "tkgqa.datasets.multitq:load_multitq",
    "timequestions": "tkgqa.datasets.timequestions:load_timequestions",
    "cronquestions": "tkgqa.datasets.cronquestions:load_cronquestions",
    "clqa": "tkgqa.datasets.clqa:load_clqa",
    "jsonl": "tkgqa.datasets.jsonl:load_jsonl",
    "demo": "tkgqa.datasets.loaders:load_demo",
    "crlt_qa": "tkgqa.datasets.crlt:load_crlt_qa",
    "crlt_claims": "tkgqa.datasets.crlt:load_crlt_claims",
    "recipe_mpr": "tkgqa.datasets.recipe_mpr:load_recipe_mpr",
}

#: The KG of the ``demo`` dataset: ``load_kg("demo")`` opens the bundled demo KG.
DEMO_KG = "demo"


@dataset_loader("demo", register=False)
def load_demo(request: DatasetRequest) -> Dataset:
    """The bundled demo questions over the bundled demo KG (no files needed; ``questions``/``kg`` may name
    other files, as for the other loaders)."""
    from .demo import load_demo_questions
    from .jsonl import read_jsonl_questions

    questions, kg = request.questions, request.kg
    if request.data_dir is not None:
        raise ConfigError("the demo dataset is bundled: pass no data_dir (questions= names another file)")
    if check_context(request.context) == "retrieved":
        raise ConfigError("the demo questions have no per-question facts; use context='kg' or leave it unset")
    qs = read_jsonl_questions(Path(questions), "demo") if questions is not None else load_demo_questions()
    kg_path = Path(kg) if kg is not None else Path(DEMO_KG)
    meta: dict[str, Any] = {"split": request.split, "bundled": questions is None}
    if questions is not None:
        meta["questions_file"] = str(questions)  # as the other loaders: what a resumed run compares
    return Dataset("demo", qs, kg_path, meta)


for _name, _target in BUILTIN_DATASETS.items():
    DATASETS.add_lazy(_name, _target)

__all__ = ["BUILTIN_DATASETS", "DEMO_KG", "load_demo"]
