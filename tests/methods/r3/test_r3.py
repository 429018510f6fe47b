"""R3 with a scripted FakeLLM for every step: entity extraction (each source reported), the axiom, pruning,
the grounded answer and its mechanical check (a citation of an unlisted fact is rejected and re-asked), the
tree search on "I don't know", parse failures, backend errors, options."""

from __future__ import annotations

import pytest
from r3_helpers import AXIOM, Script, fact_id, grounded_script, question, small_kg

from tkgqa.errors import ConfigError, LLMError
from tkgqa.llm import LLMRequest
from tkgqa.methods import resolve_method
from tkgqa.methods.r3 import R3Method, grounding_of
from tkgqa.testing import FakeLLM


def r3(script: Script, **options: object) -> R3Method:
    """R3 with our prompts and formats (``preset=ours``: these tests pin today's behaviour; the paper preset
    is tested in test_r3_paper.py)."""
    options.setdefault("preset", "ours")
    method = resolve_method("r3", llm=script.llm, embedder="hashing", **options)
    assert isinstance(method, R3Method)
    return method


def step(answer: object, name: str) -> dict:
    found = [s for s in answer.trace if s.get("step") == name]  # type: ignore[attr-defined]
    assert found, f"no {name} step"
    return found[-1]


def test_grounded_answer_at_depth_zero() -> None:
    script = grounded_script()
    kg = small_kg()
    answer = r3(script, llm_pick="facts").answer(question(), kg)
    assert answer.answers == ["yes"] and not answer.abstained
    assert [(f.subject, f.relation) for f in answer.evidence] == [("Alma Reyes", "educated at")]
    entities = step(answer, "entities")
    assert entities["linker"] == ["Alma Reyes"] and entities["llm"] == ["Alma Reyes"]
    tree = step(answer, "r3_tree")
    assert tree["answered_at"] == {"branch": 0, "depth": 0} and tree["verdict"] == "true"
    (branch,) = tree["branches"]
    assert branch["axiom"]["premises"] == ["The mascot of the university Alma Reyes attended is a dog"]
    node = branch["nodes"][0]
    assert len(node["added"]) == 10 and node["rejected"] == []  # top_k of Alma's 15 facts
    assert step(answer, "grounding")["cited_facts"][0]["object"] == "Northbrook University"
    assert any(
        line.startswith("axiom R1: The mascot must be a dog") for line in step(answer, "explanation")["lines"]
    )
    assert script.kinds() == ["entities", "axiom", "prune", "answer"]
    assert answer.usage.to_dict()["llm_calls"] == 4
    g = grounding_of(answer, kg)
    assert g.grounded and g.cited == 1


def test_a_step_citing_an_unlisted_fact_is_rejected_and_reasked() -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer=[
            "Step 1: Her university's mascot is a bulldog. [F99]\nAnswer: Yes",
            lambda u: f"Step 1: She studied at Northbrook. [{fact_id(u, 'educated at')}]\nAnswer: Yes",
        ],
    )
    answer = r3(script, llm_pick="off").answer(question(), small_kg())
    assert answer.answers == ["yes"]
    node = step(answer, "r3_tree")["branches"][0]["nodes"][0]
    assert (
        len(node["rejected"]) == 1
        and "cites F99, which is not among the retrieved facts" in node["rejected"][0]
    )
    assert answer.usage.to_dict()["parse_failures"] == 1
    # the re-ask tells the model why
    reask = [r for r in script.llm.requests if "not among the retrieved facts" in r.messages[-1].content]
    assert len(reask) == 1


def test_tree_search_expands_the_missing_entity() -> None:
    def answer_after_expansion(user: str) -> str:
        if "Rufus" not in user:
            return "Step 1: Nothing about a mascot. [assumption]\nAnswer: I dont know"
        return f"Step 1: The mascot is Rufus the Bulldog. [{fact_id(user, 'Rufus')}]\nAnswer: Yes"

    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer=answer_after_expansion,
        need="We need to know the mascot of Northbrook University.",
        next="Entity: Northbrook University",
    )
    answer = r3(script, llm_pick="off", direction="head").answer(question(), small_kg())
    assert answer.answers == ["yes"]
    tree = step(answer, "r3_tree")
    assert tree["answered_at"] == {"branch": 0, "depth": 1}
    first, second = tree["branches"][0]["nodes"]
    assert first["verdict"] == "unknown" and first["missing"]["expanded"] == "Northbrook University"
    assert second["entities"] == ["Alma Reyes", "Northbrook University"] and second["added"]
    assert script.kinds() == ["entities", "axiom", "answer", "need", "next", "answer"]
    assert "Previously chosen entities: Alma Reyes" in script.seen[4][1]


def test_depth_zero_and_breadth_give_up_with_a_reason() -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer="Step 1: unclear [assumption]\nAnswer: I dont know",
    )
    answer = r3(script, max_depth=0, breadth=2, llm_pick="off").answer(question(), small_kg())
    assert answer.abstained and answer.reason_text == "no grounded answer within depth 0 and 2 branch(es)"
    assert script.kinds() == ["entities", "axiom", "answer", "axiom", "answer"]
    assert "Rules already tried" in script.seen[3][1]  # the second branch asks for a new axiom
    assert [len(b["nodes"]) for b in step(answer, "r3_tree")["branches"]] == [1, 1]
    second_answer_prompt = script.seen[4][1]
    assert "[R1]" in second_answer_prompt and "[R2]" in second_answer_prompt


def test_the_search_stops_when_nothing_is_missing_or_the_entity_is_unknown() -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer="Answer: I dont know",
        need=["nothing", "We need to know about Atlantis."],
        next="Entity: Atlantis",
    )
    answer = r3(script, llm_pick="off", breadth=2).answer(question(), small_kg())
    assert answer.abstained
    b1, b2 = step(answer, "r3_tree")["branches"]
    assert b1["nodes"][0]["note"] == "the model found nothing missing"
    assert b2["nodes"][0]["note"] == "'Atlantis' is not a KG entity"


def test_unparsable_replies_are_reported_not_crashing() -> None:
    script = Script(entities="", axiom="I would rather not.", answer="Answer: Yes")
    answer = r3(script, breadth=1).answer(question(), small_kg())
    assert answer.abstained and answer.reason_text == "no axiom could be parsed from the model's replies"
    entities = step(answer, "entities")
    assert entities["llm_names"] == [] and "no entity names" in entities["llm_error"]
    assert entities["union"] == ["Alma Reyes"]  # the linker still found her
    assert "axiom unparsable" in step(answer, "r3_tree")["branches"][0]["error"]
    assert answer.usage.to_dict()["parse_failures"] == 4  # two prompts, each tried twice


def test_every_answer_attempt_rejected_counts_as_unknown() -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer="Step 1: invented [F77]\nAnswer: Yes",
        need="nothing",
    )
    answer = r3(script, llm_pick="off", breadth=1, grounding_retries=1).answer(question(), small_kg())
    assert answer.abstained
    node = step(answer, "r3_tree")["branches"][0]["nodes"][0]
    assert len(node["rejected"]) == 2 and node["error"].startswith("no grounded answer after 2 attempt(s)")


def test_a_backend_failure_is_an_error_not_an_abstention() -> None:
    def broken(request: LLMRequest) -> str:
        raise LLMError("HTTP 503 from the server", retryable=True)

    method = resolve_method("r3", llm=FakeLLM(broken), embedder="hashing", preset="ours")
    with pytest.raises(LLMError, match="503"):
        method.answer(question(), small_kg())


def test_entity_sources_are_options() -> None:
    script = Script(
        entities="Selected entity/entities:\nKel Doran\nNobody Known",
        axiom=AXIOM,
        answer="Answer: I dont know",
    )
    linker = r3(script, entities="linker", max_depth=0, breadth=1, llm_pick="off").answer(
        question(), small_kg()
    )
    assert step(linker, "entities")["llm_names"] == [] and "entities" not in script.kinds()
    llm = r3(script, entities="llm", max_depth=0, breadth=1, llm_pick="off").answer(question(), small_kg())
    report = step(llm, "entities")
    assert (
        report["linker"] == [] and report["llm"] == ["Kel Doran"] and report["unlinked"] == ["Nobody Known"]
    )
    union = r3(script, max_depth=0, breadth=1, llm_pick="off").answer(question(), small_kg())
    assert step(union, "entities")["union"] == ["Alma Reyes", "Kel Doran"]


def test_pruning_semantic_truncation_and_llm_picks() -> None:
    def prompt_facts(**kw: object) -> tuple[list[str], Script]:
        script = Script(
            entities="Selected entity/entities:\nAlma Reyes",
            axiom=AXIOM,
            prune=lambda u: f"Therefore, the relevant facts are: {fact_id(u, 'Prize number 11')}",
            answer="Answer: I dont know",
        )
        m = r3(script, max_depth=0, breadth=1, top_k=3, **kw)
        answer = m.answer(question(), small_kg())
        node = step(answer, "r3_tree")["branches"][0]["nodes"][0]
        table = step(answer, "facts")["table"]
        return [table[i]["object"] for i in node["facts"]], script

    truncated, _ = prompt_facts(pruning="truncation", llm_pick="off")
    assert truncated == [f.object for f in small_kg().facts(subject="Alma Reyes")[:3]]  # the store's order
    semantic, _ = prompt_facts(llm_pick="off")
    assert "Northbrook University" in semantic and len(semantic) == 3
    picked, script = prompt_facts(llm_pick="facts", llm_pool=30)
    assert picked[-1] == "Prize number 11" and len(picked) == 4
    assert "prune" in script.kinds()


def test_relations_picked_by_the_llm() -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        prune="Therefore, the relevant relations are: award received",
        answer="Answer: I dont know",
    )
    answer = r3(
        script, max_depth=0, breadth=1, top_k=2, pruning="truncation", llm_pick="relations", llm_pool=5
    ).answer(question(), small_kg())
    node = step(answer, "r3_tree")["branches"][0]["nodes"][0]
    table = step(answer, "facts")["table"]
    assert [table[i]["relation"] for i in node["llm_picked"]] == ["award received"] * 5


def test_claims_answer_in_the_dataset_words() -> None:
    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer=lambda u: f"Step 1: She is a chemist. [{fact_id(u, 'chemist')}]\nAnswer: No",
    )
    q = question("Alma Reyes is a professional boxer.", qtype="claim", extra={"choices": ["true", "false"]})
    answer = r3(script, llm_pick="off").answer(q, small_kg())
    assert answer.answers == ["false"]
    assert "Claim (answer Yes if it is correct" in script.seen[-1][1]


def test_options_are_typed_and_spec_flags_work() -> None:
    with pytest.raises(ConfigError, match="unknown option 'bogus' for the r3 method"):
        resolve_method("r3", llm=FakeLLM(), bogus=1)
    with pytest.raises(ConfigError, match="needs an LLM"):
        resolve_method("r3", embedder="hashing").answer(question(), small_kg())
    m = resolve_method("r3:truncation,linker_only,max_depth=0", llm=FakeLLM())
    assert isinstance(m, R3Method)
    cfg = m.config
    assert (str(cfg.pruning), str(cfg.entities), cfg.max_depth) == ("truncation", "linker", 0)
    assert m.describe()["config"]["max_depth"] == 0


def test_branches_checks_and_expansions_are_reported_in_order() -> None:
    from tkgqa.methods.base import StepEvent, StepKind, step_reporter

    def answer_after_expansion(user: str) -> str:
        if "Rufus" not in user:
            return "Step 1: Nothing about a mascot. [F99]\nAnswer: I dont know"
        return f"Step 1: The mascot is Rufus the Bulldog. [{fact_id(user, 'Rufus')}]\nAnswer: Yes"

    script = Script(
        entities="Selected entity/entities:\nAlma Reyes",
        axiom=AXIOM,
        answer=answer_after_expansion,
        need="We need to know the mascot of Northbrook University.",
        next="Entity: Northbrook University",
    )
    events: list[StepEvent] = []
    with step_reporter(events.append):
        answer = r3(script, llm_pick="off", direction="head", grounding_retries=0).answer(
            question(), small_kg()
        )
    assert answer.answers == ["yes"]
    assert [(e.kind, e.ok) for e in events] == [
        (StepKind.BRANCH, True),
        (StepKind.CHECK, False),
        (StepKind.EXPAND, True),
        (StepKind.CHECK, True),
    ]
    assert [e.index for e in events] == [0, 1, 2, 3] and {e.method for e in events} == {"r3"}
    assert events[0].label == "branch 1: The mascot must be a dog to eat kibble."
    assert events[1].data["depth"] == 0 and "no grounded answer" in events[1].label  # F99 failed the check
    assert events[2].label == "expand Northbrook University"
    assert events[3].data == {"branch": 0, "depth": 1, "verdict": "true", "rejected": 0, "error": ""}
    assert events[3].count == len(step(answer, "r3_tree")["branches"][0]["nodes"][1]["facts"])


def test_a_branch_without_an_axiom_is_reported_as_failed() -> None:
    from tkgqa.methods.base import StepEvent, StepKind, step_reporter

    script = Script(entities="Selected entity/entities:\nAlma Reyes", axiom="no rule here")
    events: list[StepEvent] = []
    with step_reporter(events.append):
        answer = r3(script, llm_pick="off", breadth=2, retries=0).answer(question(), small_kg())
    assert answer.abstained
    assert [(e.kind, e.ok, e.index) for e in events] == [
        (StepKind.BRANCH, False, 0),
        (StepKind.BRANCH, False, 1),
    ]
