"""R3's parsers on the authors' own prompt files (``../shared/data/llm_recordings/r3_authors_prompts``, see
its PROVENANCE.md): every answer demonstration reads as the verdict and the cited facts it states, every
axiom demonstration as its rule; the paper preset loads these files at run time and sends them as few-shot
turns. Skipped with a reason when the shared data (or PyYAML, to read the files) is absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from r3_helpers import Script, question, small_kg

from tkgqa.errors import ParseError
from tkgqa.methods import resolve_method
from tkgqa.methods.r3.demos import AUTHORS_SUBDIR, PromptFile, read_prompt_file
from tkgqa.methods.r3.prompts import ours as P
from tkgqa.methods.r3.prompts import paper as PP

pytest.importorskip("yaml", reason="reading the authors' YAML prompt files needs PyYAML")

V = P.Verdict
# (verdict, facts cited in the order first cited — by their listed number) per answer demonstration.
ANSWERS: dict[str, list[tuple[P.Verdict, tuple[int, ...]]]] = {
    "prompts_decide_answer.yaml": [(V.FALSE, ()), (V.UNKNOWN, (1,)), (V.TRUE, (4, 7)), (V.TRUE, (5,))],
    "prompts_rev1_decide_answer.yaml": [
        (V.FALSE, (4, 8, 6, 5)),
        (V.UNKNOWN, (2, 6)),
        (V.TRUE, (4, 7)),
        (V.TRUE, (5,)),
        (V.TRUE, (1, 3, 6)),
    ],
    "prompts_Creak_rev2_decide_answer.yaml": [
        (V.FALSE, (3, 7, 1, 5)),
        (V.UNKNOWN, (2, 6)),
        (V.TRUE, (4, 7)),
        (V.TRUE, (5,)),
        (V.FALSE, (2,)),
    ],
}
# Premises per axiom demonstration of the first (IF … THEN …) format: split at upper-case AND.
IF_THEN_PREMISES = {"prompts_inference_rule_v4.yaml": [2, 1, 1]}
RULE_FILES = ("prompts_rev1_inference_rule_v4.yaml", "prompts_Creak_rev2_inference_rule_v4.yaml")


@pytest.fixture(scope="module")
def prompts_dir(shared_data: Path) -> Path:
    folder = shared_data / AUTHORS_SUBDIR
    if not folder.is_dir():
        pytest.skip(f"the authors' R3 prompt files are not at {folder}")
    return folder


def listed(block: str, label: str) -> list[tuple[int, str]]:
    """The ``N- text`` items of a demonstration's ``Facts:`` / ``General rules:`` block."""
    m = re.search(
        label + r"\s*:\s*(.*?)(?=\n\s*(?:Facts|General rules?|Entities)\s*:|\Z)", block, re.S | re.I
    )
    if m is None:
        return []
    items = re.findall(r"(?:^|\n)\s*(\d+)-\s*(.*?)(?=\n\s*\d+-|\Z)", m.group(1), re.S)
    if not items and m.group(1).strip():  # one rule written without a number
        return [(1, m.group(1).strip())]
    return [(int(n), " ".join(t.split())) for n, t in items]


def load(folder: Path, name: str) -> PromptFile:
    return read_prompt_file(folder / name)


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_every_answer_demonstration_reads_as_it_says(prompts_dir: Path, name: str) -> None:
    prompt = load(prompts_dir, name)
    assert len(prompt.demos) == len(ANSWERS[name])
    for demo, (verdict, cited) in zip(prompt.demos, ANSWERS[name], strict=True):
        facts = listed(demo.input, "Facts")
        rules = listed(demo.input, "General rules")
        fact_ids = [f"F{n}" for n, _ in facts]
        rule_ids = [f"R{n}" for n, _ in rules] or ["R1"]
        assert P.parse_verdict(demo.output) == verdict
        answer = PP.parse_paper_answer(demo.output, fact_ids, rule_ids, fact_texts=[t for _, t in facts])
        assert answer.verdict == verdict
        assert answer.cited_facts == tuple(f"F{n}" for n in cited), demo.output
        assert answer.steps and answer.steps[-1].text  # the reasoning, sentence by sentence


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_demonstration_citing_an_unlisted_fact_is_rejected(prompts_dir: Path, name: str) -> None:
    """The mechanical check on real text: list one fact fewer than a demonstration cites → ParseError."""
    for demo, (_, cited) in zip(load(prompts_dir, name).demos, ANSWERS[name], strict=True):
        if not cited:
            continue
        facts = [f"F{n}" for n, _ in listed(demo.input, "Facts")][: max(cited) - 1]
        with pytest.raises(ParseError, match="not among"):
            PP.parse_paper_answer(demo.output, facts, ["R1"])


@pytest.mark.parametrize("name", RULE_FILES)
def test_every_rule_demonstration_reads_as_its_rule(prompts_dir: Path, name: str) -> None:
    prompt = load(prompts_dir, name)
    assert prompt.demos
    for demo in prompt.demos:
        stated = demo.output.rsplit("Rule:", 1)[1].strip()
        axiom = P.parse_axiom(demo.output, hint_ok=True)
        assert not axiom.hint and axiom.rule == stated and " must " in axiom.rule
        assert "Therefore" not in axiom.rule and axiom.premises == (axiom.rule,)
        assert P.parse_axiom(demo.output) == axiom  # the same without the hint fallback


def test_if_then_axioms_read_as_premises_and_conclusion(prompts_dir: Path) -> None:
    for name, counts in IF_THEN_PREMISES.items():
        prompt = load(prompts_dir, name)
        for demo, n in zip(prompt.demos, counts, strict=True):
            axiom = P.parse_axiom(demo.output)
            assert axiom.rule.startswith("IF ") and len(axiom.premises) == n and axiom.conclusion
            assert all(p and "THEN" not in p for p in axiom.premises)


def test_the_paper_preset_sends_the_authors_demonstrations(prompts_dir: Path) -> None:
    rev1 = load(prompts_dir, "prompts_rev1_decide_answer.yaml")
    axioms = load(prompts_dir, "prompts_rev1_inference_rule_v4.yaml")
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom="Mascots of universities are often dogs. Therefore, a helpful rule is:\\n\nRule: The mascot "
        "must be a dog to eat kibble.",
        prune="Therefore, the relevant facts are: None",
        answer="Answer: Fact 1 tells us she studied at Northbrook University. Therefore, the answer is: I "
        "don't know.",
        need="nothing",
    )
    method = resolve_method(
        "r3", llm=script.llm, embedder="hashing", demos_dir=str(prompts_dir), breadth=1, max_depth=0
    )
    described = method.describe()
    assert described["preset"] == "paper"
    assert [d.split(":")[0] for d in described["deviations"]] == ["KG", "retrieval", "entity linker"]
    demos = described["demonstrations"]
    assert demos["source"] == "authors" and demos["files"]["answer"]["demos"] == len(rev1.demos)
    method.answer(question(), small_kg())
    sent = {kind: req for kind, req in zip(script.kinds(), script.llm.requests, strict=True)}
    answer_turns = sent["answer"].messages
    assert answer_turns[0].content == rev1.system
    assert [m.role for m in answer_turns[1:3]] == ["user", "assistant"]
    assert answer_turns[1].content == rev1.demos[0].input and answer_turns[2].content == rev1.demos[0].output
    assert answer_turns[-1].content.startswith("Question: Does the mascot")
    assert "\nFacts: 1- (" in answer_turns[-1].content
    axiom_turns = sent["axiom"].messages
    assert axiom_turns[0].content == axioms.system and len(axiom_turns) == 2 * len(axioms.demos) + 2


def test_claims_get_the_authors_claim_prompts(prompts_dir: Path) -> None:
    creak = load(prompts_dir, "prompts_Creak_rev2_decide_answer.yaml")
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom="Therefore, a helpful rule is:\\n\nRule: Alma Reyes must box to be a boxer.",
        prune="Therefore, the relevant facts are: None",
        answer="Answer: Fact 1 tells us she studied chemistry. Therefore, the answer is: No, she is not.",
    )
    claim = question(
        "Alma Reyes is a professional boxer.", qtype="claim", extra={"choices": ["true", "false"]}
    )
    method = resolve_method(
        "r3", llm=script.llm, embedder="hashing", demos_dir=str(prompts_dir), breadth=1, max_depth=0
    )
    answer = method.answer(claim, small_kg())
    assert answer.answers == ["false"]
    sent = dict(zip(script.kinds(), script.llm.requests, strict=True))["answer"].messages
    assert sent[0].content == creak.system and sent[-1].content.startswith("Sentence: Alma Reyes is")


def test_every_step_of_the_paper_preset_sends_the_authors_prompt(prompts_dir: Path) -> None:
    """Entities, axiom, pruning (with its few-shot examples), answer, missing evidence and next entity: each
    request is the authors' released prompt of that step (system text and every demonstration)."""
    files = {
        "entities": "prompts_rev1_identify_entities.yaml",
        "axiom": "prompts_rev1_inference_rule_v4.yaml",
        "prune": "prompts_rev1_relevant_facts.yaml",
        "answer": "prompts_rev1_decide_answer.yaml",
        "need": "prompts_rev1_identify_missing.yaml",
        "next": "prompts_rev1_decide_next_entity.yaml",
    }
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom="Therefore, a helpful rule is:\\n\nRule: The mascot must be a dog to eat kibble.",
        prune="Therefore, the relevant facts are: (Alma Reyes, educated at, Northbrook University)",
        answer="Answer: Fact 1 tells us where she studied. Therefore, the answer is: I don't know.",
        need="Answer: We need to know the mascot of Northbrook University.",
        next="Selected Entity: Northbrook University",
    )
    method = resolve_method(
        "r3", llm=script.llm, embedder="hashing", demos_dir=str(prompts_dir), breadth=1, max_depth=1
    )
    method.answer(question(), small_kg())
    sent = {}
    for kind, request in zip(script.kinds(), script.llm.requests, strict=True):
        sent.setdefault(kind, request.messages)
    assert set(files) <= set(sent), script.kinds()
    for kind, name in files.items():
        authors = load(prompts_dir, name)
        messages = sent[kind]
        assert messages[0].content == authors.system, kind
        assert len(messages) == 2 + 2 * len(authors.demos), kind  # system, the demonstrations, the request
        assert messages[-1].content.startswith("Question: Does the mascot"), kind
    assert "Proposed Answer: Fact 1 tells us" in sent["need"][-1].content
    assert "Previously chosen entities: Alma Reyes" in sent["next"][-1].content
    assert "missing" not in method.describe()["demonstrations"]


def test_recipe_mpr_is_one_six_way_choice_with_the_authors_prompt(prompts_dir: Path) -> None:
    from tkgqa.datasets import load_dataset
    from tkgqa.query import context_kg

    q = load_dataset("recipe_mpr", "personal_kg").questions[0]
    rule = "Rule: The user is allergic to peanuts, so she should not be recommended recipes with peanuts."
    script = Script(
        preference_axiom=f"Priya has a peanut allergy. Therefore, a useful rule is:\n{rule}",
        choice=lambda user: "Recipe 1 has no peanuts. Therefore, the selected recipe is: 1.",
    )
    method = resolve_method("r3", llm=script.llm, embedder="hashing", demos_dir=str(prompts_dir))
    answer = method.answer(q, context_kg(q))
    assert script.kinds() == ["preference_axiom", "choice"]
    choice = script.llm.requests[-1].messages
    assert choice[0].content == load(prompts_dir, "prompts_MPR_RRR_decide_answer.yaml").system
    assert "Recipe 1- " in choice[-1].content and "General rule: " in choice[-1].content
    pref = next(s for s in answer.trace if s["step"] == "preference")
    assert pref["chosen"] == "pk-a1" and "one choice among every option" in pref["choice_rule"]
    assert answer.answers == [q.extra["choices"][0]]  # recipe 1 as listed, chosen by the scripted reply
    assert choice[-1].content.count("Recipe ") >= 6  # the six options in one prompt


def test_selected_recipe_parser() -> None:
    assert PP.parse_selected_recipe("… Therefore, the selected recipe is: 3.", 6) == 2
    assert PP.parse_selected_recipe("Therefore, the selected recipe is: Recipe 6", 6) == 5
    with pytest.raises(ParseError):
        PP.parse_selected_recipe("Therefore, the selected recipe is: 7.", 6)
    with pytest.raises(ParseError):
        PP.parse_selected_recipe("I like recipe 2.", 6)
