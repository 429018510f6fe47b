"""LPKG's side of verbalising grounded pattern instances (§3.2): the sub-questions and the gold
code-formatted plan.

The complex question and the relation phrases come from the shared verbaliser
(:mod:`tkgqa.query.generate.verbalize`: :class:`~tkgqa.query.generate.verbalize.PatternVerbalizer`, seeded,
a few templates per pattern for light paraphrase variety). Here: sub-question ``k`` of a node fed by an
earlier answer holds the placeholder ``{Ans_j}`` (LPKG §3.3), filled in at execution, and the gold plan
follows the paper's planning templates (:func:`gold_plan`); the LLM path
(:func:`~tkgqa.methods.lpkg.data.llm_verbalize`) asks a model to write the questions from the instance as in
the paper (Appendix C.1) and keeps the same plan skeleton.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import assert_never

from ...query.generate import patterns as pn
from ...query.generate.patterns import Instance
from ...query.generate.verbalize import PatternVerbalizer, ask, ask_when
from ...query.program.nodes import SetOperation
from ...time import TemporalRelation
from . import plan as pl


@dataclass(frozen=True)
class Verbalized:
    """A verbalised instance: the complex question, its sub-questions (one per search node, in order) and
    the gold plan."""

    question: str
    sub_questions: tuple[str, ...]
    plan: pl.Plan


class TemplateVerbalizer(PatternVerbalizer):
    """Template verbalisation over one store's labels, seeded: the shared complex question plus LPKG's
    sub-questions and gold plan."""

    def __call__(self, inst: Instance) -> Verbalized:
        v = self.rng.randrange(2)
        subs = self.sub_questions(inst, v)
        question = self.question(inst, v)
        return Verbalized(question, tuple(subs), gold_plan(inst, subs))

    def sub_questions(self, inst: Instance, v: int = 0) -> list[str]:
        """One question per search node (projection or when), a fed source as its ``{Ans_j}`` placeholder."""
        names = plan_names(inst.nodes)
        out = []
        for node in inst.nodes:
            if isinstance(node, pn.Projection):
                src = (
                    self.name(node.source) if isinstance(node.source, str) else "{" + names[node.source] + "}"
                )
                out.append(ask(self.phrase(node.relation), src, node.inverse, v))
            elif isinstance(node, pn.WhenQ):
                r = self.phrase(node.relation)
                out.append(ask_when(r, self.name(node.subject), self.name(node.object), node.granularity, v))
        return out


# --- gold plans ------------------------------------------------------------------------------------------
def plan_names(nodes: tuple[pn.PatternNode, ...]) -> list[str]:
    """The plan variable of each node: ``Ans_k`` for the k-th sub-question (and for a comparison, as in the
    paper), ``Inter_Results``/``Union_Results``/``Temp_Results`` numbered per kind."""
    names: list[str] = []
    counts = {"ans": 0, "inter": 0, "union": 0, "temp": 0}
    for node in nodes:
        match node:
            case pn.Projection() | pn.WhenQ() | pn.Compare():
                counts["ans"] += 1
                names.append(f"Ans_{counts['ans']}")
            case pn.SetOp():
                key = "inter" if node.op is SetOperation.AND else "union"
                counts[key] += 1
                names.append(f"{'Inter' if key == 'inter' else 'Union'}_Results{counts[key]}")
            case pn.TimeFilter() | pn.Pick():
                counts["temp"] += 1
                names.append(f"Temp_Results{counts['temp']}")
            case _:
                assert_never(node)
    return names


def gold_plan(inst: Instance, sub_questions: list[str] | tuple[str, ...]) -> pl.Plan:
    """The plan of ``inst`` in the paper's planning templates, with ``sub_questions`` (one per search node,
    placeholders ``{Ans_j}`` for fed answers) filled in."""
    names = plan_names(inst.nodes)
    steps: list[pl.Step] = []
    subs = iter(sub_questions)
    qvar: dict[int, str] = {}
    for i, node in enumerate(inst.nodes):
        var = names[i]
        match node:
            case pn.Projection() | pn.WhenQ():
                k = var.split("_")[1]
                text = next(subs)
                earlier = set(names[:i])
                refs = tuple(dict.fromkeys(r for r in re.findall(r"\{(\w+)\}", text) if r in earlier))
                qvar[i] = f"Sub_Question_{k}"
                steps += [
                    pl.Text(qvar[i], text, refs, fstring=bool(refs)),
                    pl.SearchStep(f"Info_{k}", qvar[i]),
                    pl.AnswerStep(var, qvar[i], f"Info_{k}"),
                ]
            case pn.SetOp():
                steps.append(pl.SetStep(var, node.op, tuple(names[k] for k in node.inputs)))
            case pn.Compare():
                steps.append(
                    pl.CompareStep(
                        var, tuple(qvar[k] for k in node.inputs), tuple(names[k] for k in node.inputs)
                    )
                )
            case pn.TimeFilter():
                time = pl.Ref(names[node.time]) if isinstance(node.time, int) else node.time
                steps.append(pl.TimeStep(var, _time_call(node), names[node.input], time, node.end))
            case pn.Pick():
                steps.append(pl.PickStep(var, node.which, names[node.input]))
            case _:
                assert_never(node)
    steps.append(pl.FinishStep("Final_Answer", names[-1]))
    return pl.Plan(tuple(steps))


def _time_call(node: pn.TimeFilter) -> pl.Call:
    """The plan call of a time filter: a range is ``between``, else its temporal relation."""
    if node.end is not None:
        return pl.Call.BETWEEN
    if node.relation is TemporalRelation.BEFORE:
        return pl.Call.BEFORE
    if node.relation is TemporalRelation.AFTER:
        return pl.Call.AFTER
    return pl.Call.DURING
