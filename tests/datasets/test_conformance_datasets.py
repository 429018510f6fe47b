"""Conformance suite of the dataset loaders (:data:`~tkgqa.datasets.core.DATASETS`), over every registered
loader: ``demo`` and ``jsonl`` (a small file written here) and plugin loaders always; the benchmark loaders on
``/work/shared/data`` (skipped when it is absent).

Every loader must: return a :class:`Dataset` of :class:`Question` objects with text and unique string ids,
answers as strings, a JSON-ready ``summary()`` counting them, an existing ``kg_path`` when one is set; reject
an unknown option with ConfigError; and raise nothing but a project error on a junk question file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.datasets import Dataset, Question, load_dataset
from tkgqa.datasets.core import DATASETS
from tkgqa.datasets.loaders import DEMO_KG
from tkgqa.errors import ConfigError, TKGQAError
from tkgqa.kg import Fact

#: dataset → its folder under the shared benchmark data
SHARED = {
    "multitq": "multitq",
    "timequestions": "timequestions",
    "cronquestions": "cronquestions",
    "clqa": "clqa_wiki",
    "crlt_qa": "crlt_kgqa",
    "crlt_claims": "crlt_kgqa",
    "recipe_mpr": "recipe_mpr",
}
JSONL_ROWS = [
    {"qid": "a", "question": "Who visited China in November 2014?", "answers": ["Barack Obama"]},
    {"question": "When?", "answers": "2014", "answer_type": "time", "context": [
        {"subject": "A", "relation": "r", "object": "B", "start": "2014"}]},
]  # fmt: skip
#: plugin datasets whose input is a plain text file of ``question<TAB>answer`` lines
LINES = {"example_lines"}


def source(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | None:
    """Where ``name``'s questions come from (``None``: the loader needs none)."""
    if name == "demo":
        return None
    if name == "jsonl":
        path = tmp_path / "q.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in JSONL_ROWS) + "\n", encoding="utf-8")
        return path
    if name in LINES:
        path = tmp_path / "q.txt"
        path.write_text("Who visited China?\tBarack Obama\n", encoding="utf-8")
        return path
    if name in SHARED:
        folder = Path(request.getfixturevalue("shared_data")) / SHARED[name]  # skips when data is absent
        if not folder.is_dir():
            pytest.skip(f"shared benchmark data not found at {folder}")
        return folder
    pytest.skip(f"no sample input known for the dataset {name!r}")


NAMES = DATASETS.names()


@pytest.mark.parametrize("name", NAMES)
def test_loader_returns_well_formed_questions(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    ds = load_dataset(name, source(name, tmp_path, request))
    assert isinstance(ds, Dataset) and len(ds) > 0
    assert all(isinstance(q, Question) for q in ds)
    qids = [q.qid for q in ds]
    assert all(isinstance(i, str) and i for i in qids) and len(set(qids)) == len(qids), "qids must be unique"
    assert all(isinstance(q.text, str) and q.text.strip() for q in ds)
    assert all(isinstance(a, str) for q in ds for a in q.answers)
    assert all(isinstance(f, Fact) for q in ds if q.context is not None for f in q.context)
    summary = json.loads(json.dumps(ds.summary()))
    assert summary["n"] == len(ds)
    if ds.kg_path is not None:
        assert Path(ds.kg_path).exists() or str(ds.kg_path) == DEMO_KG  # "demo": the bundled KG


@pytest.mark.parametrize("name", NAMES)
def test_loader_rejects_unknown_options(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    src = source(name, tmp_path, request)
    with pytest.raises(ConfigError):
        load_dataset(name, src, no_such_option_xyz=1)


_JUNK = st.one_of(
    st.binary(max_size=200),
    st.lists(st.sampled_from(['{"question": 1}', "[", "{}", '{"questions": {}}', "\t", "null", "[[]]",
                              '{"Id": [], "Question": {}}', '{"question": "q", "answers": [[1]]}', "\xff"]),
             max_size=5).map(lambda xs: "\n".join(xs).encode("utf-8", "surrogateescape")),
)  # fmt: skip


@pytest.mark.parametrize("name", [n for n in NAMES if n != "demo"])
@settings(
    max_examples=20, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=_JUNK, suffix=st.sampled_from([".json", ".jsonl", ".txt"]))
def test_junk_question_files_raise_only_project_errors(
    name: str, tmp_path_factory: pytest.TempPathFactory, data: bytes, suffix: str
) -> None:
    folder = tmp_path_factory.mktemp("junk")
    path = folder / f"questions{suffix}"
    path.write_bytes(data)
    try:
        ds = load_dataset(name, folder, questions=path)
    except TKGQAError:
        return
    assert all(isinstance(q, Question) for q in ds)
