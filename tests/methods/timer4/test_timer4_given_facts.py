"""``timer4:facts=dataset``: the authors' answer prompt over the dataset's own facts — rendering, config,
and (with ../shared/data) the recorded gpt-3.5 prompts matched byte for byte and replayed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tkgqa.datasets.base import RETRIEVED_FACTS, Question
from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods import resolve_method
from tkgqa.methods.timer4 import TimeR4Method
from tkgqa.methods.timer4.config import FACTS_DATASET_NOTE, FactSource
from tkgqa.methods.timer4.given_facts import authors_reason_text
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

RECORDING = "llm_recordings/timer4_tq_chatgpt_answer.jsonl"


def test_prompt_writes_the_fact_list_as_python_does() -> None:
    text = authors_reason_text("who wrote it", ["A author B from 1 to 2916.", "The Child's Story x\u200e"])
    assert text.endswith(
        "Historical facts:['A author B from 1 to 2916.', \"The Child's Story x\\u200e\"]\n"
        "Question:\n who wrote it?"
    )
    assert text.startswith("Based on the historical facts, please answer the given question.")


def test_facts_option_is_an_enum_and_recorded() -> None:
    method = resolve_method("timer4:facts=dataset")
    assert isinstance(method, TimeR4Method) and method.config.facts is FactSource.DATASET
    described = method.describe()
    assert described["config"]["facts"] == "dataset" and described["deviations"] == [FACTS_DATASET_NOTE]
    default = resolve_method("timer4")
    assert isinstance(default, TimeR4Method) and default.config.facts is FactSource.RETRIEVE
    with pytest.raises(ConfigError):
        resolve_method("timer4:facts=web")


def test_answers_over_the_shipped_facts_without_retrieval() -> None:
    llm = FakeLLM(lambda request: "['Bob']")
    method = TimeR4Method(llm=llm, facts="dataset")
    fact = Fact("Ann", "meet", "Bob", parse_time("2001"), parse_time("2001"))
    q = Question(
        qid="1", text="who did ann meet", answers=["Bob"], context=[fact],
        extra={RETRIEVED_FACTS: ["Ann meet Bob from 2001 to 2001."]},
    )  # fmt: skip
    answer = method.answer(q, TemporalKG([fact]))
    assert answer.answers == ["Bob"] and answer.evidence == [fact]
    assert (
        llm.requests[0]
        .messages[0]
        .content.endswith(
            "Historical facts:['Ann meet Bob from 2001 to 2001.']\nQuestion:\n who did ann meet?"
        )
    )
    assert [s["step"] for s in answer.trace] == ["dataset_facts", "reason"]
    verbalised = method.answer(q.model_copy(update={"extra": {}}), TemporalKG([fact]))
    assert verbalised.trace[0]["source"] == "dataset context, verbalised"
    with pytest.raises(ConfigError, match="--context retrieved"):
        method.answer(Question(qid="2", text="q"), TemporalKG([fact]))
    empty = method.answer(q.model_copy(update={"extra": {RETRIEVED_FACTS: []}}), TemporalKG([fact]))
    assert empty.abstained and empty.reason_text == "no facts retrieved"


@pytest.fixture(scope="module")
def timequestions(shared_data: Path) -> list[Question]:
    from tkgqa.datasets import load_dataset

    if not (shared_data / RECORDING).is_file():
        pytest.skip(f"no {RECORDING} under {shared_data}")
    return list(load_dataset("timequestions", shared_data / "timequestions", context="retrieved").questions)


def test_prompts_match_the_authors_recording_byte_for_byte(
    shared_data: Path, timequestions: list[Question]
) -> None:
    recorded = {
        str(r["id"]): r["prompt"]
        for r in map(json.loads, (shared_data / RECORDING).read_text("utf-8").splitlines())
    }
    by_id = {q.qid: q for q in timequestions}
    same = sum(
        authors_reason_text(by_id[qid].text, by_id[qid].extra[RETRIEVED_FACTS]) == prompt
        for qid, prompt in recorded.items()
    )
    assert len(recorded) == 2266 and same == len(recorded)


def test_replaying_the_recording_matches_by_prompt(
    shared_data: Path, timequestions: list[Question], tmp_path: Path, isolated_home: Path
) -> None:
    from tkgqa.eval.runner import evaluate
    from tkgqa.llm import resolve_llm

    method = TimeR4Method(llm=resolve_llm(f"replay:{shared_data / RECORDING}"), facts="dataset")
    report = evaluate(method, timequestions[:40], None, tmp_path / "run", progress=False)
    assert report.replay == {"exact": 40, "by_id": 0, "reask": 0, "miss": 0} and report.errors == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    first = next(r for r in rows if r["qid"] == "12945")
    assert first["raw_output"] == "['1994']" and first["predictions"] == ["1994"] and first["strict_hit"]
