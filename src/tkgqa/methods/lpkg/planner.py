"""LPKG planners: question → code-formatted plan text → :class:`~.plan.Plan`.

* ``icl`` — in-context planning (the paper's ICLPKG): any LLM (``--llm SPEC``) with ``k`` demonstrations,
  from a planning-data file (KG-derived, as in the paper) or the built-in ones.
* ``sft`` — any LLM (``--llm SPEC``, e.g. a larger model fine-tuned on the exported data on a GPU and
  served behind an OpenAI-compatible server) asked in the fine-tuning format (the question only).
* ``finetuned:PATH`` — a planner trained by ``tkgqa lpkg train`` (SmolLM2-135M + LoRA). Inference runs in
  llama.cpp with the adapter exported to GGUF on top of the wheel's base GGUF when the export exists
  (``inference=llamacpp``, ~95 tokens/s on 2 cores), else by batched ``transformers`` generation
  (``inference=transformers``, ~11 tokens/s); ``auto`` picks the first that is available.
* ``random`` — baseline: a uniformly random pattern's plan whose sub-questions are the question itself.
* ``direct`` — baseline: the one-step plan asking the question itself.
"""

from __future__ import annotations

import json
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ...errors import ConfigError, ParseError
from ...llm import LLMBackend, Usage, resolve_llm, tkgqa_home
from ...llm.base import Message
from ...prompts.ask import Parsed, Refused, ask, without_raw
from ...prompts.base import Bound
from ...query.generate.patterns import SKELETONS, Instance, PatternType, Projection, WhenQ
from ...query.program.answer_sets import ValueKind
from .official import is_official_file, official_block, read_official
from .plan import Plan, parse_plan
from .prompts import (
    BUILTIN_DEMOS,
    Demo,
    finetune_messages,
    official_planner_messages,
    planner_messages,
)
from .verbalize import gold_plan


class Inference(StrEnum):
    AUTO = "auto"
    LLAMACPP = "llamacpp"
    TRANSFORMERS = "transformers"


@dataclass(frozen=True)
class PlanOutput:
    """A planner's reply: the raw text, the parsed plan (``None`` with ``error`` when it did not parse)."""

    text: str
    plan: Plan | None
    error: str = ""
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


def plan_prompt(messages: Sequence[Message]) -> Bound[Plan]:
    """The planning prompt of one question: its messages, read by :func:`~.plan.parse_plan` (a typed
    :class:`~.plan.Plan`, or a ParseError saying why not)."""
    return Bound("lpkg.plan", messages, parse_plan)


def asked(outcome: Parsed[Plan] | Refused, seconds: float) -> PlanOutput:
    """A planner's reply as :func:`~tkgqa.prompts.ask.ask` returned it (the plan, or why it was refused)."""
    if isinstance(outcome, Refused):
        return PlanOutput(outcome.raw, None, outcome.brief, outcome.usage, seconds)
    return PlanOutput(outcome.text, outcome.value, "", outcome.usage, seconds)


def parsed(text: str, usage: Usage, seconds: float) -> PlanOutput:
    """A plan generated without an LLM backend (local ``transformers`` generation), read by the same
    parser."""
    try:
        return PlanOutput(text, parse_plan(text), "", usage, seconds)
    except ParseError as exc:
        return PlanOutput(text, None, without_raw(exc), usage, seconds)


class Planner(ABC):
    name = "planner"

    @abstractmethod
    def plan(self, question: str) -> PlanOutput: ...

    def plan_many(self, questions: Sequence[str]) -> list[PlanOutput]:
        return [self.plan(q) for q in questions]

    def describe(self) -> dict[str, Any]:
        return {"planner": self.name}


@dataclass(eq=False, repr=False)
class ICLPlanner(Planner):
    """In-context planning with ``k`` demonstrations (LPKG's ICLPKG); ``tuned``: a model fine-tuned on the
    exported planning data, asked in its training format (the question only)."""

    name = "icl"

    llm: LLMBackend
    demos: Sequence[Demo]  # after construction: the first ``k`` as a list (none when ``tuned``)
    _: KW_ONLY
    k: int = 4
    max_tokens: int = 400
    retries: int = 0
    tuned: bool = False
    official: bool = False
    blocks: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.set_demos([] if self.tuned else self.demos)
        if self.tuned:
            self.name = "sft"

    def set_demos(self, demos: Sequence[Demo]) -> None:
        """Use the first ``k`` of ``demos`` (rendered once in the official format when asked for)."""
        self.demos = list(demos)[: self.k]
        self.blocks = [official_block(d) for d in self.demos] if self.official else []

    def messages(self, question: str) -> list[Message]:
        """The planning prompt for ``question`` (the fine-tuning format, the official or the compact one)."""
        if self.tuned:
            return finetune_messages(question)
        if self.official:
            return official_planner_messages(question, self.blocks)
        return planner_messages(question, self.demos)

    def plan(self, question: str) -> PlanOutput:
        t0 = time.perf_counter()
        # an LLMError (endpoint down, timeout, bad key) propagates: an infrastructure failure is an error
        # row, never an empty plan that would read as an abstention
        prompt = plan_prompt(self.messages(question))
        out = ask(self.llm, prompt, retries=self.retries, max_tokens=self.max_tokens)
        return asked(out, time.perf_counter() - t0)

    def describe(self) -> dict[str, Any]:
        return {
            "planner": self.name,
            "k": len(self.demos),
            "format": "official" if self.official else "compact",
            "llm": getattr(self.llm, "model_id", None),
        }


def load_demos(path: str | Path | None, k: int, *, seed: int = 0) -> list[Demo]:
    """``k`` demonstrations: from a planning-data JSONL (round-robin over patterns, seeded), the authors'
    official planning prompt (a ``.json`` file: its demonstrations in order) or built in."""
    if path is None:
        return list(BUILTIN_DEMOS[:k])
    if is_official_file(path):
        return read_official(path)[:k]
    from .data import read_examples

    examples = read_examples(path)
    rng = random.Random(seed)
    by_pattern: dict[str, list[Demo]] = {}
    for ex in examples:
        by_pattern.setdefault(ex.qtype, []).append(ex.demo())
    pools = [rng.sample(v, len(v)) for _, v in sorted(by_pattern.items())]
    rng.shuffle(pools)
    out: list[Demo] = []
    while len(out) < k and any(pools):
        for pool in pools:
            if pool and len(out) < k:
                out.append(pool.pop())
    return out


# --- baselines ------------------------------------------------------------------------------------------


def skeleton_plan(pattern: PatternType, question: str) -> Plan:
    """``pattern``'s plan with the question itself as every sub-question (``{Ans_j}`` appended where a
    sub-question is fed an answer; "When: " in front where it asks a time)."""
    nodes = SKELETONS[pattern]
    from .verbalize import plan_names

    names = plan_names(nodes)
    subs = []
    for node in nodes:
        if isinstance(node, Projection):
            subs.append(
                question if isinstance(node.source, str) else f"{question} ({{{names[node.source]}}})"
            )
        elif isinstance(node, WhenQ):
            subs.append(f"When: {question}")
    return gold_plan(Instance(pattern, nodes, (), ValueKind.ENTITY), subs)


class RandomPatternPlanner(Planner):
    """Baseline: a random pattern (seeded by the question text) filled with the question itself."""

    name = "random"

    def __init__(self, seed: int = 0, patterns: Sequence[PatternType] = tuple(PatternType)) -> None:
        self.seed = seed
        self.patterns = list(patterns)

    def plan(self, question: str) -> PlanOutput:
        rng = random.Random(f"{self.seed}:{question}")
        plan = skeleton_plan(rng.choice(self.patterns), question)
        return PlanOutput(plan.to_text(), plan)


class DirectPlanner(Planner):
    """Baseline: the question itself as the only sub-question."""

    name = "direct"

    def plan(self, question: str) -> PlanOutput:
        plan = skeleton_plan(PatternType.P1, question)
        return PlanOutput(plan.to_text(), plan)


# --- fine-tuned ----------------------------------------------------------------------------------------
def planners_dir() -> Path:
    return tkgqa_home() / "lpkg" / "planners"


def resolve_planner_path(spec: str) -> Path:
    """A planner directory: a path, or a name under ``$TKGQA_HOME/lpkg/planners``."""
    path = Path(spec).expanduser()
    if not path.is_dir():
        path = planners_dir() / spec
    if not (path / "config.json").is_file():
        known = (
            sorted(p.name for p in planners_dir().glob("*") if (p / "config.json").is_file())
            if planners_dir().is_dir()
            else []
        )
        raise ConfigError(
            f"no trained planner at {spec!r} (a directory with config.json, or a name under "
            f"{planners_dir()}); "
            f"train one with `tkgqa lpkg train`" + (f"; known: {', '.join(known)}" if known else "")
        )
    return path


class FinetunedPlanner(Planner):
    """A planner fine-tuned by ``tkgqa lpkg train`` (see the module docstring for the inference paths)."""

    name = "finetuned"

    def __init__(
        self,
        path: str | Path,
        *,
        inference: Inference | str = Inference.AUTO,
        max_tokens: int = 400,
        batch_size: int = 8,
        threads: int | None = None,
    ):
        self.path = resolve_planner_path(str(path))
        self.threads = threads
        self.info = json.loads((self.path / "config.json").read_text("utf-8"))
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.inference = self._choose(Inference(inference))
        self._llm: LLMBackend | None = None
        self._hf: tuple[Any, Any] | None = None

    def _choose(self, wanted: Inference) -> Inference:
        gguf = self.gguf_adapter()
        import importlib.util

        has_llama = importlib.util.find_spec("llama_cpp") is not None
        if wanted is Inference.LLAMACPP and (gguf is None or not has_llama):
            raise ConfigError(
                f"planner {self.path.name} has no GGUF adapter or llama-cpp-python is missing; "
                "export it with "
                "`tkgqa lpkg export-gguf` or use inference=transformers"
            )
        if wanted is Inference.AUTO:
            return Inference.LLAMACPP if gguf is not None and has_llama else Inference.TRANSFORMERS
        return wanted

    def gguf_adapter(self) -> Path | None:
        name = self.info.get("gguf_adapter")
        path = self.path / name if name else None
        return path if path is not None and path.is_file() else None

    @property
    def llm(self) -> LLMBackend:
        if self._llm is None:
            from ...llm.llamacpp_backend import LlamaCppBackend

            gguf = self.gguf_adapter()
            backend = LlamaCppBackend("smollm2", n_ctx=2048, n_threads=self.threads, lora_path=str(gguf))
            self._llm = resolve_llm(backend)
        return self._llm

    def _transformers(self) -> tuple[Any, Any]:
        if self._hf is None:
            from .model import load_base

            model, tok = load_base()
            if (self.path / "model").is_dir():  # a fully fine-tuned planner
                from transformers import AutoModelForCausalLM

                model = AutoModelForCausalLM.from_pretrained(str(self.path / "model"))
            else:
                from peft import PeftModel

                model = PeftModel.from_pretrained(model, str(self.path / "adapter"))
            self._hf = (model, tok)
        return self._hf

    def plan(self, question: str) -> PlanOutput:
        return self.plan_many([question])[0]

    def plan_many(self, questions: Sequence[str]) -> list[PlanOutput]:
        if self.inference is Inference.LLAMACPP:
            return [self._plan_llamacpp(q) for q in questions]
        from .model import generate

        model, tok = self._transformers()
        prompts = [[{"role": m.role, "content": m.content} for m in finetune_messages(q)] for q in questions]
        t0 = time.perf_counter()
        outs = generate(model, tok, prompts, max_new_tokens=self.max_tokens, batch_size=self.batch_size)
        each = (time.perf_counter() - t0) / max(1, len(questions))
        return [
            parsed(text, Usage(prompt_tokens=p, completion_tokens=c, calls=1), each) for text, p, c in outs
        ]

    def _plan_llamacpp(self, question: str) -> PlanOutput:
        t0 = time.perf_counter()
        prompt = plan_prompt(finetune_messages(question))
        out = ask(self.llm, prompt, retries=0, max_tokens=self.max_tokens)  # an LLMError propagates
        return asked(out, time.perf_counter() - t0)

    def describe(self) -> dict[str, Any]:
        return {
            "planner": self.name,
            "path": self.path.name,
            "inference": str(self.inference),
            "data_sha256": self.info.get("data_sha256"),
            "steps": self.info.get("steps_done"),
        }


def resolve_planner(
    spec: str,
    *,
    llm: LLMBackend | None = None,
    demos: str | Path | None = None,
    k: int = 4,
    seed: int = 0,
    max_tokens: int = 400,
    inference: Inference | str = Inference.AUTO,
    threads: int | None = None,
    official: bool = False,
    demos_later: bool = False,
) -> Planner:
    """``icl`` | ``sft`` | ``finetuned:PATH`` | ``random`` | ``direct`` (see the module docstring).
    ``official``: the in-context planner asks in the official prompt format; ``demos_later``: its
    demonstrations are set later (:meth:`ICLPlanner.set_demos`, KG-derived) unless ``demos`` names a file."""
    kind, _, arg = spec.partition(":")
    match kind.strip().lower():
        case "icl":
            if llm is None:
                raise ConfigError("planner=icl needs an LLM: pass --llm SPEC (e.g. llamacpp:smollm2)")
            chosen = [] if demos is None and demos_later else load_demos(demos, k, seed=seed)
            return ICLPlanner(llm, chosen, k=k, max_tokens=max_tokens, official=official)
        case "sft":
            if llm is None:
                raise ConfigError("planner=sft needs the fine-tuned model as --llm SPEC")
            return ICLPlanner(llm, [], max_tokens=max_tokens, tuned=True)
        case "finetuned":
            if not arg:
                raise ConfigError("planner=finetuned needs a path or name: finetuned:PATH")
            return FinetunedPlanner(arg, inference=inference, max_tokens=max_tokens, threads=threads)
        case "random":
            return RandomPatternPlanner(seed)
        case "direct":
            return DirectPlanner()
        case _:
            raise ConfigError(
                f"unknown LPKG planner {spec!r}; use icl, sft, finetuned:PATH, random or direct"
            )
