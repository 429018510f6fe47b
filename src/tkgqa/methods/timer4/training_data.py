"""Training pairs for TimeR4's time-aware retriever (§4.4; Algorithm 1: ``GenerateNegatives(G, Q, gt)``).

A pair is ``(question, gold fact)``: a dated KG fact that holds a gold answer of a **train/dev** question.
Two sources:

* :func:`mine_dataset_pairs` — questions with gold answers (e.g. TimeQuestions dev): the facts around the
  question's entities (given, else linked in the text) that hold a gold answer (an entity by label, a time
  at its own granularity: :func:`tkgqa.query.coverage.answer_covered`); those also meeting the time the
  question states (before/after/in, :func:`tkgqa.retrieval.temporal.parse_time_constraint`) first, then
  those joining the most question entities, then the most words shared with the question. At most
  ``per_question`` facts per question.
* :func:`mine_generated_pairs` — MultiTQ-style questions generated from the KG (`query.generate`;
  the shared MultiTQ copy has no train split with answers): the executor's evidence for the question's
  program, restricted to facts that hold a gold answer — the facts the answer was computed from.

The three negative types are then built by :func:`tkgqa.retrieval.training.build_training_examples`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from ...datasets.base import Question
from ...kg import Fact, KGStore
from ...query import QuestionLinker, answer_covered
from ...query.generate.questions import GeneratedQuestion, Pattern, generate_questions
from ...query.program.executor import Executor
from ...query.text.words import tokenize
from ...retrieval.temporal import parse_time_constraint, time_scores
from ...retrieval.verbalize import DEFAULT_VERBALIZER

Pair = tuple[str, Fact]


def _dated(fact: Fact) -> bool:
    return fact.start is not None or fact.end is not None


def _words(text: str) -> set[str]:
    return {t.text.lower() for t in tokenize(text)}


def mine_dataset_pairs(
    questions: Iterable[Question], kg: KGStore, *, per_question: int = 1, max_entities: int = 3
) -> list[Pair]:
    """``(question text, gold fact)`` pairs from questions with gold answers (see the module docstring)."""
    linker = QuestionLinker(max_entities)
    out: list[Pair] = []
    for q in questions:
        if not q.answers:
            continue
        facts: list[Fact] = []
        linked = linker(q, kg)
        for e in linked:
            facts.extend(kg.facts(subject=e))
            facts.extend(kg.facts(object=e))
        gold = [f for f in dict.fromkeys(facts) if _dated(f) and answer_covered(q.answers, [f], kg)]
        if not gold:
            continue
        constraint = parse_time_constraint(q.text)
        fits = (
            time_scores(constraint, gold, nearest=False) >= 0
            if constraint is not None and constraint.time is not None
            else [True] * len(gold)
        )
        words = _words(q.text)
        texts = DEFAULT_VERBALIZER.many(gold, kg)
        entities = set(linked)
        keys = [
            (not bool(fits[i]), -len({f.subject, f.object} & entities), -len(words & _words(texts[i])))
            for i, f in enumerate(gold)
        ]  # meets the question's time, joins the most question entities, shares the most words
        ranked = sorted(range(len(gold)), key=keys.__getitem__)
        out.extend((q.text, gold[i]) for i in ranked[:per_question])
    return out


def mine_generated_pairs(
    generated: Iterable[GeneratedQuestion], kg: KGStore, *, per_question: int = 1
) -> list[Pair]:
    """Pairs from KG-generated questions: the executor's evidence holding a gold answer."""
    out: list[Pair] = []
    for g in generated:
        evidence = Executor(kg).run(g.program).evidence
        gold = [f for f in evidence if _dated(f) and answer_covered(g.question.answers, [f], kg)]
        out.extend((g.question.text, f) for f in gold[:per_question])
    return out


def generated_pairs(
    kg: KGStore,
    n: int,
    *,
    seed: int = 0,
    max_answers: int = 5,
    patterns: Sequence[Pattern] = tuple(Pattern),
) -> tuple[list[Pair], list[GeneratedQuestion]]:
    """About ``n`` pairs from questions generated over ``kg``, spread over ``patterns`` (MultiTQ's types)."""
    per = max(1, -(-n // len(patterns)))
    generated = generate_questions(kg, {p: per for p in patterns}, seed=seed, max_answers=max_answers)
    pairs = mine_generated_pairs(generated, kg)
    random.Random(seed).shuffle(pairs)
    return pairs[:n], generated
