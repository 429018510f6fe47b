"""Loading the real benchmark files (skipped when the shared data is absent); counts match PROVENANCE."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tkgqa.datasets import load_dataset, sample_questions


def test_multitq_gold_sample(shared_data: Path) -> None:
    ds = load_dataset("multitq", shared_data / "multitq")
    assert len(ds) == 350 and ds.meta["no_gold"] == 0
    assert ds.kg_path is not None and ds.kg_path.name == "full_partial.txt"
    assert {q.qlabel for q in ds} == {"Single", "Multiple"} and {q.answer_type for q in ds} == {
        "entity",
        "time",
    }
    assert all(q.answers for q in ds)
    no_answers = load_dataset(
        "multitq",
        shared_data / "multitq",
        questions=shared_data / "multitq/questions/test_questions_no_answers.json",
    )
    assert len(no_answers) > 30_000 and not any(q.answers for q in no_answers.questions[:100])


def test_timequestions_test_with_retrieved_facts(shared_data: Path) -> None:
    ds = load_dataset("timequestions", shared_data / "timequestions")
    assert len(ds) == 2266 and ds.meta["context"] == "retrieved" and ds.meta["missing_retrieved"] == 0
    assert all(q.context is not None for q in ds)
    meta = ds.meta
    assert meta["retrieved_facts"] == 23_942
    # every retrieved fact is accounted for: split, unsplit (reported with examples) or value-less
    assert (
        meta["context_facts"] + meta["unsplit_facts"] + meta["no_object_facts"] + meta["bad_time_facts"]
        == (meta["retrieved_facts"])
    )
    assert meta["unsplit_facts"] < 0.01 * meta["retrieved_facts"]
    assert len(meta["unsplit_examples"]) == min(10, meta["unsplit_facts"])
    types = Counter(t for q in ds for t in q.types)
    assert types == {"Explicit": 889, "Temp.Ans": 832, "Ordinal": 433, "Implicit": 205}
    first = ds.questions[0]
    assert first.answers == ["1994"] and first.context is not None
    assert any(f.subject == "Justin Bieber" and f.object == "date of birth" for f in first.context)
    assert sum("timer4_question" in q.extra for q in ds) > 100


def test_timequestions_dev_has_no_retrieved(shared_data: Path) -> None:
    ds = load_dataset("timequestions", shared_data / "timequestions", split="dev")
    assert len(ds) == 2265 and ds.meta["context"] == "kg" and not ds.has_context


def test_cronquestions_sample(shared_data: Path) -> None:
    ds = load_dataset("cronquestions", shared_data / "cronquestions")
    assert len(ds) == 139
    assert Counter(q.qlabel for q in ds) == {"complex": 76, "simple": 63}
    assert all(not any(a.startswith("Q") and a[1:].isdigit() for a in q.answers) for q in ds)
    assert all(len(a) == 4 for q in ds if q.answer_type == "time" for a in q.answers)
    ctx = load_dataset("cronquestions", shared_data / "cronquestions", context="retrieved")
    assert ctx.meta["retrieved_facts"] == 336 and ctx.meta["context_facts"] > 300


def test_clqa(shared_data: Path) -> None:
    ds = load_dataset("clqa", shared_data / "clqa_wiki")
    assert len(ds) == 840 and sum(len(q.answers) for q in ds) > 840
    sample = sample_questions(ds.questions, 200, by="qtype", seed=1)
    assert len(sample) == 200 and len({q.qtype for q in sample}) == 8
