"""Every command in README.md and the documentation pages (``docs/*.md``) runs as written on the data it names
(shortened with ``--limit``) and exits 0; every Python example runs.

A page's commands run in order in one temporary folder, so a later command may use what an earlier one wrote
(``tkgqa eval-compare`` the runs before it). Only what cannot run here is rewritten, the same way for every
command: a paid model (``--llm SPEC``, ``--llm openai:…``) becomes the offline ``fake`` backend (a
``replay:`` cassette is kept), placeholders (``KG.txt``, ``DATASET``, ``DIR``) become the bundled demo data,
``examples/…`` the repository's examples, long runs get ``--limit 3`` (the offline symbolic reasoner keeps
its whole run). ``tkgqa serve`` is started on a free port and must answer ``/health`` and the page's ``curl``
examples; ``tkgqa mcp`` (stdio) must start and end when its input does. A command whose data is absent (no
``../shared``) is not run, and said so.

A shell line that cannot run offline (the network, a real model, installing) carries the page's visible mark,
a comment starting ``not tested:`` with the reason; each is reported as a skipped test with that reason, and
an unmarked line that is neither ``tkgqa`` nor ``curl`` fails the test (docs/development.md)."""

from __future__ import annotations

import http.client
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DEMO_KG = REPO / "src" / "tkgqa" / "data" / "demo_kg.tsv"
LIMITED = {("eval",), ("analyze", "coverage"), ("reproduce",)}  # commands that take --limit
PLACEHOLDERS = {"KG.txt": "{demo_kg}", "DATASET": "demo", "DIR": "{demo_dir}", "SPEC": "fake"}
NOT_TESTED = re.compile(r"#\s*not tested:\s*(.+)$", re.M)


@dataclass(frozen=True)
class Line:
    """One shell line of a page: its words (comment dropped) and, when marked, why it is not run."""

    page: str
    text: str
    words: tuple[str, ...]
    not_tested: str | None

    @property
    def kind(self) -> str:
        return self.words[0] if self.words else ""


def shell_lines(page: Path) -> list[Line]:
    """The lines of a page's ``bash`` blocks, continuation lines joined."""
    text = page.read_text(encoding="utf-8")
    out: list[Line] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for raw in re.sub(r"\\\n\s*", " ", block).splitlines():
            words = shlex.split(raw, comments=True)
            if not words:
                continue
            mark = NOT_TESTED.search(raw)
            out.append(Line(page.name, raw.strip(), tuple(words), mark.group(1).strip() if mark else None))
    return out


def python_examples(page: Path) -> list[str]:
    return [b for b in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)]


def commands(page: Path) -> list[Line]:
    return [line for line in shell_lines(page) if line.kind == "tkgqa" and line.not_tested is None]


def curls(page: Path) -> list[list[str]]:
    return [list(line.words[1:]) for line in shell_lines(page) if line.kind == "curl"]


def rewrite(words: tuple[str, ...], *, tmp: Path, shared: Path) -> list[str]:
    args = list(words[1:])
    out: list[str] = []
    for i, word in enumerate(args):
        if i and args[i - 1] == "--llm" and not word.startswith(("replay:", "fake")):
            word = "fake"
        word = PLACEHOLDERS.get(word, word)
        word = word.replace("{demo_kg}", str(DEMO_KG)).replace("{demo_dir}", str(tmp / "demo"))
        word = word.replace("../shared/data", str(shared))
        if word.startswith("examples/"):
            word = str(REPO / word)
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
    ``tkgqa data path NAME``, ``--llm replay:NAME``) from the data root, which is the shared folder here."""
    from tkgqa.datasets.sources import catalogue

    named = set(catalogue().names()) | {d for e in catalogue().entries for d in e.datasets}

    def after(flag: str) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None

    by_name = (after("--dataset") in named and "--data-dir" not in argv) or after("--kg") in named
    replay = (after("--llm") or "").removeprefix("replay:") in named
    return by_name or replay or argv[:2] == ["data", "path"] or any(str(shared) in a for a in argv)


@pytest.fixture
def shared_data_or_none() -> Path | None:
    env = os.environ.get("TKGQA_DATA") or os.environ.get("TKGQA_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def test_the_pages_have_commands_and_every_shell_line_is_run_or_marked() -> None:
    every = [line for page in PAGES for line in shell_lines(page)]
    assert len([line for line in every if line.kind == "tkgqa"]) >= 40
    unmarked = [
        f"{line.page}: {line.text}"
        for line in every
        if line.kind not in ("tkgqa", "curl") and line.not_tested is None and not is_entry_point(line)
    ]
    assert unmarked == [], "mark these with '# not tested: REASON' or make them runnable"
    assert len(curls(REPO / "docs" / "serve.md")) >= 8


#: The README's two entry points, which set up an environment (the docs test runs inside one): CI runs
#: `make test` itself, and `tkgqa demo`, what `make demo` runs after installing, is a quickstart command.
ENTRY_POINTS = {("make", "demo"), ("make", "test")}


def is_entry_point(line: Line) -> bool:
    return line.page == "README.md" and line.words[:2] in ENTRY_POINTS


MARKED = [
    line
    for page in PAGES
    for line in shell_lines(page)
    if line.not_tested is not None or is_entry_point(line)
]


@pytest.mark.parametrize("line", MARKED, ids=[f"{x.page}:{x.text[:50]}" for x in MARKED])
def test_a_marked_command_is_not_run(line: Line) -> None:
    why = (
        line.not_tested
        or "an entry point that installs an environment (CI runs `make test`; `tkgqa demo` is run)"
    )
    pytest.skip(f"{line.page}: `{line.text.split('#')[0].strip()}` is not run here: {why}")


def _reuse_distilled_models(home: Path) -> None:
    """Copy the static embedders this test session already distilled (``models/model2vec-*`` under the
    session's ``$TKGQA_HOME``) into a page's fresh home: a page's command then finds the model as a user's
    second run does, instead of distilling it again for minutes. The distillation on first use is tested
    where it is the subject (``tests/retrieval/test_retrieval_embedders.py``); a page that runs before any
    distillation distils for itself."""
    session = Path(os.environ.get("TKGQA_HOME", "")) / "models"
    for built in sorted(session.glob("model2vec-*")) if session.is_dir() else []:
        if built.is_dir() and not built.name.startswith("."):
            shutil.copytree(built, home / "models" / built.name)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if commands(p) or python_examples(p)], ids=lambda p: p.name
)
def test_every_command_of_the_page_runs(page: Path, tmp_path: Path, shared_data_or_none: Path | None) -> None:
    shared = shared_data_or_none or (REPO.parent / "shared" / "data")
    env = {
        **os.environ,
        "TKGQA_HOME": str(tmp_path / "home"),
        "HF_HUB_OFFLINE": "1",
        "TKGQA_DATA": str(shared),  # data read by name comes from the shared copy
    }
    _reuse_distilled_models(tmp_path / "home")
    served = False
    not_run: list[str] = []
    for line in commands(page):
        argv = rewrite(line.words, tmp=tmp_path, shared=shared)
        if shared_data_or_none is None and needs_shared(argv, shared):
            not_run.append(line.text)
            continue
        if argv[0] == "serve":
            _serve_answers(argv, env, [] if served else curls(page))
            served = True
            continue
        proc = subprocess.run(
            [sys.executable, "-m", "tkgqa", *argv], capture_output=True, text=True, timeout=1200, env=env,
            cwd=tmp_path, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.returncode == 0, f"{shlex.join(argv)}\n{proc.stdout[-1500:]}\n{proc.stderr[-3000:]}"
    for example in python_examples(page):
        if NOT_TESTED.search(example):
            continue
        code = example.replace("../shared/data", str(shared))
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env, cwd=REPO
        )
        assert proc.returncode == 0, f"{page.name}: python example failed\n{code}\n{proc.stderr[-3000:]}"
    if not_run:
        pytest.skip(f"the other commands ran; these need the shared benchmark data ({shared}): {not_run}")


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


def _serve_answers(argv: list[str], env: dict[str, str], examples: list[list[str]]) -> None:
    """Start ``tkgqa serve`` on a free port: it must answer ``/health``, then each of ``examples``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tkgqa", *argv, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        _wait_for_health(proc, port)
        for args in examples:
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
