"""``LPKGConfig``: every setting of LPKG, its two presets and the deviations from the paper.

``preset=paper`` (the default) runs plans as Wang et al. (Findings of EMNLP 2024, §3.3-3.4, Appendix C) and
the authors' executor (zjukg/LPKG, ``QA_Pipeline``) do: a QA LLM per sub-question with the authors' QA prompt
verbatim ("your own knowledge" clauses included), five samples and a majority vote, the question answered
directly whenever a sub-answer comes out empty, ``Compare`` as an LLM call, in-context planning with ten
KG-derived demonstrations in the official code-completion prompt. ``preset=ours`` is the project's offline
variant: the shared symbolic reader, one reading, no fall-back on empty sub-answers, a time/number rule for
``Compare``, four hand-written demonstrations in a compact prompt. A preset-dependent setting left unset
(``None``) takes its preset's value (:data:`PRESETS`); one given explicitly wins.
:meth:`LPKGConfig.deviations` lists what differs from the paper and :meth:`LPKGConfig.unspecified` what the
paper leaves open (our choices in both presets); both go into ``report.json`` through
:meth:`LPKGMethod.describe`. ``docs/lpkg_paper_vs_ours.md`` has the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field

from ..base import NO_NOTES, Preset, PresetConfig, SetupNotes, shown_setting
from ..client import client_option
from .execute import ReaderMode, SearchMode
from .planner import Inference


class QAPrompt(StrEnum):
    """The ``Get_Answer`` prompt of ``reader=llm``: ``authors`` (paper: the authors' ``sub_QA_prompt``
    verbatim, which asks the model to answer "based on your own knowledge and the information provided" and
    from its own knowledge when the information lacks the answer) or ``kg_only`` (ours: "based on the
    information provided" only, the own-knowledge clauses dropped)."""

    AUTHORS = "authors"
    KG_ONLY = "kg_only"


class CompareHow(StrEnum):
    """``Compare``: ``llm`` (paper: the authors' comparison prompt — the original question, each
    sub-question and its answers — answered by the QA LLM) or ``rule`` (ours: each sub-question's own entity
    kept whose answers win, earliest/latest time or largest/smallest number by the question's cue words)."""

    LLM = "llm"
    RULE = "rule"


class PlanDemoSource(StrEnum):
    """Where in-context planning takes its demonstrations when no ``demos=PATH`` is given: ``kg`` (paper:
    KG-derived — LPKG's patterns grounded in the evaluated KG at its first question, template-verbalised,
    round-robin over the patterns) or ``builtin`` (ours: four hand-written demonstrations)."""

    KG = "kg"
    BUILTIN = "builtin"


class PlanFormat(StrEnum):
    """The in-context planning prompt: ``official`` (paper: the code-completion prompt of the authors'
    planning data — the function stubs, ``# Example i:`` blocks with ``: str`` annotations, question
    types and ``Thought`` lines, "# Your turn!") or ``compact`` (ours: one instruction paragraph and
    ``##Examplei##`` blocks of bare assignments)."""

    OFFICIAL = "official"
    COMPACT = "compact"


# Settings whose default depends on the preset (unset = the preset's value).
PRESETS: dict[Preset, dict[str, Any]] = {
    Preset.PAPER: {
        "reader": ReaderMode.LLM,
        "qa_prompt": QAPrompt.AUTHORS,
        "votes": 5,
        "empty_fallback": True,
        "compare": CompareHow.LLM,
        "k": 10,
        "demo_source": PlanDemoSource.KG,
        "plan_format": PlanFormat.OFFICIAL,
    },
    Preset.OURS: {
        "reader": ReaderMode.SYMBOLIC,
        "qa_prompt": QAPrompt.KG_ONLY,
        "votes": 1,
        "empty_fallback": False,
        "compare": CompareHow.RULE,
        "k": 4,
        "demo_source": PlanDemoSource.BUILTIN,
        "plan_format": PlanFormat.COMPACT,
    },
}

_PAPER_SIDE: dict[str, str] = {
    "reader": "§3.4: an external QA LLM answers each sub-question from the retrieved information",
    "qa_prompt": "Appendix C.3 / the authors' sub_QA_prompt, its 'your own knowledge' clauses included",
    "votes": "the authors' executor samples the QA LLM 5 times and keeps the most frequent reply",
    "empty_fallback": "whenever a sub-answer (or an intersection/union, or the final answer) is empty, the "
    "original question is answered directly (QA prompt + vote over its own retrieval)",
    "compare": "Compare is a QA-LLM call over the sub-questions and their answers (numeric comparisons)",
    "k": "10 demonstrations in the planning prompt",
    "demo_source": "KG-derived demonstrations (§3.2: planning demonstrations 'also constructed from KGs')",
    "plan_format": "the official code-completion planning prompt (Appendix C.2, the authors' data)",
}
_OURS_SIDE: dict[str, str] = {
    "reader": "offline: the shared symbolic reader's program run over the retrieved facts (no LLM)",
    "qa_prompt": "the QA prompt without its own-knowledge clauses (answer from the information only)",
    "votes": "QA-LLM replies sampled this many times (1: one greedy reply)",
    "empty_fallback": "no fall-back on empty sub-answers (only when the plan does not parse)",
    "compare": "a rule: earliest/latest time or largest/smallest number by the question's cue words",
    "k": "demonstrations in the planning prompt",
    "demo_source": "four demonstrations written for this project",
    "plan_format": "a compact prompt: one instruction paragraph, ##Examplei## blocks of bare assignments",
}


class LPKGConfig(PresetConfig):
    """LPKG settings (see the module docstring and :mod:`tkgqa.methods.lpkg.method`).

    ``preset`` (``paper`` default, or ``ours``) fills every setting left unset (``None``): ``reader``,
    ``qa_prompt``, ``votes``, ``empty_fallback``, ``compare``, ``k``, ``demo_source``, ``plan_format``."""

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = PRESETS
    paper_side: ClassVar[Mapping[str, str]] = _PAPER_SIDE
    ours_side: ClassVar[Mapping[str, str]] = _OURS_SIDE

    preset: Preset = Preset.PAPER
    llm: str | None = Field(default=None, description="LLM spec (ICL planner, QA reader, Compare)")
    planner: str = "icl"
    k: int | None = Field(default=None, ge=0, le=16, description="in-context demonstrations")
    demos: str | None = Field(default=None, description="planning-data JSONL for the demonstrations")
    demo_source: PlanDemoSource | None = None
    plan_format: PlanFormat | None = None
    search: SearchMode = SearchMode.KG
    reader: ReaderMode | None = None
    qa_prompt: QAPrompt | None = None
    votes: int | None = Field(default=None, ge=1, le=20, description="QA-LLM samples per reading")
    vote_temperature: float = Field(default=1.0, ge=0.0, le=2.0, description="temperature of the samples")
    empty_fallback: bool | None = None
    compare: CompareHow | None = None
    embedder: str = "hashing"
    search_k: int = Field(default=30, ge=1)
    max_info: int = Field(default=5000, ge=1)
    max_fanout: int = Field(default=10, ge=1)
    llm_facts: int = Field(default=30, ge=1)
    max_plan_tokens: int = Field(default=400, ge=32)
    inference: Inference = Inference.AUTO
    threads: int | None = Field(default=None, ge=1)
    fallback: bool = True
    seed: int = client_option(0, ge=0, le=2**32 - 1)

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        out = self.preset_deviations(_shown)
        kind = self.planner.partition(":")[0].strip().lower()
        if kind == "random":
            out.append("planner=random: a baseline planner (paper: the fine-tuned planner, or ICLPKG)")
        if kind == "direct":
            out.append(
                "planner=direct: the question itself answered by the QA prompt "
                f"({_shown('qa', self.qa_prompt)}) over its own Search, {self.votes or 1} vote(s) — the "
                "paper's 'Direct' baseline is not described; the authors' code also has a direct_prompt "
                "('… Your answer should only be one word or phrase …') with 5 votes that no published path "
                "calls"
            )
        out.append(
            "Search: no Wikipedia corpus here — the QA LLM reads what tkgqa's Search finds in the run's KG "
            "(CLQA-Wiki has no KG in tkgqa: 'Information: (none)'), not 5 Wikipedia passages by Contriever"
        )
        if self.empty_fallback:
            out.append(
                "empty_fallback=true: the plan stops at the first empty Get_Answer/Intersection/Union; the "
                "authors' error_flag (parser/parse_result.py) tests the length of the *list* of answer "
                "sets after a Get_Answer, which is 0 only when a {Ans_k} sub-question had nothing to be "
                "asked for — an empty answer set does not trigger it; an empty Intersection/Union or final "
                "answer does"
            )
        if kind == "finetuned":
            out.append(
                "planner=finetuned: SmolLM2-135M + LoRA trained here on CPU (paper: CodeQwen1.5-7B-Chat / "
                "Llama3-8B-Instruct, LoRA, 2 epochs, lr 5e-5)"
            )
        if not self.fallback:
            out.append(
                "fallback=false: an unparsable plan abstains (paper: the question is answered directly)"
            )
        if self.search is SearchMode.RETRIEVER:
            out.append(f"search=retriever: the {self.search_k} best verbalised facts by embedding")
        return out

    def unspecified(self) -> list[str]:
        """Settings the paper leaves open or that cannot be as the paper's here: our choices, in both
        presets."""
        return [
            f"llm_facts={self.llm_facts}: retrieved facts shown to the QA LLM, numbered 'subject | relation "
            "| object | time' (the authors: '# Passage i' title and text)",
            f"vote_temperature={self.vote_temperature}: the temperature of the voted samples (the authors' "
            "request function is not published; 1.0 is the OpenAI default); sample i carries seed i",
            "vote ties: the first reply reaching the top count wins (the authors: random.choice among them)",
            "Compare prompt: answers written as the paper's list '[A#B]' (the authors' code prints a Python "
            "set)",
            f"max_fanout={self.max_fanout}: answers a '{{Ans_k}}' sub-question is asked for (the "
            "authors: all)",
            "KG-derived demonstrations are template-verbalised with generated 'Thought' lines (the paper: "
            "GPT-4 verbalisation); `tkgqa lpkg data --llm SPEC --patterns paper` writes LLM-verbalised "
            "ones for demos=PATH",
        ]


def _shown(name: str, value: Any) -> str:
    return shown_setting(name, value)
