"""Reliability round 3 (issue #23), imports: the Parquet importer checks the columns and rows before writing
anything (a DataError naming the column, the row and the fix; never a traceback, never a wrong fact) and
converts into a temporary file renamed on success; loaders skip a malformed entry with a counted warning by
default (``report.json``'s ``warnings``), ``--strict`` makes it an error, and messages name the CLI flag."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb", reason="needs the [store] extra (duckdb, pyarrow)")
pytest.importorskip("pyarrow", reason="needs the [store] extra (duckdb, pyarrow)")
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.errors import DataError, TKGQAError
from tkgqa.kg import load_kg
from tkgqa.kg.duckdb_io import import_parquet
from tkgqa.kg.duckdb_store import DuckDBStore

_load_commands()
GOOD = {"subject": ["A", "C"], "relation": ["r", "r"], "object": ["B", "D"], "start": ["2015", "2016-03"],
        "end": ["2015", None]}  # fmt: skip
EXPORT = {"id": [0, 1], "subject": ["A", "C"], "relation": ["r", "r"], "object": ["B", "D"],
          "t0": [735599, 735963], "t1": [735963, 10**9], "g0": [1, 1], "g1": [1, 0]}  # fmt: skip


def write(tmp_path: Path, columns: dict[str, Any], name: str = "facts.parquet") -> Path:
    path = tmp_path / name
    pq.write_table(pa.table(columns), path)
    return path


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {k: v for k, v in base.items() if changes.get(k, 0) is not None}
    out.update({k: v for k, v in changes.items() if v is not None})
    return out


BAD_FILES = {
    "null subject": (with_(GOOD, subject=["A", None]), "empty subject"),
    "empty relation": (with_(GOOD, relation=["r", " "]), "empty"),
    "list column": (with_(GOOD, subject=[["A"], ["C"]]), "column 'subject' is VARCHAR\\[\\]"),
    "int names": (with_(GOOD, object=[1, 2]), "column 'object' is BIGINT"),
    "missing start": (with_(GOOD, start=None), r"missing column\(s\) start"),
    "missing subject": (with_(GOOD, subject=None), r"missing column\(s\) subject"),
    "long name": (with_(GOOD, object=["B", "x" * 5000]), "characters"),
    "zero-width name": (with_(GOOD, object=["B", "D\u200bD"]), "U\\+200B|invisible"),
    "start after end": (with_(GOOD, start=["2016", "2016"], end=["2015", None]), "after end"),
    "bad start": (with_(GOOD, start=["2015", "someday"]), "cannot parse time"),
    "null t0": (with_(EXPORT, t0=[735599, None]), "empty t0"),
    "g0 out of enum": (with_(EXPORT, g0=[1, 9]), "g0 outside the granularity enum"),
    "export start after end": (with_(EXPORT, t0=[735599, 735999], t1=[735963, 735990], g1=[1, 1]), "t0 > t1"),
    "duplicate ids": (with_(EXPORT, id=[0, 0]), "duplicate id"),
    "partial export": (with_(EXPORT, g1=None), "not g1"),
    "open start with a day": (with_(EXPORT, g0=[0, 1]), "disagree"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_malformed_parquet_file_is_a_data_error_and_writes_nothing(tmp_path: Path, case: str) -> None:
    columns, message = BAD_FILES[case]
    src = write(tmp_path, columns)
    out = tmp_path / "out.duckdb"
    with pytest.raises(DataError, match=message) as caught:
        import_parquet(src, out)
    assert re.search(r"row|column|parquet:\d+: ", str(caught.value))
    assert not out.exists() and not list(tmp_path.glob("*.partial*"))  # no store left behind
    res = CliRunner().invoke(app, ["kg", "convert", str(src), str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output and not out.exists(), res.output


def test_good_parquet_files_import_with_open_ends_and_events(tmp_path: Path) -> None:
    store = import_parquet(write(tmp_path, GOOD))
    assert [(f.subject, str(f.start), f.end) for f in store][1] == ("C", "2016-03", None)  # NULL end: open
    store.close()
    no_end = write(tmp_path, with_(GOOD, end=None), "events.parquet")
    with import_parquet(no_end) as events:
        assert all(f.is_point for f in events)
    exported = import_parquet(write(tmp_path, EXPORT, "export.parquet"))
    assert len(exported) == 2 and exported.facts(subject="C")[0].end is None
    exported.close()


def test_a_failed_conversion_leaves_no_store_and_running_again_works(tmp_path: Path) -> None:
    bad = write(tmp_path, with_(GOOD, subject=["A", None]), "bad.parquet")
    out = tmp_path / "kg.duckdb"
    runner = CliRunner()
    assert runner.invoke(app, ["kg", "convert", str(bad), str(out)]).exit_code == 2
    assert not out.exists()
    good = write(tmp_path, GOOD, "good.parquet")
    res = runner.invoke(app, ["kg", "convert", str(good), str(out)])
    assert res.exit_code == 0, res.output
    with DuckDBStore.open(out, read_only=True) as store:
        assert len(store) == 2
    tsv = tmp_path / "kg.tsv"
    tsv.write_text("A\tr\tB\t2015\n", encoding="utf-8")
    assert runner.invoke(app, ["kg", "convert", str(tsv), str(tmp_path / "t.duckdb")]).exit_code == 0
    assert not list(tmp_path.glob(".*.partial*"))


_CELL = (
    st.none()
    | st.text(max_size=12)
    | st.integers(-(10**10), 10**10)
    | st.sampled_from(["2015", "2015-03", "2015-02-30", "", "\u2028", "\u200b", "x" * 1200])
)
_COLUMN_NAMES = st.sampled_from(
    ["subject", "relation", "object", "start", "end", "id", "t0", "t1", "g0", "g1", "other"]
)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_parquet_import_is_a_store_or_a_data_error(
    tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    names = data.draw(st.lists(_COLUMN_NAMES, min_size=1, max_size=8, unique=True))
    n = data.draw(st.integers(1, 4))
    columns: dict[str, Any] = {}
    for name in names:
        kind = data.draw(st.sampled_from(["text", "int", "mixed"]))
        if kind == "text":
            texts = data.draw(st.lists(st.none() | st.text(max_size=8), min_size=n, max_size=n))
            columns[name] = pa.array(texts, pa.string())
        elif kind == "int":
            columns[name] = pa.array(data.draw(st.lists(st.none() | st.integers(-5, 10**6), min_size=n,
                                                        max_size=n)), pa.int64())  # fmt: skip
        else:
            cells = data.draw(st.lists(_CELL, min_size=n, max_size=n))
            columns[name] = pa.array([None if c is None else str(c) for c in cells], pa.string())
    tmp = tmp_path_factory.mktemp("pq")
    src = tmp / "facts.parquet"
    pq.write_table(pa.table(columns), src)
    try:
        store = import_parquet(src)
    except DataError:
        return
    with store:
        for fact in store:  # what was accepted reads back as facts with real names
            assert fact.subject and fact.relation and fact.object and fact.subject != "None"


# --- item 11: loaders skip a malformed entry with a counted warning by default -------------------------
CRLT_FLAW = [
    {"id": "S1", "query": "Is A older than B?", "answer": True, "Reasoning Strategy": ["temporal"],
     "KG Triples": "1- (A, date of birth, 1950), 2- (B, date of birth, 1960)"},
    {"id": "S108", "query": "Is sholezard a dessert?", "answer": True,
     "KG Triples": "1- (sholezard, instance of, dessert), 2- (sholezard, part of Iranian cuisine)"},
]  # fmt: skip


def crlt_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "crlt_kgqa"
    folder.mkdir()
    (folder / "CR-LT-QA.json").write_text(json.dumps(CRLT_FLAW), encoding="utf-8")
    return folder


def test_a_crlt_entry_that_is_not_a_triple_is_skipped_and_named(tmp_path: Path) -> None:
    path = crlt_dir(tmp_path) / "CR-LT-QA.json"
    kg = load_kg(path, format="crlt", cache=False)
    report = kg.load_report
    assert report is not None and report.n_skipped == 1 and kg.has_entity("sholezard")
    warning = report.warning()
    assert warning is not None and "S108" in warning and "sholezard, part of Iranian cuisine" in warning
    with pytest.raises(DataError) as caught:
        load_kg(path, format="crlt", strict=True, cache=False)
    assert "--strict" in str(caught.value) and "strict=False" not in str(caught.value)


def test_a_malformed_tsv_line_is_skipped_and_counted_by_default(tmp_path: Path) -> None:
    path = tmp_path / "kg.tsv"
    path.write_text("A\tr\tB\t2015\nA\tr\n\u200bC\tr\tD\t2015\nE\tr\tF\t2016\t\n", encoding="utf-8")
    kg = load_kg(path, format="tsv", cache=False)
    assert len(kg) == 2 and kg.load_report is not None and kg.load_report.n_skipped == 2
    assert kg.facts(subject="E")[0].end is None  # an empty end field: ongoing
    with pytest.raises(DataError, match="--strict"):
        load_kg(path, format="tsv", cache=False, strict=True)


def _eval(tmp_path: Path, data_dir: Path, *extra: str) -> Any:
    out = tmp_path / "run"
    args = ["eval", "--dataset", "crlt_qa", "--data-dir", str(data_dir), "--method", "r3", "--llm", "fake",
            "--output", str(out), "--limit", "1", *extra]  # fmt: skip
    return CliRunner().invoke(app, args), out


def test_eval_gets_past_a_flawed_entry_and_reports_it(tmp_path: Path) -> None:
    res, out = _eval(tmp_path, crlt_dir(tmp_path))
    assert res.exit_code == 0, res.output
    warnings = json.loads((out / "report.json").read_text(encoding="utf-8"))["warnings"]
    assert any("S108" in w and "--strict" in w for w in warnings), warnings
    again = tmp_path / "again"
    again.mkdir()
    strict, _ = _eval(again, crlt_dir(again), "--strict")
    error = strict.exception  # `tkgqa` (cli.main) prints it as one line, exit status 2
    assert isinstance(error, DataError) and "S108" in str(error)
    assert "--strict" in str(error) and "strict=False" not in str(error)


def test_eval_on_the_shared_crlt_data_gets_past_loading(tmp_path: Path, shared_data: Path) -> None:
    folder = shared_data / "crlt_kgqa"
    if not (folder / "CR-LT-QA.json").is_file():
        pytest.skip(f"no CR-LT-KGQA data in {folder}")
    res, out = _eval(tmp_path, folder)
    assert res.exit_code == 0, res.output
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["n"] == 1


def test_no_loader_message_names_a_python_keyword() -> None:
    import tkgqa.kg.builder as builder

    assert "strict=False" not in builder.STRICT_HINT and "--strict" in builder.STRICT_HINT
    assert issubclass(DataError, TKGQAError)


def test_a_malformed_question_is_left_out_with_a_warning_naming_it(tmp_path: Path) -> None:
    from tkgqa.datasets import load_dataset

    path = tmp_path / "q.json"
    rows = [
        {"quid": 1, "question": "Who?", "qtype": "equal"},
        {"quid": 2, "question": "x", "answer_type": "place"},
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")
    ds = load_dataset("multitq", questions=path)
    assert [q.qid for q in ds.questions] == ["1"]
    assert len(ds.warnings) == 1 and "question #1" in ds.warnings[0] and "--strict" in ds.warnings[0]
    only_bad = tmp_path / "bad.json"
    only_bad.write_text(json.dumps(rows[1:]), encoding="utf-8")
    with pytest.raises(DataError, match="answer_type"):  # nothing parses: not this format, an error
        load_dataset("multitq", questions=only_bad)
