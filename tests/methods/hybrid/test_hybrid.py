"""The ``hybrid`` method: symbolic first, an LLM fallback only when it abstains (FakeLLM, demo KG)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import ConfigError
from tkgqa.kg import TemporalKG
from tkgqa.llm import USAGE_KEYS, AnswerUsage, Usage
from tkgqa.methods import Answer, resolve_method
from tkgqa.methods.hybrid import HybridMethod, parse_hybrid_spec
from tkgqa.testing import FakeLLM

ANSWERABLE = Question(qid="h1", text="Who visited China in November 2014?", answers=["Barack Obama"])
UNANSWERABLE = Question(qid="h2", text="Is Barack Obama tall?", answers=["yes"])


def route(answer: Answer) -> dict[str, Any]:
    assert answer.trace and answer.trace[0]["type"] == "route"
    return answer.trace[0]


def stages(answer: Answer) -> set[str]:
    return {step["stage"] for step in answer.trace[1:]}


def test_answerable_question_makes_no_llm_call(demo_kg: TemporalKG) -> None:
    fake = FakeLLM()
    ans = HybridMethod(llm=fake).answer(ANSWERABLE, demo_kg)
    assert ans.answers[0] == "Barack Obama" and not ans.abstained and ans.evidence
    assert fake.calls == 0
    r = route(ans)
    assert (r["route"], r["answered_by"], r["primary_abstained"]) == ("primary", "symbolic", False)
    assert "fallback" not in r and stages(ans) == {"primary"}
    assert any("program" in step for step in ans.trace)  # the symbolic program is still shown
    assert ans.usage.to_dict()["llm_calls"] == 0


def test_unanswerable_question_goes_to_the_fallback(demo_kg: TemporalKG) -> None:
    symbolic = resolve_method("symbolic").answer(UNANSWERABLE, demo_kg)
    assert symbolic.abstained  # the premise of this test
    fake = FakeLLM(['["Yes"]'])
    ans = HybridMethod(llm=fake, fallback="llm_only").answer(UNANSWERABLE, demo_kg)
    assert ans.answers == ["Yes"] and not ans.abstained
    assert fake.calls == 1
    r = route(ans)
    assert r["route"] == "fallback" and r["answered_by"] == "llm_only" and r["fallback"] == "llm_only"
    assert r["primary_abstained"] is True and r["primary_reason"] == symbolic.reason_text
    assert stages(ans) == {"primary", "fallback"}
    assert ans.usage.to_dict()["llm_calls"] == 1 and ans.usage.to_dict()["prompt_tokens"] > 0
    assert ans.raw_output == '["Yes"]'


def test_default_fallback_is_ari_with_the_llm_policy(demo_kg: TemporalKG) -> None:
    fake = FakeLLM()  # answers the first offered choice
    method = HybridMethod(llm=fake)
    assert method.fallback.name == "ari" and method.fallback.config.policy == "llm"  # type: ignore[attr-defined]
    ans = method.answer(UNANSWERABLE, demo_kg)
    assert fake.calls > 0
    r = route(ans)
    assert r["route"] == "fallback" and r["fallback"] == "ari" and r["primary_reason"]
    assert r["answered_by"] == ("ari" if ans.answers else None)
    assert any(step.get("type") == "setup" and step["stage"] == "fallback" for step in ans.trace)
    assert ans.usage.to_dict()["llm_calls"] == fake.calls
    assert method.describe()["fallback"]["method"] == "ari"


def test_both_abstain(demo_kg: TemporalKG) -> None:
    fake = FakeLLM(["I don't know.", "[]"])
    ans = HybridMethod(llm=fake, fallback="llm_only").answer(UNANSWERABLE, demo_kg)
    assert ans.abstained and not ans.answers
    assert ans.reason_text.startswith("symbolic: ") and "llm_only: unparsable" in ans.reason_text
    r = route(ans)
    assert r["route"] == "fallback" and r["answered_by"] is None and r["fallback_reason"]
    assert ans.usage.to_dict()["llm_calls"] == 2


def test_specs_and_options() -> None:
    assert parse_hybrid_spec("llm_only") == {"fallback": "llm_only"}
    assert parse_hybrid_spec("ari:policy=oracle") == {"fallback": "ari:policy=oracle"}
    assert parse_hybrid_spec("fallback=ari:policy=llm;t_max=3,llm=fake") == {
        "fallback": "ari:policy=llm;t_max=3",
        "llm": "fake",
    }
    m = resolve_method("hybrid:fallback=ari:policy=symbolic;t_max=3")
    assert isinstance(m, HybridMethod) and m.fallback.name == "ari"
    assert (m.fallback.config.policy, m.fallback.config.t_max) == ("symbolic", 3)  # type: ignore[attr-defined]
    m = resolve_method("hybrid:llm_only", llm="fake")
    assert m.fallback.name == "llm_only" and m.config.llm == "fake"  # type: ignore[attr-defined]
    m = resolve_method("hybrid", llm="fake", policy="symbolic")  # what `--llm/--policy` pass
    assert m.fallback.config.policy == "symbolic"  # type: ignore[attr-defined]
    assert m.describe()["config"] == {
        "primary": "symbolic",
        "primary_options": {},
        "fallback": "ari",
        "fallback_options": {},
        "llm": "fake",
        "policy": "symbolic",
    }


def test_dict_options_need_no_escaping() -> None:
    m = resolve_method("hybrid", fallback="ari", fallback_options={"policy": "symbolic", "t_max": 3})
    assert isinstance(m, HybridMethod) and m.fallback.name == "ari"
    assert (m.fallback.config.policy, m.fallback.config.t_max) == ("symbolic", 3)  # type: ignore[attr-defined]
    legacy = resolve_method("hybrid:fallback=ari:policy=symbolic;t_max=3")
    assert legacy.fallback.config == m.fallback.config  # type: ignore[attr-defined]
    # the fallback's own options win over the policy handed down; the primary takes its own too
    m = resolve_method(
        "hybrid",
        llm="fake",
        policy="llm",
        fallback_options={"policy": "oracle"},
        primary_options={"relax": False},
    )
    assert m.fallback.config.policy == "oracle"  # type: ignore[attr-defined]
    assert m.primary.config.relax is False  # type: ignore[attr-defined]
    # the description round-trips through the dict form
    again = resolve_method(m.describe()["method"], **m.describe()["config"])
    assert again.describe() == m.describe()
    with pytest.raises(ConfigError, match=r"cannot build the fallback 'ari'.*t_maks"):
        resolve_method("hybrid", fallback_options={"policy": "symbolic", "t_maks": 3})


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="pass an LLM"):
        resolve_method("hybrid")  # ari with policy llm needs one
    with pytest.raises(ConfigError, match="unknown option 'treshold' for the hybrid method; its options: "):
        resolve_method("hybrid:fallback=llm_only,treshold=0.5", llm="fake")
    with pytest.raises(ConfigError, match="cannot be 'hybrid'"):
        resolve_method("hybrid:fallback=hybrid", llm="fake")
    with pytest.raises(ConfigError, match="unknown hybrid option"):
        parse_hybrid_spec("fallback=ari,oops")


def test_answer_usage_adds_up_and_writes_the_form_of_its_parts() -> None:
    unpriced = AnswerUsage()
    assert unpriced.to_dict() == {
        "llm_calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "parse_failures": 0,
        "cost_usd": 0.0,
    }
    priced = AnswerUsage(Usage(calls=2, prompt_tokens=7), 0.5, priced=True)
    assert list(priced.to_dict()) == list(USAGE_KEYS)
    total = unpriced + priced
    assert total.priced and total.counts == Usage(calls=2, prompt_tokens=7) and total.cost_usd == 0.5
    # the key-wise sum of the two written forms, in the order of the parts (as merged before the type)
    assert list(total.to_dict().items()) == [
        ("llm_calls", 2),
        ("prompt_tokens", 7),
        ("completion_tokens", 0),
        ("parse_failures", 0),
        ("cost_usd", 0.5),
        ("cached_calls", 0),
    ]
    assert (priced + priced).to_dict()["llm_calls"] == 4 and total == unpriced + priced
    replayed = AnswerUsage(Usage(calls=1, replay_exact=1), priced=True).to_dict()
    assert replayed["replay_exact"] == 1 and replayed["replay_miss"] == 0


def test_eval_cli_on_a_jsonl_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    questions = tmp_path / "questions.jsonl"
    rows = [
        {"qid": q.qid, "question": q.text, "answers": q.answers, "answer_type": "entity"}
        for q in (ANSWERABLE, UNANSWERABLE)
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    args = ["eval", "--dataset", "jsonl", "--questions", str(questions), "--kg", "demo"]
    args += ["--method", "hybrid:llm_only", "--llm", "fake", "--output", str(out), "--no-progress", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n"] == 2 and report["method"]["method"] == "hybrid"
    assert report["method"]["fallback"]["method"] == "llm_only"
    results = {
        r["qid"]: r for r in map(json.loads, (out / "results.jsonl").read_text(encoding="utf-8").splitlines())
    }
    first, second = route_of(results["h1"]), route_of(results["h2"])
    assert first["answered_by"] == "symbolic" and results["h1"]["usage"]["llm_calls"] == 0
    assert second["route"] == "fallback" and second["answered_by"] == "llm_only"
    assert results["h2"]["usage"]["llm_calls"] == 1
    assert report["usage"]["llm_calls_per_question"] == pytest.approx(0.5)


def route_of(result: dict[str, Any]) -> dict[str, Any]:
    trace = result.get("trace") or result.get("answer", {}).get("trace")
    assert trace, f"no trace in the results row: {sorted(result)}"
    first: dict[str, Any] = trace[0]
    assert first["type"] == "route"
    return first
