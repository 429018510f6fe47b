"""Data safety and clear errors (issue #12): lone surrogates recorded, torn/binary/cut-UTF-8 result lines
treated as torn lines, disk full as one line with a resume, one run per folder, project errors for a file
as TKGQA_HOME, a corrupt cache, an ARI memory list, a bad OPENAI_BASE_URL; LLM timeouts and retries as
settings; and results.jsonl reading fuzzed."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extras_marks import requires_extra
from tkgqa.datasets.base import Question
from tkgqa.datasets.demo import load_demo_questions
from tkgqa.errors import ConfigError, DataError, LLMError
from tkgqa.eval.executor import forwarded_env
from tkgqa.eval.report import compare_runs, read_results
from tkgqa.eval.runner import LOCK_FILE, evaluate, run_lock
from tkgqa.llm import openai_backend, resolve_llm
from tkgqa.llm.openai_backend import LLMSettings, OpenAIBackend, apply_llm_settings, check_base_url

QUESTIONS = load_demo_questions()[:4]


def run_eval(out: Path, questions: list[Question], **kw: Any) -> Any:
    return evaluate("symbolic", questions, None, out, progress=False, check_support=False, **kw)


def test_a_lone_surrogate_in_a_question_is_recorded_and_resumed(tmp_path: Path) -> None:
    bad = Question(qid="q\ud800", text="Who visited \ud800 China in November 2014?", answers=["Barack Obama"])
    questions = [*QUESTIONS, bad]
    report = run_eval(tmp_path, questions)
    assert report.n == 5 and report.errors == 0
    row = next(r for r in read_results(tmp_path) if r.qid == "q\ufffd")
    assert row.question == "Who visited \ufffd China in November 2014?"
    again = run_eval(tmp_path, questions)
    assert again.selection["resumed"] == 5 and again.n == 5  # nothing answered twice, no crash


def test_resume_and_compare_treat_cut_utf8_and_binary_lines_as_torn(tmp_path: Path) -> None:
    run_eval(tmp_path, QUESTIONS[:3])
    results = tmp_path / "results.jsonl"
    row = json.dumps({"qid": "x", "question": "café"}, ensure_ascii=False).encode()
    cut = row[: row.index("é".encode()) + 1]  # inside the two bytes of "é"
    with results.open("ab") as fh:
        fh.write(cut + b"\n" + bytes(range(256)) + b"\n\xff\xfe\x00junk")
    assert len(read_results(results)) == 3
    with pytest.raises(DataError, match="torn or not UTF-8"):
        read_results(results, strict=True)
    with pytest.warns(UserWarning, match=r"results\.jsonl: skipped line 4 and 3 more: not a result row"):
        assert compare_runs(tmp_path, tmp_path)["n_common"] == 3
    report = run_eval(tmp_path, QUESTIONS)  # resume: the junk goes, the fourth question is answered
    assert report.n == 4 and report.selection["resumed"] == 3
    assert len(read_results(results, strict=True)) == 4


@given(junk=st.lists(st.binary(max_size=60), max_size=6))
@settings(max_examples=int(os.environ.get("TKGQA_FUZZ_EXAMPLES", "40")), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
def test_reading_results_never_raises_on_junk(
    tmp_path_factory: pytest.TempPathFactory, junk: list[bytes]
) -> None:
    path = tmp_path_factory.mktemp("res") / "results.jsonl"
    good = json.dumps({"qid": "a", "strict_hit": True}).encode()
    path.write_bytes(b"\n".join([good, *junk, good.replace(b'"a"', b'"b"')]) + b"\n")
    qids = {r.qid for r in read_results(path)}
    assert {"a", "b"} <= qids
    compare_runs(path, path)


def test_a_second_run_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    with run_lock(tmp_path), pytest.raises(ConfigError, match=r"another `tkgqa eval` .* is writing to"):
        run_eval(tmp_path, QUESTIONS)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import fcntl, os, sys, time
            fd = os.open({str(tmp_path / LOCK_FILE)!r}, os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode())
            print("locked", flush=True); time.sleep(60)
        """)],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        with pytest.raises(ConfigError, match=f"pid {holder.pid}"):
            run_eval(tmp_path, QUESTIONS)
    finally:
        holder.kill()
        holder.wait()
    assert run_eval(tmp_path, QUESTIONS).n == 4  # the lock died with its process


def test_output_pointing_at_a_file_is_a_config_error(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        run_eval(target, QUESTIONS)


DISK_FULL = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))
from tkgqa.cli import main
main(["eval", "--dataset", "demo", "--method", "symbolic", "--output", sys.argv[1], "--limit", "12",
      "--sample", "first", "--no-progress"])
"""


def test_disk_full_is_one_line_and_the_same_command_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    full = subprocess.run(
        [sys.executable, "-c", DISK_FULL, str(out)], capture_output=True, text=True, timeout=120
    )
    assert full.returncode == 2, full.stderr
    lines = [line for line in full.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "cannot write" in lines[0], full.stderr
    assert "Traceback" not in full.stderr and "resumes" in lines[0]
    done = subprocess.run(
        [sys.executable, "-m", "tkgqa", "eval", "--dataset", "demo", "--method", "symbolic",
         "--output", str(out), "--limit", "12", "--sample", "first", "--no-progress", "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n"] == 12 and len(read_results(out, strict=True)) == 12


def test_a_file_as_home_and_a_corrupt_cache_are_project_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tkgqa.home import tkgqa_home
    from tkgqa.llm.cache import LLMCache

    as_file = tmp_path / "home"
    as_file.write_text("")
    monkeypatch.setenv("TKGQA_HOME", str(as_file))
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        tkgqa_home()
    corrupt = tmp_path / "llm.sqlite"
    corrupt.write_bytes(b"this is not a database " * 100)
    with pytest.raises(
        DataError, match=r"not a readable SQLite database .* if it is tkgqa.s LLM cache, deleting it is safe"
    ):
        LLMCache(corrupt).schema_version()


def test_an_ari_memory_file_with_a_json_list_is_a_data_error(tmp_path: Path) -> None:
    from tkgqa.methods.ari.memory import ARIMemory

    path = tmp_path / "memory.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(DataError, match="holds a JSON object, not a list"):
        ARIMemory.load(path)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://user:s3cret@host:8080/v1", "user:password"),
        ("http://host/v1?api-version=1", "?query"),
        ("http://host/v1#x", "?query"),
        ("ftp://host/v1", "http:// or https://"),
        ("http:///v1", "no host"),
        ("http://host:99999/v1", "not a valid URL"),
    ],
)
def test_a_bad_openai_base_url_says_what_is_wrong(url: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem.replace("?", r"\?")) as info:
        check_base_url(url)
    assert "s3cret" not in str(info.value)
    assert check_base_url("https://api.openai.com/v1/") == "https://api.openai.com/v1"


def test_llm_timeouts_and_retries_are_settings(
    stalled_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai_backend, "_settings", LLMSettings())  # restored after the test
    monkeypatch.setenv("TKGQA_LLM_TIMEOUT", "0.3")
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "1")
    llm = OpenAIBackend("m", base_url=stalled_endpoint, sleep=lambda _s: None)
    assert (llm.attempt_timeout(), llm.retries()) == (0.3, 1)
    started = time.monotonic()
    with pytest.raises(LLMError, match="gave up after 2 attempts"):
        llm.chat("hi")
    # a deadline behaviour (two 0.3 s attempts against an endpoint that never answers): the bound only
    # catches a hang, with a wide margin for a busy machine
    assert time.monotonic() - started < 60
    monkeypatch.setenv("TKGQA_LLM_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="TKGQA_LLM_TIMEOUT must be a number of seconds"):
        llm.attempt_timeout()
    with pytest.raises(ConfigError, match="--llm-retries must be a whole number"):
        apply_llm_settings(retries=-1)
    apply_llm_settings(timeout=7, retries=0)
    assert (llm.attempt_timeout(), llm.retries()) == (7.0, 0)
    assert os.environ["TKGQA_LLM_TIMEOUT"] == "soon"  # a setting object, the environment left as it was
    assert forwarded_env()["TKGQA_LLM_TIMEOUT"] == "7.0"  # what a Ray worker reads
    assert OpenAIBackend("m", timeout=2, max_retries=3).attempt_timeout() == 2  # arguments win


@contextlib.contextmanager
def raw_reply_server(raw: bytes) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@requires_extra("llm")
def test_an_llm_reply_with_a_lone_surrogate_is_cleaned_on_arrival(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    raw = b'{"model": "m", "choices": [{"message": {"content": "Par\\ud800is"}}]}'
    with raw_reply_server(raw) as url:
        llm = resolve_llm(OpenAIBackend("m", base_url=url))
        assert llm.chat("Capital of France?").text == "Par\ufffdis"
        assert llm.chat("Capital of France?").text == "Par\ufffdis"  # cached and read back
    with raw_reply_server(b"[1, 2]") as url, pytest.raises(LLMError, match="is a JSON list"):
        OpenAIBackend("m", base_url=url, max_retries=0).chat("x")


def test_ask_with_bytes_that_are_not_utf8_on_the_command_line() -> None:
    arg = b"Who visited China in November 2014? \xff".decode("utf-8", "surrogateescape")
    out = subprocess.run(
        [sys.executable, "-m", "tkgqa", "ask", arg, "--json"], capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode("utf-8", "replace")
    assert json.loads(out.stdout)["answers"] == ["Barack Obama"]
