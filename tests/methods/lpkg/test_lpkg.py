"""The ``lpkg`` method end to end on the demo KG with FakeLLM: planning, parsing, execution, evidence, plan
metrics; planning data, verbalisation, SFT export; the ``tkgqa lpkg`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lpkg_plans import COMPARE_PLAN, IN_PLAN
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.datasets import Question
from tkgqa.errors import ConfigError
from tkgqa.kg import TemporalKG
from tkgqa.llm.base import LLMRequest
from tkgqa.methods import resolve_method
from tkgqa.methods.lpkg import LPKGMethod, parse_plan, plan_metrics
from tkgqa.methods.lpkg.data import (
    SFTFormat,
    build_examples,
    export_sft,
    make_verbalizer,
    read_examples,
    sft_row,
    split_by_entities,
    write_examples,
)
from tkgqa.methods.lpkg.execute import KGSearch, PlanExecutor, SymbolicReader, compare_mode, final_labels
from tkgqa.methods.lpkg.planner import load_demos
from tkgqa.methods.lpkg.prompts import finetune_messages, parse_lpkg_answer
from tkgqa.outcomes import ResultRow
from tkgqa.query import QuestionLinker, Reasoner
from tkgqa.query.generate.grounding import GroundingConfig, ground
from tkgqa.query.generate.patterns import PatternType
from tkgqa.query.program.answer_sets import CompareMode
from tkgqa.testing import FakeLLM

_load_commands()  # the method packages' command groups (`tkgqa lpkg …`)

CHAIN_PLAN = """Sub_Question_1 = "Who visited China in November 2014?"
Info_1 = Search(query=Sub_Question_1)
Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)
Sub_Question_2 = f"Which countries did {Ans_1} visit?"
Info_2 = Search(query=Sub_Question_2)
Ans_2 = Get_Answer(query=Sub_Question_2, info=Info_2)
Final_Answer = Finish_The_Plan(Answer=Ans_2)"""

QUESTION = Question(
    qid="q1", text="Who visited China in November 2014?", answers=["Barack Obama"], qtype="in"
)


def test_in_context_planner_end_to_end_with_evidence(demo_kg: TemporalKG) -> None:
    llm = FakeLLM([IN_PLAN])
    method = resolve_method("lpkg", preset="ours", llm=llm, k=2)
    answer = method.answer(QUESTION, demo_kg)
    assert answer.answers == ["Barack Obama"]
    assert [(f.subject, f.object, f.start.iso() if f.start else None) for f in answer.evidence] == [
        ("Barack Obama", "China", "2014-11-10")
    ]
    plan_step = answer.trace[0]
    assert plan_step["step"] == "plan" and plan_step["parsed"] and plan_step["pattern"] == "in"
    calls = [s["call"] for s in answer.trace[1:]]
    assert calls == ["Search", "Get_Answer", "During", "Finish_The_Plan"]
    assert answer.trace[2]["n_answers"] > 1 and answer.trace[2]["evidence"]
    assert answer.usage.to_dict()["llm_calls"] == 1
    prompt = llm.requests[0].messages[-1].content
    assert (
        "##Example1##" in prompt
        and "Original_Question: str = 'Who visited China in November 2014?'" in prompt
    )


def test_placeholders_fan_out_and_compare(demo_kg: TemporalKG) -> None:
    chain = resolve_method("lpkg", preset="ours", llm=FakeLLM([CHAIN_PLAN])).answer(QUESTION, demo_kg)
    fanned = chain.trace[4]
    assert fanned["call"] == "Get_Answer" and fanned["queries"] == ["Which countries did Barack Obama visit?"]
    assert "China" in chain.answers and "Germany" in chain.answers
    q = Question(qid="c", text="Who visited China first, Angela Merkel or Vladimir Putin?")
    cmp = resolve_method("lpkg", preset="ours", llm=FakeLLM([COMPARE_PLAN])).answer(q, demo_kg)
    assert cmp.answers == ["Vladimir Putin"]  # 2014-05-20 before 2014-07
    assert cmp.trace[0]["pattern"] == "compare"


def test_unparsable_plans_fall_back_or_abstain(demo_kg: TemporalKG) -> None:
    fallback = resolve_method("lpkg", preset="ours", llm=FakeLLM(["I think Obama."])).answer(
        QUESTION, demo_kg
    )
    assert fallback.trace[0]["parsed"] is False and fallback.trace[0]["fallback"] is True
    assert "no plan lines" in fallback.trace[0]["error"]
    assert fallback.answers[0] == "Barack Obama"  # the question asked directly
    strict = resolve_method("lpkg", preset="ours", llm=FakeLLM(["nonsense"]), fallback=False).answer(
        QUESTION, demo_kg
    )
    assert strict.abstained and "did not parse" in strict.reason_text and strict.raw_output == "nonsense"


def test_llm_reader_answers_sub_questions_from_retrieved_facts(demo_kg: TemporalKG) -> None:
    def respond(request: LLMRequest) -> str:
        text = request.messages[-1].content
        if "Original_Question" in text:
            return IN_PLAN
        assert "### Information:" in text and "Barack Obama | Make a visit | China" in text
        return "[Barack Obama#Angela Merkel]"

    llm = FakeLLM(respond)
    answer = LPKGMethod(llm=llm, preset="ours", reader="llm").answer(QUESTION, demo_kg)
    assert answer.answers == ["Barack Obama"]  # Merkel's visit was in July
    assert answer.usage.to_dict()["llm_calls"] == 2


def test_baseline_planners_and_configuration_errors(demo_kg: TemporalKG) -> None:
    direct = resolve_method("lpkg:ours,planner=direct").answer(QUESTION, demo_kg)
    assert direct.answers[0] == "Barack Obama" and direct.trace[0]["pattern"] == "1p"
    r1 = resolve_method("lpkg", preset="ours", planner="random", seed=1).answer(QUESTION, demo_kg).trace[0]
    r2 = resolve_method("lpkg", preset="ours", planner="random", seed=1).answer(QUESTION, demo_kg).trace[0]
    assert r1["text"] == r2["text"] and r1["parsed"]
    with pytest.raises(ConfigError, match="needs an LLM"):
        resolve_method("lpkg:ours")
    with pytest.raises(ConfigError, match="unknown LPKG planner"):
        resolve_method("lpkg:ours,planner=oracle")
    with pytest.raises(ConfigError, match="reader=llm"):
        resolve_method("lpkg", preset="ours", planner="direct", reader="llm")
    with pytest.raises(ConfigError, match="no trained planner"):
        resolve_method("lpkg", preset="ours", planner="finetuned:does-not-exist")
    with pytest.raises(ConfigError):
        resolve_method("lpkg", preset="ours", planner="direct", serach="kg")


def test_retriever_search_runs_offline(demo_kg: TemporalKG) -> None:
    answer = resolve_method(
        "lpkg", preset="ours", llm=FakeLLM([IN_PLAN]), search="retriever", embedder="hashing"
    ).answer(QUESTION, demo_kg)
    assert answer.trace[1]["how"].startswith("retriever")
    assert answer.answers == ["Barack Obama"]


def test_plan_metrics_in_the_evaluation_report(demo_kg: TemporalKG, tmp_path: Path) -> None:
    from tkgqa.eval.runner import evaluate

    questions = [
        QUESTION,
        Question(
            qid="q2",
            text="Who visited China first, Angela Merkel or Vladimir Putin?",
            answers=["Vladimir Putin"],
            qtype="compare",
        ),
        Question(qid="q3", text="Who visited China?", answers=["Barack Obama"], qtype="1p"),
    ]
    method = resolve_method("lpkg", preset="ours", llm=FakeLLM([IN_PLAN, COMPARE_PLAN, "garbage"]))
    report = evaluate(method, questions, demo_kg, tmp_path / "run", progress=False)
    m = report.method_metrics
    assert m["n_planned"] == 3 and m["plan_parse_rate"] == pytest.approx(2 / 3)
    assert m["plan_shape_accuracy"] == pytest.approx(2 / 3)
    assert m["plan_fallback_rate"] == pytest.approx(1 / 3)
    assert m["plan_exact_set"] == pytest.approx(2 / 3)
    assert m["plan_exact_set"] <= report.metrics["exact_set"]
    assert m["per_type"]["1p"]["predicted_patterns"] == {"unparsed/other": 1}
    saved = json.loads((tmp_path / "run" / "report.json").read_text())
    assert saved["method_metrics"]["per_type"]["compare"]["plan_shape_accuracy"] == 1.0
    assert plan_metrics([]) == {}


def _plan_step(pattern: str) -> dict[str, object]:
    return {"step": "plan", "parsed": True, "pattern": pattern}


def test_multitq_question_types_map_to_patterns() -> None:
    rows = [
        {"qtype": "after_first", "dataset": "multitq", "trace": [_plan_step("after_first")]},
        {"qtype": "equal", "dataset": "multitq", "trace": [_plan_step("2p")]},
        {"qtype": "Explicit", "trace": [{"step": "plan", "parsed": False}]},
    ]  # fmt: skip
    m = plan_metrics([ResultRow.from_json(r) for r in rows])
    assert m["plan_shape_judged"] == 2 and m["plan_shape_accuracy"] == 0.5
    assert m["per_type"]["Explicit"]["plan_shape_accuracy"] is None


@pytest.fixture(scope="module")
def examples(request: pytest.FixtureRequest) -> list:  # type: ignore[type-arg]
    from tkgqa.kg.loaders import load_demo_kg

    kg = load_demo_kg()
    result = ground(kg, GroundingConfig(per_pattern=3, seed=0))
    verbalize, stats = make_verbalizer(kg, seed=0)
    built = build_examples(kg, result.instances, verbalize, prefix="demo-")
    assert stats.template == len(built)
    return built


def test_gold_plans_of_generated_questions_execute_to_the_gold_answers(
    demo_kg: TemporalKG, examples: list
) -> None:  # type: ignore[type-arg]
    reasoner, linker = Reasoner(), QuestionLinker()
    executor = PlanExecutor(KGSearch(reasoner, linker), SymbolicReader(reasoner), linker)
    hits = 0
    for ex in examples:
        plan = parse_plan(ex.plan)
        assert plan.pattern() is PatternType(ex.qtype)
        got = final_labels(executor.run(plan, demo_kg, ex.question).answers, demo_kg)
        hits += set(got) == set(ex.answers)
    assert hits >= 0.8 * len(examples), f"{hits}/{len(examples)}"


def test_planning_data_split_export_and_demos(examples: list, tmp_path: Path) -> None:  # type: ignore[type-arg]
    train, held = split_by_entities(examples, 0.3, seed=0)
    assert train and held and len(train) + len(held) == len(examples)
    seen = {e for ex in train for e in ex.entities()}
    assert all(ex.entities() - seen for ex in held)  # each held-out question names an unseen entity
    path = tmp_path / "train.jsonl"
    write_examples(path, train)
    assert [e.qid for e in read_examples(path)] == [e.qid for e in train]
    report = export_sft(train, tmp_path / "sft.jsonl")
    row = json.loads((tmp_path / "sft.jsonl").read_text().splitlines()[0])
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert (
        row["messages"][2]["content"] == train[0].plan
        and report.rows == len(train)
        and len(report.sha256) == 64
    )
    assert row["messages"][:2] == [
        {"role": m.role, "content": m.content} for m in finetune_messages(train[0].question)
    ]
    assert set(sft_row(train[0], SFTFormat.ALPACA)) == {"instruction", "input", "output"}
    assert set(sft_row(train[0], SFTFormat.PROMPT_COMPLETION)) == {"prompt", "completion"}
    demos = load_demos(path, 4, seed=0)
    assert len(demos) == 4 and len({parse_plan(d.plan).pattern() for d in demos}) == 4
    with pytest.raises(ConfigError):
        split_by_entities(examples, 1.5)


def test_llm_verbalisation_and_its_template_fallback(demo_kg: TemporalKG) -> None:
    inst = next(
        i
        for i in ground(demo_kg, GroundingConfig(per_pattern=1, seed=2)).instances
        if i.pattern.value == "2p"
    )
    good = json.dumps(
        {"sub_questions": ["Who is A?", "What did {Ans_1} do?"], "question": "What did A's friend do?"}
    )
    verbalize, stats = make_verbalizer(demo_kg, llm=FakeLLM([good, "no json", "still none"]), seed=0)
    v, who = verbalize(inst)
    assert who == "llm:fake" and v.question == "What did A's friend do?"
    assert parse_plan(v.plan.to_text()).pattern() is PatternType.P2
    v2, who2 = verbalize(inst)  # the reply is unusable twice (retry included): templates take over
    assert who2 == "template" and stats.llm_failed == 1 and stats.usage.parse_failures >= 1
    assert parse_plan(v2.plan.to_text()).pattern() is PatternType.P2


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[Apple#Banana]", ["Apple", "Banana"]), ('["Apple", "Pear"]', ["Apple", "Pear"]), ("[None]", []),
     ("Answer: [Rome]", ["Rome"])],
)  # fmt: skip
def test_answer_list_parser(text: str, expected: list[str]) -> None:
    assert parse_lpkg_answer(text) == expected


def test_compare_mode_cue_words() -> None:
    assert compare_mode("Who visited China first, A or B?", times=True) is CompareMode.EARLIER
    assert compare_mode("Who visited China more recently, A or B?", times=True) is CompareMode.LATER
    assert compare_mode("Which has fewer children, A or B?", times=False) is CompareMode.LESS
    assert compare_mode("Which company has more revenue?", times=False) is CompareMode.MORE


def test_cli_ground_data_and_plan(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["lpkg", "ground", "--kg", "demo", "--per-pattern", "2", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["counts"]["2p"] == 2
    out = tmp_path / "data"
    res = runner.invoke(
        app, ["lpkg", "data", "--kg", "demo", "--per-pattern", "2", "--holdout", "0.3", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == summary["n_train"] + summary["n_heldout"] and summary["counts"]["demo"]["3p"] == 2
    assert (out / "heldout.demo.jsonl").is_file() and (out / "sft_train.jsonl").is_file()
    res = runner.invoke(app, ["lpkg", "plan", "Who visited China in November 2014?", "--planner", "direct",
                              "--preset", "ours", "--kg", "demo", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["pattern"] == "1p" and data["answer"]["answers"][0] == "Barack Obama"


def test_sft_planner_asks_in_the_fine_tuning_format(demo_kg: TemporalKG) -> None:
    llm = FakeLLM([IN_PLAN])
    answer = resolve_method("lpkg", preset="ours", llm=llm, planner="sft").answer(QUESTION, demo_kg)
    assert answer.answers == ["Barack Obama"] and answer.trace[0]["planner"] == "sft"
    sent = [(m.role, m.content) for m in llm.requests[0].messages]
    assert sent == [(m.role, m.content) for m in finetune_messages(QUESTION.text)]
    with pytest.raises(ConfigError, match="sft needs"):
        resolve_method("lpkg", preset="ours", planner="sft")


def test_split_never_leaves_the_held_out_set_empty(examples: list) -> None:  # type: ignore[type-arg]
    few = examples[:3]
    for seed in range(20):  # a tiny holdout draws no entity for most seeds: one entity is held out instead
        train, held = split_by_entities(few, 0.01, seed=seed)
        assert train and held and len(train) + len(held) == len(few)
        seen = {e for ex in train for e in ex.entities()}
        assert all(ex.entities() - seen for ex in held)
    assert split_by_entities(few, 0.0, seed=0) == (few, [])
    assert split_by_entities(few[:1], 0.01, seed=0)[1] == []


def test_an_llm_failure_is_an_error_not_an_empty_plan(demo_kg: TemporalKG) -> None:
    """An endpoint that fails (HTTP 500, timeout, bad key) raises LLMError from the planner, the LLM reader
    and LLM verbalisation: an infrastructure failure is an error row, never an abstention."""
    from tkgqa.errors import LLMError

    def down(request: LLMRequest) -> str:
        raise LLMError("HTTP 500 from the endpoint")

    with pytest.raises(LLMError, match="HTTP 500"):
        resolve_method("lpkg", preset="ours", llm=FakeLLM(down)).answer(QUESTION, demo_kg)
    with pytest.raises(LLMError, match="HTTP 500"):
        resolve_method("lpkg", preset="ours", llm=FakeLLM(down), planner="sft").answer(QUESTION, demo_kg)
    reader_down = resolve_method("lpkg", preset="ours", llm=FakeLLM([IN_PLAN]), reader="llm")
    with pytest.raises(LLMError):
        reader_down.answer(QUESTION, demo_kg)


def test_plan_steps_are_reported_as_step_events(demo_kg: TemporalKG) -> None:
    from tkgqa.methods import StepEvent, StepKind, step_reporter

    events: list[StepEvent] = []
    with step_reporter(events.append):
        answer = resolve_method("lpkg", preset="ours", llm=FakeLLM([IN_PLAN])).answer(QUESTION, demo_kg)
    assert answer.answers == ["Barack Obama"]
    assert [e.index for e in events] == list(range(len(events))) and len(events) >= 4
    assert {e.kind for e in events} == {StepKind.STAGE}
    assert events[-1].label.startswith("Final_Answer = Finish_The_Plan: Barack Obama")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ground", "--kg", "demo", "--per-pattern", "-3"], "--per-pattern"),
        (["ground", "--kg", "demo", "--max-answers", "0"], "--max-answers"),
        (["data", "--kg", "demo", "--out", "OUT", "--holdout", "1.5"], "--holdout"),
        (["data", "--kg", "demo", "--out", "OUT", "--max-answers", "0"], "--max-answers"),
    ],
)
def test_cli_counts_out_of_range_are_usage_errors(tmp_path: Path, args: list[str], said: str) -> None:
    """They were a pydantic ValidationError traceback, or (``--holdout 1.5``) refused only after every
    example was built."""
    _load_commands()
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    res = CliRunner().invoke(app, ["lpkg", *args])
    assert res.exit_code == 2 and said in res.output and res.exception is not None
    assert not (tmp_path / "out").exists()


def test_cli_messages_name_the_flag_and_the_method() -> None:
    _load_commands()
    res = CliRunner().invoke(app, ["lpkg", "ground", "--kg", "demo", "--pattern", "bogus"])
    assert isinstance(res.exception, ConfigError) and "in --pattern:" in str(res.exception)
    res = CliRunner().invoke(app, ["lpkg", "plan", "Who visited China?", "--planner", "direct", "--k", "-2"])
    assert isinstance(res.exception, ConfigError) and "of the lpkg method" in str(res.exception)
    res = CliRunner().invoke(app, ["lpkg", "plan", "  ", "--planner", "direct"])
    assert isinstance(res.exception, ConfigError) and "the question is empty" in str(res.exception)
