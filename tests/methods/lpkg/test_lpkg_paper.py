"""LPKG's paper preset with FakeLLM: the QA-LLM reader with the authors' prompt and its 5-sample vote, the
fall-back to answering the question directly when a sub-answer is empty, ``Compare`` by the LLM, ten
KG-derived demonstrations in the official planning prompt's format (checked against the authors' file when
the shared data is present), ``--patterns paper``, the deviations in ``report.json``, CLQA-Wiki's set
metrics in breakdowns."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.datasets import Question
from tkgqa.errors import ConfigError, LLMError
from tkgqa.eval.scoring import breakdown
from tkgqa.kg import TemporalKG
from tkgqa.llm.base import LLMRequest
from tkgqa.methods import resolve_method
from tkgqa.methods.lpkg import LPKGMethod, parse_plan
from tkgqa.methods.lpkg.data import kg_demos
from tkgqa.methods.lpkg.official import official_block, read_official, split_official
from tkgqa.methods.lpkg.prompts import (
    AUTHORS_ANSWER_TEMPLATE,
    OFFICIAL_HEADER,
    OFFICIAL_HEADER_FILE,
    official_planner_messages,
)
from tkgqa.outcomes import ResultRow
from tkgqa.query.generate.patterns import LPKG_PATTERNS, PatternType
from tkgqa.testing import FakeLLM

_load_commands()  # the method packages' command groups (`tkgqa lpkg …`)

CHAIN_PLAN = """Sub_Question_1: str = "Who visited China in November 2014?"
Info_1: str = Search(query = Sub_Question_1, thought = Thought1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Sub_Question_2: str = f"Which countries did {Ans_1} visit?"
Info_2: str = Search(query = Sub_Question_2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Final_Answer: str = Finish_The_Plan(Answer = Ans_2)"""

COMPARE_PLAN = """Sub_Question_1: str = "When did Angela Merkel visit China?"
Info_1: str = Search(query = Sub_Question_1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Sub_Question_2: str = "When did Vladimir Putin visit China?"
Info_2: str = Search(query = Sub_Question_2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Ans_3: str = Compare(Original_Query = Original_Question, Subquestions = [Sub_Question_1,Sub_Question_2], Answers = [Ans_1,Ans_2])
Final_Answer: str = Finish_The_Plan(Answer = Ans_3)"""  # noqa: E501

QUESTION = Question(qid="q1", text="Which countries did the visitor of China in November 2014 visit?")
COMPARE_Q = Question(qid="c", text="Who visited China first, Angela Merkel or Vladimir Putin?")


def scripted(plan: str, answers: dict[str, list[str]]) -> FakeLLM:
    """A FakeLLM that plans ``plan`` and answers each QA prompt by its question: ``answers[question]`` is
    the list of replies given in turn (the last one repeated)."""
    seen: dict[str, int] = {}

    def respond(request: LLMRequest) -> str:
        text = request.messages[-1].content
        if text.startswith("###Complete the Code Below###"):
            return plan
        m = re.search(r"### Question:\n(.*)\n### Your Answer", text) or re.search(
            r"### Please Answer the Original Question: (.*?) \(", text
        )
        assert m is not None, text[:300]
        replies = answers[m.group(1)]
        i = seen.get(m.group(1), 0)
        seen[m.group(1)] = i + 1
        return replies[min(i, len(replies) - 1)]

    return FakeLLM(respond)


def step(trace: list[dict[str, object]], var: str) -> dict[str, object]:
    return next(s for s in trace if s.get("step") == var)


def test_the_paper_preset_needs_an_llm_and_says_which_flag() -> None:
    with pytest.raises(ConfigError, match=r"--llm SPEC.*preset=ours"):
        resolve_method("lpkg")
    with pytest.raises(ConfigError, match="--llm"):
        resolve_method("lpkg", planner="direct")  # the planner needs none, the paper's reader does
    assert resolve_method("lpkg:ours", planner="direct").describe()["config"]["reader"] == "symbolic"


def test_the_paper_reader_votes_over_five_samples_with_the_authors_prompt(demo_kg: TemporalKG) -> None:
    llm = scripted(
        CHAIN_PLAN,
        {
            "Who visited China in November 2014?": ["[Angela Merkel]", "[Barack Obama]", "[Barack Obama]",
                                                    "[Angela Merkel]", "[Barack Obama]"],
            "Which countries did Barack Obama visit?": ["[China#Germany]"],
        },
    )  # fmt: skip
    answer = LPKGMethod(llm=llm).answer(QUESTION, demo_kg)
    assert sorted(answer.answers) == ["China", "Germany"]  # the majority (3 of 5) fed the second one
    assert step(answer.trace, "Ans_1")["answers"] == ["Barack Obama"]
    qa = [r for r in llm.requests if "### Question:\nWho visited China" in r.messages[-1].content]
    assert [r.seed for r in qa] == [0, 1, 2, 3, 4] and {r.temperature for r in qa} == {1.0}
    sent = qa[0].messages[-1].content
    assert "based on your own knowledge and the information provided" in sent
    assert (
        "If the answer is not included in the information provided, please answer based on your own" in sent
    )
    assert sent.startswith(AUTHORS_ANSWER_TEMPLATE.split("{info}")[0])
    assert answer.usage.to_dict()["llm_calls"] == 1 + 5 + 5  # plan, two sub-questions voted


def test_a_vote_tie_goes_to_the_first_reply_and_an_unreadable_winner_is_empty(demo_kg: TemporalKG) -> None:
    tie = scripted(CHAIN_PLAN, {
        "Who visited China in November 2014?": ["[Barack Obama]", "[Angela Merkel]"],
        "Which countries did Barack Obama visit?": ["[China]"],
    })  # fmt: skip
    got = LPKGMethod(llm=tie, votes=2).answer(QUESTION, demo_kg)
    assert step(got.trace, "Ans_1")["answers"] == ["Barack Obama"]
    unreadable = scripted(CHAIN_PLAN, {QUESTION.text: ["[Germany]"],
                                       "Who visited China in November 2014?": [""]})  # fmt: skip
    got = LPKGMethod(llm=unreadable).answer(QUESTION, demo_kg)
    assert got.usage.to_dict()["parse_failures"] >= 1
    assert any(s.get("step") == "empty_fallback" for s in got.trace) and got.answers == ["Germany"]


def test_an_empty_sub_answer_falls_back_to_the_question_asked_directly(demo_kg: TemporalKG) -> None:
    llm = scripted(
        CHAIN_PLAN,
        {"Who visited China in November 2014?": ["[None]"], QUESTION.text: ["[Germany#China]"]},
    )
    answer = LPKGMethod(llm=llm).answer(QUESTION, demo_kg)
    steps = [s.get("step") for s in answer.trace]
    assert "empty_fallback" in steps and "Ans_2" not in steps  # the plan stopped at the empty Ans_1
    fallback = next(s for s in answer.trace if s.get("step") == "empty_fallback")
    assert fallback["reason"] == "Ans_1 is empty"
    assert sorted(answer.answers) == ["China", "Germany"]
    assert len(llm.requests) == 1 + 5 + 5  # the plan, Ans_1 voted, the question voted: no Ans_2
    ours = LPKGMethod(llm=llm, empty_fallback=False).answer(QUESTION, demo_kg)
    assert ours.abstained and "empty_fallback" not in [s.get("step") for s in ours.trace]


def test_compare_is_an_llm_call_with_the_authors_prompt(demo_kg: TemporalKG) -> None:
    llm = scripted(
        COMPARE_PLAN,
        {
            "When did Angela Merkel visit China?": ["[2014-07-07]"],
            "When did Vladimir Putin visit China?": ["[2014-05-20]"],
            COMPARE_Q.text: ["[Vladimir Putin]"],
        },
    )
    answer = LPKGMethod(llm=llm).answer(COMPARE_Q, demo_kg)
    assert answer.answers == ["Vladimir Putin"]
    prompt = next(r for r in llm.requests if "comparison question" in r.messages[-1].content)
    text = prompt.messages[-1].content
    assert "### Sub-Question 1:\nWhen did Angela Merkel visit China?\n### Answer to Sub-Question 1:\n" in text
    assert "[2014-07-07]### Sub-Question 2:" in text  # the authors' prompt, missing line breaks included
    assert prompt.seed is None and prompt.temperature == 0.0  # one call, no vote (as the authors)
    wrong = scripted(COMPARE_PLAN, {
        "When did Angela Merkel visit China?": ["[2014-07-07]"],
        "When did Vladimir Putin visit China?": ["[2014-05-20]"],
        COMPARE_Q.text: ["[Angela Merkel]"],
    })  # fmt: skip
    assert LPKGMethod(llm=wrong).answer(COMPARE_Q, demo_kg).answers == ["Angela Merkel"]  # the LLM decides
    rule = LPKGMethod(llm=wrong, compare="rule").answer(COMPARE_Q, demo_kg)
    assert rule.answers == ["Vladimir Putin"]  # ours: the earliest time wins


def test_an_llm_failure_in_the_vote_or_compare_is_an_error(demo_kg: TemporalKG) -> None:
    def down(request: LLMRequest) -> str:
        if request.messages[-1].content.startswith("###Complete"):
            return COMPARE_PLAN
        raise LLMError("HTTP 500")

    with pytest.raises(LLMError):
        LPKGMethod(llm=FakeLLM(down)).answer(COMPARE_Q, demo_kg)


def test_ten_kg_derived_demonstrations_in_the_official_format(demo_kg: TemporalKG) -> None:
    demos = kg_demos(demo_kg, 10, seed=0)
    assert len(demos) == 10
    kinds = [parse_plan(d.plan).pattern() for d in demos]
    assert set(kinds) <= set(LPKG_PATTERNS) and len(set(kinds)) >= 7
    for demo in demos:
        block = official_block(demo)
        assert block.startswith('Original_Question: str = "') and "### Question Type:" in block
        assert parse_plan(block).shape() == parse_plan(demo.plan).shape()  # the same plan, official format
        assert all(_official_line(line) for line in block.splitlines() if line.strip()), block
    llm = FakeLLM(["[China]"] * 40)
    method = LPKGMethod(llm=llm, planner="icl")
    method.answer(QUESTION, demo_kg)
    prompt = llm.requests[0].messages[-1].content
    assert prompt.startswith(OFFICIAL_HEADER) and prompt.count("# Example ") == 10
    assert prompt.rstrip().endswith(f'Original_Question: str = "{QUESTION.text}"')
    assert method.describe()["planner_info"]["format"] == "official"


def test_three_inputs_are_chained_as_binary_intersections() -> None:
    from tkgqa.methods.lpkg.prompts import Demo

    plan = (
        'Sub_Question_1 = "A?"\nInfo_1 = Search(query=Sub_Question_1)\n'
        "Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)\n"
        'Sub_Question_2 = "B?"\nInfo_2 = Search(query=Sub_Question_2)\n'
        "Ans_2 = Get_Answer(query=Sub_Question_2, info=Info_2)\n"
        'Sub_Question_3 = "C?"\nInfo_3 = Search(query=Sub_Question_3)\n'
        "Ans_3 = Get_Answer(query=Sub_Question_3, info=Info_3)\n"
        "Inter_Results1 = Intersection(Answer1=Ans_1, Answer2=Ans_2, Answer3=Ans_3)\n"
        "Final_Answer = Finish_The_Plan(Answer=Inter_Results1)"
    )
    block = official_block(Demo("What do A, B and C share?", plan))
    assert "Inter_Results2: str = Intersection(Answer1 = Inter_Results1, Answer2 = Ans_3)" in block
    assert "Final_Answer: str = Finish_The_Plan(Answer = Inter_Results2)" in block
    assert "### Question Type: Three Intersection" in block
    assert parse_plan(block).pattern() is PatternType.I3


_LINE_KINDS = [
    r'Original_Question: str = ".*"',
    r"### Question Type: [A-Za-z ]+",
    r"### Decompose the original question into sub-questions\.",
    r'Thought\d+: str = ".*"',
    r'Sub_Question_\d+: str = f?".*"',
    r"Info_\d+: str = Search\(query = Sub_Question_\d+, thought = Thought\d+\)",
    r"Ans_\d+: str = Get_Answer\(query = Sub_Question_\d+, info = Info_\d+\)",
    r"(Inter|Union)_Results\d+: str = (Intersection|Union)\(Answer1 = \w+, Answer2 = \w+\)",
    r"Ans_\d+: str = Compare\(Original_Query = Original_Question, Subquestions = \[[\w,]+\], "
    r"Answers = \[[\w,]+\]\)",
    r"Final_Answer: str = Finish_The_Plan\(Answer = \w+\)",
]


def _official_line(line: str) -> bool:
    return any(re.fullmatch(kind, line.strip()) for kind in _LINE_KINDS)


def test_the_official_header_is_the_shipped_file_byte_for_byte() -> None:
    """The stubs are read from the package's resource file unchanged: its tab indents, the trailing space
    after "need." and the closing blank line (what an editor stripping whitespace would lose) are pinned by
    the digest of the text the former Python literal held, so this holds without the authors' file too."""
    assert OFFICIAL_HEADER_FILE == "official_planning_header.txt"
    digest = hashlib.sha256(OFFICIAL_HEADER.encode("utf-8")).hexdigest()
    assert digest == "6dbec1f4e74e72abb85fb06ba2559e37e70d241cfa34c968b39e38426aac7c77"
    assert OFFICIAL_HEADER.startswith("###Complete the Code Below###\n") and OFFICIAL_HEADER.endswith(
        "    return Answer\n\n"
    )
    assert "\t\tthought: The reason why this query is need. \n" in OFFICIAL_HEADER


@pytest.fixture(scope="module")
def official_file(shared_data: Path) -> Path:
    path = shared_data / "llm_recordings" / "lpkg_official_planning_prompt.json"
    if not path.is_file():
        pytest.skip(f"the authors' planning prompt is not at {path}")
    return path


def test_the_official_prompt_matches_ours_and_its_demonstrations_parse(official_file: Path) -> None:
    text = json.loads(official_file.read_text("utf-8"))["instruction"]
    assert text.startswith(OFFICIAL_HEADER)  # the stubs of official_planning_header.txt are the authors'
    demos = read_official(official_file)
    assert len(demos) == 10 and demos == split_official(text)
    for demo in demos:
        plan = parse_plan(demo.official)  # every demonstration reads with our plan parser
        assert plan.steps and all(_official_line(line) for line in demo.official.splitlines() if line.strip())
    patterns = [parse_plan(d.official).pattern() for d in demos]
    assert patterns == [
        PatternType.P1, PatternType.P2, PatternType.P3, None,  # Example 3: "Entity Replacement", p(p(),p())
        PatternType.COMPARE, PatternType.I2, PatternType.I3, PatternType.U2, PatternType.PI, PatternType.IP,
    ]  # fmt: skip
    question = re.findall(r'Original_Question: str = "(.*)"', text)[-1]
    ours = official_planner_messages(question, [official_block(d) for d in demos])[0].content
    squeeze = lambda s: re.sub(r"\n{3,}", "\n\n", s)  # noqa: E731  (one example ends with an extra blank line)
    assert squeeze(ours) == squeeze(text)  # our rendering of their demonstrations is their prompt


#: What differs from the paper in the paper preset itself: no Wikipedia corpus, the error_flag rule.
STANDING = ["Search", "empty_fallback=true"]


def test_official_demonstrations_can_be_used_at_run_time(official_file: Path, demo_kg: TemporalKG) -> None:
    llm = FakeLLM(["[China]"] * 40)
    method = LPKGMethod(llm=llm, demos=str(official_file))
    method.answer(QUESTION, demo_kg)
    assert "Who succeeded the first President of Namibia?" in llm.requests[0].messages[-1].content
    assert method.describe()["demos"] == "official"
    assert [d.split(":")[0] for d in method.describe()["deviations"]] == STANDING


def test_report_names_the_preset_and_every_deviation(demo_kg: TemporalKG, tmp_path: Path) -> None:
    from tkgqa.eval.runner import evaluate

    paper = LPKGMethod(llm=FakeLLM(["[China]"] * 40))
    assert paper.describe()["preset"] == "paper"
    assert [d.split(":")[0] for d in paper.describe()["deviations"]] == STANDING
    assert paper.describe()["demos"] == "kg"
    ours = resolve_method("lpkg:ours", llm=FakeLLM([CHAIN_PLAN]))
    devs = ours.describe()["deviations"]
    names = {d.split("=")[0].split(":")[0] for d in devs}
    assert names == {"Search", "reader", "qa_prompt", "votes", "empty_fallback", "compare", "k",
                     "demo_source", "plan_format"}  # fmt: skip
    one = LPKGMethod(llm=FakeLLM(["[China]"] * 40), votes=1).describe()["deviations"]
    assert len(one) == 1 + len(STANDING) and one[0].startswith("votes=1:") and "5 times" in one[0]
    q = Question(qid="q", text=QUESTION.text, answers=["China"])
    report = evaluate(ours, [q], demo_kg, tmp_path / "run", progress=False)
    saved = json.loads((tmp_path / "run" / "report.json").read_text())
    assert saved["method"]["preset"] == "ours" and len(saved["method"]["deviations"]) == 9
    assert saved["method"]["unspecified_by_paper"] and report.n == 1


def test_data_can_be_limited_to_the_papers_nine_patterns(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "data"
    args = ["lpkg", "data", "--kg", "demo", "--per-pattern", "1", "--holdout", "0", "--out", str(out)]
    res = runner.invoke(app, [*args, "--patterns", "paper"])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["counts"]["demo"]) <= {str(p) for p in LPKG_PATTERNS}
    assert summary["patterns"] == [str(p) for p in LPKG_PATTERNS]
    res = runner.invoke(app, [*args, "--patterns", "2p,before"])
    assert res.exit_code == 0, res.output
    assert set(json.loads((out / "summary.json").read_text())["counts"]["demo"]) == {"2p", "before"}
    res = runner.invoke(app, [*args, "--patterns", "4p"])
    assert res.exit_code != 0 and "unknown pattern '4p'" in str(res.exception or res.output)


def test_clqa_breakdowns_carry_set_recall_and_precision() -> None:
    rows = [
        {"qtype": "2i", "strict_hit": 1, "lenient_hit": 1, "f1": 0.5, "recall": 1.0, "precision": 1 / 3,
         "exact_set": False},
        {"qtype": "2i", "strict_hit": 0, "lenient_hit": 0, "f1": 0.0, "recall": 0.0, "precision": 0.0,
         "exact_set": False},
    ]  # fmt: skip
    results = [ResultRow.from_json(r) for r in rows]
    b = breakdown(results, "clqa")
    assert b["overall"]["recall"] == 0.5 and b["qtype"]["2i"]["precision"] == pytest.approx(1 / 6)
    assert "recall" not in breakdown(results, "multitq")["overall"]


def test_an_empty_kg_yields_no_demonstrations_and_says_what_to_pass() -> None:
    empty = TemporalKG([], name="empty")
    with pytest.raises(ConfigError, match=r"demos=PATH.*--patterns paper"):
        kg_demos(empty, 10)
    with pytest.raises(ConfigError, match="demos=PATH"):
        LPKGMethod(llm=FakeLLM(["[A]"])).answer(QUESTION, empty)
    assert kg_demos(empty, 0) == []
