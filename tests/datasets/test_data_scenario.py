"""The issue's "done when", end to end through the ``tkgqa`` command: from a fresh ``$TKGQA_HOME``,
``tkgqa data fetch timequestions --mirror URL`` against a mirror on 127.0.0.1, then ``tkgqa eval
--dataset timequestions`` with no ``--data-dir``; and one changed byte on the mirror makes fetch exit 2,
leaving nothing.

What the mirror serves (it cannot serve the authors' whole files, which are not here): the two Wikidata
label files are byte copies of the authors' (``../shared/data/cronquestions/kg``, pinned to the authors'
real blob ids); the questions, TimeR4's evaluation targets and TimeR4's ChatGPT results are fixtures built
from the first 40 shared test questions in the authors' formats (the results file rebuilt from the shared
retrieved facts), at the real upstream paths, with a test catalogue whose pins for those files are computed
from the fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from data_mirror import blob_id, serve

from tkgqa.datasets.sources.catalogue import CATALOGUE_FILE

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
N = 40
PREFIX = (
    "Based on the historical facts, please answer the given question. Please keep the answer as simple as "
    "possible and return all the possible answers as a list.\nHistorical facts:"
)


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")


def fixture_files(shared: Path) -> dict[str, bytes]:
    """Upstream path → bytes for the timequestions entry (see the module docstring)."""
    tq = shared / "timequestions"
    prompts = json.loads((tq / "prompt" / "test_prompt.json").read_text(encoding="utf-8"))[:N]
    ids = {p["id"] for p in prompts}
    tests = [
        q for q in json.loads((tq / "questions" / "test.json").read_text(encoding="utf-8")) if q["Id"] in ids
    ]
    dev = json.loads((tq / "questions" / "dev.json").read_text(encoding="utf-8"))[:5]
    retrieved = {
        r["id"]: r
        for r in json.loads(
            (tq / "retrieved" / "test_timer4_retrieved_facts.json").read_text(encoding="utf-8")
        )
    }
    results = [
        {
            "text": f"{PREFIX}{retrieved[p['id']]['timer4_retrieved_facts']!r}\nQuestion:\n {p['question']}?",
            "answers": str(p["answer"]),
            "question": p["question"],
            "response": retrieved[p["id"]]["timer4_chatgpt_response"],
        }
        for p in prompts
    ]
    labels = shared / "cronquestions" / "kg"
    return {
        "datasets/TimeQuestions/questions/test.json": _json(tests),
        "datasets/TimeQuestions/questions/dev.json": _json(dev),
        "datasets/TimeQuestions/prompt/test_prompt.json": _json(prompts),
        "datasets/TimeQuestions/kg/wd_id2entity_text.txt": (labels / "wd_id2entity_text.txt").read_bytes(),
        "datasets/TimeQuestions/kg/wd_id2relation_text.txt": (
            labels / "wd_id2relation_text.txt"
        ).read_bytes(),
        "results/TimeQuestions/ChatGPT/TimeR4.json": _json(results),
    }


def test_catalogue(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, dict[str, bytes]]:
    """The shipped ``timequestions`` entry with the fixtures' pins; mirror paths → bytes."""
    shipped = json.loads(
        (REPO_ROOT / "src/tkgqa/datasets/sources" / CATALOGUE_FILE).read_text(encoding="utf-8")
    )
    entry = next(e for e in shipped["entries"] if e["name"] == "timequestions")
    served = {}
    real = 0
    for f in entry["files"]:
        repo_commit, _, path = f["source"].removeprefix("github:").partition(":")
        repo, _, commit = repo_commit.partition("@")
        data = files[path]
        if blob_id(data) == f["blob"]:
            real += 1  # a byte copy of the authors' file: the real pin stays
        f["blob"], f["size"] = blob_id(data), len(data)
        served[f"{repo}/{commit}/{path}"] = data
    assert real == 2  # the two label files
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"catalogue": 1, "entries": [entry]}), encoding="utf-8")
    return path, served


test_catalogue.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def tkgqa(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tkgqa", *args], env=env, capture_output=True, text=True, timeout=600
    )


def fresh_env(tmp_path: Path, catalogue: Path, name: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"TKGQA_DATA", "TKGQA_SHARED_DATA", "TKGQA_DATA_MIRROR"}
    }
    env.update(TKGQA_HOME=str(tmp_path / name), TKGQA_DATA_CATALOGUE=str(catalogue), COLUMNS="200")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


def test_fetch_from_a_mirror_then_eval_by_name(tmp_path: Path, shared_data: Path) -> None:
    catalogue, served = test_catalogue(tmp_path, fixture_files(shared_data))
    env = fresh_env(tmp_path, catalogue, "home")
    with serve(served) as mirror:
        fetched = tkgqa(["data", "fetch", "timequestions", "--mirror", mirror.url], env)
    assert fetched.returncode == 0, fetched.stderr
    assert "licence:" in fetched.stderr and "6 file(s) downloaded and verified, 1 converted" in fetched.stdout
    folder = tmp_path / "home" / "data" / "timequestions"
    assert len(json.loads((folder / "retrieved" / "test_timer4_retrieved_facts.json").read_text())) == N
    verified = tkgqa(["data", "verify", "timequestions"], env)
    assert verified.returncode == 0 and "7 ok" in verified.stdout, verified.stdout + verified.stderr

    run = tmp_path / "run"
    evaluated = tkgqa(
        ["eval", "--dataset", "timequestions", "--method", "symbolic", "--limit", "20", "--output", str(run)],
        env,
    )
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads((run / "report.json").read_text())
    assert report["n"] == 20 and report["dataset"]["name"] == "timequestions"

    with serve(served) as mirror:  # idempotent: nothing is downloaded again
        again = tkgqa(["data", "fetch", "timequestions", "--mirror", mirror.url], env)
        assert again.returncode == 0 and mirror.requests == []
    assert "6 already present and verified" in again.stdout


def test_one_changed_byte_on_the_mirror_fails_and_leaves_no_dataset(
    tmp_path: Path, shared_data: Path
) -> None:
    catalogue, served = test_catalogue(tmp_path, fixture_files(shared_data))
    key = next(k for k in served if k.endswith("questions/test.json"))
    changed = bytearray(served[key])
    changed[100] = ord("#") if changed[100] != ord("#") else ord("%")
    served[key] = bytes(changed)
    env = fresh_env(tmp_path, catalogue, "home2")
    with serve(served) as mirror:
        fetched = tkgqa(["data", "fetch", "timequestions", "--mirror", mirror.url], env)
    assert fetched.returncode == 2
    assert (
        "timequestions/questions/test.json: expected" in fetched.stderr
        and blob_id(bytes(changed)) in fetched.stderr
    )
    data = tmp_path / "home2" / "data"
    assert not (data / "timequestions").exists() and not (data / ".staging").exists()
    missing = tkgqa(
        ["eval", "--dataset", "timequestions", "--method", "symbolic", "--output", str(tmp_path / "r")], env
    )
    assert missing.returncode == 2 and "tkgqa data fetch timequestions" in missing.stderr
