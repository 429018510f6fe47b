"""The official planning prompt's format (the authors' planning data, Appendix C.2): demonstrations written
as ``# Example i:`` blocks — ``Original_Question: str = "…"``, ``### Question Type: …``, a ``Thought`` line
before each sub-question and combination, ``: str`` annotations, ``Search(query = …, thought = …)``, binary
``Intersection``/``Union`` chained for three inputs.

* :func:`official_block` renders a :class:`~tkgqa.methods.lpkg.prompts.Demo` (its plan parsed, never
  executed) in that format, with template ``Thought`` lines (the authors' were written in natural language);
* :func:`split_official` reads the demonstrations of an official prompt text (the authors' file
  ``lpkg_official_planning_prompt.json``, given at run time as ``demos=PATH``: it is never copied into the
  package).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...errors import ConfigError
from ...query.generate.patterns import PatternType
from ...query.program.nodes import SetOperation
from ...time import Extreme, TimePoint
from .plan import (
    AnswerStep,
    Call,
    CompareStep,
    FinishStep,
    PickStep,
    Plan,
    Ref,
    SearchStep,
    SetStep,
    Text,
    TimeStep,
    parse_plan,
)
from .prompts import OFFICIAL_RULE, OFFICIAL_YOUR_TURN, Demo, official_question_line

#: ``### Question Type:`` of each pattern (the nine as the authors name them; the temporal ones ours).
QUESTION_TYPES: dict[PatternType, str] = {
    PatternType.P1: "One Projection",
    PatternType.P2: "Two Projection",
    PatternType.P3: "Three Projection",
    PatternType.I2: "Two Intersection",
    PatternType.I3: "Three Intersection",
    PatternType.U2: "Two Union",
    PatternType.IP: "Two Intersection then Projection",
    PatternType.PI: "Projection then Two Intersection",
    PatternType.COMPARE: "Compare",
    PatternType.TIME: "Time",
    PatternType.IN: "During",
    PatternType.BEFORE: "Before",
    PatternType.AFTER: "After",
    PatternType.FIRST: "First",
    PatternType.LAST: "Last",
    PatternType.BETWEEN: "Between",
    PatternType.AFTER_FIRST: "After then First",
    PatternType.BEFORE_LAST: "Before then Last",
}
_NUMBER = {2: "two", 3: "three", 4: "four"}


def _string(text: str, *, f: bool = False) -> str:
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return ('f"' if f else '"') + body + '"'


def _time(arg: Ref | TimePoint | None, rename: dict[str, str]) -> str:
    if isinstance(arg, Ref):
        return rename.get(arg.name, arg.name)
    return f'"{arg.iso()}"' if arg is not None else '""'


class _Writer:
    """Writes one plan's steps in the official format (variables renamed where sets are chained)."""

    def __init__(self, plan: Plan, question: str) -> None:
        self.plan = plan
        self.question = question
        self.asked = {t.var for t in plan.sub_questions()}
        self.rename: dict[str, str] = {}
        self.counts = {"Inter": 0, "Union": 0}
        self.thought = 0
        self.thought_of: dict[str, int] = {}
        self.lines: list[str] = []

    def name(self, var: str) -> str:
        return self.rename.get(var, var)

    def think(self, text: str) -> int:
        self.thought += 1
        self.lines.append(f"Thought{self.thought}: str = {_string(text)}")
        return self.thought

    def sub_question(self, step: Text) -> None:
        template = re.sub(r"\{(\w+)\}", lambda m: "{" + self.name(m.group(1)) + "}", step.template)
        first = not self.thought_of
        if first and len(self.asked) == 1:
            thought = "An atomic question, no need to decompose. Search directly."
        elif first:
            thought = f"If I want to know '{self.question}', I need to first know '{template}'."
        elif step.refs:
            thought = (
                f"After knowing {' and '.join(self.name(r) for r in step.refs)}, I need to know '{template}'."
            )
        else:
            thought = f"At the same time, I need to know '{template}'."
        self.thought_of[step.var] = self.think(thought)
        self.lines.append(f"{step.var}: str = {_string(template, f=step.fstring)}")

    def set_step(self, step: SetStep) -> None:
        kind = "Inter" if step.op is SetOperation.AND else "Union"
        call = "Intersection" if step.op is SetOperation.AND else "Union"
        word = "intersection" if step.op is SetOperation.AND else "union"
        inputs = [self.name(v) for v in step.inputs]
        n = _NUMBER.get(len(inputs), str(len(inputs)))
        self.think(f"After knowing {' and '.join(inputs)}, I need to find the {word} of the {n} answer sets.")
        current = inputs[0]
        for other in inputs[1:]:
            self.counts[kind] += 1
            target = f"{kind}_Results{self.counts[kind]}"
            self.lines.append(f"{target}: str = {call}(Answer1 = {current}, Answer2 = {other})")
            current = target
        self.rename[step.var] = current
        self.lines.append("")

    def step(self, step: object) -> None:
        match step:
            case Text():
                if step.var in self.asked:
                    self.sub_question(step)
            case SearchStep():
                t = self.thought_of.get(step.query, self.thought)
                self.lines.append(f"{step.var}: str = Search(query = {step.query}, thought = Thought{t})")
            case AnswerStep():
                self.lines += [f"{step.var}: str = Get_Answer(query = {step.query}, info = {step.info})", ""]
            case SetStep():
                self.set_step(step)
            case CompareStep():
                answers = [self.name(v) for v in step.inputs]
                self.think(f"After knowing {' and '.join(answers)}, I need to compare them.")
                self.lines += [
                    f"{step.var}: str = Compare(Original_Query = Original_Question, Subquestions = "
                    f"[{','.join(step.questions)}], Answers = [{','.join(answers)}])",
                    "",
                ]
            case TimeStep():
                inp = self.name(step.input)
                if step.op is Call.BETWEEN:
                    start, end = _time(step.time, self.rename), _time(step.end, self.rename)
                    self.think(f"Then I need to keep the answers of {inp} between {start} and {end}.")
                    call = f"Between(Answer = {inp}, Start = {start}, End = {end})"
                else:
                    when = _time(step.time, self.rename)
                    self.think(f"Then I need to keep the answers of {inp} {step.op.lower()} {when}.")
                    call = f"{step.op}(Answer = {inp}, Time = {when})"
                self.lines += [f"{step.var}: str = {call}", ""]
            case PickStep():
                which = "First" if step.which is Extreme.FIRST else "Last"
                self.think(f"Then I need the {which.lower()} of {self.name(step.input)} in time.")
                self.lines += [f"{step.var}: str = {which}(Answer = {self.name(step.input)})", ""]
            case FinishStep():
                self.lines.append(f"{step.var}: str = Finish_The_Plan(Answer = {self.name(step.answer)})")
            case _:
                raise TypeError(f"unknown plan step {type(step).__name__}")


def official_block(demo: Demo) -> str:
    """``demo`` as an official ``# Example`` block body (its own text when it came from the official
    prompt); ParseError when its plan does not parse."""
    if demo.official:
        return demo.official.strip()
    plan = parse_plan(demo.plan)
    pattern = plan.pattern()
    qtype = QUESTION_TYPES[pattern] if pattern is not None else "Other"
    writer = _Writer(plan, demo.question)
    for step in plan.steps:
        writer.step(step)
    head = [
        official_question_line(demo.question),
        f"### Question Type: {qtype}",
        "### Decompose the original question into sub-questions.",
        "",
    ]
    return "\n".join(head + writer.lines).strip()


_EXAMPLE = re.compile(rf"^{re.escape(OFFICIAL_RULE)}\n# Example \d+:\n{re.escape(OFFICIAL_RULE)}\n", re.M)
_QUESTION = re.compile(r'^Original_Question: str = "(.*)"\s*$', re.M)


def split_official(instruction: str) -> list[Demo]:
    """The demonstrations of an official planning prompt text (``official`` set to each block)."""
    parts = _EXAMPLE.split(instruction)[1:]
    demos = []
    for part in parts:
        block = part.split(OFFICIAL_RULE + "\n" + OFFICIAL_YOUR_TURN)[0].split(OFFICIAL_RULE)[0].strip()
        m = _QUESTION.search(block)
        if m is None:
            continue
        plan = block[m.end() :].strip()
        demos.append(Demo(m.group(1).replace('\\"', '"'), plan, official=block))
    return demos


def read_official(path: str | Path) -> list[Demo]:
    """The demonstrations of the authors' planning-prompt file (a JSON object with ``instruction``, as in
    their ``*_planning.json`` items)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the official planning prompt {p}: {exc}") from None
    item = data[0] if isinstance(data, list) and data else data
    text = item.get("instruction") if isinstance(item, dict) else None
    if not isinstance(text, str):
        raise ConfigError(f"{p} holds no 'instruction' text (the official planning prompt)")
    demos = split_official(text)
    if not demos:
        raise ConfigError(f"no '# Example i:' demonstrations in {p}")
    return demos


def is_official_file(path: str | Path) -> bool:
    """A ``.json`` file (the official prompt) rather than a planning-data JSONL."""
    return str(path).lower().endswith(".json")


__all__ = ["QUESTION_TYPES", "is_official_file", "official_block", "read_official", "split_official"]
