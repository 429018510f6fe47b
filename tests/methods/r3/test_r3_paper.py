"""R3's paper preset (the default) with a scripted FakeLLM writing the paper's formats: the axiom prompt as
printed (a hint reply kept), pruning by copied triples (Eq. 4), the answer "Answer: … Therefore, the answer
is: …" citing facts in prose, its mechanical citation check, preference matching stopping at the first option
that satisfies every premise; each difference a single option with its deviation named; the grounding score
in report.json. Also the citation check on ids of any length (issue 23, item 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from r3_helpers import Script, question, small_kg

from tkgqa.datasets import load_dataset
from tkgqa.errors import ConfigError, ParseError
from tkgqa.eval import evaluate
from tkgqa.methods import resolve_method
from tkgqa.methods.r3 import R3Method
from tkgqa.methods.r3.prompts import ours as P
from tkgqa.methods.r3.prompts import paper as PP
from tkgqa.query import context_kg

PAPER_AXIOM = (
    "University mascots are often dogs, and dogs eat kibble. Therefore, a helpful rule is:\\n\n"
    "Rule: The mascot of Alma Reyes's university must be a dog to eat kibble."
)


def number(user: str, text: str) -> int:
    """The listed number (``3- (…)``) of the fact line containing ``text``."""
    m = re.search(r"(?:^|\n|Facts: )(\d+)- [^\n]*" + re.escape(text), user)
    assert m is not None, f"{text!r} not listed in:\n{user}"
    return int(m.group(1))


@pytest.fixture(autouse=True)
def _no_shared_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The authors' prompt files are looked for where there are none (a data root without r3-prompts)."""
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "shared"))
    monkeypatch.chdir(tmp_path)


def paper_r3(script: Script, tmp_path: Path, **options: object) -> R3Method:
    """The default preset with our demonstrations in the paper's format (the authors' files are absent)."""
    options.setdefault("demos", "ours")
    method = resolve_method("r3", llm=script.llm, embedder="hashing", **options)
    assert isinstance(method, R3Method)
    return method


def step(answer: object, name: str) -> dict:
    return [s for s in answer.trace if s.get("step") == name][-1]  # type: ignore[attr-defined]


def test_the_paper_preset_is_the_default_and_stops_without_the_authors_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tkgqa data fetch r3-prompts.*demos=ours"):
        resolve_method("r3", llm=Script().llm, embedder="hashing")  # never a silent swap to ours
    method = paper_r3(Script(), tmp_path)
    described = method.describe()
    assert described["preset"] == "paper" and method.config.answer_prompt == "paper"
    assert (method.config.llm_pick, method.config.choice_rule, method.config.require_citation) == (
        "facts",
        "select",
        False,
    )
    assert described["demonstrations"]["source"] == "ours"
    assert [d.split(":")[0] for d in described["deviations"]] == [
        "demos=ours", "KG", "retrieval", "entity linker"
    ]  # fmt: skip
    assert "fallbacks" not in described  # asked for, not fallen back to
    with pytest.raises(ConfigError, match="demos_dir"):
        resolve_method("r3", embedder="hashing", demos_dir=str(tmp_path / "missing"))


def test_paper_run_copied_triples_prose_citations_and_verdict(tmp_path: Path) -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=PAPER_AXIOM,
        prune=lambda u: (
            "They may help. Therefore, the relevant facts are: (Alma Reyes, award received, Prize number 11)"
        ),
        answer=lambda u: (
            f"Answer: General rule 1 tells us the mascot must be a dog. Fact {number(u, 'educated at')} "
            "tells us she studied at Northbrook University, whose mascot is plausibly a bulldog. "
            "Therefore, the answer is: Yes, it eats kibble."
        ),
    )
    answer = paper_r3(script, tmp_path, top_k=3).answer(question(), small_kg())
    assert answer.answers == ["yes"] and not answer.abstained
    assert [(f.subject, f.relation) for f in answer.evidence] == [("Alma Reyes", "educated at")]
    node = step(answer, "r3_tree")["branches"][0]["nodes"][0]
    table = step(answer, "facts")["table"]
    assert [table[i]["object"] for i in node["llm_picked"]] == ["Prize number 11"]  # the copied triple
    grounding = step(answer, "grounding")
    assert [s["kind"] for s in grounding["steps"]] == ["axiom", "fact", "reasoning"]
    axiom_prompt = next(text for kind, text in script.seen if kind == "axiom")
    assert axiom_prompt.startswith("Question: Does the mascot") and "Entities: Alma Reyes" in axiom_prompt
    sent = script.llm.requests[1].messages  # the axiom request
    assert "If you can't produce a helpful rule" in sent[0].content and "Premises" not in sent[0].content
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]  # our demonstration


def test_a_prose_citation_of_an_unlisted_fact_is_rejected_and_reasked(tmp_path: Path) -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=PAPER_AXIOM,
        prune="Therefore, the relevant facts are: None",
        answer=[
            "Answer: Fact 99 tells us the mascot is a dog. Therefore, the answer is: Yes.",
            "Answer: Fact 1 tells us where she studied. Therefore, the answer is: No.",
        ],
    )
    answer = paper_r3(script, tmp_path).answer(question(), small_kg())
    assert answer.answers == ["no"]
    node = step(answer, "r3_tree")["branches"][0]["nodes"][0]
    assert (
        len(node["rejected"]) == 1 and "cites Fact 99, which is not among the listed" in node["rejected"][0]
    )
    assert answer.usage.to_dict()["parse_failures"] == 1


def test_a_hint_is_the_paper_axiom_but_ours_asks_for_a_rule(tmp_path: Path) -> None:
    hint = "Kibble is dry food for dogs; a mascot is an animal representing a university."
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=hint,
        prune="None",
        answer="Answer: Nothing tells us. Therefore, the answer is: I don't know.",
        need="nothing",
    )
    answer = paper_r3(script, tmp_path, breadth=1).answer(question(), small_kg())
    branch = step(answer, "r3_tree")["branches"][0]
    assert branch["axiom"] == {"rule": hint, "premises": [hint], "conclusion": "", "hint": True}
    assert f"axiom R1 (a hint, no rule): {hint}" in step(answer, "explanation")["lines"]
    ours = paper_r3(script, tmp_path, breadth=1, axiom_prompt="ours").answer(question(), small_kg())
    assert "axiom unparsable" in step(ours, "r3_tree")["branches"][0]["error"]


@pytest.mark.parametrize(
    ("option", "value", "deviation"),
    [
        ("axiom_prompt", "ours", "axiom_prompt=ours"),
        ("answer_prompt", "ours", "answer_prompt=ours"),
        ("llm_pick", "relations", "llm_pick=relations"),
        ("require_citation", True, "require_citation=true"),
        ("choice_rule", "rank", "choice_rule=rank"),
    ],
)
def test_each_difference_is_one_option_and_named(
    tmp_path: Path, option: str, value: object, deviation: str
) -> None:
    method = paper_r3(Script(), tmp_path, demos="ours", **{option: value})
    standing = {"KG", "retrieval", "entity linker"}  # in force in every preset (the data, linker, retriever)
    assert {d.split(":")[0] for d in method.describe()["deviations"]} == {"demos=ours", deviation, *standing}
    ours = resolve_method("r3", embedder="hashing", preset="ours")
    assert len(ours.describe()["deviations"]) == 6 + 3 and "demonstrations" in ours.describe()


def test_preference_stops_at_the_first_option_satisfying_every_premise(tmp_path: Path) -> None:
    q = load_dataset("recipe_mpr", "personal_kg").questions[0]
    kg = context_kg(q)
    axiom = "Therefore, a helpful rule is:\nRule: The recipe must suit Priya."
    first = Script(axiom=axiom, option="P1: satisfied")
    answer = paper_r3(first, tmp_path).answer(q, kg)
    pref = step(answer, "preference")
    assert first.kinds() == ["axiom", "option"] and len(pref["options"]) == 1
    assert answer.answers == [q.extra["options"][0]["text"]] and pref["chosen"] == q.extra["options"][0]["id"]
    assert pref["choice_rule"] == "first option satisfying every premise"
    ranked = Script(axiom=axiom, option="P1: satisfied")
    paper_r3(ranked, tmp_path, choice_rule="rank").answer(q, kg)
    assert ranked.kinds().count("option") == len(q.extra["options"])


def test_report_json_has_the_preset_deviations_and_grounding(tmp_path: Path) -> None:
    entry = {
        "id": "S6",
        "query": "Does the mascot of Alma Reyes's university eat kibble?",
        "answer": True,
        "KG Entities": {"Alma Reyes": "Q1"},
        "Inference Rule": "The mascot must be a dog.",
        "KG Triples": "1- (Alma Reyes, educated at, Northbrook University), "
        "2- (Northbrook University, mascot, Rufus the Bulldog)",
        "Reasoning Steps": [],
        "Reasoning Strategy": ["biological"],
    }
    (tmp_path / "CR-LT-QA.json").write_text(json.dumps([entry]), encoding="utf-8")
    ds = load_dataset("crlt_qa", tmp_path)
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=PAPER_AXIOM,
        answer=lambda u: (
            f"Answer: Fact {number(u, 'educated at')} tells us where she studied. Therefore, "
            "the answer is: Yes."
        ),
    )
    method = paper_r3(script, tmp_path, llm_pick="off")
    report = evaluate(method, ds, None, tmp_path / "run", progress=False, check_support=False)
    data = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    assert report.n == 1 and data["method"]["preset"] == "paper"
    assert any(d.startswith("llm_pick=off") for d in data["method"]["deviations"])
    metrics = data["method_metrics"]
    assert metrics["grounding"] == {
        "n": 1,
        "answered": 1,
        "grounded": 1,
        "score_answered": 1.0,
        "score_all": 1.0,
    }
    assert metrics["citation_rejections"] == 0 and metrics["answered_at_depth"] == {"0": 1}


# --- the citation check on ids of any length (issue 23, item 4) ------------------------------------------
FACTS = {"F1", "F2", "F9"}


@pytest.mark.parametrize("cited", ["F9, F12345", "F9, F1234567890123", "F9 F12x", "F9, F09", "F9, Fact 12"])
def test_a_cited_id_that_is_not_listed_is_rejected_whatever_its_form(cited: str) -> None:
    text = f"Step 1: The mascot is a dog. [{cited}]\nAnswer: Yes"
    with pytest.raises(ParseError, match="not among the retrieved facts"):
        P.parse_grounded_answer(text, FACTS)


def test_listed_ids_in_any_case_are_read_and_an_uncited_step_is_not_an_assumption() -> None:
    answer = P.parse_grounded_answer("Step 1: Dogs eat kibble. [f9]\nStep 2: So yes.\nAnswer: Yes", FACTS)
    assert answer.cited_facts == ("F9",) and [s.kind for s in answer.steps] == ["fact", "reasoning"]
    with pytest.raises(ParseError, match="unknown rule R12345"):
        P.parse_grounded_answer("Step 1: A rule. [F1, R12345]\nAnswer: Yes", FACTS, {"R1"})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=4))
def test_the_grounding_check_is_exact_for_ids_of_any_length(numbers: list[int]) -> None:
    cited = [f"F{n}" for n in numbers]
    text = f"Step 1: reasons [{', '.join(cited)}]\nAnswer: Yes"
    if set(cited) <= FACTS:
        assert set(P.parse_grounded_answer(text, FACTS).cited_facts) == set(cited)
    else:
        with pytest.raises(ParseError, match="not among the retrieved facts"):
            P.parse_grounded_answer(text, FACTS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=4))
def test_the_prose_check_is_exact(numbers: list[int]) -> None:
    ids = ["F4", "F8", "F15"]  # listed as 1-, 2-, 3-
    text = "Answer: " + " ".join(f"Fact {n} tells us something." for n in numbers) + " Therefore, the answer "
    text += "is: No."
    if all(1 <= n <= 3 for n in numbers):
        answer = PP.parse_paper_answer(text, ids)
        assert set(answer.cited_facts) == {ids[n - 1] for n in numbers}
    else:
        with pytest.raises(ParseError, match="not among the listed facts"):
            PP.parse_paper_answer(text, ids)


def test_quoted_triples_cite_the_listed_fact_they_reproduce() -> None:
    texts = ["(Mina Ahadi, religion or worldview, atheism)", "(Mina Ahadi, occupation, activist)"]
    ok = 'Answer: Fact "(Mina Ahadi, religion or worldview, Atheism)" says so. Therefore, the answer is: No'
    assert PP.parse_paper_answer(ok, ["F1", "F2"], fact_texts=texts).cited_facts == ("F1",)
    bad = "Answer: Fact “(Mina Ahadi, religion, Christianity)” tells us so. Therefore, the answer is: Yes"
    with pytest.raises(ParseError, match="not among the listed facts"):
        PP.parse_paper_answer(bad, ["F1", "F2"], fact_texts=texts)


def test_copied_triples_are_read_as_the_listed_facts() -> None:
    texts = ["(A, b, C)", "(A, d, E; start time: 1990)"]
    assert PP.parse_copied_facts(
        "Therefore, the relevant facts are: (a, d, e; start time: 1990), (A, b, C)", texts
    ) == [
        1,
        0,
    ]
    assert PP.parse_copied_facts("Therefore, the relevant facts are:\n1- (A, b, C)\n(X, y, Z)", texts) == [0]
    assert PP.parse_copied_facts("Therefore, the relevant facts are: None", texts) == []
    with pytest.raises(ParseError, match="no listed fact copied"):
        PP.parse_copied_facts("Therefore, the relevant facts are: (X, y, Z)", texts)


_TEXTS = st.text(max_size=200) | st.lists(
    st.sampled_from(
        [
            "Answer:",
            "Fact",
            "Facts",
            "1",
            "2",
            "99",
            "and",
            ",",
            "General rule",
            "Therefore, the answer is:",
            "Yes",
            "No",
            "I don't know",
            "“(",
            ")”",
            "(A, b, C)",
            "\n",
            ".",
            "Rule:",
            "IF",
            "THEN",
            "AND",
        ]
    ),
    max_size=30,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_paper_parsers_raise_only_parse_errors(text: str) -> None:
    for parse in (
        lambda t: PP.parse_paper_answer(t, ["F1", "F2"], ["R1"], fact_texts=["(A, b, C)", "(A, d, E)"]),
        lambda t: PP.parse_copied_facts(t, ["(A, b, C)"]),
        lambda t: P.parse_axiom(t, hint_ok=True),
        P.parse_axiom,
        P.parse_verdict,
    ):
        try:
            parse(text)
        except ParseError as exc:
            assert exc.raw == text
