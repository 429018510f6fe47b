"""``CIKConfig``: every setting of CIK-LLM, its two presets and the deviations from the paper.

``preset=paper`` (the default) runs the paper's configuration (Di Maio et al., §3.1, §4 "Setup", footnote 2,
Listings 1-2, Table 3) wherever the paper specifies one; ``preset=ours`` switches on the project's variants. A
preset-dependent setting left unset (``None``) takes its preset's value (:data:`PRESETS`); one given
explicitly wins. :meth:`CIKConfig.effective` resolves them; :meth:`CIKConfig.deviations` lists what differs
from the paper and :meth:`CIKConfig.unspecified` what the paper leaves open (our choices in both presets).
Both go into ``report.json`` through :meth:`CIKMethod.describe`. ``docs/cik_paper_vs_ours.md`` has the table
with the measured effect of each variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar, Literal

from pydantic import Field

from ..base import NO_NOTES, Preset, PresetConfig, SetupNotes, shown_setting
from ..client import client_option


class TimePruning(StrEnum):
    """Stage 2 of the pruning (§3.1.1, "time-aware pruning"), its time rule.

    ``footnote`` (paper, footnote 2): drop every fact more than ``margin_days`` from *each* fact involving a
    question entity (kept when within the margin of at least one). ``lifetime`` (ours): keep the facts
    meeting the question entities' lifetimes widened by the margin — their intersection, or their union when
    they never meet (the main text's "time frame intersecting the valid lifetime"). ``off``: no time rule
    (the longest-per-(relation, tail) rule still applies with several question entities)."""

    FOOTNOTE = "footnote"
    LIFETIME = "lifetime"
    OFF = "off"


class Delta2Rule(StrEnum):
    """What happens when more than ``δ2`` facts survive the two pruning stages.

    ``none`` (paper): nothing — the paper gives no rule for which facts survive a cut: its δ2 bound is met
    only through the two stages, and its Table 3 reports 21 ± 36 facts after them (a cap at 30 cannot have a
    standard deviation of 36), so sets above δ2 go to the prompt (the paper's "token limit issues"). ``hops``:
    the paper's stage-1 rule (multi-hop truncation) reused with δ2 — the farthest hops dropped while at least
    δ2 facts remain, never the 1-hop set. ``phi_t`` (ours): at most δ2 facts, the nearest hops first and,
    within a hop, the facts best satisfying the question's time constraint (TimeR4's φ_t), else the most
    recent."""

    NONE = "none"
    HOPS = "hops"
    PHI_T = "phi_t"


# Settings whose default depends on the preset (unset = the preset's value).
PRESETS: dict[Preset, dict[str, Any]] = {
    Preset.PAPER: {
        "elide_times": False,
        "time_pruning": TimePruning.FOOTNOTE,
        "delta2_rule": Delta2Rule.NONE,
        "fallback": False,
        "max_relations_per_hop": 0,
    },
    Preset.OURS: {
        "elide_times": True,
        "time_pruning": TimePruning.LIFETIME,
        "delta2_rule": Delta2Rule.PHI_T,
        "fallback": True,
        "max_relations_per_hop": 60,
    },
}

# What the paper says for each preset-dependent setting (the `paper` preset's value) and what ours does.
_PAPER_SIDE: dict[str, str] = {
    "elide_times": "Fig. 3 / Listing 2: RELATION(HEAD,TAIL,START,END) with the times in every term",
    "time_pruning": "footnote 2: facts more than a year from every question-entity fact are discarded",
    "delta2_rule": "no selection rule: δ2 is met only through the two stages (Table 3: 21 ± 36 facts)",
    "fallback": "an invalid path collects no facts (§3.1.1); such questions count as not answered (Table 2)",
    "max_relations_per_hop": "Listing 1 lists every relation at each distance",
}
_OURS_SIDE: dict[str, str] = {
    "elide_times": "indented time tree: the question entity, year, month and day written once per group",
    "time_pruning": "lifetime window: the question entities' lifetimes (±1 year) intersected, else joined",
    "delta2_rule": "at most δ2 facts: nearest hops first, then φ_t of the question's time constraint",
    "fallback": "an entity whose path yields nothing contributes all its 1-hop facts",
    "max_relations_per_hop": "at most this many relations per distance in Π_esg (most frequent first)",
}
_VALUE_TEXT: dict[str, dict[Any, str]] = {
    "elide_times": {True: "tree", False: "keep_times"},
    "max_relations_per_hop": {0: "all"},
}


class CIKConfig(PresetConfig):
    """Settings of CIK-LLM. From the paper: ``hops`` (n = 3), ``delta1`` (δ1 = 300), ``delta2`` (δ2 = 30),
    ``margin_days`` (one year, footnote 2), the longest-lasting fact per (relation, tail) with several
    question entities, the compressed prompt (``compress``; ``nocompress`` is Table 2's "w/o compression").

    ``preset`` (``paper`` default, or ``ours``) fills every setting left unset (``None``) — see
    :data:`PRESETS` and :class:`TimePruning`, :class:`Delta2Rule`. ``path_policy=lexical`` (ours) chooses the
    relation paths offline, without an LLM (word overlap with the question); the paper uses the LLM (Π_esg).
    """

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = PRESETS
    paper_side: ClassVar[Mapping[str, str]] = _PAPER_SIDE
    ours_side: ClassVar[Mapping[str, str]] = _OURS_SIDE

    preset: Preset = Preset.PAPER
    llm: str | None = Field(default=None, description="LLM spec (Π_esg and Π_rog), e.g. 'llamacpp:smollm2'")
    hops: int = Field(default=3, ge=1, le=5, description="n: relations discovered up to n hops")
    delta1: int = Field(default=300, ge=1, description="δ1: multi-hop truncation threshold")
    delta2: int = Field(default=30, ge=1, description="δ2: the bound after time-aware pruning")
    margin_days: int = Field(default=365, ge=0, description="time-aware pruning margin (one year)")
    longest_per_tail: bool = Field(
        default=True, description="several question entities: longest-lasting fact per (relation, tail)"
    )
    compress: bool = Field(default=True, description="compressed evidence + associative map (§3.1.2)")
    elide_times: bool | None = Field(
        default=None, description="compressed layout: the indented time tree (ours) instead of keep_times"
    )
    time_pruning: TimePruning | None = Field(default=None, description="footnote, lifetime or off")
    delta2_rule: Delta2Rule | None = Field(default=None, description="none, hops or phi_t")
    fallback: bool | None = Field(
        default=None, description="an entity whose path yields nothing contributes its 1-hop facts"
    )
    max_relations_per_hop: int | None = Field(
        default=None, ge=0, description="relations per distance shown in Π_esg (0: all)"
    )
    path_policy: Literal["llm", "lexical"] = client_option("llm")
    policy_hops: int = Field(default=1, ge=1, le=5, description="lexical policy: hops it may choose")
    policy_min_score: float = Field(default=0.5, description="lexical policy: word overlap for hops > 1")
    max_frontier: int = Field(
        default=1000, ge=1, description="entities expanded per hop (relation discovery)"
    )
    max_retrieved: int = Field(default=20_000, ge=1, description="facts collected per traversal")
    max_entities: int = Field(default=3, ge=1, description="question entities used (linked, or given)")
    max_tokens: int = client_option(512, ge=16, le=32_768)
    esg_max_tokens: int = Field(default=128, ge=16)
    prompt_token_limit: int | None = Field(
        default=None, description="abstain when the evidence exceeds this many tokens ('token limit')"
    )

    paper_values: ClassVar[Mapping[str, Any]] = {"hops": 3, "delta1": 300, "delta2": 30, "margin_days": 365}

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        out = self.preset_deviations(_shown)
        if not self.compress:
            out.append("compress=false: uncompressed evidence (Table 2's 'CIK-LLM w/o compression' ablation)")
        if self.path_policy == "lexical":
            out.append(
                "path_policy=lexical: relation paths chosen offline by word overlap with the question "
                "(paper: the LLM through Π_esg)"
            )
        if not self.longest_per_tail:
            out.append(
                "longest_per_tail=false: every fact per (relation, tail) kept (paper: the longest only)"
            )
        out += self.paper_value_deviations()
        if self.prompt_token_limit is not None:
            out.append(f"prompt_token_limit={self.prompt_token_limit}: abstain above it (ours)")
        return out

    def unspecified(self) -> list[str]:
        out = [
            f"max_entities={self.max_entities}: question entities linked in the text when the dataset gives "
            "none (the paper uses CronQuestions' annotated entities)",
            f"max_frontier={self.max_frontier}: entities expanded per hop when discovering D1..Dn (most "
            "connected first); max_retrieved="
            f"{self.max_retrieved} facts per traversal",
            "relations at each distance ordered by frequency; a relation may appear at several distances "
            "(Listing 1)",
            "associative map: X1../R1../e1.. variables numbered by first appearance (the paper: random short "
            "names such as quF, R0); other entities stay opaque and are decompressed in the answer (Listing "
            "2)",
            "Π_rog asks to end with 'Final answer: [...]' (parsing); Π_esg asks for the output list only",
            "evidence groups keyed by each fact's own time (START/END or its date), in time order",
        ]
        if self.preset_value("delta2_rule") is Delta2Rule.PHI_T:
            out.append("delta2_rule=phi_t: TimeR4's φ_t and the question's time constraint, a tool of ours")
        return out

    @property
    def layout(self) -> str:
        """The evidence layout of Π_rog: ``plain`` (uncompressed), ``flat`` (keep_times) or ``tree``."""
        if not self.compress:
            return "plain"
        return "tree" if self.preset_value("elide_times") else "flat"


def _shown(name: str, value: Any) -> str:
    text = _VALUE_TEXT.get(name, {}).get(value)
    if text is not None:
        return text
    return shown_setting(name, value)


#: Bare words of ``"cik:…"`` (``"cik:nocompress"``, ``"cik:ours"``).
SPEC_FLAGS: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("nocompress", "no_compress"), ("compress", False)),
    "keep_times": ("elide_times", False), "tree": ("elide_times", True),
    "lexical": ("path_policy", "lexical"), "keep_all_tails": ("longest_per_tail", False),
    "fallback": ("fallback", True), "no_fallback": ("fallback", False),
}  # fmt: skip
