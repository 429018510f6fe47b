"""R3 on preference matching (the bundled personalised examples): per-option premise checks with cited facts
(LLM judge, scripted), the offline embedding judge, the option chosen and the trace."""

from __future__ import annotations

import re

from r3_helpers import Script

from tkgqa.datasets import load_dataset
from tkgqa.methods import resolve_method
from tkgqa.methods.r3 import grounding_of
from tkgqa.methods.r3.preference import OptionResult, choose
from tkgqa.methods.r3.prompts.ours import PremiseCheck, PremiseStatus
from tkgqa.methods.r3.task import Option
from tkgqa.query import context_kg

PREF_AXIOM = (
    "Therefore, a helpful rule is:\nRule: The recipe must be a quick creamy vegetarian curry without peanuts "
    "to suit Priya.\nPremises:\n- It is a creamy curry\n- It is quick to make\n- It has no meat\n- It has no "
    "peanuts\nConclusion: Priya would like it."
)


def judge(user: str) -> str:
    """A scripted judge that reads the option's facts from the prompt (as a model would)."""
    option = re.search(r"Option: (.*)", user)
    assert option is not None
    text = option.group(1)

    def fid(word: str) -> str:
        m = re.search(r"\[(F\d+)\] \(recipe [^,]+, contains, " + word, user)
        return f" [{m.group(1)}]" if m else ""

    meat = fid("chicken") or fid("lamb")
    nuts = fid("peanuts")
    allergy = re.search(r"\[(F\d+)\] \(Priya, medical condition, peanut allergy", user)
    return "\n".join(
        [
            f"P1: {'satisfied' if 'curry' in text.lower() else 'violated'}",
            f"P2: {'satisfied' if 'minutes' in text else 'unknown'}",
            f"P3: {'violated' + meat if meat else 'satisfied'}",
            f"P4: {'violated' + nuts if nuts else 'satisfied'}"
            + (f" [{allergy.group(1)}]" if nuts and allergy else ""),
        ]
    )


def test_llm_judge_picks_the_option_that_satisfies_query_and_personal_kg() -> None:
    q = load_dataset("recipe_mpr", "personal_kg").questions[0]
    kg = context_kg(q)
    script = Script(axiom=PREF_AXIOM, option=judge)
    answer = resolve_method("r3", llm=script.llm, embedder="hashing", preset="ours").answer(q, kg)
    assert answer.answers == q.answers  # the chickpea curry, not the korma (meat) or the Thai curry (peanuts)
    pref = next(s for s in answer.trace if s["step"] == "preference")
    by_id = {o["option"]: o for o in pref["options"]}
    assert pref["chosen"] == "pk-a1" and by_id["pk-a1"]["violated"] == 0 and by_id["pk-a1"]["satisfied"] == 4
    assert by_id["pk-a2"]["violated"] >= 1 and by_id["pk-a3"]["violated"] >= 1
    assert by_id["pk-a3"]["checks"][3]["facts"]  # the peanut violation cites its facts
    assert script.kinds() == ["axiom"] + ["option"] * 6
    assert "(Priya, medical condition, peanut allergy)" in script.seen[0][1]  # personal KG shown to the axiom
    lines = next(s for s in answer.trace if s["step"] == "explanation")["lines"]
    assert lines[-1] == f"answer: {q.answers[0]}"
    assert grounding_of(answer, kg).answered


def test_embedding_judge_runs_offline() -> None:
    q = load_dataset("recipe_mpr", "personal_kg").questions[1]
    answer = resolve_method("r3", judge="embedding", embedder="hashing", preset="ours").answer(
        q, context_kg(q)
    )
    assert len(answer.answers) == 1 and answer.answers[0] in q.extra["choices"]
    pref = next(s for s in answer.trace if s["step"] == "preference")
    assert pref["judge"] == "embedding" and all(len(o["scores"]) == 1 for o in pref["options"])
    assert answer.usage.to_dict()["llm_calls"] == 0


def test_choose_prefers_no_violations_then_satisfied_then_similarity() -> None:
    def result(statuses: list[PremiseStatus], score: float = 0.0) -> OptionResult:
        r = OptionResult(Option("x", "x"), checks=[PremiseCheck(i, s) for i, s in enumerate(statuses, 1)])
        r.scores = [score]
        return r

    S, V, U = PremiseStatus.SATISFIED, PremiseStatus.VIOLATED, PremiseStatus.UNKNOWN
    assert choose([result([S, V]), result([S, U]), result([S, S])]) == 2
    assert choose([result([U, U], 0.2), result([U, U], 0.9)]) == 1
    assert choose([OptionResult(Option("a", "a"))]) is None
