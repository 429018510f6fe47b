"""The typed trace (issue #30): steps are frozen dataclasses with one JSON form, written only at the
boundaries and read back losslessly from any JSON a row holds."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tkgqa.api.views import decision_facts, program_tree
from tkgqa.datasets.base import Question
from tkgqa.kg.memory import TemporalKG
from tkgqa.methods import Answer, resolve_method
from tkgqa.methods.base import RefusedStep
from tkgqa.outcomes import ResultRow
from tkgqa.query.program.steps import ExecutedStep, NodeStep, ParseStep, ProgramStep, TimeStep
from tkgqa.trace import RecordedStep, TraceStep, read_step, read_trace, trace_json

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["step", "type", "op", "facts", "error", "program", "x"]) | st.text(max_size=6),
        _json,
        max_size=5,
    )
)
@example({"facts": None, "op": None})  # a NodeStep's keys in another order: not read as one
def test_any_json_step_reads_back_to_the_same_json(data: dict[str, Any]) -> None:
    step = read_step(data)
    assert isinstance(step, TraceStep)
    assert json.dumps(trace_json([step])) == json.dumps([data])  # the same values in the same key order


def test_a_step_is_a_frozen_dataclass_with_a_json_form_and_a_mapping_view() -> None:
    node = NodeStep("select", 2, candidates=[{"subject": "a"}], pool=7)
    assert node.to_dict() == {"op": "select", "facts": 2, "candidates": [{"subject": "a"}], "pool": 7}
    assert NodeStep("match", 3).to_dict() == {"op": "match", "facts": 3}  # optional keys left out
    assert TimeStep("2014-11-10", {"subject": "x"}).to_dict() == {
        "op": "time",
        "value": "2014-11-10",
        "reference": {"subject": "x"},
    }
    assert node["pool"] == 7 and "candidates" in node and node == node.to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.facts = 9  # type: ignore[misc]
    assert RefusedStep("step", "answer", "no list").to_dict() == {"step": "answer", "error": "no list"}


def test_json_steps_read_back_as_their_classes() -> None:
    steps = [
        ParseStep({"entities": []}),
        ProgramStep("entities(match(?, visit, China))"),
        NodeStep("match", 1),
        NodeStep("select", 1, candidates=[], pool=0),
        TimeStep("2014", {"subject": "x"}),
        ExecutedStep({"program": {}, "facts": {}}),
        RefusedStep("type", "parse_failure", "bad"),
    ]
    back = read_trace(trace_json(steps))
    assert [type(s) for s in back] == [type(s) for s in steps] and back == steps
    assert isinstance(read_step({"step": "unheard of", "n": 1}), RecordedStep)


def test_an_answer_holds_typed_steps_and_rows_hold_their_json() -> None:
    plugin = Answer(["x"], trace=[{"step": "mine", "n": 1}])  # a third-party method's dict
    assert isinstance(plugin.trace, tuple) and isinstance(plugin.trace[0], RecordedStep)
    assert plugin.to_dict()["trace"] == [{"step": "mine", "n": 1}]
    row = ResultRow(trace=list(Answer(["x"], trace=[ProgramStep("p")]).trace))  # type: ignore[arg-type]
    assert row.trace == [{"program": "p"}] and type(row.trace[0]) is dict


def test_the_symbolic_reasoner_traces_typed_steps_that_the_views_read(demo_kg: TemporalKG) -> None:
    question = Question(qid="q1", text="Who visited China in November 2014?", answers=[])
    answer = resolve_method("symbolic").answer(question, demo_kg)
    kinds = {type(s) for s in answer.trace}
    assert RecordedStep not in kinds and {ParseStep, ProgramStep, ExecutedStep} <= kinds
    row_trace = answer.to_dict()["trace"]
    assert program_tree(answer.trace) == program_tree(row_trace) is not None  # typed or read back: one tree
    assert decision_facts(answer.trace, demo_kg) == decision_facts(row_trace, demo_kg)
