"""CIK-LLM (Di Maio et al., "Tomorrow Brings Greater Knowledge"): in-context TKG question answering over a
stream of temporal KGs — relation paths, evidence pruning, prompt compression. Registered as ``"cik"``.

Presets (:mod:`.config`): ``paper`` (default) and ``ours``; ``docs/cik_paper_vs_ours.md`` compares them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, each imported on first use (lazy_exports below)
    from ...query import QuestionLinker, answer_covered, normalize_answer
    from ...query.obfuscate import (
        ObfuscatedSetting,
        obfuscate_kg,
        obfuscate_label,
        obfuscate_question,
        obfuscate_setting,
        obfuscate_word,
    )
    from .config import CIKConfig, Delta2Rule, Preset, TimePruning
    from .evidence import (
        AssociativeMap,
        RenderedEvidence,
        decompress_evidence,
        render_compressed,
        render_plain,
        time_key,
        token_counts,
    )
    from .method import CIKMethod, EvidenceStages
    from .paths import EntityRelations, LexicalPathPolicy, relations_at_distance, traverse, validate_path
    from .pruning import (
        EvidenceFact,
        anchor_spans,
        cap_facts,
        multi_hop_truncation,
        near_anchors,
        time_aware_prune,
        truncate_hops,
    )
    from .stream import CIKStream, StreamResult

__all__ = [
    "AssociativeMap",
    "CIKConfig",
    "CIKMethod",
    "CIKStream",
    "Delta2Rule",
    "EntityRelations",
    "EvidenceFact",
    "EvidenceStages",
    "LexicalPathPolicy",
    "ObfuscatedSetting",
    "Preset",
    "QuestionLinker",
    "RenderedEvidence",
    "StreamResult",
    "TimePruning",
    "anchor_spans",
    "answer_covered",
    "cap_facts",
    "decompress_evidence",
    "multi_hop_truncation",
    "near_anchors",
    "normalize_answer",
    "obfuscate_kg",
    "obfuscate_label",
    "obfuscate_question",
    "obfuscate_setting",
    "obfuscate_word",
    "relations_at_distance",
    "render_compressed",
    "render_plain",
    "time_aware_prune",
    "time_key",
    "token_counts",
    "traverse",
    "truncate_hops",
    "validate_path",
]

__getattr__ = lazy_exports(__name__, type_checking_exports(__file__), globals())
