"""Stratified / random / first-n question selection."""

from __future__ import annotations

from collections import Counter

import pytest

from tkgqa.datasets import Question, sample_questions, select_questions
from tkgqa.errors import ConfigError


def make(n_a: int, n_b: int, n_c: int) -> list[Question]:
    out = []
    for qtype, n in (("a", n_a), ("b", n_b), ("c", n_c)):
        out += [Question(qid=f"{qtype}{i}", text="?", qtype=qtype) for i in range(n)]
    return out


def test_stratified_is_proportional_ordered_and_deterministic() -> None:
    qs = make(60, 30, 10)
    s = sample_questions(qs, 20, by="qtype", seed=3)
    assert Counter(q.qtype for q in s) == {"a": 12, "b": 6, "c": 2}
    order = {q.qid: i for i, q in enumerate(qs)}
    assert [order[q.qid] for q in s] == sorted(order[q.qid] for q in s)
    assert [q.qid for q in s] == [q.qid for q in sample_questions(qs, 20, by="qtype", seed=3)]
    assert [q.qid for q in s] != [q.qid for q in sample_questions(qs, 20, by="qtype", seed=4)]


def test_stratified_rounding_adds_up() -> None:
    qs = make(5, 5, 5)
    for n in range(16):
        s = sample_questions(qs, n)
        assert len(s) == n and len({q.qid for q in s}) == n
    assert len(sample_questions(qs, 100)) == 15


def test_stratified_by_multilabel_types() -> None:
    qs = [Question(qid=str(i), text="?", types=["Explicit", "Ordinal"][: 1 + i % 2]) for i in range(10)]
    assert Counter("+".join(q.types) for q in sample_questions(qs, 4, by="types")) == {
        "Explicit": 2,
        "Explicit+Ordinal": 2,
    }


def test_select_questions() -> None:
    qs = make(6, 3, 1)
    assert select_questions(qs) == qs
    assert [q.qid for q in select_questions(qs, 3)] == ["a0", "a1", "a2"]
    assert [q.qid for q in select_questions(qs, 3, "first")] == ["a0", "a1", "a2"]
    r = select_questions(qs, 4, "random", seed=1)
    assert len(r) == 4 and r == select_questions(qs, 4, "random", seed=1)
    assert len(select_questions(qs, 5, "stratified")) == 5
    with pytest.raises(ConfigError):
        select_questions(qs, 3, "weird")
    with pytest.raises(ConfigError):
        sample_questions(qs, -1)
