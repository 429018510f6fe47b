"""CIK-LLM (Di Maio et al., "Tomorrow Brings Greater Knowledge"): in-context TKG question answering over a
stream of temporal KGs — relation paths, evidence pruning, prompt compression. Registered as ``"cik"``."""

from .evidence import (
    AssociativeMap,
    RenderedEvidence,
    decompress_evidence,
    render_compressed,
    render_plain,
    time_key,
    token_counts,
)
from .grounding import QuestionEntities, answer_covered, normalize_answer
from .method import CIKConfig, CIKMethod, EvidenceStages
from .obfuscate import obfuscate_kg, obfuscate_label, obfuscate_question, obfuscate_word
from .paths import EntityRelations, LexicalPathPolicy, relations_at_distance, traverse, validate_path
from .pruning import EvidenceFact, cap_facts, multi_hop_truncation, time_aware_prune
from .stream import CIKStream, StreamResult

__all__ = [
    "AssociativeMap",
    "CIKConfig",
    "CIKMethod",
    "CIKStream",
    "EntityRelations",
    "EvidenceFact",
    "EvidenceStages",
    "LexicalPathPolicy",
    "QuestionEntities",
    "RenderedEvidence",
    "StreamResult",
    "answer_covered",
    "cap_facts",
    "decompress_evidence",
    "multi_hop_truncation",
    "normalize_answer",
    "obfuscate_kg",
    "obfuscate_label",
    "obfuscate_question",
    "obfuscate_word",
    "relations_at_distance",
    "render_compressed",
    "render_plain",
    "time_aware_prune",
    "time_key",
    "token_counts",
    "traverse",
    "validate_path",
]
