"""LPKG's code-formatted plans: the typed :class:`Plan`, :func:`parse_plan` (``ast``, never ``eval`` or
``exec``), the printer and the plan's shape.

A plan is Python-looking code in the paper's style (Figure 2, Appendix C.2)::

    Sub_Question_1 = "When did Jack Straw make a visit to Iraq?"
    Info_1 = Search(query=Sub_Question_1)
    Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)
    Sub_Question_2 = f"Who made a visit to {Ans_1}?"          # {Ans_k}: filled in at execution
    Inter_Results1 = Intersection(Answer1=Ans_2, Answer2=Ans_3)
    Union_Results1 = Union(Answer1=Ans_1, Answer2=Ans_2)
    Ans_3 = Compare(Original_Query=Original_Question, Subquestions=[Sub_Question_1, Sub_Question_2],
                    Answers=[Ans_1, Ans_2])
    Temp_Results1 = Before(Answer=Ans_2, Time=Ans_1)          # also After, During(Time="2012-05"),
    Temp_Results2 = First(Answer=Temp_Results1)               #   Between(Start=…, End=…), First, Last
    Final_Answer = Finish_The_Plan(Answer=Temp_Results2)

:func:`parse_plan` reads the text with :func:`ast.parse` and accepts only assignments of a string, an
f-string whose fields are plain names, or a whitelisted call (:class:`Call`) with whitelisted argument names
whose values are names of earlier variables, string literals or lists of names. Anything else — other
statements, attribute access, subscripts, operators, unknown calls or arguments, undefined names — is a
:class:`~tkgqa.errors.ParseError` carrying the raw text. Nothing in the text is ever executed: the plan is
interpreted by :mod:`.execute`. Optional ``: str`` annotations, comments, code fences and text after the
``Finish_The_Plan`` line are tolerated.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from ...errors import ParseError, TKGQAError
from ...query.generate.patterns import PatternType
from ...query.program.nodes import SetOperation
from ...query.text.frame import asks_time
from ...time import Extreme, TimePoint, parse_time

MAX_PLAN_CHARS = 20_000
MAX_STEPS = 120
EXPECTED = (
    "a code-formatted plan: NAME = Call(arg=NAME, …) lines ending with Final_Answer = Finish_The_Plan(…)"
)


class Call(StrEnum):
    """The whitelisted plan calls."""

    SEARCH = "Search"
    GET_ANSWER = "Get_Answer"
    INTERSECTION = "Intersection"
    UNION = "Union"
    COMPARE = "Compare"
    BEFORE = "Before"
    AFTER = "After"
    DURING = "During"
    BETWEEN = "Between"
    FIRST = "First"
    LAST = "Last"
    FINISH = "Finish_The_Plan"


TIME_CALLS = (Call.BEFORE, Call.AFTER, Call.DURING, Call.BETWEEN)
#: call → (required argument names, optional argument names)
ARGUMENTS: dict[Call, tuple[frozenset[str], frozenset[str]]] = {
    Call.SEARCH: (frozenset({"query"}), frozenset({"thought"})),
    Call.GET_ANSWER: (frozenset({"query", "info"}), frozenset({"thought"})),
    Call.INTERSECTION: (frozenset({"Answer1", "Answer2"}), frozenset({"Answer3", "Answer4"})),
    Call.UNION: (frozenset({"Answer1", "Answer2"}), frozenset({"Answer3", "Answer4"})),
    Call.COMPARE: (frozenset({"Answers"}), frozenset({"Original_Query", "Subquestions"})),
    Call.BEFORE: (frozenset({"Answer", "Time"}), frozenset()),
    Call.AFTER: (frozenset({"Answer", "Time"}), frozenset()),
    Call.DURING: (frozenset({"Answer", "Time"}), frozenset()),
    Call.BETWEEN: (frozenset({"Answer", "Start", "End"}), frozenset()),
    Call.FIRST: (frozenset({"Answer"}), frozenset()),
    Call.LAST: (frozenset({"Answer"}), frozenset()),
    Call.FINISH: (frozenset({"Answer"}), frozenset()),
}
_CALL_NAMES = frozenset(c.value for c in Call)
_POSITIONAL = {Call.INTERSECTION: "Answer", Call.UNION: "Answer"}  # Intersection(Ans_1, Ans_2)


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to an earlier plan variable."""

    name: str


@dataclass(frozen=True, slots=True)
class Bound:
    """What every step of a plan has: the variable its result is bound to (``Ans_1``, …)."""

    var: str


@dataclass(frozen=True, slots=True)
class Text(Bound):
    """A (sub-)question: ``template`` with ``{Name}`` fields naming earlier answers (``refs``)."""

    template: str
    refs: tuple[str, ...] = ()
    fstring: bool = False


@dataclass(frozen=True, slots=True)
class SearchStep(Bound):
    query: str


@dataclass(frozen=True, slots=True)
class AnswerStep(Bound):
    query: str
    info: str


@dataclass(frozen=True, slots=True)
class SetStep(Bound):
    op: SetOperation
    inputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CompareStep(Bound):
    questions: tuple[str, ...]
    inputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TimeStep(Bound):
    """``Before``/``After``/``During`` a time, or ``Between`` two; a time is a :class:`Ref` to an answer
    (its earliest time) or a constant."""

    op: Call
    input: str
    time: Ref | TimePoint
    end: Ref | TimePoint | None = None


@dataclass(frozen=True, slots=True)
class PickStep(Bound):
    which: Extreme
    input: str


@dataclass(frozen=True, slots=True)
class FinishStep(Bound):
    answer: str


Step = Text | SearchStep | AnswerStep | SetStep | CompareStep | TimeStep | PickStep | FinishStep
ANSWER_STEPS = (AnswerStep, SetStep, CompareStep, TimeStep, PickStep)


@dataclass(frozen=True)
class Plan:
    """A parsed plan: its steps in order; the last is the :class:`FinishStep`."""

    steps: tuple[Step, ...]

    @property
    def final(self) -> str:
        last = self.steps[-1]
        assert isinstance(last, FinishStep)
        return last.answer

    def step(self, var: str) -> Step:
        """The last step that assigned ``var``."""
        for s in reversed(self.steps):
            if s.var == var:
                return s
        raise KeyError(var)

    def texts(self) -> dict[str, Text]:
        return {s.var: s for s in self.steps if isinstance(s, Text)}

    def sub_questions(self) -> list[Text]:
        """The texts a ``Search``/``Get_Answer`` asks, in order."""
        asked = {s.query for s in self.steps if isinstance(s, SearchStep | AnswerStep)}
        return [s for s in self.steps if isinstance(s, Text) and s.var in asked]

    def to_text(self) -> str:
        return "\n".join(render_step(s) for s in self.steps)

    def shape(self) -> str:
        """The canonical structure of the answer's derivation (see :func:`shape_of`)."""
        return shape_of(self)

    def pattern(self) -> PatternType | None:
        """The pattern this plan has, or ``None`` when its shape is none of them."""
        return SHAPES.get(self.shape())


# --- printing --------------------------------------------------------------------------------------------
def _quote(text: Text) -> str:
    body = text.template.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    if text.fstring:
        names = set(text.refs)
        body = re.sub(
            r"\{([^{}]*)\}", lambda m: m.group(0) if m.group(1) in names else "{{" + m.group(1) + "}}", body
        )
        return f'f"{body}"'
    return f'"{body}"'


def _time(arg: Ref | TimePoint) -> str:
    return arg.name if isinstance(arg, Ref) else f'"{arg.iso()}"'


def render_step(step: Step) -> str:
    match step:
        case Text():
            return f"{step.var} = {_quote(step)}"
        case SearchStep():
            return f"{step.var} = Search(query={step.query})"
        case AnswerStep():
            return f"{step.var} = Get_Answer(query={step.query}, info={step.info})"
        case SetStep():
            call = Call.INTERSECTION if step.op is SetOperation.AND else Call.UNION
            args = ", ".join(f"Answer{i}={v}" for i, v in enumerate(step.inputs, 1))
            return f"{step.var} = {call}({args})"
        case CompareStep():
            qs, ans = ", ".join(step.questions), ", ".join(step.inputs)
            return (f"{step.var} = Compare(Original_Query=Original_Question, Subquestions=[{qs}], "
                    f"Answers=[{ans}])")  # fmt: skip
        case TimeStep():
            if step.op is Call.BETWEEN:
                assert step.end is not None
                start, end = _time(step.time), _time(step.end)
                return f"{step.var} = Between(Answer={step.input}, Start={start}, End={end})"
            return f"{step.var} = {step.op}(Answer={step.input}, Time={_time(step.time)})"
        case PickStep():
            return f"{step.var} = {'First' if step.which is Extreme.FIRST else 'Last'}(Answer={step.input})"
        case FinishStep():
            return f"{step.var} = Finish_The_Plan(Answer={step.answer})"
        case _:
            assert_never(step)


# --- parsing ---------------------------------------------------------------------------------------------
_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_]\w*\s*(?::\s*\w+\s*)?=")


def _clean(text: str) -> str:
    """The code part of a model's reply: inside a code fence if any, up to the ``Finish_The_Plan`` line,
    without prose lines around the assignments."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    lines: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _ASSIGNMENT.match(line):
            lines.append(stripped)
        elif lines and (stripped.startswith((")", "]", ",")) or lines[-1].rstrip().endswith(("(", "[", ","))):
            lines.append(stripped)  # a call wrapped over several lines
        if "Finish_The_Plan" in stripped and _ASSIGNMENT.match(line):
            break
    return "\n".join(lines)


def parse_plan(text: str) -> Plan:
    """The typed plan in ``text``; :class:`ParseError` (with the raw text) for anything else. Never
    executes any of it."""
    if not isinstance(text, str):
        raise ParseError(f"a plan must be text, got {type(text).__name__}", expected=EXPECTED)
    if len(text) > MAX_PLAN_CHARS:
        raise ParseError(
            f"plan too long ({len(text)} characters > {MAX_PLAN_CHARS})", raw=text[:2000], expected=EXPECTED
        )
    code = _clean(text)
    if not code:
        raise ParseError("no plan lines (NAME = … assignments) found", raw=text, expected=EXPECTED)
    try:
        tree = ast.parse(code, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ParseError(
            f"the plan is not valid code-formatted text: {type(exc).__name__}: {exc}",
            raw=text,
            expected=EXPECTED,
        ) from None
    try:
        return _Reader(text).read(tree.body)
    except RecursionError:
        raise ParseError("the plan is nested too deeply", raw=text, expected=EXPECTED) from None


class _Reader:
    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.kinds: dict[str, str] = {"Original_Question": "text"}  # var → text | info | answer
        self.steps: list[Step] = []

    def fail(self, message: str, node: ast.AST | None = None) -> ParseError:
        where = f" (line {getattr(node, 'lineno', '?')})" if node is not None else ""
        return ParseError(message + where, raw=self.raw, expected=EXPECTED)

    def read(self, body: Sequence[ast.stmt]) -> Plan:
        if len(body) > MAX_STEPS:
            raise self.fail(f"too many plan steps ({len(body)} > {MAX_STEPS})")
        assigned: set[str] = set()
        for stmt in body:
            target, value = self._assignment(stmt)
            if target in assigned:
                raise self.fail(f"{target} is assigned twice: give every step its own name", stmt)
            assigned.add(target)
            step = self._step(target, value)
            self.steps.append(step)
            if isinstance(step, FinishStep):
                return Plan(tuple(self.steps))
        raise self.fail("the plan never calls Finish_The_Plan(Answer=…)")

    def _assignment(self, stmt: ast.stmt) -> tuple[str, ast.expr]:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            if not (isinstance(stmt.annotation, ast.Name) and stmt.annotation.id == "str"):
                raise self.fail("only ': str' annotations are allowed", stmt)
            return stmt.target.id, stmt.value
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            return stmt.targets[0].id, stmt.value
        raise self.fail(f"only assignments NAME = value are allowed, not {type(stmt).__name__}", stmt)

    def _ref(self, node: ast.expr, kinds: Iterable[str], what: str) -> str:
        if not isinstance(node, ast.Name):
            raise self.fail(f"{what} must be the name of an earlier variable", node)
        kind = self.kinds.get(node.id)
        if kind is None:
            raise self.fail(f"{what}: {node.id!r} is not defined earlier in the plan", node)
        if kind not in kinds:
            raise self.fail(f"{what}: {node.id!r} is a {kind}, expected a {' or '.join(kinds)}", node)
        return node.id

    def _step(self, var: str, value: ast.expr) -> Step:
        if isinstance(value, ast.Constant | ast.JoinedStr):
            step: Step = self._text(var, value)
            self.kinds[var] = "text"
            return step
        if not isinstance(value, ast.Call):
            raise self.fail(f"{var}: expected a string or a call, got {type(value).__name__}", value)
        if not isinstance(value.func, ast.Name) or value.func.id not in _CALL_NAMES:
            name = value.func.id if isinstance(value.func, ast.Name) else type(value.func).__name__
            raise self.fail(f"{var}: {name!r} is not an allowed call ({', '.join(Call)})", value)
        call = Call(value.func.id)
        args = self._arguments(var, call, value)
        step = self._call(var, call, args)
        self.kinds[var] = "info" if call is Call.SEARCH else "answer"
        return step

    def _text(self, var: str, value: ast.Constant | ast.JoinedStr) -> Text:
        if isinstance(value, ast.Constant):
            if not isinstance(value.value, str):
                raise self.fail(f"{var}: expected a string, got {type(value.value).__name__}", value)
            # {Ans_1} in a plain string: the f prefix was forgotten (the paper's executor fills it anyway)
            refs = [m for m in re.findall(r"\{(\w+)\}", value.value) if self.kinds.get(m) == "answer"]
            return Text(var, value.value, tuple(dict.fromkeys(refs)), fstring=False)
        parts: list[str] = []
        refs = []
        for part in value.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
                name = self._ref(part.value, ("answer", "text"), f"{var}: an f-string field")
                parts.append("{" + name + "}")
                refs.append(name)
            else:
                raise self.fail(f"{var}: f-string fields must be plain names such as {{Ans_1}}", value)
        return Text(var, "".join(parts), tuple(dict.fromkeys(refs)), fstring=True)

    def _arguments(self, var: str, call: Call, node: ast.Call) -> dict[str, ast.expr]:
        required, optional = ARGUMENTS[call]
        args: dict[str, ast.expr] = {}
        if node.args:
            prefix = _POSITIONAL.get(call)
            if prefix is None or any(isinstance(a, ast.Starred) for a in node.args):
                raise self.fail(
                    f"{var}: {call} takes keyword arguments only ({', '.join(sorted(required))})", node
                )
            args.update((f"{prefix}{i}", a) for i, a in enumerate(node.args, 1))
        for kw in node.keywords:
            if kw.arg is None:
                raise self.fail(f"{var}: **arguments are not allowed", node)
            if kw.arg in args:
                raise self.fail(f"{var}: argument {kw.arg!r} given twice", node)
            args[kw.arg] = kw.value
        unknown = set(args) - required - optional
        if unknown:
            valid = ", ".join(sorted(required | optional))
            raise self.fail(
                f"{var}: {call} has no argument {', '.join(sorted(unknown))} (valid: {valid})", node
            )
        missing = required - set(args)
        if missing:
            raise self.fail(f"{var}: {call} needs {', '.join(sorted(missing))}", node)
        return args

    def _time_arg(self, var: str, node: ast.expr) -> Ref | TimePoint:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str | int)
            and not isinstance(node.value, bool)
        ):
            try:
                return parse_time(str(node.value))
            except (TKGQAError, ValueError):
                raise self.fail(f'{var}: {node.value!r} is not a time (use e.g. "2012-05")', node) from None
        return Ref(self._ref(node, ("answer",), f"{var}: a time"))

    def _names(self, node: ast.expr, kinds: tuple[str, ...], what: str) -> tuple[str, ...]:
        if not isinstance(node, ast.List | ast.Tuple):
            raise self.fail(f"{what} must be a list of names", node)
        return tuple(self._ref(e, kinds, what) for e in node.elts)

    def _call(self, var: str, call: Call, args: dict[str, ast.expr]) -> Step:
        answer = ("answer",)
        match call:
            case Call.SEARCH:
                return SearchStep(var, self._ref(args["query"], ("text",), f"{var}: query"))
            case Call.GET_ANSWER:
                query = self._ref(args["query"], ("text",), f"{var}: query")
                return AnswerStep(var, query, self._ref(args["info"], ("info",), f"{var}: info"))
            case Call.INTERSECTION | Call.UNION:
                names = [k for k in args if k.startswith("Answer")]
                inputs = tuple(self._ref(args[k], answer, f"{var}: {k}") for k in sorted(names))
                op = SetOperation.AND if call is Call.INTERSECTION else SetOperation.OR
                return SetStep(var, op, inputs)
            case Call.COMPARE:
                inputs = self._names(args["Answers"], answer, f"{var}: Answers")
                if len(inputs) < 2:
                    raise self.fail(f"{var}: Compare needs at least two answers")
                qs = (
                    self._names(args["Subquestions"], ("text",), f"{var}: Subquestions")
                    if "Subquestions" in args
                    else ()
                )
                if "Original_Query" in args:
                    self._ref(args["Original_Query"], ("text",), f"{var}: Original_Query")
                return CompareStep(var, qs, inputs)
            case Call.BEFORE | Call.AFTER | Call.DURING:
                inp = self._ref(args["Answer"], answer, f"{var}: Answer")
                return TimeStep(var, call, inp, self._time_arg(var, args["Time"]))
            case Call.BETWEEN:
                inp = self._ref(args["Answer"], answer, f"{var}: Answer")
                return TimeStep(
                    var, call, inp, self._time_arg(var, args["Start"]), self._time_arg(var, args["End"])
                )
            case Call.FIRST | Call.LAST:
                which = Extreme.FIRST if call is Call.FIRST else Extreme.LAST
                return PickStep(var, which, self._ref(args["Answer"], answer, f"{var}: Answer"))
            case Call.FINISH:
                return FinishStep(var, self._ref(args["Answer"], answer, f"{var}: Answer"))
            case _:
                assert_never(call)


# --- shape -----------------------------------------------------------------------------------------------
def shape_of(plan: Plan) -> str:
    """The derivation of the final answer as a canonical term: ``p(…)`` a sub-question answered from search
    (its arguments: the answers it is filled with), ``t(…)`` one asking for a time, ``and``/``or`` set
    operations (flattened, arguments sorted), ``cmp`` a comparison, ``before``/``after``/``during``/
    ``between`` (``lit`` for a constant time), ``first``/``last``. Unused steps do not count."""
    texts = plan.texts()

    def term(var: str, depth: int = 0) -> str:
        if depth > 30:
            return "?"
        try:
            step = plan.step(var)
        except KeyError:
            return "?"
        match step:
            case AnswerStep():
                text = texts.get(step.query)
                if text is None:
                    return "?"
                kids = ",".join(term(r, depth + 1) for r in text.refs)
                return f"{'t' if asks_time(_plain(text.template)) else 'p'}({kids})"
            case SetStep():
                name = "and" if step.op is SetOperation.AND else "or"
                flat: list[str] = []
                for v in step.inputs:
                    k = term(v, depth + 1)
                    flat.extend(_split(k[len(name) + 1 : -1]) if k.startswith(name + "(") else [k])
                return f"{name}({','.join(sorted(flat))})"
            case CompareStep():
                return f"cmp({','.join(sorted(term(v, depth + 1) for v in step.inputs))})"
            case TimeStep():
                times = [step.time] + ([step.end] if step.end is not None else [])
                args = [term(step.input, depth + 1)] + [
                    term(t.name, depth + 1) if isinstance(t, Ref) else "lit" for t in times
                ]
                return f"{step.op.lower()}({','.join(args)})"
            case PickStep():
                return f"{step.which}({term(step.input, depth + 1)})"
            case Text() | SearchStep() | FinishStep():
                return "?"
            case _:
                assert_never(step)

    return term(plan.final)


def _plain(template: str) -> str:
    return re.sub(r"\{\w+\}", "X", template)


def _split(inner: str) -> list[str]:
    """Top-level comma-separated terms of ``inner``."""
    out, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur:
        out.append(cur)
    return out


#: canonical shape → pattern (several shapes may name one pattern)
SHAPES: dict[str, PatternType] = {
    "p()": PatternType.P1,
    "p(p())": PatternType.P2,
    "p(p(p()))": PatternType.P3,
    "and(p(),p())": PatternType.I2,
    "and(p(),p(),p())": PatternType.I3,
    "or(p(),p())": PatternType.U2,
    "p(and(p(),p()))": PatternType.IP,
    "and(p(),p(p()))": PatternType.PI,
    "t()": PatternType.TIME,
    "during(p(),lit)": PatternType.IN,
    "during(p(),t())": PatternType.IN,  # the same time as another answer
    "before(p(),t())": PatternType.BEFORE,
    "before(p(),lit)": PatternType.BEFORE,
    "after(p(),t())": PatternType.AFTER,
    "after(p(),lit)": PatternType.AFTER,
    "first(p())": PatternType.FIRST,
    "first(t())": PatternType.FIRST,
    "last(p())": PatternType.LAST,
    "last(t())": PatternType.LAST,
    "between(p(),lit,lit)": PatternType.BETWEEN,
    "first(after(p(),t()))": PatternType.AFTER_FIRST,
    "first(after(p(),lit))": PatternType.AFTER_FIRST,
    "last(before(p(),t()))": PatternType.BEFORE_LAST,
    "last(before(p(),lit))": PatternType.BEFORE_LAST,
}
for _a in ("p()", "t()"):
    for _b in ("p()", "t()"):
        SHAPES[f"cmp({','.join(sorted((_a, _b)))})"] = PatternType.COMPARE
