"""Question subsets: stratified / random / first-n samples (ARI evaluates 200-question stratified samples)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from ..errors import ConfigError
from .base import Question

SampleMode = Literal["stratified", "random", "first"]
SAMPLE_MODES = ("stratified", "random", "first")


def stratum(question: Question, by: str) -> str:
    """The stratum of ``question``: the value of field ``by`` (lists joined with ``+``; missing → ``?``)."""
    value = getattr(question, by, None)
    if value is None:
        value = question.extra.get(by)
    if isinstance(value, list | tuple):
        return "+".join(sorted(map(str, value))) or "?"
    return "?" if value is None else str(value)


def sample_questions(
    questions: Sequence[Question], n: int, by: str = "qtype", seed: int = 0
) -> list[Question]:
    """A stratified sample of ``n`` questions: each stratum (value of ``by``) gets its proportional share
    (largest remainders break ties, so the sizes add up to ``n``), drawn with ``random.Random(seed)``.
    The sample keeps the original order; ``n >= len(questions)`` returns all of them."""
    if n < 0:
        raise ConfigError(f"sample size must be >= 0, got {n}")
    if n >= len(questions):
        return list(questions)
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(stratum(q, by), []).append(i)
    total = len(questions)
    quotas = {k: n * len(v) / total for k, v in groups.items()}
    sizes = {k: int(q) for k, q in quotas.items()}
    left = n - sum(sizes.values())
    for k in sorted(groups, key=lambda k: (-(quotas[k] - sizes[k]), k))[:left]:
        sizes[k] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for k in sorted(groups):
        chosen.extend(rng.sample(groups[k], sizes[k]))
    return [questions[i] for i in sorted(chosen)]


def select_questions(
    questions: Sequence[Question],
    limit: int | None = None,
    sample: str | None = None,
    seed: int = 0,
    by: str = "qtype",
) -> list[Question]:
    """``limit`` questions chosen by ``sample`` (``first`` (default), ``random`` or ``stratified`` by ``by``).
    Without ``limit`` every question is kept (a random/stratified sample then only fixes nothing)."""
    if sample is not None and sample not in SAMPLE_MODES:
        raise ConfigError(f"unknown sample mode {sample!r}; use one of {SAMPLE_MODES}")
    if limit is None or limit >= len(questions):
        return list(questions)
    if limit < 0:
        raise ConfigError(f"limit must be >= 0, got {limit}")
    if sample in (None, "first"):
        return list(questions[:limit])
    if sample == "random":
        idx = sorted(random.Random(seed).sample(range(len(questions)), limit))
        return [questions[i] for i in idx]
    return sample_questions(questions, limit, by=by, seed=seed)
