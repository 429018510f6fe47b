"""Per-question context KGs are built in one place; per-KG resources are cached once per store."""

from __future__ import annotations

from tkgqa.datasets import Question
from tkgqa.eval.answering import KGs
from tkgqa.kg import Fact, TemporalKG
from tkgqa.methods.symbolic import SymbolicReasoner
from tkgqa.query import PerKG, context_kg
from tkgqa.time import TimePoint


def _question() -> Question:
    facts = [
        Fact("Paolo_Maldini", "member of sports team", "A.C._Milan", TimePoint(1984), TimePoint(2009)),
        Fact("Paolo_Maldini", "place of birth", "Milan", None, None),
    ]
    return Question(qid="q1", text="Which team did Paolo Maldini play for in 1990?", context=facts)


def test_the_method_and_the_runner_answer_over_the_same_context_kg() -> None:
    q = _question()
    via_method = SymbolicReasoner().answer(q, TemporalKG(name="shared"))
    kg, per_question = KGs(None, None, check_support=False).for_question(q)
    via_runner = SymbolicReasoner().answer(q, kg)
    assert per_question
    assert via_method.answers == via_runner.answers == ["A.C. Milan"]
    assert context_kg(q).label("A.C._Milan") == "A.C. Milan"


def test_per_kg_resources_are_built_once_and_rebuilt_after_appends() -> None:
    built: list[int] = []

    def build(kg: TemporalKG) -> int:
        built.append(len(kg))
        return len(kg)

    cache: PerKG[int] = PerKG(build, size=2)  # type: ignore[arg-type]
    a = TemporalKG([Fact("a", "r", "b", TimePoint(2000), TimePoint(2000))], name="a")
    assert cache.get(a) == 1 and cache.get(a) == 1 and built == [1]
    a.add([Fact("a", "r", "c", TimePoint(2001), TimePoint(2001))])
    assert cache.get(a) == 2 and built == [1, 2]  # appended facts: rebuilt
    b, c = TemporalKG(name="b"), TemporalKG(name="c")
    cache.get(b)
    cache.get(c)
    assert a not in cache  # least recently used dropped (size 2)


def test_context_names_are_stored_as_loaders_store_them_and_a_bad_one_is_skipped_and_counted() -> None:
    marked = Fact("Ada", "award received", "Commandeur des Arts et des Lettres\u200e", TimePoint(1990))
    inside = Fact("Ada", "award received", "Commandeur\u200bdes Arts", TimePoint(1991))
    q = Question(qid="q1", text="Which award did Ada receive in 1990?", context=[marked, inside])
    kg = context_kg(q)
    assert kg.has_entity("Commandeur des Arts et des Lettres")  # the trailing U+200E mark dropped
    assert len(kg) == 1 and kg.load_report is not None and kg.load_report.n_skipped == 1
    assert "U+200B" in kg.load_report.first_errors[0]
