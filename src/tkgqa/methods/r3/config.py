"""R3's settings (every ablation of the paper is an option), its two presets and the deviations from the
paper, and the baselines' settings.

``preset=paper`` (the default) runs the paper's configuration (Toroghi et al. 2024, §3.2, Eq. 4-5, Appendix
D) wherever the paper specifies one; ``preset=ours`` is the project's variant (each difference also a single
option). A preset-dependent setting left unset (``None``) takes its preset's value (:data:`PRESETS`); one
given explicitly wins. :meth:`R3Config.deviations` lists what differs from the paper and
:meth:`R3Config.unspecified` what the paper leaves open; both go into ``report.json`` through
``R3Method.describe``. ``docs/r3_paper_vs_ours.md`` has the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field

from ..base import NO_NOTES, MethodConfig, Preset, PresetConfig, SetupNotes
from ..client import client_option
from .demos import DemoSource
from .facts import Direction, Pruning


class EntitySource(StrEnum):
    UNION = "union"  # R3: the KG linker ∪ the LLM extractor (Eq. 1)
    LINKER = "linker"  # Table 6: "without LLM-based entity extractor"
    LLM = "llm"  # Table 6: "without entity linker"


class LLMPick(StrEnum):
    RELATIONS = (
        "relations"  # ours: the LLM picks relations of the rest of the sub-graph; their facts are added
    )
    FACTS = "facts"  # paper (Eq. 4's LLM_T): the LLM picks triples among the next-best candidates
    OFF = "off"  # embedding top-k only


class PromptStyle(StrEnum):
    """The wording and reply format of a prompt: ``paper`` (Appendix D verbatim, the authors' layout) or
    ``ours`` (explicit Premises/Conclusion; numbered steps citing ``[F3]``)."""

    PAPER = "paper"
    OURS = "ours"


class ChoiceRule(StrEnum):
    """Preference matching: ``select`` (the authors' released Recipe-MPR prompt, ``MPR_RRR_decide_answer``:
    every recipe in one prompt, the model selects one), ``first`` (§3.2.4's wording: options in order until
    one satisfies every premise; none does → ranked as ``rank``) or ``rank`` (ours: every option judged,
    fewest violations first)."""

    SELECT = "select"
    FIRST = "first"
    RANK = "rank"


class PremiseJudge(StrEnum):
    LLM = "llm"  # the LLM checks each premise against the facts, citing them
    EMBEDDING = "embedding"  # offline: a premise holds when it is similar enough to the option's facts


# Settings whose default depends on the preset (unset = the preset's value).
PRESETS: dict[Preset, dict[str, Any]] = {
    Preset.PAPER: {
        "axiom_prompt": PromptStyle.PAPER,
        "answer_prompt": PromptStyle.PAPER,
        "demos": DemoSource.AUTHORS,
        "llm_pick": LLMPick.FACTS,
        "require_citation": False,
        "choice_rule": ChoiceRule.SELECT,
    },
    Preset.OURS: {
        "axiom_prompt": PromptStyle.OURS,
        "answer_prompt": PromptStyle.OURS,
        "demos": DemoSource.OURS,
        "llm_pick": LLMPick.RELATIONS,
        "require_citation": True,
        "choice_rule": ChoiceRule.RANK,
    },
}
_PAPER_SIDE: dict[str, str] = {
    "axiom_prompt": "Appendix D's axiom prompt verbatim, with 'if you can't produce a helpful rule … give a "
    "hint' (a hint reply is kept as the guidance)",
    "answer_prompt": "Appendix D's answer prompt: 'Answer: <reason> Therefore, the answer is: …', facts "
    "listed '1- (h, r, t)' and cited in prose ('Fact 4'); the pruning LLM copies triples",
    "demos": "the authors' released demonstrations (rev1 for questions, Creak_rev2 for claims)",
    "llm_pick": "Eq. 4: top-k by similarity ∪ the triples the LLM picks (LLM_T)",
    "require_citation": "the answer prompt asks for no citation; grounding is measured afterwards",
    "choice_rule": "the authors' released Recipe-MPR prompt: every recipe in one prompt, the model selects "
    "one ('Therefore, the selected recipe is: N')",
}
_OURS_SIDE: dict[str, str] = {
    "axiom_prompt": "ours: the rule plus an explicit Premises/Conclusion block; a reply without a rule is "
    "re-asked",
    "answer_prompt": "ours: numbered steps each citing '[F3]'/'[R1]' ids, then 'Answer: Yes|No|I dont know'",
    "demos": "our examples (well-known entities)",
    "llm_pick": "the LLM picks relations of the remaining sub-graph; their facts are added",
    "require_citation": "a Yes/No must cite at least one listed fact, else it is re-asked",
    "choice_rule": "every option judged premise by premise (ours: rank — fewest violated, then most "
    "satisfied; first — §3.2.4's 'until an option satisfies all premises')",
}


class R3Config(PresetConfig):
    """R3 (Toroghi et al. 2024). From the paper: depth 2 (Table 8), top-k pruning ∪ the LLM's picks (Eq. 4),
    the union of entity extractors (Eq. 1). Open in the paper (ours in both presets): ``breadth`` (how many
    axioms/branches), ``top_k``, ``llm_pool``, ``axiom_facts``, the embedder.

    ``preset`` (``paper`` default, or ``ours``) fills every setting left unset (``None``): see
    :data:`PRESETS`, :class:`PromptStyle`, :class:`ChoiceRule`, :class:`~.demos.DemoSource`."""

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = PRESETS
    paper_side: ClassVar[Mapping[str, str]] = _PAPER_SIDE
    ours_side: ClassVar[Mapping[str, str]] = _OURS_SIDE

    preset: Preset = Preset.PAPER
    llm: str | None = None
    max_depth: int = Field(default=2, ge=0, le=5)  # expansions per branch (Table 8: 0, 1, 2, 3)
    breadth: int = Field(default=2, ge=1, le=5)  # branches: a new axiom when a branch ends without answer
    top_k: int = client_option(10, ge=1, le=200)  # facts kept per pruning round
    pruning: Pruning = Pruning.SEMANTIC
    llm_pick: LLMPick | None = None  # paper: facts (triples); ours: relations
    llm_pool: int = Field(default=30, ge=0, le=300)  # most candidates beyond the top-k the LLM adds
    direction: Direction = Direction.HEAD
    entities: EntitySource = EntitySource.UNION
    max_entities: int = Field(default=6, ge=1, le=20)
    link_min_score: float = Field(default=0.85, ge=0.5, le=1.0)  # fuzzy linking of LLM-named entities
    embedder: str = "minilm"
    axiom_prompt: PromptStyle | None = None
    answer_prompt: PromptStyle | None = None
    demos: DemoSource | None = None
    demos_dir: str | None = None  # the authors' prompt files (default: the data root's r3-prompts)
    grounding_retries: int = Field(default=2, ge=0, le=5)  # re-asks after a step cites an unlisted fact
    require_citation: bool | None = None  # a Yes/No must cite at least one fact
    choice_rule: ChoiceRule | None = None
    judge: PremiseJudge = PremiseJudge.LLM
    judge_threshold: float = Field(default=0.45, ge=-1.0, le=1.0)
    retries: int = Field(default=1, ge=0, le=3)  # parse retries of the other prompts
    max_tokens: int = client_option(512, ge=16, le=32_768)
    axiom_facts: int = Field(default=15, ge=0, le=100)  # sub-graph facts shown when surfacing the axiom

    def unspecified(self) -> list[str]:
        """What the paper leaves open and this run chose (both presets)."""
        return [
            f"breadth={self.breadth}: branches (a new axiom when a branch ends without an answer)",
            f"top_k={self.top_k}, llm_pool={self.llm_pool}: facts kept by similarity per round, candidates "
            "beyond them offered to the LLM's pick",
            f"embedder={self.embedder}: cosine similarity of normalised embeddings (paper: 'Euclidean "
            "similarity' of an unnamed dense retriever)",
            f"axiom_facts={self.axiom_facts}: sub-graph facts shown when surfacing the axiom",
            f"grounding_retries={self.grounding_retries}: a reply citing an unlisted fact is rejected and "
            "re-asked (the mechanical citation check; the paper checks grounding by hand, FActScore)",
            "a new branch's axiom prompt lists the rules already tried",
        ]

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        """The preset settings that differ from the paper, then what differs in every preset
        (:func:`standing_deviations`)."""
        return self.preset_deviations() + standing_deviations(self)


def standing_deviations(config: R3Config) -> list[str]:
    """What differs from the paper whatever the settings: the KG, the linker, the retriever."""
    out = [
        "KG: the KG the run is given, not live Wikidata (on CR-LT-KGQA tkgqa's KG is the union of the "
        "entries' own 'KG Triples': an oracle sub-graph that holds the facts each answer needs)",
        f"retrieval: cosine similarity of {config.embedder} embeddings (paper: off-the-shelf dense "
        "retrievers as in KAPING, §3.2.2, with 'Euclidean similarity')",
    ]
    if config.entities != EntitySource.LLM:
        out.append(
            "entity linker: tkgqa's label/alias linker over the run's KG (kg.linking), not ReFinED (the "
            "paper's linker, Table 5)"
        )
    return out


class BaselineConfig(MethodConfig):
    """``kaping`` (top-k facts by similarity to the question, then answer) and the CoT baselines."""

    llm: str | None = None
    shots: int = Field(default=0, ge=0, le=2)
    top_k: int = client_option(10, ge=1, le=200)
    direction: Direction = Direction.HEAD
    max_entities: int = Field(default=6, ge=1, le=20)
    embedder: str = "minilm"
    retries: int = Field(default=1, ge=0, le=3)
    max_tokens: int = client_option(384, ge=16, le=32_768)


#: Bare-word options: ``--method "r3:truncation,linker_only"``.
SPEC_FLAGS: dict[str, tuple[str, Any]] = {
    "truncation": ("pruning", "truncation"),
    "semantic": ("pruning", "semantic"),
    "linker_only": ("entities", "linker"),
    "no_llm_extractor": ("entities", "linker"),
    "llm_only_entities": ("entities", "llm"),
    "no_linker": ("entities", "llm"),
    "no_llm_pick": ("llm_pick", "off"),
    "pick_relations": ("llm_pick", "relations"),
    "pick_facts": ("llm_pick", "facts"),
    "both_directions": ("direction", "both"),
    "embedding_judge": ("judge", "embedding"),
    "no_citation_required": ("require_citation", False),
    "citation_required": ("require_citation", True),
    "authors_demos": ("demos", "authors"),
    "ours_demos": ("demos", "ours"),
    "first_option": ("choice_rule", "first"),
    "select_option": ("choice_rule", "select"),
    "rank_options": ("choice_rule", "rank"),
}
