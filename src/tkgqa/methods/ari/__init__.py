"""ARI — Abstract Reasoning Induction (Chen et al., ACL 2024) for temporal KGQA.

Runs the paper's configuration by default (``preset=paper``); ``preset=ours`` switches on the project's
improvements, each also a named option (:mod:`.config`; docs/ari_paper_vs_ours.md lists them with their
measured effect).

* :mod:`.actions` — the atomic actions of Table 6 and the agent state (a list of (entity, time) results);
* :mod:`.environment` — the knowledge-based part: candidate enumeration (Eq. 2) and filtration (Eq. 3);
* :mod:`.agent` — the step loop (Algorithm 1) until ``answer(...)`` or ``t_max``;
* :mod:`.policies` — who chooses: the LLM (Figure 8 prompt), the oracle search (upper bound);
  :mod:`.symbolic_policy` — the offline symbolic reasoner's program compiled to actions;
* :mod:`.memory` — history memory, K-means clusters, methodology induction (Figure 9), JSON persistence;
  :mod:`.variants` — its methodology sets (clustered or global, with or without the incorrect processes);
* :mod:`.method` — ``ARIMethod`` registered as ``"ari"``; :mod:`.build` — building a memory;
* :mod:`.kb_baselines` — the paper's KB-interaction baselines ``react_kb`` and ``cot_kb`` on the same agent.

Question linking (:class:`~tkgqa.query.QuestionLinker`) and the offline reasoner behind the ``symbolic``
policy come from the shared query layer; similarity from :mod:`tkgqa.retrieval.similarity`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from ...query.link import QuestionAnchors
    from ...retrieval.similarity import Similarity
    from .actions import Action, AgentState, Item
    from .agent import Episode, StepRecord, run_episode
    from .build import build_memory, check_history_split
    from .config import ARIConfig, EmbedderName, ExampleSet, Preset
    from .environment import ActionSpace, ARIEnvironment, FilterMode, FilterSettings
    from .kb_baselines import CoTKB, ReActKB
    from .memory import ARIMemory, HistoryRecord, HistoryStep, kmeans
    from .method import ARIMethod
    from .policies import ActionPromptStyle, Decision, LLMPolicy, OraclePolicy, Policy, StepView
    from .variants import MemoryVariant

__all__ = [
    "ARIConfig",
    "ARIEnvironment",
    "ARIMemory",
    "ARIMethod",
    "Action",
    "ActionPromptStyle",
    "ActionSpace",
    "AgentState",
    "CoTKB",
    "Decision",
    "EmbedderName",
    "Episode",
    "ExampleSet",
    "FilterMode",
    "FilterSettings",
    "HistoryRecord",
    "HistoryStep",
    "Item",
    "LLMPolicy",
    "MemoryVariant",
    "OraclePolicy",
    "Policy",
    "Preset",
    "QuestionAnchors",
    "ReActKB",
    "Similarity",
    "StepRecord",
    "StepView",
    "build_memory",
    "check_history_split",
    "kmeans",
    "run_episode",
]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())
