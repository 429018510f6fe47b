"""The recorded real model outputs (../shared/data/llm_recordings, see its PROVENANCE.md) as a conformance
corpus: every recording goes through the parser of its method — through the task registry behind
``tkgqa llm parse`` — and the tests check what each reads, not only that nothing raises.

The figures asserted here are the reading of the shared part of the corpus; a change to a parser that
moves them must say why. (R3's prompt files are covered with R3's parsers elsewhere.)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tkgqa.llm.parse_tasks import ParseOutcome, run_task
from tkgqa.methods.ari.prompts import TIME_PLACEHOLDER, ActionRefusal, ActionRefused, parse_action_choice
from tkgqa.methods.lpkg.plan import parse_plan
from tkgqa.methods.package import parse_tasks

TASKS = parse_tasks()
WORDS = re.compile(r"\w")


@pytest.fixture(scope="module")
def recordings(shared_data: Path) -> Path:
    path = shared_data / "llm_recordings"
    if not path.is_dir():
        pytest.skip(f"the LLM recordings are not at {path} (see tests/conftest.py: TKGQA_SHARED_DATA)")
    return path


def read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def in_reply(items: list[str], reply: str) -> bool:
    """Every item is text of the reply (escapes such as ``\\'`` aside): nothing was invented."""
    return all(item.replace("\\", "") in reply.replace("\\", "") for item in items)


def run_all(task: str, rows: list[dict[str, Any]]) -> dict[Any, tuple[dict[str, Any], ParseOutcome]]:
    return {r["id"]: (r, run_task(TASKS[task], r)) for r in rows}


def categories(results: dict[Any, tuple[dict[str, Any], ParseOutcome]]) -> Counter[str]:
    return Counter(o.category for _, o in results.values())


# --- TimeR4 answers --------------------------------------------------------------------------------------
def test_timer4_chatgpt_answers(recordings: Path) -> None:
    results = run_all("timer4.answer", read(recordings / "timer4_tq_chatgpt_answer.jsonl"))
    assert len(results) == 2266
    assert categories(results) == Counter(
        {"ok": 2260, "declined": 6}
    )  # "[No information available]", "- None"
    value = {k: o.value for k, (_, o) in results.items()}
    assert value[13792] == ["People's Republic of China", "Palau", "Malta", "Kiribati", "Nauru"]  # bare list
    assert value[13619] == ["Everybody", "Who's That Girl"]  # bullets with an apostrophe
    assert value[13243] == ["New Haven population from 2014 to 2014: [131,014]"]  # a bracket inside a bullet
    assert value[14349] == ["Giuseppe Scopelliti", "Mario Oliverio"]  # numbered lines
    for row, outcome in results.values():  # nothing invented: every item is text of the reply
        assert not outcome.ok or in_reply(outcome.value, row["response"]), row["response"]


def test_timer4_llama2_finetuned_answers(recordings: Path) -> None:
    results = run_all("timer4.answer", read(recordings / "timer4_tq_llama2_finetuned_answer.jsonl"))
    assert categories(results) == Counter(
        {"ok": 1674, "note": 465, "no_answer": 112, "unparsed": 8, "declined": 7}
    )
    value = {k: o.value for k, (_, o) in results.items()}
    assert value[12945] == ["Stratford"]
    assert value[13641] == ["People's Republic of China"]
    head_cut = results[12953][1]  # "Nathan Deal', 'Sonny Perdue']": the decoding lost the list's opening
    assert head_cut.value == ["Nathan Deal", "Sonny Perdue"] and "cut off" in head_cut.reason
    for row, outcome in results.values():  # refused: only replies with nothing left ("']", "", "[]")
        assert outcome.ok or not WORDS.search(row["response"]), row["response"]
        assert not outcome.ok or in_reply(outcome.value, row["response"]), row["response"]


def test_timer4_llama2_nofacts_answers(recordings: Path) -> None:
    results = run_all("timer4.answer", read(recordings / "timer4_tq_llama2_nofacts_answer.jsonl"))
    assert categories(results) == Counter({"ok": 1972, "note": 272, "unparsed": 11, "no_answer": 11})
    value = {k: o.value for k, (_, o) in results.items()}
    assert value[13065] == ["Giuseppe 'Nino' Farina"]  # nested quotes: one item
    assert value[13792][:2] == ["People's Republic of China", "France"] and len(value[13792]) == 7
    cut_row, cut = results[12952]  # cut by the token limit: the complete items, and it says so
    assert cut.ok and "cut off" in cut.reason and len(cut.value) == 31
    assert cut.value[:2] == ["2009 nba finals", "1994 nba finals"]
    assert all(item in cut_row["response"] for item in cut.value)
    for row, outcome in results.values():  # refused: empty replies, or runaway ones with no complete item
        text = row["response"]
        assert outcome.ok or not text.strip() or ("', '" not in text and len(text) > 150), text


# --- TimeR4 rewrites -------------------------------------------------------------------------------------
def test_timer4_chatgpt_rewrites_are_answers_not_rewrites(recordings: Path) -> None:
    results = run_all("timer4.rewrite", read(recordings / "timer4_tq_chatgpt_rewrite.jsonl"))
    assert categories(results) == Counter(
        {"not_a_question": 2189, "apology": 67, "empty": 8, "no_new_time": 1, "unrelated": 1}
    )  # gpt-3.5 answered the question (or apologised) instead of rewriting it: nothing is accepted
    dickens = results[12947][1]
    assert not dickens.ok and dickens.reason.startswith("not a rewrite: not_a_question")
    for row, outcome in results.values():
        if outcome.category == "empty":  # the question continued with "?", then answered
            assert row["response"].lstrip().startswith("?")


# --- ARI action choice -----------------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"\s*([(),])\s*", r"\1", re.sub(r"[\s_]+", " ", text.strip().strip("$ ").casefold()))


def test_ari_gpt35_actions_read_what_the_model_wrote(recordings: Path) -> None:
    steps = [s for q in read(recordings / "ari_cronquestions_gpt35_actions.jsonl") for s in q["steps"]]
    assert len(steps) == 337
    read_ok: list[tuple[dict[str, Any], str]] = []
    refused: Counter[ActionRefusal] = Counter()
    for step in steps:
        actions, reply = step["candidate_actions"], step["response"]
        try:
            choice = parse_action_choice(reply, actions)
        except ActionRefused as exc:
            refused[exc.refusal] += 1
            written = re.search(r"\$([^$\n]+?\))\$", reply)
            assert written is not None  # each refusal is an explicit action …
            offered = {_norm(a) for a in actions if not TIME_PLACEHOLDER.search(a)}
            assert _norm(written.group(1)) not in offered  # … that was not offered
            continue
        read_ok.append((step, choice.written(actions)))
    assert len(read_ok) == 326 and refused == Counter({ActionRefusal.NOT_OFFERED: 11})
    for step, written in read_ok:  # never another action: what was read is what the reply wrote
        action = re.search(r"\$([^$\n]+?\))\$", step["response"])
        assert action is not None and _norm(action.group(1)) == _norm(written), step["response"]
    filled = sorted(w for _, w in read_ok if w.startswith(("get_after", "get_before")))
    assert filled == [
        "get_after({entities},1801)",
        "get_after({entities},2014)",
        "get_before({entities},1959)",
    ]


def test_ari_task_reads_the_authors_notation(recordings: Path) -> None:
    question = read(recordings / "ari_cronquestions_gpt35_actions.jsonl")[0]
    step = question["steps"][0]
    record = {"id": "0", "response": step["response"], "candidate_actions": step["candidate_actions"]}
    outcome = run_task(TASKS["ari.action"], record)
    assert outcome.ok and outcome.value == "get_tail_entity(Roberto Colombo,member of sports team,2000)"


# --- LPKG's official planning prompt -----------------------------------------------------------------------
def test_lpkg_official_demonstrations_parse_as_plans(recordings: Path) -> None:
    prompt = json.loads((recordings / "lpkg_official_planning_prompt.json").read_text(encoding="utf-8"))
    blocks = re.split(r"#{5,}\n# Example \d+:\n#{5,}\n", prompt["instruction"])[1:]
    assert len(blocks) == 10
    found = []
    for block in blocks:
        demo = block.split("#" * 19)[0]
        kind = re.search(r"### Question Type: (.*)", demo)
        assert kind is not None
        plan = parse_plan(demo)
        pattern = plan.pattern()
        found.append((kind.group(1), None if pattern is None else str(pattern), len(plan.sub_questions())))
        assert run_task(TASKS["lpkg.plan"], {"id": kind.group(1), "response": demo}).ok
    assert found == [
        ("One Projection", "1p", 1),
        ("Two Projection", "2p", 2),
        ("Three Projection", "3p", 3),
        ("Entity Replacement", None, 3),  # two answers in one sub-question: not one of LPKG's nine patterns
        ("Compare", "compare", 2),
        ("Two Intersection", "2i", 2),
        ("Three Intersection", "3i", 3),
        ("Two Union", "2u", 2),
        ("Projection then Two Intersection", "pi", 3),
        ("Two Intersection then Projection", "ip", 3),
    ]
