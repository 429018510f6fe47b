"""Issue #29, files a user names: ``tkgqa llm parse`` never erases its input nor truncates an output before
its options are checked, bad folders are one-line errors, undecodable or too-deep lines are ``bad_input``
rows, a FIFO or a device as a cassette is refused at once (never read, never waited on)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from cli_run import run_cli
from tkgqa.errors import ConfigError, DataError
from tkgqa.userfiles import atomic_output, check_output, claim_folder, parse_json, read_input

LINE = {"id": 1, "response": "[Alpha, Beta]"}


def one_line_error(err: str) -> None:
    assert "Traceback" not in err
    assert err.strip().startswith("error:") and len(err.strip().splitlines()) == 1, err


@pytest.fixture
def replies(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    return path


def test_llm_parse_refuses_to_write_over_its_input(
    replies: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = replies.read_bytes()
    args = ["llm", "parse", "--task", "timer4.answer", str(replies), "--output", str(replies)]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "erase the input" in err
    one_line_error(err)
    assert replies.read_bytes() == before
    link = tmp_path / "same.jsonl"  # another name of the same file (a hard link): refused too
    os.link(replies, link)
    code, _, err = run_cli([*args[:-1], str(link)], capsys)
    assert code == 2 and replies.read_bytes() == before


def test_llm_parse_checks_the_task_before_touching_the_output(
    replies: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n", encoding="utf-8")
    code, _, err = run_cli(["llm", "parse", "--task", "nope", str(replies), "--output", str(out)], capsys)
    assert code == 2 and "unknown task" in err
    one_line_error(err)
    assert out.read_text(encoding="utf-8") == "precious\n"


@pytest.mark.parametrize("where", ["missing/out.jsonl", "a_folder"])
def test_llm_parse_output_in_a_missing_folder_or_onto_a_folder_is_one_line(
    replies: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    (tmp_path / "a_folder").mkdir()
    target = tmp_path / where
    code, _, err = run_cli(
        ["llm", "parse", "--task", "timer4.answer", str(replies), "-o", str(target)], capsys
    )
    assert code == 2
    one_line_error(err)


def test_a_failed_write_leaves_the_old_output(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_output(out) as fh:
        fh.write("half a new file")
        raise RuntimeError("interrupted")
    assert out.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # no temporary file left


def test_undecodable_and_too_deep_lines_are_bad_input_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_bytes(
        b'{"id":1,"response":"\xff"}\n'
        + b"[" * 100_000
        + b"\n"
        + b"{" * 300
        + b"\n"
        + json.dumps(LINE).encode()
    )
    out = tmp_path / "out.jsonl"
    code, _, err = run_cli(
        ["llm", "parse", "--task", "timer4.answer", str(inp), "-o", str(out), "--json"], capsys
    )
    assert code == 1 and "Traceback" not in err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["ok"] for r in rows] == [False, False, False, True]
    assert "not UTF-8" in rows[0]["reason"]
    assert "nested deeper" in rows[1]["reason"] and rows[2]["reason"].startswith("bad input: line 3")
    assert json.loads(err.strip().splitlines()[-1])["bad_input"] == 3


def test_parse_json_limits() -> None:
    with pytest.raises(ValueError, match="nested deeper"):
        parse_json("[" * 100_000)
    with pytest.raises(ValueError, match="nested deeper"):
        parse_json("[" * 300 + "]" * 300)
    assert parse_json("[" * 50 + "]" * 50) == parse_json("[" * 50 + "]" * 50)
    with pytest.raises(ValueError, match="not UTF-8"):
        parse_json(b'"\xff"')


def _fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "cassette.jsonl"
    os.mkfifo(path)
    return path


def _within(seconds: float, fn: object) -> BaseException | None:
    """Run ``fn`` in a thread; the exception it raised (it must finish within ``seconds``)."""
    box: list[BaseException | None] = [None]

    def go() -> None:
        try:
            fn()  # type: ignore[operator]
        except BaseException as exc:
            box[0] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "it hung"
    return box[0]


def test_replay_from_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    from tkgqa.llm.replay_backend import read_cassette

    fifo = _fifo(tmp_path)
    exc = _within(10, lambda: read_cassette(fifo))
    assert isinstance(exc, ConfigError) and "FIFO" in str(exc)
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    exc = _within(10, lambda: read_cassette(zero))
    assert isinstance(exc, ConfigError) and "device" in str(exc)
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    assert isinstance(_within(10, lambda: read_cassette(folder)), ConfigError)


def test_reads_are_capped(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 1000)
    with pytest.raises(ConfigError, match="over 100 bytes"):
        read_input(big, limit=100)
    assert read_input(big, limit=1000) == b"x" * 1000


def test_check_output_rules(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        check_output(tmp_path / "no" / "f")
    with pytest.raises(ConfigError, match="is a folder"):
        check_output(tmp_path)
    assert check_output(tmp_path / "new.jsonl") == tmp_path / "new.jsonl"


def test_output_folders_are_owned(tmp_path: Path) -> None:
    run = claim_folder(tmp_path / "run", "tkgqa eval")
    (run / "results.jsonl").write_text("", encoding="utf-8")
    assert claim_folder(run, "tkgqa eval") == run  # its own folder: taken again
    with pytest.raises(ConfigError, match="written by `tkgqa eval`"):
        claim_folder(run, "tkgqa reproduce")
    assert claim_folder(run, "tkgqa reproduce", force=True) == run
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.md").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="did not write"):
        claim_folder(mine, "tkgqa eval")
    assert claim_folder(mine, "tkgqa eval", legacy=lambda p: (p / "notes.md").exists()) == mine
    assert not isinstance(ConfigError("x"), DataError)
