"""LPKG planning data (§3.2): grounded instances → verbalised questions + gold code-formatted plans, the
entity-disjoint held-out split, and the export for supervised fine-tuning.

A planning example (:class:`PlanningExample`, one JSONL row) is also a question of the generic ``jsonl``
dataset (``question``, ``answers``, ``qid``, ``qtype`` = the pattern, ``answer_type``), so held-out examples
are evaluated with ``tkgqa eval --dataset jsonl --data-dir heldout.jsonl --kg KG --method lpkg``.

:func:`export_sft` writes the chat format most SFT tools read (``{"messages": [system, user, assistant]}``:
TRL's ``SFTTrainer``, axolotl's ``chat_template`` type, LLaMA-Factory's sharegpt/OpenAI style, OpenAI
fine-tuning), or ``prompt``/``completion`` pairs, or Alpaca's ``instruction``/``input``/``output``. The user
message is exactly what the fine-tuned planner is asked at inference
(:func:`~tkgqa.methods.lpkg.prompts.finetune_messages`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...errors import ConfigError, DataError
from ...kg.base import KGStore
from ...llm import LLMBackend, Usage
from ...prompts.ask import Refused, ask
from ...query.generate import patterns as pn
from ...query.generate.grounding import Grounder, GroundingConfig
from ...query.generate.patterns import LPKG_PATTERNS, Instance, PatternType
from ...query.program.nodes import SetOperation
from .plan import parse_plan
from .prompts import Demo, finetune_messages, verbalize_parser
from .verbalize import TemplateVerbalizer, Verbalized, gold_plan, plan_names


class PlanningExample(BaseModel):
    """One planning example: the complex question, its gold plan and answers, and its instance."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    qid: str
    question: str
    answers: list[str]
    qtype: str
    answer_type: str = "entity"
    plan: str
    sub_questions: list[str]
    kg: str = ""
    verbalizer: str = "template"
    answer_values: list[str] = []
    instance: dict[str, Any] = {}

    def demo(self) -> Demo:
        return Demo(self.question, self.plan)

    def messages(self) -> list[dict[str, str]]:
        """The chat messages of this example: the planner prompt and the gold plan as the reply."""
        msgs = [{"role": m.role, "content": m.content} for m in finetune_messages(self.question)]
        return [*msgs, {"role": "assistant", "content": self.plan}]

    def entities(self) -> set[str]:
        return Instance.from_dict(self.instance).entities() if self.instance else set()


# --- verbalisation ----------------------------------------------------------------------------------------
def describe_instance(inst: Instance, kg: KGStore) -> str:
    """The instance as numbered steps with the plan's variable names (the LLM verbalisation input)."""
    names = plan_names(inst.nodes)
    lab = kg.label
    lines = []
    for i, node in enumerate(inst.nodes):
        match node:
            case pn.Projection():
                src = (
                    f'"{lab(node.source)}"'
                    if isinstance(node.source, str)
                    else "{" + names[node.source] + "}"
                )
                role = "object" if node.inverse else "subject"
                lines.append(
                    f'{names[i]} = search: entities linked to {src} by "{lab(node.relation)}" '
                    f"({src} is the {role})"
                )
            case pn.WhenQ():
                gran = f" (answer with the {node.granularity.name.lower()})" if node.granularity else ""
                lines.append(
                    f'{names[i]} = search: when did ("{lab(node.subject)}", "{lab(node.relation)}", '
                    f'"{lab(node.object)}") happen{gran}'
                )
            case pn.SetOp():
                word = "intersection" if node.op is SetOperation.AND else "union"
                lines.append(f"{names[i]} = {word} of {', '.join(names[k] for k in node.inputs)}")
            case pn.TimeFilter():
                if isinstance(node.time, int):
                    when = f"{node.relation} the time in {names[node.time]}"
                else:
                    when = f"between {node.time} and {node.end}" if node.end else f"in {node.time}"
                lines.append(f"{names[i]} = those of {names[node.input]} {when}")
            case pn.Pick():
                lines.append(f"{names[i]} = the {node.which} of {names[node.input]} in time")
            case pn.Compare():
                cands = " or ".join(f'"{lab(c)}"' for c in node.candidates)
                lines.append(
                    f"{names[i]} = which of {cands} is {node.mode} "
                    f"(by {', '.join(names[k] for k in node.inputs)})"
                )
    return "\n".join(lines)


@dataclass
class VerbalizationStats:
    template: int = 0
    llm: int = 0
    llm_failed: int = 0
    usage: Usage = field(default_factory=Usage)


def llm_verbalize(
    inst: Instance, kg: KGStore, llm: LLMBackend, templates: TemplateVerbalizer
) -> Verbalized | Refused:
    """Sub-questions and the complex question written by ``llm`` (the paper's verbalisation); the plan keeps
    the template skeleton. :class:`Refused` when the model's reply is unusable (an LLMError propagates)."""
    subs = templates.sub_questions(inst)
    placeholders = [sorted(set(re.findall(r"\{(\w+)\}", s))) for s in subs]
    context = {"pattern": str(inst.pattern), "instance": describe_instance(inst, kg), "n": len(subs)}
    parsed = ask(llm, verbalize_parser(len(subs), placeholders), context, max_tokens=400)
    if isinstance(parsed, Refused):
        return parsed
    out = parsed.value
    return Verbalized(out.question, tuple(out.sub_questions), gold_plan(inst, out.sub_questions))


def make_verbalizer(
    kg: KGStore, *, llm: LLMBackend | None = None, seed: int = 0
) -> tuple[Callable[[Instance], tuple[Verbalized, str]], VerbalizationStats]:
    """A function instance → (verbalisation, which verbaliser wrote it): the LLM when given (templates when
    its reply is unusable), else templates."""
    templates = TemplateVerbalizer(kg, seed=seed)
    stats = VerbalizationStats()

    def run(inst: Instance) -> tuple[Verbalized, str]:
        if llm is not None:
            v = llm_verbalize(inst, kg, llm, templates)
            if not isinstance(v, Refused):
                stats.llm += 1
                return v, f"llm:{getattr(llm, 'model_id', 'llm')}"
            stats.llm_failed += 1  # an unusable reply: templates instead (an LLMError propagates)
            stats.usage = stats.usage + v.usage
        stats.template += 1
        return templates(inst), "template"

    return run, stats


def build_examples(
    kg: KGStore,
    instances: Iterable[Instance],
    verbalize: Callable[[Instance], tuple[Verbalized, str]],
    *,
    prefix: str = "",
) -> list[PlanningExample]:
    """One example per instance (gold plans are checked to parse back to the instance's pattern)."""
    out = []
    for i, inst in enumerate(instances):
        v, who = verbalize(inst)
        text = v.plan.to_text()
        if parse_plan(text).pattern() is not inst.pattern:
            raise DataError(
                f"internal: the gold plan of a {inst.pattern} instance has shape {v.plan.shape()}"
            )
        labels = [a if inst.kind == "time" else kg.label(a) for a in inst.answers]
        out.append(
            PlanningExample(
                qid=f"{prefix}{i}",
                question=v.question,
                answers=labels,
                qtype=str(inst.pattern),
                answer_type=str(inst.kind),
                plan=text,
                sub_questions=list(v.sub_questions),
                kg=kg.name,
                verbalizer=who,
                answer_values=list(inst.answers),
                instance=inst.to_dict(),
            )
        )
    return out


def shard_seed(seed: int, pattern: PatternType | str) -> int:
    """The seed of one (KG, pattern) shard of the planning data: derived from the run's ``seed`` and the
    pattern alone (a sha256, not Python's salted ``hash``), so a shard's examples do not depend on which
    process builds it, in what order, or on how many workers share the work."""
    digest = hashlib.sha256(f"lpkg-shard:{seed}:{pattern}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class PlanningShard:
    """The planning examples of one pattern of one KG (qids numbered from 0; the caller renumbers), how
    many instances grounding found in how many attempts, and who verbalised them."""

    pattern: str
    examples: list[PlanningExample]
    found: int
    attempts: int
    stats: VerbalizationStats


class ShardBuilder:
    """Builds the planning data of one KG shard by shard (one shard per pattern), each shard grounded and
    verbalised with its own :func:`shard_seed`; the usable facts are collected once per KG."""

    def __init__(
        self, kg: KGStore, *, per_pattern: int, max_answers: int, seed: int, llm: LLMBackend | None = None
    ) -> None:
        self.kg = kg
        self.seed = seed
        self.llm = llm
        self.grounder = Grounder(
            kg, GroundingConfig(per_pattern=per_pattern, max_answers=max_answers, seed=seed)
        )

    def build(self, pattern: PatternType) -> PlanningShard:
        s = shard_seed(self.seed, pattern)
        self.grounder.rng = random.Random(s)  # the grounder's only state besides the (fixed) usable facts
        found, tries = self.grounder.ground(pattern, self.grounder.config.per_pattern)
        verbalize, stats = make_verbalizer(self.kg, llm=self.llm, seed=s)
        return PlanningShard(
            str(pattern), build_examples(self.kg, found, verbalize), len(found), tries, stats
        )


def kg_demos(
    kg: KGStore, k: int, *, seed: int = 0, patterns: Sequence[PatternType] = LPKG_PATTERNS
) -> list[Demo]:
    """``k`` KG-derived planning demonstrations (the paper preset's in-context examples): ``patterns``
    grounded in ``kg`` (two instances each at most), template-verbalised, taken round-robin in pattern order
    (1p, 2p, …). ConfigError when the KG yields none (no KG, or too few facts)."""
    if k <= 0:
        return []
    advice = (
        "pass demos=PATH (a planning-data JSONL from `tkgqa lpkg data --patterns paper`, or the authors' "
        "official planning prompt .json) or demo_source=builtin"
    )
    try:
        builder = ShardBuilder(kg, per_pattern=-(-k // max(1, len(patterns))), max_answers=10, seed=seed)
    except DataError as exc:
        raise ConfigError(f"no planning demonstrations can be derived: {exc}; {advice}") from None
    pools = [list(builder.build(p).examples) for p in patterns]
    out: list[Demo] = []
    while len(out) < k and any(pools):
        for pool in pools:
            if pool and len(out) < k:
                out.append(pool.pop(0).demo())
    if not out:
        raise ConfigError(f"KG {kg.name!r} yields no pattern instance for planning demonstrations; {advice}")
    return out


def split_by_entities(
    examples: Sequence[PlanningExample], holdout: float, *, seed: int = 0
) -> tuple[list[PlanningExample], list[PlanningExample]]:
    """(train, held-out): every held-out example names an entity no training example names. With
    ``holdout > 0`` and at least two examples the held-out set is never empty: when the seeded draw holds out
    no entity (a handful of examples), the entity named by the fewest examples is held out, as long as some
    training example remains."""
    if not 0.0 <= holdout < 1.0:
        raise ConfigError(f"holdout must lie in [0, 1), got {holdout}")
    rng = random.Random(seed)
    entities = sorted({(ex.kg, e) for ex in examples for e in ex.entities()})
    per_entity = 1 - (1 - holdout) ** 0.5  # instances name about two entities
    held = {e for e in entities if rng.random() < per_entity}
    train, test = _split(examples, held)
    if holdout > 0 and not test and len(train) > 1:
        named = Counter(key for ex in examples for key in {(ex.kg, e) for e in ex.entities()})
        for key in sorted(named, key=lambda k: (named[k], k)):
            if named[key] < len(examples):
                return _split(examples, {key})
    return train, test


def _split(
    examples: Sequence[PlanningExample], held: set[tuple[str, str]]
) -> tuple[list[PlanningExample], list[PlanningExample]]:
    train: list[PlanningExample] = []
    test: list[PlanningExample] = []
    for ex in examples:
        (test if any((ex.kg, e) in held for e in ex.entities()) else train).append(ex)
    return train, test


def write_examples(path: str | Path, examples: Iterable[PlanningExample]) -> int:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with p.open("w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(ex.model_dump_json() + "\n")
            n += 1
    return n


def read_examples(path: str | Path) -> list[PlanningExample]:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"planning data {p} not found; write it with `tkgqa lpkg data --out DIR`")
    out = []
    for line_no, line in enumerate(p.read_text("utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(PlanningExample.model_validate_json(line))
            except ValueError as exc:
                raise DataError(
                    f"not a planning example: {str(exc)[:200]}", path=str(p), line=line_no
                ) from None
    return out


# --- SFT export -------------------------------------------------------------------------------------------
class SFTFormat(StrEnum):
    MESSAGES = "messages"
    PROMPT_COMPLETION = "prompt_completion"
    ALPACA = "alpaca"


def sft_row(example: PlanningExample, fmt: SFTFormat = SFTFormat.MESSAGES) -> dict[str, Any]:
    msgs = example.messages()
    match fmt:
        case SFTFormat.MESSAGES:
            return {"messages": msgs}
        case SFTFormat.PROMPT_COMPLETION:
            return {"prompt": msgs[:-1], "completion": msgs[-1:]}
        case SFTFormat.ALPACA:
            return {
                "instruction": msgs[0]["content"],
                "input": msgs[1]["content"],
                "output": msgs[2]["content"],
            }


@dataclass(frozen=True)
class ExportReport:
    path: str
    rows: int
    sha256: str


def export_sft(
    examples: Iterable[PlanningExample], path: str | Path, fmt: SFTFormat = SFTFormat.MESSAGES
) -> ExportReport:
    """Write the SFT JSONL; its sha256 identifies the training data of a planner."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(sft_row(ex, fmt), ensure_ascii=False) for ex in examples]
    p.write_text("".join(line + "\n" for line in lines), "utf-8")
    return ExportReport(str(p), len(lines), file_hash(p))


def file_hash(path: str | Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def counts_by_pattern(examples: Iterable[PlanningExample]) -> dict[str, dict[str, int]]:
    """kg → pattern → examples."""
    out: dict[str, dict[str, int]] = {}
    for ex in examples:
        per = out.setdefault(ex.kg, {})
        per[ex.qtype] = per.get(ex.qtype, 0) + 1
    return out
