"""ARI prompts (Figures 8 and 9): message building and robust parsing of the model's choice."""

from __future__ import annotations

import re

import pytest

from tkgqa.errors import DataError, ParseError
from tkgqa.methods.ari.prompts import (
    EXAMPLES,
    EXEMPLARS_FILE,
    PAPER_EXAMPLES,
    ActionChoice,
    ActionRefusal,
    ActionRefused,
    ExampleSet,
    build_action_messages,
    build_methodology_messages,
    format_examples,
    format_history,
    parse_action_choice,
    parse_constrained_choice,
    parse_exemplars,
    parse_methodology,
    parse_written_action,
)

ACTIONS = [
    "get_head_entity(Freedonia, Make_a_visit, no time constraints)",
    "get_head_entity(Freedonia, Make_a_visit, 2012-07)",
    "get_time(Alice, Make_a_visit, Freedonia)",
    "get_first({entities})",
    "answer(Bob)",
    "answer(2012-07)",
]


def test_action_prompt_has_every_part_of_figure_8() -> None:
    history = format_history([("get_time(Alice, Make_a_visit, Freedonia)", "entities = [('Alice', '2010')]")])
    (msg,) = build_action_messages(
        "Who visited Freedonia after Alice?",
        ACTIONS,
        history=history,
        methodology="Step 1: find the anchor.",
        examples=format_examples(1),
    )
    text = msg.content
    for part in (
        "get_time(HEAD, RELATION, TAIL)",
        "Examples for your reference:",
        "(end of examples)",
        "Question: Who visited Freedonia after Alice?",
        "Methodology: Step 1: find the anchor.",
        "Action 0: $get_time(Alice, Make_a_visit, Freedonia)$",
        "Response 0: entities",
        "1. $get_head_entity(Freedonia, Make_a_visit, no time constraints)$",
        "Reason:",
    ):
        assert part in text, part


def test_action_prompt_variants() -> None:
    plain = build_action_messages("q?", ACTIONS)[0].content
    assert "Methodology:" not in plain and "(none yet)" in plain
    constrained = build_action_messages("q?", ACTIONS, constrained=True)[0].content
    assert "1. $" not in constrained and "options listed below" in constrained
    react = build_action_messages("q?", ACTIONS, react=True)[0].content
    assert "Thought:" in react
    schema = build_action_messages("q?", [], schema="Entities in the question: Alice")[0].content
    assert "Knowledge graph:\nEntities in the question: Alice" in schema and "Available Actions" not in schema


def test_examples_with_and_without_reasons() -> None:
    assert "Reason:" not in format_examples(2)
    assert "Reason:" in format_examples(2, with_reasons=True)
    assert format_examples(0) == "(none)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Action:\n$get_time(Alice, Make_a_visit, Freedonia)$\nReason: anchor first", ActionChoice(index=2)),
        ("Action: $get_time(Alice,Make a visit,Freedonia)$", ActionChoice(index=2)),  # spaces/underscores
        ("$GET_FIRST({entities})$", ActionChoice(index=3)),
        ("Action: 2", ActionChoice(index=1)),
        ("I choose get_head_entity(Freedonia, Make_a_visit, 2012-07) because", ActionChoice(index=1)),
        ("Action: $answer(Bob)$", ActionChoice(index=4)),
        ("Action: $answer(Carol)$", ActionChoice(free_answer="Carol")),
    ],
)
def test_parse_action_choice(text: str, expected: ActionChoice) -> None:
    assert parse_action_choice(text, ACTIONS) == expected


def test_parse_action_choice_rejects_placeholders_and_nonsense() -> None:
    with pytest.raises(ParseError) as err:
        parse_action_choice("I am not sure what to do.", ACTIONS)
    assert err.value.raw == "I am not sure what to do."
    with pytest.raises(ParseError):
        parse_action_choice("$answer({your specified time})$", ACTIONS)
    with pytest.raises(ParseError):
        parse_action_choice("Action: $answer(Carol)$", ACTIONS, allow_free_answer=False)
    with pytest.raises(ParseError):
        parse_action_choice("Action: 99", ACTIONS)


def test_parse_constrained_choice() -> None:
    assert parse_constrained_choice("answer(Bob)", ACTIONS) == ActionChoice(index=4)
    assert parse_constrained_choice(" get_first({entities}) ", ACTIONS) == ActionChoice(index=3)
    with pytest.raises(ParseError):
        parse_constrained_choice("zzz", ACTIONS)


def test_parse_written_action_reads_the_executable_action_it_writes() -> None:
    text = "Thought: find visitors.\nAction: $get_head_entity(Freedonia, make a visit, 2012-07)$"
    assert parse_written_action(text, ACTIONS) == ActionChoice(index=1)
    assert parse_written_action("get_first(entities)", ACTIONS) == ActionChoice(index=3)
    assert parse_written_action("$answer(Bob)$", ACTIONS) == ActionChoice(index=4)
    assert parse_written_action("Action: answer(Zed)", ACTIONS) == ActionChoice(free_answer="Zed")
    with pytest.raises(ParseError):
        parse_written_action("get_after({entities}, 2010)", ACTIONS)  # no get_after is executable
    with pytest.raises(ParseError):
        parse_written_action("no call here", ACTIONS)


def test_parse_written_action_never_swaps_in_a_near_action() -> None:
    for near in (
        "get_head_entity(Freedonia, Make_a_visit, 2012-08)",
        "get_time(Alicia, Make_a_visit, Freedonia)",
    ):
        with pytest.raises(ActionRefused) as info:
            parse_written_action(f"Action: ${near}$", ACTIONS)
        assert info.value.refusal is ActionRefusal.NOT_OFFERED and near in str(info.value)


def test_the_exemplars_are_read_from_the_shipped_json() -> None:
    assert (len(PAPER_EXAMPLES), len(EXAMPLES)) == (5, 3)  # Table 8's five; our three
    assert PAPER_EXAMPLES[1][1][1] == (
        "get_first({entities})",
        'entities = [("Government_(Cote_d\'Ivoire)", ...]',
        "",
    )
    assert EXAMPLES[0][1][-1] == ("answer(Turkey)", "", "The remaining entity answers the question.")
    for question, steps in PAPER_EXAMPLES + EXAMPLES:
        assert isinstance(question, str) and isinstance(steps, tuple)
        assert all(isinstance(step, tuple) and len(step) == 3 for step in steps)


def _one_set(steps: object) -> dict[str, object]:
    good = {"examples": [{"question": "Q?", "steps": [{"action": "answer(x)"}]}]}
    return {"paper": good, "ours": {"note": "n", "examples": [{"question": "Q?", "steps": steps}]}}


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ([], "must be an object"),
        ({"paper": {"examples": []}}, "paper.examples must be a non-empty list"),
        (_one_set([{"action": ""}]), "ours.examples[0].steps[0].action must be a non-empty string"),
        (_one_set([{"action": "a", "reason": 3}]), "ours.examples[0].steps[0].reason must be a string"),
        (_one_set([{"action": "a", "why": "b"}]), "ours.examples[0].steps[0] has keys other than"),
        (_one_set("answer(x)"), "ours.examples[0].steps must be a non-empty list"),
    ],
)
def test_malformed_exemplars_name_the_file_and_the_place(data: object, where: str) -> None:
    with pytest.raises(DataError, match=re.escape(where)) as info:
        parse_exemplars(data)
    assert info.value.path == EXEMPLARS_FILE and str(info.value).startswith(f"{EXEMPLARS_FILE}: ")
    ok = parse_exemplars(_one_set([{"action": "answer(x)", "response": "", "reason": "r"}]))
    assert ok[ExampleSet.OURS] == (("Q?", (("answer(x)", "", "r"),)),)


def test_methodology_prompt_and_its_ablation() -> None:
    (msg,) = build_methodology_messages(
        ["Question: A\nCorrect!"], ["Question: B\nWrong! The answer is ['x']"]
    )
    assert "Correct samples:\nQuestion: A" in msg.content and "Incorrect samples:\nQuestion: B" in msg.content
    assert "Overall Instruction:" in msg.content and "Step-by-step Guide:" in msg.content
    (only,) = build_methodology_messages(["Question: A\nCorrect!"], None)
    assert "Incorrect samples" not in only.content and "incorrect" not in only.content.split("Task")[0]


def test_parse_methodology() -> None:
    out = "Sure!\nOverall Instruction:\nFind the anchor time first.\nStep-by-step Guide:\n1. get_time ..."
    assert parse_methodology(out).startswith("Overall Instruction:")
    assert parse_methodology("Use get_time first, then filter with get_before.").startswith("Use get_time")
    with pytest.raises(ParseError):
        parse_methodology("OK")
    assert len(parse_methodology("word " * 2000, max_chars=100)) == 100
