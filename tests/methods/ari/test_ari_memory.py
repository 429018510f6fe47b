"""ARI's history memory: K-means, methodology induction (FakeLLM), persistence, injection into the prompt,
the Table 2 ablations, building a memory and the ``tkgqa ari`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tkgqa.datasets.base import Question
from tkgqa.errors import DataError, NotFoundError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.llm.base import LLMRequest
from tkgqa.methods.ari import (
    ARIMemory,
    ARIMethod,
    HistoryRecord,
    HistoryStep,
    MemoryVariant,
    build_memory,
    kmeans,
)
from tkgqa.retrieval import HashingEmbedder
from tkgqa.testing import FakeLLM
from tkgqa.time import parse_time

METHODOLOGY = (
    "Overall Instruction:\nFind the anchor with get_time, then filter the list.\nStep-by-step Guide:\n1. ..."
)


def record(i: int, masked: str, correct: bool) -> HistoryRecord:
    return HistoryRecord(
        qid=f"h{i}",
        question=masked.replace("{entity}", f"E{i}"),
        masked=masked,
        correct=correct,
        gold=["x"],
        steps=[
            HistoryStep(
                candidates=["get_first({entities})"], action="get_first({entities})", result="entities = []"
            )
        ],
    )


def memory(n_clusters: int = 2) -> ARIMemory:
    firsts = [record(i, "Who was the first to visit {entity}?", i % 2 == 0) for i in range(4)]
    whens = [
        record(10 + i, "When did {entity} sign an agreement with {entity}?", i % 2 == 1) for i in range(4)
    ]
    return ARIMemory([*firsts, *whens], n_clusters=n_clusters)


def test_kmeans_separates_obvious_groups_deterministically() -> None:
    rng = np.random.default_rng(1)
    x = np.vstack([rng.normal(0, 0.1, (10, 3)), rng.normal(5, 0.1, (10, 3))]).astype(np.float32)
    _, l1 = kmeans(x, 2, seed=3)
    _, l2 = kmeans(x, 2, seed=3)
    assert np.array_equal(l1, l2) and len(set(l1[:10].tolist())) == 1 and l1[0] != l1[-1]
    assert kmeans(x[:1], 5)[0].shape == (1, 3)  # k capped by the number of points
    with pytest.raises(DataError):
        kmeans(x[:0], 2)


def test_fit_nearest_cluster_and_induce_per_cluster() -> None:
    mem = memory()
    emb = HashingEmbedder()
    mem.fit(emb)
    assert mem.labels is not None and len(set(mem.labels)) == 2
    c_first = mem.nearest_cluster("Who was the first to visit {entity}?", emb)
    assert mem.labels[0] == c_first and mem.labels[-1] != c_first
    llm = FakeLLM(lambda req: METHODOLOGY)
    found, usage = mem.induce(llm, per_kind=1)
    assert set(found) == set(mem.labels) and usage.calls == 2
    prompt = llm.requests[0].messages[-1].content
    assert prompt.count("Correct!") == 1 and prompt.count("Wrong! The answer is") == 1  # 1 + 1 per cluster
    cluster, text = mem.methodology_for("Who was the first to visit {entity}?", emb, "clustered")
    assert cluster == c_first and text == METHODOLOGY
    assert mem.methodology_for("x", emb, "global") == (None, None)


def test_induction_variants_no_incorrect_and_global() -> None:
    mem = memory()
    mem.fit(HashingEmbedder())
    llm = FakeLLM(lambda req: METHODOLOGY)
    mem.induce(llm, incorrect=False)
    assert "Incorrect samples" not in llm.requests[-1].messages[-1].content
    mem.induce(llm, clustered=False, per_kind=3)
    glob = llm.requests[-1].messages[-1].content
    assert glob.count("Correct!") == 3 and "first to visit" in glob and "sign an agreement" in glob  # spread
    assert set(mem.methodologies) == {"clustered-correct-only", "global"}
    assert mem.methodology_for("anything", HashingEmbedder(), "global") == (-1, METHODOLOGY)


def test_unparsable_methodologies_are_skipped() -> None:
    mem = memory()
    mem.fit(HashingEmbedder())
    found, usage = mem.induce(FakeLLM(lambda req: "OK"))
    assert found == {} and usage.parse_failures == 4 and usage.calls == 4


def test_save_and_load_roundtrip(tmp_path: Path) -> None:
    mem = memory()
    mem.fit(HashingEmbedder())
    mem.induce(FakeLLM(lambda req: METHODOLOGY))
    path = mem.save(tmp_path / "sub" / "memory.json")
    back = ARIMemory.load(path)
    assert (
        back.records == mem.records and back.labels == mem.labels and back.methodologies == mem.methodologies
    )
    assert back.embedder_name == HashingEmbedder().name
    with pytest.raises(NotFoundError):
        ARIMemory.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(DataError):
        ARIMemory.load(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(DataError):
        ARIMemory.load(tmp_path / "broken.json")


def test_embedder_mismatch_is_reported() -> None:
    mem = memory()
    mem.fit(HashingEmbedder())
    with pytest.raises(DataError, match="embedder"):
        mem.nearest_cluster("x", HashingEmbedder(dim=64))


# --- the method with a memory -----------------------------------------------------------------------------
def tiny_kg() -> TemporalKG:
    t = parse_time
    return TemporalKG(
        [
            Fact("Alice", "Make a visit", "Freedonia", t("2010-01-05"), t("2010-01-05")),
            Fact("Bob", "Make a visit", "Freedonia", t("2011-03-02"), t("2011-03-02")),
        ],
        name="tiny",
    )


def fitted_memory() -> ARIMemory:
    mem = memory()
    mem.fit(HashingEmbedder())
    mem.induce(FakeLLM(lambda req: METHODOLOGY + " (clustered)"))
    mem.induce(FakeLLM(lambda req: METHODOLOGY + " (global)"), clustered=False)
    return mem


def prompts_of(method: ARIMethod, question: str = "Who was the first to visit Freedonia?") -> list[str]:
    method.answer(Question(qid="t1", text=question), tiny_kg())
    llm = method.llm
    assert isinstance(llm, FakeLLM)
    return [r.messages[-1].content for r in llm.requests]


def answering_llm() -> FakeLLM:
    def respond(req: LLMRequest) -> str:
        text = req.messages[-1].content
        return "$answer(Alice)$" if "answer(Alice)" in text else "Action: 1"

    return FakeLLM(respond)


def test_methodology_of_the_nearest_cluster_is_injected() -> None:
    prompts = prompts_of(ARIMethod(llm=answering_llm(), memory=fitted_memory()))
    assert "Methodology: " + METHODOLOGY + " (clustered)" in prompts[0]


def test_ablations_of_table_2() -> None:
    mem = fitted_memory()
    assert "Methodology:" not in prompts_of(ARIMethod(llm=answering_llm(), memory=mem, no_guidance=True))[0]
    assert "(global)" in prompts_of(ARIMethod(llm=answering_llm(), memory=mem, no_clustering=True))[0]
    filtered = prompts_of(ARIMethod(llm=answering_llm(), memory=mem, top_k=1))[0]
    unfiltered = prompts_of(ARIMethod(llm=answering_llm(), memory=mem, no_filter=True))[0]
    assert filtered.count("$get_") < unfiltered.count("$get_")
    assert "get_tail_entity(Freedonia, Make a visit" in unfiltered  # empty actions are offered too
    # no incorrect examples: the variant is missing, so the method induces it with its own LLM, once
    llm = FakeLLM(
        lambda req: METHODOLOGY if "Carefully analyze" in req.messages[-1].content else "$answer(Alice)$"
    )
    method = ARIMethod(llm=llm, memory=mem, no_incorrect=True)
    method.answer(Question(qid="t2", text="Who was the first to visit Freedonia?"), tiny_kg())
    assert "clustered-correct-only" in mem.methodologies
    assert all("Incorrect samples" not in r.messages[-1].content for r in llm.requests)


def test_memory_overlap_is_refused() -> None:
    mem = fitted_memory()
    leaked = Question(qid="h0", text=mem.records[0].question)
    with pytest.raises(DataError, match="history memory"):
        ARIMethod(llm=answering_llm(), memory=mem).answer(leaked, tiny_kg())
    ARIMethod(llm=answering_llm(), memory=mem, allow_memory_overlap=True).answer(leaked, tiny_kg())


def test_memory_path_in_the_config(tmp_path: Path) -> None:
    path = fitted_memory().save(tmp_path / "m.json")
    method = ARIMethod(llm=answering_llm(), memory=str(path))
    assert method.memory is not None and method.config.memory == str(path)


# --- building a memory ------------------------------------------------------------------------------------
def test_build_memory_with_the_symbolic_policy_on_the_demo(demo_kg: TemporalKG) -> None:
    from tkgqa.datasets.demo import load_demo_questions

    questions = load_demo_questions()[:24]
    method = ARIMethod(policy="symbolic", no_guidance=True)
    llm = FakeLLM(lambda req: METHODOLOGY)
    variants = [MemoryVariant.CLUSTERED, MemoryVariant.GLOBAL_CORRECT_ONLY]
    mem, usage = build_memory(questions, demo_kg, method, n_clusters=3, induce_with=llm, variants=variants)
    assert len(mem) == 24 and mem.labels is not None and len(set(mem.labels)) == 3
    assert any(r.correct for r in mem.records) and all(r.correct is not None for r in mem.records)
    assert set(mem.methodologies) == {"clustered", "global-correct-only"} and usage.calls >= 3
    assert all("{entity}" in r.masked for r in mem.records[:5])


def test_build_memory_needs_gold(demo_kg: TemporalKG) -> None:
    from tkgqa.errors import ConfigError

    with pytest.raises(ConfigError, match="gold"):
        build_memory([Question(qid="x", text="Who visited China?")], demo_kg, ARIMethod(policy="symbolic"))


def test_build_memory_refuses_the_test_split(demo_kg: TemporalKG) -> None:
    from tkgqa.datasets.demo import load_demo_questions
    from tkgqa.errors import ConfigError

    questions = load_demo_questions()[:4]
    with pytest.raises(ConfigError, match="test split"):
        build_memory(questions, demo_kg, ARIMethod(policy="symbolic", no_guidance=True), split="test")
    memory, _ = build_memory(
        questions, demo_kg, ARIMethod(policy="symbolic", no_guidance=True), n_clusters=2, split="dev"
    )
    assert memory.meta["split"] == "dev"


def test_cli_build_and_show_memory(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    out = tmp_path / "mem.json"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "ari",
            "build-memory",
            "--dataset",
            "demo",
            "--policy",
            "symbolic",
            "--n",
            "20",
            "--n-clusters",
            "3",
            "--output",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert ARIMemory.load(out).methodologies == {}  # no --llm: clustered only
    shown = runner.invoke(app, ["ari", "show-memory", str(out)])
    assert shown.exit_code == 0 and "records" in shown.output
    bad = runner.invoke(
        app, ["ari", "build-memory", "--policy", "symbolic", "--split", "test", "--output", str(out)]
    )
    assert bad.exit_code != 0 and "test split" in f"{bad.exception} {bad.output}"


def test_cli_build_memory_from_generated_questions(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    out = tmp_path / "gen.json"
    args = ["ari", "build-memory", "--dataset", "demo", "--source", "generated", "--policy", "symbolic"]
    args += ["--patterns", "equal=6,first_last=6,after_first=4", "--n-clusters", "2", "--output", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    mem = ARIMemory.load(out)
    assert mem.meta["source"] == "generated" and mem.meta["patterns"]["equal"] == 6
    assert 0 < len(mem) <= 16 and all(r.qid.startswith("gen-") and r.gold for r in mem.records)
    assert mem.meta["preset"] == "paper"


def test_cli_build_memory_never_replaces_a_file_that_is_not_a_memory(tmp_path: Path) -> None:
    """``--output notes.txt`` was silently replaced by the memory; now refused before any question is
    answered, unless --force. A memory file is rebuilt in place as before (the test above)."""
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app
    from tkgqa.errors import ConfigError

    _load_commands()
    mine = tmp_path / "notes.txt"
    mine.write_text("keep", encoding="utf-8")
    args = ["ari", "build-memory", "--policy", "symbolic", "--n", "8", "--n-clusters", "2", "--output"]
    res = CliRunner().invoke(app, [*args, str(mine)])
    assert isinstance(res.exception, ConfigError) and "is not an ARI memory" in str(res.exception)
    assert mine.read_text(encoding="utf-8") == "keep"
    res = CliRunner().invoke(app, [*args, str(tmp_path)])
    assert isinstance(res.exception, ConfigError) and "is a folder" in str(res.exception)
    res = CliRunner().invoke(app, [*args, str(mine), "--force"])
    assert res.exit_code == 0, res.output
    assert len(ARIMemory.load(mine)) > 0


def test_a_memory_variant_is_its_two_ablation_flags_and_its_name() -> None:
    from tkgqa.errors import ConfigError
    from tkgqa.methods.ari import ARIConfig
    from tkgqa.methods.ari.build import parse_variants

    for variant in MemoryVariant:
        assert MemoryVariant.of(clustered=variant.clustered, incorrect=variant.incorrect) is variant
    assert [(v.clustered, v.incorrect) for v in parse_variants(["global", "clustered-correct-only"])] == [
        (False, True),
        (True, False),
    ]
    flags = ARIConfig(no_clustering=True, no_incorrect=True)
    assert flags.methodology_variant() is MemoryVariant.GLOBAL_CORRECT_ONLY
    with pytest.raises(ConfigError, match="--variant must be among clustered, global, clustered-correct"):
        parse_variants(["clustered", "everything"])


def test_the_paper_rows_memory_holds_the_three_methodology_sets_its_rows_use(demo_kg: TemporalKG) -> None:
    """``tkgqa reproduce ari`` builds one memory for the rows ARI, w/o History Cluster and w/o Incorrect
    Examples: each row's config must find its set in it."""
    from tkgqa.datasets.demo import load_demo_questions
    from tkgqa.methods.ari import ARIConfig
    from tkgqa.methods.ari.paper_inputs import VARIANTS

    method = ARIMethod(policy="symbolic", no_guidance=True)
    llm = FakeLLM(lambda req: METHODOLOGY)
    mem, _ = build_memory(
        load_demo_questions()[:24], demo_kg, method, n_clusters=3, induce_with=llm, variants=VARIANTS
    )
    assert set(mem.methodologies) == {"clustered", "global", "clustered-correct-only"}
    for row in (ARIConfig(), ARIConfig(no_clustering=True), ARIConfig(no_incorrect=True)):
        assert row.methodology_variant() in mem.methodologies


def test_cli_build_memory_refuses_counts_that_ask_for_nothing(tmp_path: Path) -> None:
    """``--n 0`` printed the build header then failed; ``--patterns equal=0`` blamed the KG ("the generator
    found no question"). Both are refused as what they are, before any work."""
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app
    from tkgqa.errors import ConfigError

    _load_commands()
    out = tmp_path / "m.json"
    base = ["ari", "build-memory", "--policy", "symbolic", "--output", str(out)]
    res = CliRunner().invoke(app, [*base, "--n", "0"])
    assert res.exit_code == 2 and "--n" in res.output and "building the memory" not in res.output
    res = CliRunner().invoke(app, [*base, "--source", "generated", "--patterns", "equal=0"])
    assert isinstance(res.exception, ConfigError) and "asks for no question" in str(res.exception)
    assert not out.exists()
