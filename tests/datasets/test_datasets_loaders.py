"""Each dataset loader on small hand-written files in the official layouts."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from tkgqa.datasets import DATASETS, Dataset, load_dataset
from tkgqa.errors import ConfigError, DataError, NotFoundError
from tkgqa.time import TimePoint


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), "utf-8")
    return path


# --- MultiTQ ----------------------------------------------------------------------------------------
MULTITQ = [
    {
        "quid": 7,
        "question": "Who visited Iraq first after 2006?",
        "answers": ["Jack Straw"],
        "answer_type": "entity",
        "time_level": "day",
        "qtype": "after_first",
        "qlabel": "Multiple",
    },
    {
        "quid": 8,
        "question": "In which month did China last consult Iran?",
        "answers": ["2012-05"],
        "answer_type": "time",
        "time_level": "month",
        "qtype": "first_last",
        "qlabel": "Single",
        "derived_fields": ["qlabel"],
    },
]


@pytest.fixture
def multitq_dir(tmp_path: Path) -> Path:
    root = tmp_path / "multitq"
    write_json(root / "questions" / "test.json", MULTITQ)
    (root / "kg").mkdir()
    (root / "kg" / "full_partial.txt").write_text("Iraq\tHost_a_visit\tJack_Straw\t2006-01-07\n", "utf-8")
    return root


def test_multitq_fields_and_kg(multitq_dir: Path) -> None:
    ds = load_dataset("multitq", multitq_dir)
    assert isinstance(ds, Dataset) and ds.name == "multitq" and len(ds) == 2
    q = ds.questions[0]
    assert (q.qid, q.answers, q.answer_ids, q.answer_type) == ("7", ["Jack Straw"], ["Jack_Straw"], "entity")
    assert (q.qtype, q.qlabel, q.time_level, q.dataset) == ("after_first", "Multiple", "day", "multitq")
    assert ds.questions[1].answer_ids == ["2012-05"]
    assert ds.questions[1].extra == {"derived_fields": ["qlabel"]}
    assert ds.kg_path is not None and ds.kg_path.name == "full_partial.txt"
    assert ds.meta["kg_partial"] is True


def test_multitq_prefers_full_kg_and_kg_override(multitq_dir: Path, tmp_path: Path) -> None:
    (multitq_dir / "kg" / "full.txt").write_text("A\tB\tC\t2005-01-01\n", "utf-8")
    ds = load_dataset("multitq", multitq_dir)
    assert ds.kg_path is not None and ds.kg_path.name == "full.txt" and not ds.meta["kg_partial"]
    other = tmp_path / "other.txt"
    other.write_text("A\tB\tC\t2005-01-01\n", "utf-8")
    assert load_dataset("multitq", multitq_dir, kg=other).kg_path == other
    with pytest.raises(NotFoundError):
        load_dataset("multitq", multitq_dir, kg=tmp_path / "missing.txt")


def test_multitq_subset_file_and_dev_split(multitq_dir: Path, tmp_path: Path) -> None:
    subset = write_json(tmp_path / "subset.json", MULTITQ[1:])
    ds = load_dataset("multitq", multitq_dir, questions=subset)
    assert [q.qid for q in ds] == ["8"]
    assert ds.kg_path is not None  # the KG still comes from the dataset folder
    with pytest.raises(NotFoundError, match="dev"):
        load_dataset("multitq", multitq_dir, split="dev")


def test_multitq_without_answers_and_bad_input(tmp_path: Path) -> None:
    f = write_json(tmp_path / "q.json", [{"quid": 1, "question": "Who?", "qtype": "equal"}])
    assert load_dataset("multitq", questions=f).questions[0].answers == []
    bad = tmp_path / "bad.json"
    bad.write_text('[{"quid": 1,\n "question": }]', "utf-8")
    with pytest.raises(DataError) as err:
        load_dataset("multitq", questions=bad)
    assert err.value.line == 2
    f2 = write_json(tmp_path / "q2.json", [{"quid": 1, "question": "x", "answer_type": "place"}])
    with pytest.raises(DataError, match="answer_type"):
        load_dataset("multitq", questions=f2)


# --- TimeQuestions ----------------------------------------------------------------------------------
TQ = [
    {
        "Id": 1,
        "Question": "what time is ada lovelaces birthday",
        "Temporal question type": ["Temp.Ans"],
        "Answer": [{"AnswerType": "Value", "AnswerArgument": "1815-12-10T00:00:00Z"}],
        "Temporal signal": ["No signal"],
    },
    {
        "Id": 2,
        "Question": "what prize did marie curie win first",
        "Temporal question type": ["Ordinal", "Explicit"],
        "Answer": [
            {"AnswerType": "Entity", "WikidataQid": "Q11", "WikidataLabel": "Davy Medal"},
            {"AnswerType": "Entity", "WikidataQid": "Q11", "WikidataLabel": "Davy Medal"},
        ],
    },
    {
        "Id": 3,
        "Question": "population of testville in 2000",
        "Temporal question type": ["Explicit"],
        "Answer": [{"AnswerType": "Value", "AnswerArgument": "12345"}],
    },
]
RETRIEVED = [
    {
        "id": 1,
        "question": "what time is ada lovelaces birthday",
        "original_question": "what time is ada lovelaces birthday",
        "timer4_retrieved_facts": [
            "Ada Lovelace significant event date of birth from 1815 to 1815.",
            "Ada Lovelace father Lord Byron from 1 to 2916.",
            "Ada Lovelace zzz unknown thing from 1 to 2916.",
        ],
    },
    {
        "id": 2,
        "question": "which prize did Marie Curie win first?",
        "original_question": "what prize did marie curie win first",
        "timer4_retrieved_facts": [
            "Marie Curie award received Davy Medal from 1903 to 1903.",
            "Testville population  from 2000 to 2000.",
            "Marie Curie award received Nobel Prize from 1911 to 1903.",
        ],
    },
]


@pytest.fixture
def tq_dir(tmp_path: Path) -> Path:
    root = tmp_path / "timequestions"
    write_json(root / "questions" / "test.json", TQ)
    write_json(root / "retrieved" / "test_timer4_retrieved_facts.json", RETRIEVED)
    labels = root / "kg" / "wd_id2relation_text.txt"
    labels.parent.mkdir()
    labels.write_text("P166\taward received\nP793\tsignificant event\n", "utf-8")
    return root


def test_timequestions_answers(tq_dir: Path) -> None:
    ds = load_dataset("timequestions", tq_dir)
    q1, q2, q3 = ds.questions
    assert (q1.qid, q1.answers, q1.answer_type, q1.types) == ("1", ["1815"], "time", ["Temp.Ans"])
    assert q1.extra["answer_values"] == ["1815-12-10T00:00:00Z"]
    assert (q2.answers, q2.answer_ids, q2.answer_type) == (["Davy Medal"], ["Q11"], "entity")
    assert q2.types == ["Ordinal", "Explicit"] and q2.qtype == "Explicit+Ordinal"
    assert (q3.answers, q3.answer_type) == (["12345"], "value")
    day = load_dataset("timequestions", tq_dir, time_granularity="day")
    assert day.questions[0].answers == ["1815-12-10"]


def test_timequestions_retrieved_context(tq_dir: Path) -> None:
    ds = load_dataset("timequestions", tq_dir)
    assert ds.meta["context"] == "retrieved" and ds.has_context
    q1, q2, q3 = ds.questions
    assert q1.context is not None and [(f.subject, f.relation, f.object) for f in q1.context] == [
        ("Ada Lovelace", "significant event", "date of birth"),
        ("Ada Lovelace", "father", "Lord Byron"),  # "father" is an inferred extra label
    ]
    assert q1.context[0].start == TimePoint(1815) and q1.context[1].start is None
    assert q2.context is not None and len(q2.context) == 2
    swapped = q2.context[1]
    assert (swapped.start, swapped.end) == (TimePoint(1903), TimePoint(1911))
    assert q3.context == []  # no retrieved entry: empty context, counted
    assert ds.meta["missing_retrieved"] == 1
    assert ds.meta["unsplit_facts"] == 1
    assert ds.meta["unsplit_examples"] == ["Ada Lovelace zzz unknown thing from 1 to 2916."]
    assert ds.meta["no_object_facts"] == 1 and ds.meta["reversed_time_facts"] == 1
    assert q2.extra["timer4_question"] == "which prize did Marie Curie win first?"
    assert q2.text == "what prize did marie curie win first" and "timer4_question" not in q1.extra


def test_timequestions_context_modes(tq_dir: Path, tmp_path: Path) -> None:
    assert all(q.context is None for q in load_dataset("timequestions", tq_dir, context="kg"))
    (tq_dir / "kg" / "full.txt").write_text("Q1\tP1\tQ2\t1990\t1995\n", "utf-8")
    with_kg = load_dataset("timequestions", tq_dir)
    assert with_kg.meta["context"] == "kg" and with_kg.kg_path is not None
    assert load_dataset("timequestions", tq_dir, context="retrieved").has_context
    bare = tmp_path / "bare"
    write_json(bare / "questions" / "test.json", TQ)
    with pytest.raises(ConfigError, match="retrieved"):
        load_dataset("timequestions", bare, context="retrieved")
    with pytest.raises(ConfigError):
        load_dataset("timequestions", tq_dir, context="web")


# --- CronQuestions ------------------------------------------------------------------------------------
CRON = [
    {
        "question": "Which team did Q1 play for in 2000?",
        "answers": ["Q10", "Q11"],
        "answer_type": "entity",
        "entities": ["Q1"],
        "times": [2000],
        "relations": ["P54"],
        "type": "simple_entity",
        "paraphrases": ["Which team did Roberto Colombo play for in 2000?"],
        "ari_test_index": 1000,
        "ari_retrieved_fact_lines": [
            "Roberto Colombo member of sports team A.C. Milan from 1994 to 2000",
            "Roberto Colombo from 2011 to 2011",
        ],
    },
    {
        "question": "When did Q1 join Q11",
        "answers": [2000],
        "answer_type": "time",
        "entities": ["Q1", "Q11"],
        "times": [],
        "relations": ["P54"],
        "type": "first_last",
        "paraphrases": [],
        "ari_test_index": 1001,
    },
]


@pytest.fixture
def cron_dir(tmp_path: Path) -> Path:
    root = tmp_path / "cronquestions"
    write_json(root / "questions" / "test_sample.json", CRON)
    (root / "kg").mkdir()
    (root / "kg" / "wd_id2entity_text.txt").write_text(
        "Q1\tRoberto Colombo\nQ10\tA.C. Milan\nQ11\tCalcio Padova\n", "utf-8"
    )
    (root / "kg" / "wd_id2relation_text.txt").write_text("P54\tmember of sports team\n", "utf-8")
    return root


def test_cronquestions_json(cron_dir: Path) -> None:
    ds = load_dataset("cronquestions", cron_dir)
    q1, q2 = ds.questions
    assert (q1.qid, q1.answers, q1.answer_ids) == ("1000", ["A.C. Milan", "Calcio Padova"], ["Q10", "Q11"])
    assert q1.text == "Which team did Roberto Colombo play for in 2000?"
    assert (q1.qtype, q1.qlabel, q1.entities, q1.times) == ("simple_entity", "simple", ["Q1"], ["2000"])
    assert (q2.answers, q2.answer_type, q2.qlabel) == (["2000"], "time", "complex")
    assert q2.text == "When did Roberto Colombo join Calcio Padova"  # QIDs replaced by labels
    assert q2.extra["question_with_ids"] == "When did Q1 join Q11"
    assert q1.context is None and ds.kg_path is None


def test_cronquestions_retrieved_context(cron_dir: Path) -> None:
    ds = load_dataset("cronquestions", cron_dir, context="retrieved")
    q1 = ds.questions[0]
    assert q1.context is not None and len(q1.context) == 1
    assert q1.context[0].object == "A.C. Milan" and q1.context[0].end == TimePoint(2000)
    assert ds.meta["unsplit_facts"] == 1 and ds.questions[1].context == []


def test_missing_inputs_that_change_results_are_warnings(tq_dir: Path, cron_dir: Path) -> None:
    ds = load_dataset("timequestions", tq_dir)
    assert len(ds.warnings) == 1 and "1 of 3 questions have no entry in the retrieved" in ds.warnings[0]
    (tq_dir / "kg" / "wd_id2relation_text.txt").unlink()
    assert load_dataset("timequestions", tq_dir).warnings == ds.warnings  # ../cronquestions/kg/ has one
    (cron_dir / "kg" / "wd_id2relation_text.txt").unlink()
    bare = load_dataset("timequestions", tq_dir)
    labels = next(w for w in bare.warnings if "relation-label" in w)
    assert "wd_id2relation_text.txt" in labels and "could not be split" in labels
    assert bare.meta["unsplit_facts"] > ds.meta["unsplit_facts"]  # what the warning is about
    assert bare.summary()["warnings"] == list(bare.warnings)
    assert load_dataset("timequestions", tq_dir, context="kg").warnings == ()  # no retrieved facts used
    assert load_dataset("cronquestions", cron_dir).warnings == ()  # relation labels only split facts
    retrieved = load_dataset("cronquestions", cron_dir, context="retrieved")
    assert len(retrieved.warnings) == 2 and "relation-label file" in retrieved.warnings[0]
    assert "1 of 2 questions have no retrieved facts" in retrieved.warnings[1]
    (cron_dir / "kg" / "wd_id2entity_text.txt").unlink()
    nolabels = load_dataset("cronquestions", cron_dir)
    assert len(nolabels.warnings) == 1 and "entity-label file" in nolabels.warnings[0]
    assert "2 of 2 questions keep Wikidata ids" in nolabels.warnings[0]  # answers of q1, text of q2


def test_cronquestions_pickle_only_when_allowed(tmp_path: Path) -> None:
    official = [dict(CRON[0], answers={"Q11", "Q10"})]
    official[0].pop("ari_test_index")
    path = tmp_path / "test.pickle"
    path.write_bytes(pickle.dumps(official))
    ds = load_dataset("cronquestions", questions=path)
    assert ds.questions[0].answer_ids == ["Q10", "Q11"]  # a set: sorted, labels unknown → ids
    with pytest.raises(ConfigError, match="unpickle"):
        load_dataset("cronquestions", questions=path, allow_pickle=False)


# --- CLQA-Wiki -------------------------------------------------------------------------------------------
def test_clqa(tmp_path: Path) -> None:
    rows = [
        {"clqa_index": 4, "question": "Who are the children of X?", "label": ["A", "B"], "type": "2p"},
        {"clqa_index": 9, "question": "Which is older?", "label": ["C"], "type": "compare"},
    ]
    path = write_json(tmp_path / "CLQA_Wiki_v1.json", rows)
    for ds in (load_dataset("clqa", tmp_path), load_dataset("clqa", path)):
        assert [q.qid for q in ds] == ["4", "9"] and ds.questions[0].answers == ["A", "B"]
        assert ds.questions[0].qtype == "2p" and ds.meta["set_valued"]


# --- JSONL --------------------------------------------------------------------------------------------
def test_jsonl_good(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    lines = [
        {"question": "Who?", "answers": ["A"], "qid": "x1", "qtype": "equal", "note": 3},
        {"question": "When?", "answers": "2015", "answer_type": "time", "types": ["Explicit"]},
        {
            "question": "Ctx?",
            "answers": ["B"],
            "context": [{"subject": "A", "relation": "r", "object": "B", "start": "2001", "end": None}],
        },
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", "utf-8")
    (tmp_path / "kg.tsv").write_text("A\tr\tB\t2001\n", "utf-8")
    ds = load_dataset("jsonl", path)
    a, b, c = ds.questions
    assert (a.qid, a.extra, b.qid, b.answers, b.types) == ("x1", {"note": 3}, "2", ["2015"], ["Explicit"])
    assert c.context is not None and c.context[0].start == TimePoint(2001) and c.context[0].end is None
    assert ds.kg_path is None  # data_dir is a file: no KG lookup
    assert load_dataset("jsonl", tmp_path).kg_path == tmp_path / "kg.tsv"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ('["a list"]', "JSON object"),
        ('{"answers": ["A"]}', "question"),
        ('{"question": "Q?"}', "answers"),
        ('{"question": "Q?", "answers": [{"x": 1}]}', "strings"),
        ('{"question": "Q?", "answers": ["A"], "answer_type": "place"}', "answer_type"),
        ('{"question": "Q?", "answers": ["A"], "context": [{"subject": "A"}]}', "lacks"),
        ('{"question": "Q?", "answers": ["A"], "qid": "1"}', "duplicate qid"),
    ],
)
def test_jsonl_bad_lines_report_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "ok", "answers": ["A"], "qid": "1"}\n\n' + line + "\n", "utf-8")
    with pytest.raises(DataError, match=message) as err:
        load_dataset("jsonl", path)
    assert err.value.path == str(path) and err.value.line == 3
    assert str(err.value).startswith(f"{path}:3:")


# --- registry and errors --------------------------------------------------------------------------------
def test_registry_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_dataset("jsonl", questions=_one_jsonl(tmp_path))  # registers the loaders
    assert {"multitq", "timequestions", "cronquestions", "clqa", "jsonl"} <= set(DATASETS.names())
    with pytest.raises(ConfigError, match="unknown dataset"):
        load_dataset("nope", tmp_path)
    with pytest.raises(ConfigError, match="does not take"):
        load_dataset("jsonl", questions=_one_jsonl(tmp_path), colour="red")
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "no_data"))
    with pytest.raises(NotFoundError, match="tkgqa data fetch multitq"):  # by name, from the data root
        load_dataset("multitq")
    with pytest.raises(NotFoundError):
        load_dataset("multitq", tmp_path / "absent")
    with pytest.raises(NotFoundError, match="looked for"):
        load_dataset("multitq", tmp_path)


def _one_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text('{"question": "Q?", "answers": ["A"]}\n', "utf-8")
    return path


def test_dataset_rejects_duplicate_ids_and_summarises(tmp_path: Path) -> None:
    ds = load_dataset("jsonl", questions=_one_jsonl(tmp_path))
    with pytest.raises(DataError, match="duplicate"):
        Dataset("x", [ds.questions[0], ds.questions[0]])
    assert ds.summary()["n"] == 1
    assert len(ds.with_questions([], note="empty")) == 0


def test_dataset_loader_makes_the_loader_signature() -> None:
    """``@dataset_loader`` gives a ``load(request, *, own options)`` function the registered loader's
    signature: the shared arguments arrive as one request, its own options pass, any other is refused."""
    import inspect

    from tkgqa.datasets.core import DatasetRequest, dataset_loader

    seen: list[tuple[DatasetRequest, int]] = []

    @dataset_loader("toy", register=False)
    def load_toy(request: DatasetRequest, *, size: int = 1) -> Dataset:
        """The toy set."""
        seen.append((request, size))
        return Dataset("toy", [])

    load_toy("~/toy", split="dev", kg="kg.tsv", context="kg", size=3)
    request, size = seen[0]
    assert size == 3 and request.split == "dev" and request.kg == "kg.tsv" and request.context == "kg"
    assert request.root == Path("~/toy").expanduser() and request.questions is None
    with pytest.raises(ConfigError, match="dataset 'toy' does not take option"):
        load_toy("x", colour="red")
    assert load_toy.__doc__ == "The toy set." and load_toy.__name__ == "load_toy"
    assert list(inspect.signature(load_toy).parameters)[:5] == [
        "data_dir",
        "questions",
        "split",
        "kg",
        "context",
    ]
    assert "toy" not in DATASETS.names()
