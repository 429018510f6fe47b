"""LPKG (Wang et al., Findings of EMNLP 2024): learning to plan from knowledge graphs.

* :mod:`.plan` — code-formatted plans parsed with ``ast`` into a typed :class:`Plan` (never evaluated);
* :mod:`.verbalize` — grounded pattern instances (`query.generate.patterns`) → questions + gold plans;
* :mod:`.data` — planning data, entity-disjoint held-out split, SFT export;
* :mod:`.planner` — in-context, fine-tuned and baseline planners; :mod:`.train` — CPU fine-tuning (LoRA);
* :mod:`.execute` — plan interpretation over a KG; :mod:`.method` — the ``lpkg`` method; :mod:`.config` —
  its settings, presets (``paper`` default, ``ours``) and deviations; :mod:`.official` — the official
  planning prompt's format.

Importing this package never imports torch, transformers or peft.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from .config import CompareHow, LPKGConfig, PlanDemoSource, PlanFormat, QAPrompt
    from .data import PlanningExample, SFTFormat, export_sft, read_examples, split_by_entities, write_examples
    from .execute import PlanExecutor, ReaderMode, SearchMode, direct_plan
    from .method import LPKGMethod
    from .metrics import plan_metrics
    from .plan import Call, Plan, parse_plan
    from .planner import FinetunedPlanner, ICLPlanner, Inference, RandomPatternPlanner, resolve_planner
    from .verbalize import TemplateVerbalizer, gold_plan

__all__ = [
    "Call",
    "CompareHow",
    "FinetunedPlanner",
    "ICLPlanner",
    "Inference",
    "LPKGConfig",
    "LPKGMethod",
    "Plan",
    "PlanDemoSource",
    "PlanExecutor",
    "PlanFormat",
    "PlanningExample",
    "QAPrompt",
    "RandomPatternPlanner",
    "ReaderMode",
    "SFTFormat",
    "SearchMode",
    "TemplateVerbalizer",
    "direct_plan",
    "export_sft",
    "gold_plan",
    "parse_plan",
    "plan_metrics",
    "read_examples",
    "resolve_planner",
    "split_by_entities",
    "write_examples",
]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())
