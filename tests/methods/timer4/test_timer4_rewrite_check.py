"""TimeR4's rewrite check: what the model proposes is a rewrite of the question, or it is refused with a
typed reason and the original question stays (issue 19: gpt-3.5 mostly answered instead of rewriting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkgqa.datasets.base import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.timer4 import RewriteVerdict, TimeR4Method, accept_rewrite, check_rewrite
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

IMPLICIT = "After Vietnam, who was the first to praise Juan Carlos I?"
EXPLICIT = "After 2006-02-22, who was the first to praise Juan Carlos I?"
DICKENS = (
    'The first book Charles Dickens wrote was "The Pickwick Papers," which was originally published as a '
    "serial in 1836."
)


@pytest.mark.parametrize(
    ("original", "proposed", "verdict"),
    [
        (IMPLICIT, EXPLICIT, RewriteVerdict.ACCEPTED),
        ("what team did michael jordan play for after baseball",
         "what team did michael jordan play for after 1995", RewriteVerdict.ACCEPTED),
        ("what was the first book charles dickens wrote",
         DICKENS, RewriteVerdict.NOT_A_QUESTION),
        ("what time is justin biebers birthday", "Justin Bieber's birthday is on March 1st.",
         RewriteVerdict.NOT_A_QUESTION),
        ("what was jorge luis borges awarded in 1971",
         "In 1971, Jorge Luis Borges was awarded the Jerusalem Prize.", RewriteVerdict.NOT_A_QUESTION),
        ("on what date did geoffrey boycott join the gauteng cricket team",
         "Sorry, I could not find information about Geoffrey Boycott joining the Gauteng team in 1990.",
         RewriteVerdict.APOLOGY),
        ("in the end of 1979, what school did john roberts attend",
         "I'm sorry, but I can't provide specific information about individuals.", RewriteVerdict.APOLOGY),
        (IMPLICIT, "Who won the football world cup in 2006?", RewriteVerdict.UNRELATED),
        (IMPLICIT, IMPLICIT, RewriteVerdict.UNCHANGED),
        (IMPLICIT, "['France']", RewriteVerdict.STRUCTURED),
        (IMPLICIT, "", RewriteVerdict.EMPTY),
        (IMPLICIT, "After Vietnam, who first praised Juan Carlos I?", RewriteVerdict.NO_NEW_TIME),
    ],
)  # fmt: skip
def test_check_rewrite(original: str, proposed: str, verdict: RewriteVerdict) -> None:
    check = check_rewrite(original, proposed)
    assert check.verdict is verdict
    assert accept_rewrite(original, proposed) is (verdict is RewriteVerdict.ACCEPTED)
    assert check.reason().startswith(str(verdict))


def test_a_refused_rewrite_keeps_the_question_and_the_trace_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    t = parse_time
    kg = TemporalKG(
        [Fact("Juan_Carlos_I", "Praise_or_endorse", "Vietnam", t("2006-02-22"), t("2006-02-22")),
         Fact("France", "Praise_or_endorse", "Juan_Carlos_I", t("2006-03-01"), t("2006-03-01"))],
        name="praise",
    )  # fmt: skip
    answer_sentence = "The first to praise Juan Carlos I after Vietnam was France, on 2006-03-01."
    llm = FakeLLM([answer_sentence, "['France']"])
    answer = TimeR4Method(llm=llm, embedder="hashing", cache_embeddings=False).answer(
        Question(qid="q", text=IMPLICIT), kg
    )
    rewrite = answer.trace[1]
    assert rewrite["accepted"] is False and rewrite["rewritten"] == IMPLICIT
    assert rewrite["proposed"] == answer_sentence and rewrite["refused"].startswith("not_a_question")
    assert llm.requests[1].messages[0].content.endswith(f"Question: {IMPLICIT}")
