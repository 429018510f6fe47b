"""LPKG plans: ast parsing into a typed Plan (never executed), printing, shapes; fuzzed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.errors import ParseError
from tkgqa.methods.lpkg.plan import (
    AnswerStep,
    Call,
    CompareStep,
    FinishStep,
    PickStep,
    Ref,
    SearchStep,
    SetStep,
    Text,
    TimeStep,
    parse_plan,
)
from tkgqa.methods.lpkg.planner import SKELETONS, skeleton_plan
from tkgqa.query.generate.patterns import PatternType
from tkgqa.query.program.nodes import SetOperation
from tkgqa.time import Extreme, TimePoint

PAPER = """Sub_Question_1: str = "What is the birthplace of Drake Bell?"
Info_1: str = Search(query = Sub_Question_1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Sub_Question_2: str = f"Which areas border with {Ans_1}"
Info_2: str = Search(query = Sub_Question_2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Sub_Question_3: str = "Which areas border with Santa Ana?"
Info_3: str = Search(query = Sub_Question_3)
Ans_3: str = Get_Answer(query = Sub_Question_3, info = Info_3)
Inter_Results1: str = Intersection(Answer1 = Ans_2, Answer2 = Ans_3)
Final_Answer: str = Finish_The_Plan(Answer = Inter_Results1)"""


def test_the_papers_plan_parses_into_typed_steps() -> None:
    plan = parse_plan(PAPER)
    assert plan.final == "Inter_Results1"
    assert plan.steps[3] == Text(
        "Sub_Question_2", "Which areas border with {Ans_1}", ("Ans_1",), fstring=True
    )
    assert plan.steps[1] == SearchStep("Info_1", "Sub_Question_1")
    assert plan.steps[2] == AnswerStep("Ans_1", "Sub_Question_1", "Info_1")
    assert plan.steps[9] == SetStep("Inter_Results1", SetOperation.AND, ("Ans_2", "Ans_3"))
    assert isinstance(plan.steps[-1], FinishStep)
    assert [t.var for t in plan.sub_questions()] == ["Sub_Question_1", "Sub_Question_2", "Sub_Question_3"]
    assert plan.shape() == "and(p(),p(p()))" and plan.pattern() is PatternType.PI


def test_temporal_compare_and_positional_steps() -> None:
    text = """```python
Sub_Question_1 = "When did the Danish ministry visit Iraq?"
Info_1 = Search(query=Sub_Question_1)
Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)
Sub_Question_2 = "Who visited Iraq?"
Info_2 = Search(query=Sub_Question_2, thought="need the visitors")
Ans_2 = Get_Answer(query=Sub_Question_2, info=Info_2)
Temp_Results1 = After(Answer=Ans_2, Time=Ans_1)
Temp_Results2 = First(Answer=Temp_Results1)
Union_Results1 = Union(Ans_1, Ans_2)
Temp_Results3 = Between(Answer=Ans_2, Start="2012-01", End=2013)
Ans_3 = Compare(Original_Query=Original_Question, Subquestions=[Sub_Question_1, Sub_Question_2],
                Answers=[Ans_1, Ans_2])
Final_Answer = Finish_The_Plan(Answer=Temp_Results2)
```
That is my plan. Trailing chatter is ignored.
Final_Answer = Finish_The_Plan(Answer=Ans_3)"""
    plan = parse_plan(text)
    assert plan.step("Temp_Results1") == TimeStep("Temp_Results1", Call.AFTER, "Ans_2", Ref("Ans_1"))
    assert plan.step("Temp_Results2") == PickStep("Temp_Results2", Extreme.FIRST, "Temp_Results1")
    assert plan.step("Union_Results1") == SetStep("Union_Results1", SetOperation.OR, ("Ans_1", "Ans_2"))
    between = plan.step("Temp_Results3")
    assert (
        isinstance(between, TimeStep)
        and between.time == TimePoint(2012, 1)
        and between.end == TimePoint(2013)
    )
    assert plan.step("Ans_3") == CompareStep(
        "Ans_3", ("Sub_Question_1", "Sub_Question_2"), ("Ans_1", "Ans_2")
    )
    assert plan.final == "Temp_Results2" and plan.pattern() is PatternType.AFTER_FIRST


def test_a_plain_string_with_a_placeholder_is_read_as_the_paper_executor_does() -> None:
    text = PAPER.replace('f"Which areas', '"Which areas')
    assert parse_plan(text).step("Sub_Question_2") == Text(
        "Sub_Question_2", "Which areas border with {Ans_1}", ("Ans_1",), fstring=False
    )


@pytest.mark.parametrize("pattern", list(PatternType))
def test_every_pattern_prints_parses_back_and_has_its_shape(pattern: PatternType) -> None:
    plan = skeleton_plan(pattern, 'What did "A" {do} in 2012?')
    text = plan.to_text()
    again = parse_plan(text)
    assert again.to_text() == text
    assert again.pattern() is pattern, (again.shape(), text)


def test_every_skeleton_is_covered() -> None:
    assert set(SKELETONS) == set(PatternType)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no plan lines"),
        ("hello world", "no plan lines"),
        (
            "Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)\n"
            "Final_Answer = Finish_The_Plan(Answer=Ans_1)",
            "not defined",
        ),
        ('Q = "a"\nI = Search(query=Q)\nA = Get_Answer(query=Q, info=I)', "never calls Finish_The_Plan"),
        ('Q = "a"\nI = Search(query=Q)\nA = eval(Q)\nF = Finish_The_Plan(Answer=A)', "not an allowed call"),
        (
            'Q = "a"\nI = Search(query=Q)\nA = Get_Answer(query=Q, info=I, x=1)\n'
            "F = Finish_The_Plan(Answer=A)",
            "no argument x",
        ),
        ('Q = "a"\nI = Search(Q)\nF = Finish_The_Plan(Answer=I)', "keyword arguments only"),
        ('Q = "a"\nI = Search(query=Q)\nF = Finish_The_Plan(Answer=I)', "is a info"),
        ('Q = "a"\nQ = "b"\nI = Search(query=Q)', "assigned twice"),
        ('Q = os.system("ls")\nF = Finish_The_Plan(Answer=Q)', "not an allowed call"),
        ('Q = f"{Q!r}"', "plain names"),
        (
            'Q = "a"\nI = Search(query=Q)\nA = Get_Answer(query=Q, info=I)\n'
            'T = During(Answer=A, Time="soon")',
            "not a time",
        ),
        ("Q = 3\nF = Finish_The_Plan(Answer=Q)", "expected a string"),
        ("Q: int = 'a'", "annotations"),
        (
            'Q = "a"\nI = Search(query=Q)\nA = Get_Answer(query=Q, info=I)\nC = Compare(Answers=[A])',
            "two answers",
        ),
    ],
)
def test_bad_plans_are_parse_errors_with_the_raw_text(text: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_plan(text)
    assert message in str(err.value)
    assert err.value.raw == text or not text.strip() or len(text) > 2000


def test_nothing_in_a_plan_is_ever_executed(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    attacks = [
        f'X = open("{target}", "w").write("x")\nF = Finish_The_Plan(Answer=X)',
        f'X = __import__("pathlib").Path("{target}").touch()\nF = Finish_The_Plan(Answer=X)',
        f"Q = f\"{{open('{target}', 'w')}}\"\nF = Finish_The_Plan(Answer=Q)",
        f'Q = "a"\nI = Search(query=[open("{target}", "w")])\nF = Finish_The_Plan(Answer=I)',
    ]
    for text in attacks:
        with pytest.raises(ParseError):
            parse_plan(text)
    assert not target.exists()


def test_deeply_nested_or_huge_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_plan("X = " + "(" * 5000 + ")" * 5000)
    with pytest.raises(ParseError):
        parse_plan("X = 'a'\n" * 30_000)
    with pytest.raises(ParseError):
        parse_plan("\x00 = Finish_The_Plan(Answer=x)")


_NAMES = st.sampled_from(
    [
        "Sub_Question_1",
        "Info_1",
        "Ans_1",
        "Ans_2",
        "Inter_Results1",
        "Final_Answer",
        "Original_Question",
        "os",
        "x",
    ]
)
_CALLS = st.sampled_from([c.value for c in Call] + ["eval", "exec", "open", "__import__", "print"])
_ARGS = st.sampled_from(
    ["query", "info", "Answer", "Answer1", "Answer2", "Time", "Start", "End", "Answers", "x"]
)
_VALUES = st.one_of(
    _NAMES,
    st.text(max_size=12).map(repr),
    st.builds(lambda n: f'f"x {{{n}}}"', _NAMES),
    st.builds(lambda a, b: f"[{a}, {b}]", _NAMES, _NAMES),
    st.sampled_from(['"2012-05"', "2012", "None", "1 + 2", "x.y", "x[0]", "lambda: 0", "*x", "**x"]),
)
_CALL = st.builds(
    lambda f, kws: f"{f}({', '.join(kws)})",
    _CALLS,
    st.lists(st.one_of(st.builds(lambda a, v: f"{a}={v}", _ARGS, _VALUES), _VALUES), max_size=4),
)
_LINE = st.one_of(
    st.builds(lambda n, v: f"{n} = {v}", _NAMES, st.one_of(_CALL, _VALUES)),
    st.builds(lambda n, v: f"{n}: str = {v}", _NAMES, st.one_of(_CALL, _VALUES)),
    st.sampled_from(
        ["```python", "```", "# comment", "import os", "del x", "def f(): pass", "x += 1", "@d", "("]
    ),
    st.text(max_size=30),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=14))
def test_fuzzed_code_like_text_only_ever_raises_parse_error(lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        plan = parse_plan(text)
    except ParseError as exc:
        assert exc.raw or not text.strip() or "no plan lines" in str(exc)
        return
    assert isinstance(plan.steps[-1], FinishStep)
    assert parse_plan(plan.to_text()).to_text() == plan.to_text()  # whatever parses prints and parses back
    assert isinstance(plan.shape(), str)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_fuzzed_arbitrary_text_only_ever_raises_parse_error(text: str) -> None:
    try:
        plan = parse_plan(text)
    except ParseError as exc:
        assert isinstance(exc.raw, str)
    else:
        assert isinstance(plan.steps[-1], FinishStep)


def test_a_finetuned_planner_served_by_an_llm_asks_through_the_one_ask_path(tmp_path: Path) -> None:
    """The llama.cpp path of a fine-tuned planner: one call with the fine-tuning prompt, the reply read by the
    plan parser; an unreadable plan is refused with a reason (not re-asked), its parse failure counted."""
    from tkgqa.methods.lpkg.planner import FinetunedPlanner, Inference
    from tkgqa.methods.lpkg.prompts import finetune_messages
    from tkgqa.testing import FakeLLM

    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    planner = FinetunedPlanner(tmp_path, inference=Inference.TRANSFORMERS, max_tokens=99)
    planner.inference = Inference.LLAMACPP
    good = skeleton_plan(PatternType.P2, "Who did the visitors of China meet?").to_text()
    planner._llm = llm = FakeLLM([good, "Final_Answer = Finish_The_Plan(Ans_9)"])
    out = planner.plan("Who did the visitors of China meet?")
    assert out.plan is not None and out.plan.to_text() == good and out.error == ""
    request = llm.requests[0]
    assert list(request.messages) == finetune_messages("Who did the visitors of China meet?")
    assert request.max_tokens == 99
    refused = planner.plan("Who?")
    assert refused.plan is None and refused.error and refused.text.startswith("Final_Answer")
    assert llm.calls == 2 and refused.usage.parse_failures == 1
