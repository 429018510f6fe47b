"""The shipped data catalogue: every pin is one of ``../shared/data/UPSTREAM.tsv``'s rows, every pinned
file that the shared folder holds byte for byte has the pinned blob id, names agree with loaders."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.datasets import DATASETS
from tkgqa.datasets.sources import catalogue, git_blob_id
from tkgqa.datasets.sources.catalogue import dataset_folder
from tkgqa.datasets.sources.convert import CONVERTERS
from tkgqa.errors import ConfigError, NotFoundError

_load_commands()


@pytest.fixture(scope="module")
def upstream(shared_data: Path) -> dict[tuple[str, str, str], tuple[str, int | None]]:
    rows = {}
    with (shared_data / "UPSTREAM.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            size = int(row["size_bytes"]) if row["size_bytes"] else None
            rows[(row["repo"], row["commit"], row["path"])] = (row["git_blob_sha1"], size)
    return rows


def test_every_pin_is_a_row_of_upstream_tsv(upstream: dict) -> None:
    pins = [f.pin for e in catalogue().entries for f in e.files]
    assert len(pins) > 100
    for pin in pins:
        assert upstream.get((pin.repo, pin.commit, pin.path)) == (pin.blob, pin.size), pin.source


#: The shared files that are byte copies of the authors' (PROVENANCE.md): entry → its files' dests.
BYTE_COPIES = {
    "multitq": ["kg/entity2id.json", "kg/relation2id.json", "kg/ts2id.json"],
    "cronquestions": ["kg/wd_id2entity_text.txt", "kg/wd_id2relation_text.txt"],
}


def test_the_shared_byte_copies_have_the_pinned_blob_ids(shared_data: Path) -> None:
    cat = catalogue()
    expected = {name: dests for name, dests in BYTE_COPIES.items()}
    expected["r3-prompts"] = [f.dest for f in cat.get("r3-prompts").files]
    assert len(expected["r3-prompts"]) == 97
    for name, dests in expected.items():
        entry = cat.get(name)
        pins = {f.dest: f.pin for f in entry.files}
        for dest in dests:
            path = shared_data / entry.folder / dest
            assert git_blob_id(path) == pins[dest].blob, f"{name}: {dest}"


def test_names_folders_and_conversions_agree_with_the_loaders() -> None:
    from tkgqa.eval.reproduce.data import DATA

    cat = catalogue()
    for e in cat.entries:
        assert set(e.datasets) <= set(DATASETS.names()), e.name
        assert {c.name for c in e.convert} <= set(CONVERTERS), e.name
        assert len({f.dest for f in e.files}) == len(e.files), e.name
    for dataset, spec in DATA.items():
        entry = cat.for_dataset(dataset)
        assert entry is not None and entry.folder == spec.folder, dataset


def test_unknown_names_get_near_matches() -> None:
    with pytest.raises(NotFoundError) as err:
        catalogue().get("multitqq")
    assert "did you mean: 'multitq'" in str(err.value)
    assert catalogue().get("crlt_qa").name == "crlt-kgqa"  # a loader name finds its entry


def test_a_dataset_is_found_under_the_data_root_or_named_for_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "data"))
    with pytest.raises(NotFoundError, match="tkgqa data fetch multitq"):
        dataset_folder("multitq")
    (tmp_path / "data" / "multitq").mkdir(parents=True)
    assert dataset_folder("multitq") == tmp_path / "data" / "multitq"
    assert dataset_folder("jsonl") is None
    from tkgqa.datasets import load_dataset

    with pytest.raises(ConfigError, match="did you mean 'multitq'"):
        load_dataset("multitqq")
    with pytest.raises(NotFoundError, match="tkgqa data fetch crlt-kgqa"):
        load_dataset("crlt_qa")


def test_the_older_variable_is_read_with_the_same_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tkgqa.home import data_root

    monkeypatch.delenv("TKGQA_DATA", raising=False)
    monkeypatch.setenv("TKGQA_SHARED_DATA", str(tmp_path / "old"))
    assert data_root() == tmp_path / "old"
    monkeypatch.delenv("TKGQA_SHARED_DATA")
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    assert data_root() == tmp_path / "home" / "data"


def test_list_json_pins_multitq_and_timequestions_to_the_authors_blob_ids(upstream: dict) -> None:
    result = CliRunner().invoke(app, ["data", "list", "--json"])
    assert result.exit_code == 0, result.output
    entries = {e["name"]: e for e in json.loads(result.output)["entries"]}
    timer4 = ("qianxinying/TimeR4", "508cc0267e55f24877b136f23f0f3c425f2d37b4")
    full = {f["dest"]: f for f in entries["multitq"]["files"]}["kg/full.txt"]
    assert full["git_blob"] == upstream[(*timer4, "datasets/MultiTQ/kg/full.txt")][0]
    assert full["source"] == f"github:{timer4[0]}@{timer4[1]}:datasets/MultiTQ/kg/full.txt"
    tq = {f["dest"]: f for f in entries["timequestions"]["files"]}
    assert (
        tq["questions/test.json"]["git_blob"]
        == upstream[(*timer4, "datasets/TimeQuestions/questions/test.json")][0]
    )
    assert entries["cronquestions"]["manual"]["url"].startswith("https://drive.google.com/")


def test_replay_accepts_a_recordings_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tkgqa.llm.replay_backend import ReplayLLM

    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "data"))
    with pytest.raises(NotFoundError, match="tkgqa data fetch timer4-chatgpt"):
        ReplayLLM("timer4-chatgpt")
    cassette = tmp_path / "data" / "llm_recordings" / "timer4_tq_chatgpt_answer.jsonl"
    cassette.parent.mkdir(parents=True)
    cassette.write_text(json.dumps({"id": 1, "prompt": "p", "response": "r"}) + "\n", encoding="utf-8")
    assert ReplayLLM("timer4-chatgpt").cassette.path == cassette
    with pytest.raises(ConfigError, match="cannot read the cassette"):
        ReplayLLM("no-such-recording.jsonl")


def test_a_kg_by_dataset_name_is_that_datasets_kg_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tkgqa.api.resolve import open_kg

    folder = tmp_path / "data" / "multitq"
    (folder / "kg").mkdir(parents=True)
    (folder / "questions").mkdir()
    (folder / "kg" / "full.txt").write_text("Iraq\tConsult\tChina\t2014-11-02\n", encoding="utf-8")
    question = {"quid": 1, "question": "Who consulted China?", "answers": ["Iraq"], "answer_type": "entity"}
    (folder / "questions" / "test.json").write_text(json.dumps([question]), encoding="utf-8")
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "data"))
    assert len(open_kg("multitq")) == 1


def test_a_data_root_that_cannot_hold_data_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$TKGQA_DATA`` naming a missing folder (a typo?) gets a note; naming a file is an error. Before,
    both said only "nothing under … yet" with exit 0."""
    _load_commands()
    monkeypatch.setenv("TKGQA_DATA", str(tmp_path / "typo"))
    result = CliRunner().invoke(app, ["data", "verify"])
    assert (
        result.exit_code == 0 and "$TKGQA_DATA names" in result.output and "does not exist" in result.output
    )
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    monkeypatch.setenv("TKGQA_DATA", str(a_file))
    for command in (["data", "verify"], ["data", "list"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2 and "is a file, not a folder" in result.output, result.output
