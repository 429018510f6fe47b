"""Shared pieces of the R3 tests: a small hand-written KG and a FakeLLM scripted per R3 prompt kind."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tkgqa.datasets.base import Question
from tkgqa.kg import Fact, TemporalKG
from tkgqa.llm import LLMRequest
from tkgqa.testing import FakeLLM
from tkgqa.time import TimePoint

KINDS: dict[str, str | tuple[str, ...]] = {
    "entities": (
        "You are a helpful assistant helping in finding",
        "helping in identifying whether a sentence",
    ),
    "axiom": "trying to give us",
    "prune": ("extract the facts that may help", "the relevant facts are"),
    "answer": "a number of general rules, and a list of knowledge graph triples",
    "need": "identify what other facts are required",
    "next": "Considering the provided information need",
    "option": "You check whether a recipe option",
    "choice": (
        "Given the request and the options",
        "You are a helpful assistant that is recommending recipes",
    ),
    "preference_axiom": "helping to find a proper recipe",
    "baseline": "You answer yes/no questions",
}

Reply = str | Callable[[str], str]


def kind_of(request: LLMRequest) -> str:
    system = request.messages[0].content
    for kind, markers in KINDS.items():
        if any(m in system for m in ((markers,) if isinstance(markers, str) else markers)):
            return kind
    raise AssertionError(f"unknown prompt: {system[:80]!r}")


def fact_id(user: str, text: str) -> str:
    """The id the prompt shows for the fact line containing ``text``."""
    m = re.search(r"\[(F\d+)\] [^\n]*" + re.escape(text), user)
    assert m is not None, f"{text!r} not listed in:\n{user}"
    return m.group(1)


class Script:
    """Replies per prompt kind, consumed in order (a reply may be a function of the user message)."""

    def __init__(self, **replies: list[Reply] | Reply) -> None:
        self.replies = {k: list(v) if isinstance(v, list) else [v] for k, v in replies.items()}
        self.seen: list[tuple[str, str]] = []
        self.llm = FakeLLM(self)

    def __call__(self, request: LLMRequest) -> str:
        kind = kind_of(request)
        user = "\n".join(m.content for m in request.messages if m.role == "user")  # the re-asks too
        self.seen.append((kind, request.messages[-1].content))
        queue = self.replies.get(kind)
        if not queue:
            raise AssertionError(f"no scripted reply left for {kind!r}; prompt:\n{user[-400:]}")
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return reply(user) if callable(reply) else reply

    def kinds(self) -> list[str]:
        return [k for k, _ in self.seen]


def small_kg() -> TemporalKG:
    facts = [
        Fact("Alma Reyes", "educated at", "Northbrook University"),
        Fact("Alma Reyes", "occupation", "chemist"),
        Fact("Alma Reyes", "date of birth", "1990-05-01", TimePoint(1990, 5, 1), TimePoint(1990, 5, 1)),
        Fact("Northbrook University", "mascot", "Rufus the Bulldog"),
        Fact("Northbrook University", "inception", "1850", TimePoint(1850), TimePoint(1850)),
        Fact("Kel Doran", "spouse", "Alma Reyes"),
    ]
    facts += [Fact("Alma Reyes", "award received", f"Prize number {i}") for i in range(12)]
    return TemporalKG(facts, labels={"1990-05-01": "1 May 1990"}, name="small")


def question(text: str = "Does the mascot of Alma Reyes's university eat kibble?", **kw: Any) -> Question:
    return Question(qid=kw.pop("qid", "q1"), text=text, answers=kw.pop("answers", ["yes"]), **kw)


AXIOM = (
    "Dogs eat kibble. Therefore, a helpful rule is:\nRule: The mascot must be a dog to eat kibble.\n"
    "Premises:\n- The mascot of the university Alma Reyes attended is a dog\nConclusion: it eats kibble."
)


def grounded_script() -> Script:
    """An R3 run that links Alma Reyes, states the axiom and answers "Yes" citing her education fact."""
    return Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        prune="Therefore, the relevant facts are: None",
        answer=lambda u: (
            f"Step 1: Alma Reyes studied at Northbrook. [{fact_id(u, 'educated at')}]\n"
            "Step 2: Its mascot is a bulldog, a dog. [R1, assumption]\nAnswer: Yes"
        ),
    )
