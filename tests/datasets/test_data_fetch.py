"""``tkgqa data``'s machinery against a mirror served on 127.0.0.1 (no network): fetch, resume after a cut
connection, a changed byte refused with nothing left behind, the offline message, idempotence, import of
files/folders/archives, unsafe archives refused, pickles read without running code, and the conversions."""

from __future__ import annotations

import io
import json
import pickle
import socket
import tarfile
import zipfile
from pathlib import Path

import pytest
from data_mirror import COMMIT, REPO, blob_id, entry, serve, served, write_catalogue

from tkgqa.datasets.sources import (
    ChecksumError,
    DownloadError,
    TransferSettings,
    fetch_entry,
    import_path,
    read_catalogue,
    verify_entry,
)
from tkgqa.datasets.sources.convert import run_conversion
from tkgqa.datasets.sources.safety import read_pickle, unpack
from tkgqa.errors import DataError, NotFoundError

FAST = TransferSettings(timeout=5, retries=2, backoff=0)
BIG = bytes(range(256)) * 4096  # 1 MiB: more than one read chunk
FILES = {
    "kg/full.txt": ("data/kg/full.txt", b"A\tr\tB\t2001-01-01\n" * 50),
    "questions/test.json": ("data/questions/test.json", b'[{"q": 1}]\n'),
    "big.bin": ("blobs/big.bin", BIG),
}


def load(tmp_path: Path, *entries: dict) -> dict:
    cat = read_catalogue(write_catalogue(tmp_path / "catalogue.json", *entries))
    return {e.name: e for e in cat.entries}


def test_fetch_places_verified_files_records_them_and_is_idempotent(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    root = tmp_path / "data"
    with serve(served(FILES)) as mirror:
        outcome = fetch_entry(e, root=root, base=mirror.url, settings=FAST)
        assert sorted(outcome.downloaded) == sorted(FILES)
        for dest, (_up, data) in FILES.items():
            assert (root / "bench" / dest).read_bytes() == data
        record = json.loads((root / "bench" / "SOURCE.json").read_text())["entries"]["bench"]
        assert record["how"] == "fetch" and record["from"] == mirror.url
        assert {f["source"] for f in record["files"]} == {
            f"github:{REPO}@{COMMIT}:{u}" for u, _ in FILES.values()
        }
        assert not (root / ".staging").exists()
        n = len(mirror.requests)
        again = fetch_entry(e, root=root, base=mirror.url, settings=FAST)
        assert len(mirror.requests) == n  # present and verified: nothing downloaded
        assert again.downloaded == [] and sorted(again.kept) == sorted(FILES)
    assert {c.status for c in verify_entry(e, root=root)} == {"ok"}


def test_a_cut_connection_resumes_with_a_range_request(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    path = f"{REPO}/{COMMIT}/blobs/big.bin"
    with serve(served(FILES), cut_after={path: 300_000}) as mirror:
        fetch_entry(e, root=tmp_path / "data", base=mirror.url, settings=FAST)
        ranges = [r for p, r in mirror.requests if p == path]
    assert (tmp_path / "data" / "bench" / "big.bin").read_bytes() == BIG
    assert ranges[0] is None and ranges[1] is not None
    assert int(ranges[1].removeprefix("bytes=").rstrip("-")) > 0  # resumed, not restarted


def test_one_changed_byte_is_refused_and_nothing_is_left_behind(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    files = served(FILES)
    key = f"{REPO}/{COMMIT}/data/questions/test.json"
    files[key] = files[key].replace(b"1", b"2")
    root = tmp_path / "data"
    with serve(files) as mirror, pytest.raises(ChecksumError) as err:
        fetch_entry(e, root=root, base=mirror.url, settings=FAST)
    message = str(err.value)
    assert "questions/test.json" in message
    assert blob_id(FILES["questions/test.json"][1]) in message and blob_id(files[key]) in message
    assert not (root / "bench").exists() and not (root / ".staging").exists()


def test_a_size_mismatch_is_refused_before_hashing(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    files = served(FILES)
    files[f"{REPO}/{COMMIT}/data/kg/full.txt"] += b"extra\n"
    with serve(files) as mirror, pytest.raises(ChecksumError, match=r"expected 850 bytes .*, got 856"):
        fetch_entry(e, root=tmp_path / "data", base=mirror.url, settings=FAST)


def test_offline_is_one_line_naming_the_url_the_mirror_and_import(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with pytest.raises(DownloadError) as err:
        fetch_entry(e, root=tmp_path / "data", base=base, settings=TransferSettings(timeout=2, retries=0))
    message = str(err.value)
    assert "\n" not in message and f"{base}/{REPO}/{COMMIT}/data/kg/full.txt" in message
    assert "--mirror" in message and "tkgqa data import bench" in message
    assert not (tmp_path / "data" / "bench").exists()


def test_a_missing_file_on_the_mirror_is_not_retried(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    with serve({}) as mirror, pytest.raises(DownloadError, match="HTTP 404"):
        fetch_entry(e, root=tmp_path / "data", base=mirror.url, settings=FAST)
    assert len(mirror.requests) == 1


def test_unrecorded_sizes_are_checked_by_blob_id(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES, known_size=False))["bench"]
    files = served(FILES)
    files[f"{REPO}/{COMMIT}/data/kg/full.txt"] += b"extra\n"
    with serve(files) as mirror, pytest.raises(ChecksumError, match="expected git blob"):
        fetch_entry(e, root=tmp_path / "data", base=mirror.url, settings=FAST)


# --- import --------------------------------------------------------------------------------------------
MANUAL = {
    "url": "https://example.org/drive",
    "what": "data.zip",
    "layout": "big_set",
    "files": ["kg/full.txt", "questions/test.pickle"],
}


def test_import_recognises_pinned_files_by_blob_id_and_drive_files_by_layout(tmp_path: Path) -> None:
    pinned = {"kg/labels.txt": ("labels.txt", b"Q1\tone\n")}
    e = load(tmp_path, entry("cron", "cron", pinned, manual=MANUAL))["cron"]
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("data/big_set/kg/full.txt", "Q1\tP1\tQ2\t2001\t2002\n")
        zf.writestr("data/big_set/questions/test.pickle", pickle.dumps([{"question": "q"}]))
        zf.writestr("somewhere/else/renamed.txt", b"Q1\tone\n")
    root = tmp_path / "data"
    outcome = import_path(e, archive, root=root)
    assert sorted(outcome.downloaded) == ["kg/full.txt", "kg/labels.txt", "questions/test.pickle"]
    assert outcome.missing_manual == []
    checks = {c.dest: c for c in verify_entry(e, root=root)}
    assert checks["kg/labels.txt"].status == "ok"
    assert checks["kg/full.txt"].status == "ok" and "no published checksum" in checks["kg/full.txt"].detail
    (root / "cron" / "kg" / "full.txt").write_text("changed\n")
    assert {c.dest: c.status for c in verify_entry(e, root=root)}["kg/full.txt"] == "mismatch"
    assert not (root / ".staging").exists()


def test_import_of_a_file_that_is_no_pin_says_so(tmp_path: Path) -> None:
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    other = tmp_path / "other.txt"
    other.write_bytes(b"not it\n")
    with pytest.raises(NotFoundError, match="holds none of the files"):
        import_path(e, other, root=tmp_path / "data")
    single = tmp_path / "downloaded.json"
    single.write_bytes(FILES["questions/test.json"][1])
    outcome = import_path(e, single, root=tmp_path / "data")
    assert outcome.downloaded == ["questions/test.json"]


@pytest.mark.parametrize("member", ["../evil.txt", "/abs/evil.txt", "a/../../evil.txt"])
def test_archives_that_point_outside_are_refused(tmp_path: Path, member: str) -> None:
    tar_path = tmp_path / "bad.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tf:
        info = tarfile.TarInfo(member)
        info.size = 4
        tf.addfile(info, io.BytesIO(b"evil"))
    zip_path = tmp_path / "bad.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("ok.txt", "fine")
        zf.writestr(member, "evil")
    for archive in (tar_path, zip_path):
        into = tmp_path / "out" / archive.name
        into.mkdir(parents=True)
        with pytest.raises(DataError, match="points outside"):
            unpack(archive, into)
        assert list(into.iterdir()) == []  # checked before anything is written
    assert not (tmp_path / "evil.txt").exists()


def test_links_in_archives_are_refused_and_import_cleans_up(tmp_path: Path) -> None:
    tar_path = tmp_path / "links.tar"
    with tarfile.open(tar_path, "w") as tf:
        info = tarfile.TarInfo("kg/full.txt")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    with pytest.raises(DataError, match="is a link"):
        import_path(e, tar_path, root=tmp_path / "data")
    assert not (tmp_path / "data" / "bench").exists()
    assert not (tmp_path / "data" / ".staging").exists()


def test_an_archive_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "big.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.bin", b"\0" * 100_000)
    with pytest.raises(DataError, match="cap"):
        unpack(archive, tmp_path / "out", cap=10_000)


# --- pickles -------------------------------------------------------------------------------------------
class Boom:
    def __reduce__(self) -> tuple:
        return (print, ("ran code",))


def test_pickles_are_read_as_plain_data_only(tmp_path: Path) -> None:
    good = tmp_path / "good.pkl"
    good.write_bytes(pickle.dumps({"q": [1, 2.5, "x"], "s": {1, 2}, "t": (1, None)}))
    assert read_pickle(good) == {"q": [1, 2.5, "x"], "s": {1, 2}, "t": (1, None)}
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(DataError, match=r"refusing to unpickle builtins\.print"):
        read_pickle(bad)
    np = pytest.importorskip("numpy")
    arr = tmp_path / "arr.pkl"
    arr.write_bytes(pickle.dumps(np.arange(6, dtype=np.uint64).reshape(2, 3)))
    with pytest.raises(DataError, match="refusing"):
        read_pickle(arr)
    assert read_pickle(arr, numpy=True).tolist() == [[0, 1, 2], [3, 4, 5]]


# --- conversions ---------------------------------------------------------------------------------------
def test_missing_commas_are_inserted_where_the_parser_reports_them(tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_text('[{"a": 1 "b": 2}, {"c": [1, 2]}]', encoding="utf-8")
    details = run_conversion("json-missing-commas", [src], [tmp_path / "out.json"])
    assert json.loads((tmp_path / "out.json").read_text()) == [{"a": 1, "b": 2}, {"c": [1, 2]}]
    assert details == {"commas_inserted_at": [9]}
    src.write_text('[{"a": 1}', encoding="utf-8")
    with pytest.raises(DataError, match="not repairable"):
        run_conversion("json-missing-commas", [src], [tmp_path / "out2.json"])


def _timer4(tmp_path: Path, questions: list[str]) -> tuple[Path, Path, Path]:
    results = [
        {
            "text": "Based on the facts.\nHistorical facts:['A r B from 1 to 2.', \"C's r D from 3 to 3.\"]"
            f"\nQuestion:\n {q}?",
            "answers": "['B']",
            "question": q,
            "response": "- B",
        }
        for q in questions
    ]
    prompts = [{"question": "who r a", "answer": ["B"], "id": 7, "type": ["Explicit"]}]
    tests = [{"Id": 7, "Question": "Who r A"}]
    paths = tmp_path / "TimeR4.json", tmp_path / "test_prompt.json", tmp_path / "test.json"
    for p, data in zip(paths, (results, prompts, tests), strict=True):
        p.write_text(json.dumps(data), encoding="utf-8")
    return paths


def test_timer4_results_become_retrieved_facts_and_a_cassette(tmp_path: Path) -> None:
    results, prompts, tests = _timer4(tmp_path, ["who r a"])
    out = tmp_path / "retrieved.json"
    run_conversion("timer4-retrieved-facts", [results, prompts, tests], [out])
    row = json.loads(out.read_text())[0]
    assert row["timer4_retrieved_facts"] == ["A r B from 1 to 2.", "C's r D from 3 to 3."]
    assert (row["id"], row["original_question"], row["timer4_chatgpt_response"]) == (7, "Who r A", "- B")
    cassette = tmp_path / "answers.jsonl"
    run_conversion("timer4-chatgpt-cassette", [results, prompts], [cassette])
    line = json.loads(cassette.read_text())
    assert line["id"] == 7 and line["prompt"].endswith("who r a?") and line["gold_text"] == "['B']"


def test_timer4_results_in_another_order_are_refused(tmp_path: Path) -> None:
    results, prompts, tests = _timer4(tmp_path, ["something else"])
    with pytest.raises(DataError, match="not in the same order"):
        run_conversion("timer4-retrieved-facts", [results, prompts, tests], [tmp_path / "out.json"])


def test_a_conversion_runs_on_fetch_and_is_verified_by_its_recorded_sha256(tmp_path: Path) -> None:
    files = {"upstream/raw.json": ("raw.json", b'[{"a": 1 "b": 2}]')}
    conv = [{"name": "json-missing-commas", "inputs": ["upstream/raw.json"], "outputs": ["fixed.json"]}]
    e = load(tmp_path, entry("fix", "fix", files, convert=conv))["fix"]
    root = tmp_path / "data"
    with serve(served(files)) as mirror:
        outcome = fetch_entry(e, root=root, base=mirror.url, settings=FAST)
    assert outcome.converted == ["fixed.json"]
    assert json.loads((root / "fix" / "fixed.json").read_text()) == [{"a": 1, "b": 2}]
    assert {c.status for c in verify_entry(e, root=root)} == {"ok"}
    (root / "fix" / "fixed.json").write_text("[]")
    assert [c.status for c in verify_entry(e, root=root) if c.dest == "fixed.json"] == ["mismatch"]


def test_timer4_rewrites_and_llama2_outputs_become_recordings(tmp_path: Path) -> None:
    _results, prompts, tests = _timer4(tmp_path, ["who r a"])
    replies = tmp_path / "questions.json"
    replies.write_text(
        json.dumps([{"question": "A rewrite.", "answer": ["B"], "id": 7, "type": ["Explicit"]}])
    )
    out = tmp_path / "rewrite.jsonl"
    run_conversion("timer4-chatgpt-rewrites", [replies, tests], [out])
    assert json.loads(out.read_text()) == {
        "id": 7,
        "original_question": "Who r A",
        "type": ["Explicit"],
        "response": "A rewrite.",
    }
    detailed = tmp_path / "detailed.jsonl"
    detailed.write_text(json.dumps({"prediction": ["B']"], "ground_truth": "['B']", "acc": 1.0}) + "\n")
    run_conversion("timer4-llama2-answers", [detailed, prompts], [tmp_path / "ft.jsonl"])
    assert json.loads((tmp_path / "ft.jsonl").read_text()) == {
        "id": 7,
        "response": "B']",
        "gold_text": "['B']",
    }
    preds = tmp_path / "predictions.jsonl"
    line = {"question": "Who r A", "prediction": "['B']", "ground_truth": "['B']", "input": "Q:\n Who r A?"}
    preds.write_text(json.dumps(line) + "\n")
    run_conversion("timer4-llama2-predictions", [preds, prompts, tests], [tmp_path / "nf.jsonl"])
    assert json.loads((tmp_path / "nf.jsonl").read_text())["prompt"] == "Q:\n Who r A?"
    preds.write_text(json.dumps({**line, "question": "another question"}) + "\n")
    with pytest.raises(DataError, match="is not test question 7"):
        run_conversion("timer4-llama2-predictions", [preds, prompts, tests], [tmp_path / "nf2.jsonl"])
    detailed.write_text("")
    with pytest.raises(DataError, match="0 lines but 1 test questions"):
        run_conversion("timer4-llama2-answers", [detailed, prompts], [tmp_path / "ft2.jsonl"])


def test_python2_style_set_pickles_are_read(tmp_path: Path) -> None:
    path = tmp_path / "old.pkl"
    path.write_bytes(pickle.dumps([{"answers": {"Q1", "Q2"}}], protocol=2, fix_imports=True))
    assert read_pickle(path) == [{"answers": {"Q1", "Q2"}}]


def test_import_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    import os

    from tkgqa.errors import ConfigError

    fifo = tmp_path / "data.zip"
    os.mkfifo(fifo)
    e = load(tmp_path, entry("bench", "bench", FILES))["bench"]
    with pytest.raises(ConfigError, match="the file to import"):
        import_path(e, fifo, root=tmp_path / "data")
