"""``tkgqa reproduce``: the typed-in tables, cell planning and status, runs through the eval runner with the
fake LLM or offline, reproduce.json / reproduce.md, the dry run and the CLI — on a tiny hand-written data
root (MultiTQ-, CR-LT-KGQA-, Recipe-MPR- and CLQA-Wiki-shaped files; no TimeQuestions or CronQuestions, so
their cells must say the data is missing)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from test_registry import module_dir, write_distribution
from tkgqa.errors import ConfigError
from tkgqa.eval.reproduce import (
    REPRODUCE_JSON,
    REPRODUCE_MD,
    bootstrap_interval,
    load_paper,
    paper_names,
    reproduce,
    wilson_interval,
)
from tkgqa.eval.reproduce.models import config_fits, recording_of
from tkgqa.eval.reproduce.run import STATUSES
from tkgqa.eval.reproduce.spec import Paper, split_spec
from tkgqa.methods import package as method_package
from tkgqa.methods.base import METHODS
from tkgqa.methods.package import PACKAGE_GROUP, paper_packages

#: ``../shared/papers`` beside the shared data (``$TKGQA_SHARED_DATA``'s parent when set).
PAPERS_DIR = (
    Path(os.environ["TKGQA_SHARED_DATA"]).parent
    if os.environ.get("TKGQA_SHARED_DATA")
    else Path(__file__).resolve().parents[2].parent / "shared"
) / "papers"
__all__ = ["module_dir"]  # the fixture, shared with test_registry
PAPERS = paper_names()
OFFLINE_EMBEDDER = {"r3": {"embedder": "hashing"}, "kaping": {"embedder": "hashing"}}
CELL_KEYS = {"table", "row", "column", "paper", "ours", "n", "ci", "model", "status", "reason", "run_dir"}

KG = """\
Barack_Obama\tMake_a_visit\tChina\t2014-11-10
Barack_Obama\tMake_a_visit\tJapan\t2014-04-23
Angela_Merkel\tMake_a_visit\tChina\t2014-07-06
Angela_Merkel\tPraise_or_endorse\tBarack_Obama\t2013-06-19
Xi_Jinping\tHost_a_visit\tBarack_Obama\t2014-11-10
Shinzo_Abe\tHost_a_visit\tBarack_Obama\t2014-04-23
"""
MULTITQ = [
    {"quid": 1, "question": "Who visited China in November 2014?", "answers": ["Barack Obama"],
     "answer_type": "entity", "time_level": "month", "qtype": "equal", "qlabel": "Single"},
    {"quid": 2, "question": "When did Barack Obama visit Japan?", "answers": ["2014-04-23"],
     "answer_type": "time", "time_level": "day", "qtype": "equal", "qlabel": "Single"},
    {"quid": 3, "question": "After Barack Obama, who was the first to visit China?",
     "answers": ["Angela Merkel"], "answer_type": "entity", "time_level": "day", "qtype": "after_first",
     "qlabel": "Multiple"},
]  # fmt: skip


def crlt(prefix: str, query: str, answer: bool) -> dict[str, Any]:
    born = "(Ada Lovelace, date of birth, 10 December 1815)"
    return {
        "id": f"{prefix}1",
        "query": query,
        "answer": answer,
        "KG Entities": {"Ada Lovelace": "Q7259"},
        "Inference Rule": "A person born before 1850 could not use an electronic computer.",
        "KG Triples": f"1- {born}, 2- (Ada Lovelace, occupation, mathematician)",
        "Reasoning Steps": [{"Step": "Ada Lovelace was born in 1815.", "facts used in this step": born}],
        "Reasoning Strategy": ["temporal reasoning"],
    }


RECIPES = [
    {"query": "I want a warm soup with mushrooms",
     "query_type": {"Specific": 1, "Commonsense": 0, "Negated": 0, "Analogical": 0, "Temporal": 0},
     "options": {"a1": "Creamy mushroom soup", "b2": "Cold cucumber salad",
     "c3": "Chocolate cake", "d4": "Grilled steak", "e5": "Lemon sorbet"}, "answer": "a1",
     "correctness_explanation": {"warm soup": "soup", "mushrooms": "mushroom"}},
]  # fmt: skip
CLQA = [
    {"clqa_index": 0, "question": "Which countries border both France and Germany?",
     "label": ["Switzerland"], "type": "2i"},
    {"clqa_index": 1, "question": "What is the capital of the country of Lyon?", "label": ["Paris"],
     "type": "2p"},
]  # fmt: skip


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "multitq" / "kg").mkdir(parents=True)
    (root / "multitq" / "questions").mkdir()
    (root / "multitq" / "kg" / "full.txt").write_text(KG, "utf-8")
    (root / "multitq" / "questions" / "test_gold_sample.json").write_text(json.dumps(MULTITQ), "utf-8")
    (root / "crlt_kgqa").mkdir()
    qa = crlt("S", "Could Ada Lovelace have used a laptop?", False)
    claim = crlt("C", "Ada Lovelace never used an electronic computer.", True)
    (root / "crlt_kgqa" / "CR-LT-QA.json").write_text(json.dumps([qa]), "utf-8")
    (root / "crlt_kgqa" / "CR-LT-ClaimVerification.json").write_text(json.dumps([claim]), "utf-8")
    (root / "recipe_mpr").mkdir()
    (root / "recipe_mpr" / "500QA.json").write_text(json.dumps(RECIPES), "utf-8")
    (root / "clqa_wiki").mkdir()
    (root / "clqa_wiki" / "CLQA_Wiki_v1.json").write_text(json.dumps(CLQA), "utf-8")
    return root


def cells_of(out: Path) -> list[dict[str, Any]]:
    data = json.loads((out / REPRODUCE_JSON).read_text("utf-8"))
    assert set(data) >= {"paper", "cells"}
    for cell in data["cells"]:
        assert set(cell) >= CELL_KEYS
        assert cell["status"] in STATUSES
        assert cell["status"] not in {"n/a", "failed", "ran-other-model", "ran-fake-llm"} or cell["reason"], (
            cell
        )
        if cell["status"] == "ran":  # earned: no error row, the paper's model family
            assert cell["model"] and "fake" not in cell["model"], cell
        if cell["model"] == "fake":  # canned replies: never compared with the paper's model as another one
            assert cell["status"] in {"ran-fake-llm", "failed"}, cell
    return list(data["cells"])


def cell(cells: list[dict[str, Any]], table: str, row: str, column: str) -> dict[str, Any]:
    found = [c for c in cells if (c["table"], c["row"], c["column"]) == (table, row, column)]
    assert len(found) == 1, (table, row, column)
    return found[0]


# --- the typed-in tables ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", PAPERS)
def test_every_paper_loads_with_methods_that_exist(name: str) -> None:
    paper = load_paper(name)
    assert paper.tables
    known = set(METHODS.names())
    for table in paper.tables:
        for row in table.rows:
            if row.method is not None:
                assert row.method.partition(":")[0] in known, row.method
    published = sum(len(r.cells) for t in paper.tables for r in t.rows)
    assert published > 0 or name == "lpkg"  # LPKG's result tables are not in the extraction


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+")
#: How far (in lines) a table's rows may stand from its caption in the extracted text.
CAPTION_REACH = 80


def numbers(line: str, pattern: re.Pattern[str] = _NUMBER) -> list[float]:
    return [float(x) for x in pattern.findall(line.replace("∗", " ").replace("*", " "))]


def runs_in(values: list[float], found: list[float]) -> bool:
    """``values`` stand one after another in ``found`` (so in the same columns, in the same order)."""
    n = len(values)
    return any(found[i : i + n] == values for i in range(len(found) - n + 1))


@pytest.mark.parametrize("name", PAPERS)
def test_every_published_number_stands_in_its_table_row_and_column(name: str) -> None:
    """A typo and transposition guard: each row's numbers are found, in the table's column order, on one
    line of the paper's text near its table's caption (a swapped row or column fails); a split or transposed
    table names its lines and the column of each number (``printed``), checked the same way. A row typed
    from another source than ``../shared/papers`` names it (``source``) and is skipped here."""
    paper = load_paper(name)
    source = PAPERS_DIR / paper.source
    if not source.is_file():
        pytest.skip(f"the paper text is not at {source}")
    lines = [line.strip() for line in source.read_text("utf-8").splitlines()]
    for table in paper.tables:
        label = table.caption.split(":", 1)[0].strip()
        captions = [i for i, line in enumerate(lines) if f"{label}:" in line]
        near = {i for c in captions for i in range(c - CAPTION_REACH, c + CAPTION_REACH + 1)}
        for row in table.rows:
            if not row.cells or row.source is not None:
                continue
            where = (table.id, row.id)
            if row.printed:
                placed: dict[str, float] = {}
                for p in row.printed:
                    found = [i for i, line in enumerate(lines) if line == p.line.strip()]
                    assert found and near & set(found), (*where, "line not near its caption", p.line)
                    values = numbers(p.line, _DECIMAL)
                    assert len(values) == len(p.columns), (*where, p.line)
                    placed |= {c: v for c, v in zip(p.columns, values, strict=True) if c is not None}
                assert placed == row.cells, where
                continue
            values = [row.cells[c.id] for c in table.columns if c.id in row.cells]
            hits = [i for i, line in enumerate(lines) if i in near and runs_in(values, numbers(line))]
            assert hits, (*where, "not one line in column order near its caption", values)


def test_the_guard_tells_a_swapped_column() -> None:
    line = "ARI 0.380∗∗ 0.680∗∗ 0.210∗∗"
    assert runs_in([0.38, 0.68], numbers(line)) and not runs_in([0.68, 0.38], numbers(line))
    assert not runs_in([0.38, 0.21], numbers(line))  # not adjacent: another column


def test_unknown_paper_and_table_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ari, timer4, cik, lpkg, r3"):
        load_paper("nope")
    with pytest.raises(ConfigError, match="T1, T2, T7"):
        reproduce("ari", table="T9", output=tmp_path / "out", data_root=tmp_path)


def test_a_third_party_method_package_ships_its_own_paper_table(
    module_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tables are found through each package's registration (``paper``), not in a folder of tkgqa's."""
    assert [d.package.paper for d in paper_packages().values()] == [
        f"tkgqa.methods.{name}:paper.json" for name in ("ari", "timer4", "cik", "lpkg", "r3")
    ]
    package = module_dir / "tkgqa_regtest_paper"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from tkgqa.methods.package import MethodPackage\n"
        "PLUGIN = MethodPackage(name='regtest', methods={}, paper='tkgqa_regtest_paper:paper.json')\n"
    )
    table = {"id": "T1", "caption": "Table 1: x", "metric": "strict_hit", "scale": "fraction"}
    table |= {"columns": [{"id": "c", "dataset": "multitq"}], "rows": [{"id": "r", "method": "symbolic"}]}
    paper = {"paper": "regtest", "title": "t", "source": "t.txt", "model": "m", "tables": [table]}
    paper["recordings"] = [{"file": "regtest_gpt4_answers", "model": "GPT-4, the authors' run",
                            "stands_for": "symbolic", "datasets": ["multitq"]}]  # fmt: skip
    (package / "paper.json").write_text(json.dumps(paper))
    write_distribution(
        module_dir, "tkgqa-regtest-paper", PACKAGE_GROUP, {"regtest": "tkgqa_regtest_paper:PLUGIN"}
    )
    monkeypatch.setattr(method_package, "_PLUGINS", None)
    assert paper_names()[-1] == "regtest"
    assert load_paper("regtest").tables[0].rows[0].method == "symbolic"
    # its authors' recording is known by its file name, like tkgqa's own (no header needed)
    recording = recording_of("replay:anywhere/regtest_gpt4_answers.jsonl")
    assert recording is not None and (recording.family, recording.stands_for) == ("gpt-4", "symbolic")
    assert recording.why_not("symbolic", "GPT-4", "timequestions") is not None  # not its dataset
    assert recording.why_not("symbolic", "GPT-4", "multitq") is None


@pytest.mark.parametrize("name", PAPERS)
def test_a_papers_switches_are_the_defaults_of_the_options_its_rows_ablate(name: str) -> None:
    """``switches`` (a recorded run with one off its default fills only a row naming it) holds each option at
    the default of the method whose rows set it."""
    paper = load_paper(name)
    for key, default in paper.switches.items():
        methods = {
            split_spec(r.method)[0]
            for t in paper.tables
            for r in t.rows
            if r.method is not None and key in split_spec(r.method)[1]
        }
        assert methods, key
        for method in methods:
            config = METHODS.factory(method).config_class  # type: ignore[attr-defined]
            assert config.model_fields[key].default == default, (method, key)


def test_a_paper_table_lists_exactly_the_options_its_rows_set_and_each_recording_once() -> None:
    table = {"id": "T1", "caption": "Table 1: x", "metric": "strict_hit", "scale": "fraction"}
    table |= {
        "columns": [{"id": "c", "dataset": "multitq"}],
        "rows": [{"id": "r", "method": "ari:no_filter=true"}],
    }
    base = {"paper": "p", "title": "t", "source": "t.txt", "model": "m", "tables": [table]}
    valid = base | {"switches": {"no_filter": False}}
    assert Paper.model_validate(valid).switches == {"no_filter": False}
    with pytest.raises(ValueError, match=r"\['no_guidance'\] named by no row"):
        Paper.model_validate(base | {"switches": {"no_filter": False, "no_guidance": False}})
    with pytest.raises(ValueError, match=r"\['no_filter'\] set by rows but not listed"):
        Paper.model_validate(base)
    positional = base | {"tables": [table | {"rows": [{"id": "r", "method": "ari:oracle"}]}]}
    assert Paper.model_validate(positional).switches == {}  # a positional value names no option
    twice = [{"file": "f", "model": "GPT-4", "stands_for": "ari"}] * 2
    with pytest.raises(ValueError, match="a file is listed twice"):
        Paper.model_validate(valid | {"recordings": twice})
    once = {"file": "f", "model": "GPT-4", "stands_for": "ari"}
    assert Paper.model_validate(valid | {"recordings": [once]}).recordings[0].config is None
    for wrong in ({"stands_for": None}, {"config": {"policy": "llm"}}):
        with pytest.raises(ValueError, match=r"f needs stands_for .* and takes no config"):
            Paper.model_validate(valid | {"recordings": [once | wrong]})


def test_a_recorded_config_stands_only_for_the_rows_that_set_what_it_ran_with() -> None:
    """A tkgqa cassette's recorded config against a row spec: an option some row sets, off its default in the
    recording, fits only a row that sets it so; settings no row sets do not matter."""
    assert config_fits("timer4", "timer4", {"rewrite": "auto", "rerank": True})
    assert not config_fits("timer4", "timer4", {"rewrite": "off"})
    assert config_fits("timer4:rewrite=off", "timer4", {"rewrite": "off"})
    assert not config_fits("timer4:rewrite=off", "timer4", {"rewrite": "off", "rerank": False})
    assert not config_fits("r3", "r3", {"max_depth": 0}) and config_fits(
        "r3:max_depth=0", "r3", {"max_depth": 0}
    )
    assert config_fits("ari", "ari", {"top_k": 7, "no_guidance": False})
    assert not config_fits("ari", "ari", {"no_guidance": True})
    assert not config_fits("ari", "timer4", {})  # another method


# --- confidence intervals ------------------------------------------------------------------------------
def test_wilson_interval_known_value() -> None:
    lo, hi = wilson_interval(38, 100)
    assert lo == pytest.approx(0.2902, abs=1e-3) and hi == pytest.approx(0.4785, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@given(st.integers(min_value=1, max_value=500), st.data())
def test_wilson_interval_holds_the_rate(n: int, data: st.DataObject) -> None:
    hits = data.draw(st.integers(min_value=0, max_value=n))
    lo, hi = wilson_interval(hits, n)
    assert 0.0 <= lo <= hits / n <= hi <= 1.0


def test_bootstrap_interval_is_seeded_and_holds_the_mean() -> None:
    values = [0.0, 0.5, 1.0, 0.25, 0.75, 1.0]
    assert bootstrap_interval(values) == bootstrap_interval(values)
    lo, hi = bootstrap_interval(values)
    assert lo <= sum(values) / len(values) <= hi


# --- the five papers ------------------------------------------------------------------------------------
def test_ari_offline_bounds_run_and_llm_cells_say_why(data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "ari"
    reproduce("ari", table="T1", limit=3, data_root=data_root, output=out)
    cells = cells_of(out)
    ari = cell(cells, "T1", "ARI", "MultiTQ/Overall")
    assert ari["paper"] == pytest.approx(0.380) and ari["status"] == "n/a" and "--llm" in ari["reason"]
    assert "not implemented" in cell(cells, "T1", "BERT", "MultiTQ/Overall")["reason"]
    assert "missing data" in cell(cells, "T1", "ARI", "CronQuestions/Overall")["reason"]
    oracle = cell(cells, "T1", "ARI, oracle policy (upper bound, ours)", "MultiTQ/Overall")
    assert oracle["status"] == "bound" and oracle["paper"] is None and oracle["n"] == 3
    assert oracle["model"] == "none (offline)" and 0.0 <= oracle["ours"] <= 1.0
    assert oracle["ci"][0] <= oracle["ours"] <= oracle["ci"][1]
    assert (Path(oracle["run_dir"]) / "results.jsonl").is_file()
    simple = cell(cells, "T1", "ARI, oracle policy (upper bound, ours)", "MultiTQ/Simple")
    assert simple["n"] == 2 and simple["run_dir"] == oracle["run_dir"]  # a column is a subset of one run
    md = (out / REPRODUCE_MD).read_text("utf-8")
    assert "| ARI | MultiTQ/Overall | 0.380 | — |" in md and "`ari:policy=oracle`" in md


def test_ari_without_history_questions_is_na_and_no_guidance_runs(data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "ari"
    reproduce("ari", table="T2", llm="fake", limit=2, data_root=data_root, output=out)
    cells = cells_of(out)
    for row in ("ARI", "w/o History Cluster", "w/o Incorrect Examples", "w/o Action Filter"):
        na = cell(cells, "T2", row, "MultiTQ")
        assert na["status"] == "n/a" and "history memory" in na["reason"] and "train/dev" in na["reason"]
    ablation = cell(cells, "T2", "w/o Abstract Guidance", "MultiTQ")  # the one row that needs no memory
    assert ablation["status"] == "ran-fake-llm" and ablation["model"] == "fake" and ablation["n"] == 2
    assert "gpt-3.5-turbo-0613" in ablation["reason"]
    assert ablation["paper"] == pytest.approx(30.5) and ablation["ours"] is not None
    assert ablation["ours"] <= 100.0  # percent, as the table prints
    assert ablation["run_dir"].endswith("multitq__ari_no_guidance=true")
    assert cell(cells, "T2", "ARI", "CronQuestions")["status"] == "n/a"


def test_ari_builds_its_memory_from_the_dev_split(data_root: Path, tmp_path: Path) -> None:
    dev = [dict(q, quid=100 + i) for i, q in enumerate(MULTITQ)]
    (data_root / "multitq" / "questions" / "dev.json").write_text(json.dumps(dev), "utf-8")
    out = tmp_path / "ari"
    reproduce("ari", table="T2", llm="fake", limit=2, data_root=data_root, output=out)
    cells = cells_of(out)
    memory = json.loads((out / "ari-memory-multitq.json").read_text("utf-8"))
    assert memory["meta"]["split"] == "dev"
    ablation = cell(cells, "T2", "w/o History Cluster", "MultiTQ")
    assert ablation["status"] in {"ran-fake-llm", "failed"} and ablation["n"] == 2
    assert ablation["run_dir"].endswith("multitq__ari_no_clustering=true")
    report = json.loads((Path(ablation["run_dir"]) / "report.json").read_text("utf-8"))
    assert report["method"]["config"]["memory"].endswith("ari-memory-multitq.json")


def test_timer4_offline_reference_and_missing_timequestions(data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "timer4"
    reproduce("timer4", table="T3", limit=3, data_root=data_root, output=out)
    cells = cells_of(out)
    assert cell(cells, "T3", "symbolic reasoner (offline, ours)", "Overall")["status"] == "reference"
    timer4 = cell(cells, "T3", "TimeR4", "Overall")
    assert timer4["paper"] == pytest.approx(72.8) and "--llm" in timer4["reason"]
    reproduce("timer4", table="T4", llm="fake", data_root=data_root, output=out)
    assert "missing data" in cell(cells_of(out), "T4", "TimeR4", "Overall")["reason"]


def test_cik_cells_need_the_cronquestions_kg(data_root: Path, tmp_path: Path) -> None:
    (data_root / "cronquestions" / "questions").mkdir(parents=True)
    (data_root / "cronquestions" / "questions" / "test.json").write_text("[]", "utf-8")
    out = tmp_path / "cik"
    reproduce("cik", llm="fake", data_root=data_root, output=out)
    cells = cells_of(out)
    cik = cell(cells, "T1", "CIK-LLM", "single/K<1960/Q-S")
    assert cik["paper"] == pytest.approx(0.210) and "kg/full.txt" in cik["reason"]
    assert all(c["status"] == "n/a" for c in cells)


def test_lpkg_runs_clqa_with_the_fake_llm(data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "lpkg"
    reproduce("lpkg", llm="fake", limit=2, data_root=data_root, output=out)
    cells = cells_of(out)
    icl = cell(cells, "CLQA", "ICL-LPKG", "Recall")  # no planning prompt under this data root
    assert icl["status"] == "n/a" and "planning prompt" in icl["reason"] and icl["paper"] is None
    direct = cell(cells, "CLQA", "Direct", "Recall")
    assert direct["status"] == "ran-fake-llm" and direct["n"] == 2
    assert cell(cells, "CLQA", "Direct", "Precision")["run_dir"] == direct["run_dir"]
    rec = data_root / "llm_recordings"
    rec.mkdir()
    official = (
        Path(os.environ.get("TKGQA_SHARED_DATA", ""))
        / "llm_recordings"
        / "lpkg_official_planning_prompt.json"
    )
    if not official.is_file():
        return
    (rec / official.name).write_bytes(official.read_bytes())
    reproduce("lpkg", llm="fake", limit=2, data_root=data_root, output=tmp_path / "lpkg2")
    icl = cell(cells_of(tmp_path / "lpkg2"), "CLQA", "ICL-LPKG", "Recall")
    assert icl["status"] == "ran-fake-llm" and icl["n"] == 2  # planned with the authors' demonstrations
    report = json.loads((Path(icl["run_dir"]) / "report.json").read_text("utf-8"))
    assert report["method"]["config"]["demos"].endswith(official.name) and report["errors"] == 0
    assert "not implemented" in cell(cells, "CLQA", "CoT", "Recall")["reason"]


def test_r3_with_the_fake_llm_and_offline_preference(data_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "r3"
    reproduce("r3", llm="fake", limit=2, data_root=data_root, output=out, method_options=OFFLINE_EMBEDDER)
    cells = cells_of(out)
    r3 = cell(cells, "T2", "R3", "QA/Accuracy/Long-Tail")
    assert r3["status"] in {"ran-fake-llm", "failed"} and r3["paper"] == pytest.approx(0.73)
    assert r3["n"] == 1 and r3["model"] == "fake"
    assert "original" in cell(cells, "T2", "R3", "QA/Accuracy/Original")["reason"]
    assert "human" in cell(cells, "T2", "R3", "QA/FActScore/Long-Tail")["reason"]
    assert cell(cells, "T8", "depth 0", "Claims")["status"] in {"ran-fake-llm", "failed"}
    offline = cell(cells, "T4", "R3, embedding judge (offline, ours)", "Accuracy")
    assert offline["status"] == "reference" and offline["n"] == 1


def test_a_fake_llm_cell_is_ran_fake_llm_and_every_status_is_explained(
    data_root: Path, tmp_path: Path
) -> None:
    """``--llm fake`` answers with canned text: its cell says so, never ``ran-other-model`` as if another
    model had been measured; each status is explained in reproduce.md, the command's help and the docs."""
    from tkgqa.cli.reproduce_cmd import reproduce_command
    from tkgqa.eval.reproduce.render import STATUS_MEANING

    out = tmp_path / "ari"
    reproduce("ari", table="T2", llm="fake", limit=2, data_root=data_root, output=out)
    fake = cell(cells_of(out), "T2", "w/o Abstract Guidance", "MultiTQ")
    assert fake["status"] == "ran-fake-llm" and fake["model"] == "fake", fake
    assert "not a model" in fake["reason"] and "gpt-3.5-turbo-0613" in fake["reason"]
    assert "Status `ran-fake-llm`: " in (out / REPRODUCE_MD).read_text("utf-8")
    assert tuple(STATUS_MEANING) == STATUSES
    docs = (Path(__file__).resolve().parents[2] / "docs" / "reproduce.md").read_text("utf-8")
    for status in STATUSES:
        assert f"`{status}`" in docs and f"'{status}'" in (reproduce_command.__doc__ or ""), status


# --- the CLI ------------------------------------------------------------------------------------------------
def test_cli_prints_the_table_and_writes_the_files(data_root: Path, tmp_path: Path) -> None:
    from tkgqa.cli import _load_commands, app

    _load_commands()
    out = tmp_path / "cli"
    args = ["reproduce", "ari", "--table", "T7", "--data-root", str(data_root), "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--limit", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "## T7" in result.output and "n/a: 4 cells — needs an LLM: pass --llm SPEC (4)" in result.output
    assert result.output.index("## T7") < result.output.index("Notes on the paper's tables")  # results first
    listed = CliRunner().invoke(app, [*args, "--limit", "2", "--no-progress", "--all"])
    assert listed.exit_code == 0 and listed.output.count("| n/a |") == 4, listed.output
    assert (out / REPRODUCE_MD).is_file() and (out / REPRODUCE_JSON).is_file()
    dry = CliRunner().invoke(app, [*args, "--llm", "fake", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    assert {e["run_id"] for e in json.loads(dry.output)["estimates"]} == {
        "multitq__llm_only"
    }  # ARI: no memory here


# --- statuses earned, recordings that fill only their own cells ----------------------------------------
def planned_runs(paper: str, llm: str, root: Path) -> dict[tuple[str, str, str], str]:
    from tkgqa.eval.reproduce.run import plan_cells

    spec = load_paper(paper)
    cells = plan_cells(spec, spec.tables, llm=llm, root=root, recording=recording_of(llm))
    return {(p.table.id, p.row.id, p.column.id): p.run.method for p in cells if p.run and p.run.llm}


def test_the_authors_timer4_recording_fills_only_chatgpt_with_timer4_on_timequestions(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for name in ("timequestions/questions/test.json", "timequestions/kg/full.txt", "multitq/kg/full.txt",
                 "multitq/questions/test.json"):  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("[]", "utf-8")
    runs = planned_runs("timer4", "replay:somewhere/timer4_tq_chatgpt_answer.jsonl", root)
    assert set(runs.values()) == {"timer4:facts=dataset"}
    assert {(t, r) for t, r, _ in runs} == {("T6", "ChatGPT w/TimeR4")}
    kinds = ("Overall", "Explicit", "Implicit", "Temporal", "Ordinal")
    assert {c for _, _, c in runs} == {f"TimeQuestions/{x}" for x in kinds}
    assert (
        planned_runs("timer4", "replay:x/timer4_tq_llama2_finetuned_answer.jsonl", root) == {}
    )  # no prompts


def test_a_tkgqa_cassette_fills_the_rows_of_its_model_method_and_dataset(
    data_root: Path, tmp_path: Path
) -> None:
    head = {"tkgqa_cassette": 1, "model": "gpt-3.5-turbo-0125", "dataset": {"name": "multitq"},
            "method": {"method": "llm_only", "config": {}}}  # fmt: skip
    cassette = tmp_path / "rec.jsonl"
    cassette.write_text(
        json.dumps(head) + "\n" + json.dumps({"prompt": "p", "response": "r"}) + "\n", "utf-8"
    )
    runs = planned_runs("ari", f"replay:{cassette}", data_root)
    assert {(t, r) for t, r, _ in runs} == {("T1", "ChatGPT")}  # not GPT-4 / Llama-2 llm_only, not ARI
    out = tmp_path / "out"
    reproduce("ari", table="T1", llm=f"replay:{cassette}", limit=3, data_root=data_root, output=out)
    chatgpt = cell(cells_of(out), "T1", "ChatGPT", "MultiTQ/Overall")
    assert chatgpt["status"] == "failed" and "ReplayMiss" in chatgpt["reason"] and chatgpt["ours"] is None
    gpt4 = cell(cells_of(out), "T1", "KG-RAG", "MultiTQ/Overall")
    assert gpt4["status"] == "n/a" and "not this row's method" in gpt4["reason"]


def test_model_families() -> None:
    from tkgqa.eval.reproduce.models import model_family

    assert model_family("openai:gpt-3.5-turbo-0125") == model_family("ChatGPT") == "gpt-3.5"
    assert model_family("GPT-4") == "gpt-4" != model_family("openai:gpt-4o-mini")
    assert model_family("LLaMA2-Chat-7B (not fine-tuned)") != model_family("LLaMA2-Chat-7B fine-tuned")
    assert model_family("llamacpp:smollm2") is None and model_family(None) is None
