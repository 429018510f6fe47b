"""Every ``tkgqa`` command shown in README.md runs as written on the data it names (shortened with
``--limit``) and exits 0.

Only what cannot run here is rewritten, the same way for every command: a paid model (``--llm SPEC``,
``--llm openai:…``) becomes the offline ``fake`` backend, placeholders (``KG.txt``, ``DATASET``, ``DIR``)
become the bundled demo data, output folders go to a temporary folder, long runs get ``--limit 3`` (the
offline symbolic reasoner keeps its whole run). ``tkgqa
serve`` is started on a free port and must answer ``/health``. Data named by name (``--dataset multitq``)
is read from the shared copy (``TKGQA_DATA``); a command whose data is absent (no ``../shared``) is skipped
with the reason, and ``tkgqa data fetch``/``import`` (network) are skipped."""

from __future__ import annotations

import http.client
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DEMO_KG = REPO / "src" / "tkgqa" / "data" / "demo_kg.tsv"
LIMITED = {("eval",), ("analyze", "coverage"), ("reproduce",)}  # commands that take --limit
PLACEHOLDERS = {"KG.txt": "{demo_kg}", "DATASET": "demo", "DIR": "{demo_dir}", "SPEC": "fake"}


def readme_commands() -> list[str]:
    """The ``tkgqa …`` lines of the README's bash blocks, continuation lines joined, comments dropped."""
    text = README.read_text(encoding="utf-8")
    out: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "tkgqa":
                out.append(shlex.join(words))
    return out


def rewrite(command: str, *, tmp: Path, shared: Path) -> list[str]:
    words = shlex.split(command)[1:]
    out: list[str] = []
    for i, word in enumerate(words):
        if i and words[i - 1] == "--llm":
            word = "fake"
        word = PLACEHOLDERS.get(word, word)
        word = word.replace("{demo_kg}", str(DEMO_KG)).replace("{demo_dir}", str(tmp / "demo"))
        word = word.replace("../shared/data", str(shared))
        if word.startswith("runs/") or (
            word.endswith((".json", ".jsonl")) and i and words[i - 1] == "--output"
        ):
            word = str(tmp / word)
        out.append(word)
    fast = "--method" in out and out[out.index("--method") + 1] == "symbolic"  # runs whole benchmarks in s
    if any(tuple(out[: len(k)]) == k for k in LIMITED) and "--limit" not in out and not fast:
        out += ["--limit", "3"]
    if "--limit" in out:
        out[out.index("--limit") + 1] = "3"
    if out[:2] == ["ari", "build-memory"] and "--n" in out:
        out[out.index("--n") + 1] = "3"
    return out


def needs_shared(argv: list[str], shared: Path) -> bool:
    """A path into the data, or data read by name (``--dataset NAME`` without ``--data-dir``, ``--kg NAME``,
    ``tkgqa data path NAME``) from the data root, which is the shared folder here."""
    from tkgqa.datasets.sources import catalogue

    named = set(catalogue().names()) | {d for e in catalogue().entries for d in e.datasets}

    def after(flag: str) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None

    by_name = (after("--dataset") in named and "--data-dir" not in argv) or after("--kg") in named
    return by_name or argv[:2] == ["data", "path"] or any(str(shared) in a for a in argv)


#: README commands that download from GitHub: not run here (no network); the same code is tested against a
#: mirror on 127.0.0.1 in tests/datasets/test_data_scenario.py and test_data_fetch.py.
NETWORK = (("data", "fetch"), ("data", "import"))


@pytest.mark.slow
def test_readme_has_commands() -> None:
    commands = readme_commands()
    assert len(commands) >= 10 and any(c.startswith("tkgqa ask") for c in commands)


@pytest.mark.slow
@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_runs(command: str, tmp_path: Path, shared_data_or_none: Path | None) -> None:
    shared = shared_data_or_none or (REPO.parent / "shared" / "data")
    argv = rewrite(command, tmp=tmp_path, shared=shared)
    if tuple(argv[:2]) in NETWORK:
        pytest.skip("downloads from the authors' repositories (tested against a local mirror instead)")
    if shared_data_or_none is None and needs_shared(argv, shared):
        pytest.skip(f"needs the shared benchmark data ({shared} is absent)")
    env = {
        **os.environ,
        "TKGQA_HOME": str(tmp_path / "home"),
        "HF_HUB_OFFLINE": "1",
        "TKGQA_DATA": str(shared),
    }
    if argv[0] == "serve":
        _serve_answers_health(argv, env)
        return
    if argv[0] == "eval-compare":  # compares two earlier runs: make them first, exactly as the README does
        for run in argv[1:3]:
            _make_run(Path(run), tmp_path, shared, env)
    proc = subprocess.run(
        [sys.executable, "-m", "tkgqa", *argv], capture_output=True, text=True, timeout=1200, env=env,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, f"{shlex.join(argv)}\n{proc.stdout[-1500:]}\n{proc.stderr[-3000:]}"


def _make_run(run: Path, tmp: Path, shared: Path, env: dict[str, str]) -> None:
    for command in readme_commands():
        argv = rewrite(command, tmp=tmp, shared=shared)
        if argv[0] == "eval" and str(run) in argv and not (run / "report.json").is_file():
            subprocess.run([sys.executable, "-m", "tkgqa", *argv], capture_output=True, timeout=1200, env=env)


def _serve_answers_health(argv: list[str], env: dict[str, str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tkgqa", *argv, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        _wait_for_health(proc, port)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def shared_data_or_none() -> Path | None:
    env = os.environ.get("TKGQA_DATA") or os.environ.get("TKGQA_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def readme_curls() -> list[list[str]]:
    """The ``curl`` examples of the README's HTTP API section, as argument lists."""
    text = README.read_text(encoding="utf-8")
    out: list[list[str]] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "curl":
                out.append(words[1:])
    return out


def _request(args: list[str], port: int) -> tuple[int, bytes]:
    """Send what a ``curl`` command line asks (-X, -H, -d, the URL) to the server on ``port``."""
    method, headers, body, url = "GET", {}, None, ""
    words = iter(args)
    for word in words:
        if word == "-X":
            method = next(words)
        elif word == "-H":
            key, _, value = next(words).partition(":")
            headers[key.strip()] = value.strip()
        elif word == "-d":
            body = next(words).encode()
        elif not word.startswith("-"):
            url = word
    path = "/" + url.split("/", 1)[1] if "/" in url else "/"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request(method, path, body=body, headers=headers)
    res = conn.getresponse()
    return res.status, res.read()


@pytest.mark.slow
def test_readme_http_examples_answer(tmp_path: Path) -> None:
    curls = readme_curls()
    assert len(curls) >= 8
    env = {**os.environ, "TKGQA_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tkgqa", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        _wait_for_health(proc, port)
        for args in curls:
            status, body = _request(args, port)
            assert status == 200, (args, body[:500])
            assert body.strip(), args
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _wait_for_health(proc: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 120  # a start-up bound, not a speed assertion
    while True:
        assert proc.poll() is None, "tkgqa serve exited"
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, "tkgqa serve did not answer /health"
        time.sleep(0.2)
