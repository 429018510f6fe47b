"""Re-run the issue #23 attacks of items 1, 3, 6, 9 and 10 on loopback and count what went wrong.

    python bench/reliability_round3.py            # prints one JSON object of counts

Everything runs in-process or as ``python -m tkgqa`` children against servers on 127.0.0.1; nothing is
written outside a temporary folder. A "traceback" is an exception other than a project error escaping
(or a 500), a "hang" a call that ran past its bound, a "leak" a secret from outside the runs folder (or a
control character reaching the terminal) showing up in a reply."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tkgqa.service import create_app
from tkgqa.service.guard import allowed_hosts
from tkgqa.service.policy import ServiceSettings

QUESTION = "Who visited China in November 2014?"
SECRET = "OPENAI_API_KEY=sk-round3-canary"
UNSAFE = {chr(c) for c in [*range(0, 9), *range(11, 32), *range(0x7F, 0xA0)]}


class LLMServer:
    """An OpenAI-compatible server on 127.0.0.1 whose next replies are raw bytes, each sent at once or a
    byte per ``dribble`` seconds (bounded by the reply's length; stops when the client goes)."""

    def __init__(self) -> None:
        self.body = b"{}"
        self.dribble = 0.0
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                head = (
                    f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(owner.body)}"
                )
                data = head.encode() + b"\r\n\r\n" + owner.body
                try:
                    if not owner.dribble:
                        self.wfile.write(data)
                        return
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        if owner.stop.wait(owner.dribble):
                            return
                except OSError:
                    return

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()


def completion(text: str, usage: Any = None, **extra: Any) -> bytes:
    body: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": text}}], **extra}
    if usage is not None:
        body["usage"] = usage
    return json.dumps(body, ensure_ascii=False).encode()


def cli(args: list[str], env: dict[str, str], timeout: float = 120) -> tuple[int, str, str, float]:
    env = {**env, "TKGQA_HOME": tempfile.mkdtemp()}  # no cache hit from an earlier run
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tkgqa", *args], env=env, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return -1, "", "", time.monotonic() - started
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    return proc.returncode, out, err, time.monotonic() - started


def dribble_and_replies(llm: LLMServer, env: dict[str, str]) -> dict[str, Any]:
    """Items 1 and 6 against ``tkgqa ask`` (child processes) and ``/api/ask``."""
    out: Counter[str] = Counter()
    times = []
    ask = ["ask", QUESTION, "--method", "llm_only", "--llm", "openai:m", "--llm-retries", "0"]
    llm.body = completion('["Barack Obama"]') + b" " * 300
    for seconds, dribble in ((2, 1.0), (5, 1.0), (2, 0.3)):
        llm.dribble = dribble
        code, _, err, took = cli([*ask, "--llm-timeout", str(seconds)], env)
        out["dribble_runs"] += 1
        out["dribble_hangs"] += code == -1
        out["dribble_tracebacks"] += "Traceback" in err
        out["dribble_exit_2"] += code == 2
        times.append(round(took, 1))
    llm.dribble = 0.0
    replies = [
        completion('["Barack Obama"]', usage)
        for usage in ("lots", [1], 7, {"prompt_tokens": "abc"}, {"prompt_tokens": 1e308},
                      {"prompt_tokens": -5},
                      {"prompt_tokens": True}, {"completion_tokens": 1.5}, {"prompt_tokens": 10**40},
                      {"prompt_tokens": {"a": 1}}, {"prompt_tokens": None}, {"prompt_tokens": "12"})
    ]  # fmt: skip
    torn = completion('["Caf\u00e9"]').replace("\u00e9".encode(), b"\xc3")
    replies += [torn, b"\xef\xbb\xbf" + completion('["Barack Obama"]'), b'{"choices": []}', b"[]",
                b"\xff\xfe", b'{"choices": [{"message": "x"}]}',
                b'{"choices": [{"message": {"content": 5}}], "model": [1]}',
                b"[" * 100_000]  # fmt: skip
    for body in replies:
        llm.body = body
        code, _, err, _ = cli([*ask, "--llm-timeout", "10", "--json"], env)
        out["reply_cli_runs"] += 1
        out["reply_cli_tracebacks"] += "Traceback" in err or code not in (0, 2)
    with TestClient(create_app(settings=ServiceSettings(allow_llms=("fake", "openai:m")))) as client:
        for i, body in enumerate(replies):
            llm.body = body
            res = client.post(
                "/api/ask", json={"question": f"{QUESTION} {i}", "method": "llm_only", "llm": "openai:m"}
            )
            out["reply_api_runs"] += 1
            out["reply_api_500"] += res.status_code >= 500 and res.status_code != 502
            out[f"reply_api_status_{res.status_code}"] += 1
    return {**out, "dribble_seconds": times}


def runs_browser() -> dict[str, Any]:
    """Item 3: symlinks and special files in a runs folder."""
    out: Counter[str] = Counter()
    os.environ["TKGQA_ROUND3_CANARY"] = SECRET
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = Path(tmp) / "runs", Path(tmp) / "outside"
        root.mkdir()
        outside.mkdir()
        (outside / "secret.txt").write_text(SECRET)
        (outside / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n" + SECRET.encode())
        (outside / "report.json").write_text(json.dumps({"method": SECRET}))
        (outside / "results.jsonl").write_text(json.dumps({"qid": SECRET, "predictions": [SECRET]}) + "\n")
        targets = {
            "report.md": [
                "/proc/self/environ",
                outside / "secret.txt",
                "../../outside/secret.txt",
                "/etc/passwd",
            ],
            "breakdown.png": [outside / "secret.png", "/etc/passwd", "/proc/self/environ"],
            "results.jsonl": [outside / "results.jsonl", "/proc/self/environ"],
            "report.json": [outside / "report.json"],
        }
        n = 0
        for file, links in targets.items():
            for target in links:
                run = root / f"r{n}"
                run.mkdir()
                (run / "report.json").write_text(json.dumps({"n": 1}))
                (run / file).unlink(missing_ok=True)
                (run / file).symlink_to(target)
                n += 1
        (root / "out").symlink_to(outside, target_is_directory=True)
        (root / "dangling").symlink_to(root / "nothing")
        (root / "loop").symlink_to(root / "loop")
        fifo = root / "fifo"
        fifo.mkdir()
        (fifo / "report.json").write_text("{}")
        os.mkfifo(fifo / "report.md")
        os.mkfifo(fifo / "results.jsonl")
        (root / "dir").mkdir()
        (root / "dir" / "report.json").mkdir()
        names = [p.name for p in root.iterdir()]
        with TestClient(create_app(settings=ServiceSettings(runs_dir=str(root)))) as c:
            for path in ["/api/runs"] + [
                f"/api/runs/{m}{s}" for m in names for s in ("", "/chart", "/results")
            ]:
                res = c.get(path)
                out["requests"] += 1
                out["leaks"] += SECRET in res.text or "root:x:0:0" in res.text
                out["errors_500"] += res.status_code >= 500
    del os.environ["TKGQA_ROUND3_CANARY"]
    return dict(out)


def hosts() -> dict[str, Any]:
    """Item 10: Host header variants against a loopback server without a token."""
    out: Counter[str] = Counter()
    app = create_app(settings=ServiceSettings(allowed_hosts=allowed_hosts("127.0.0.1")))
    refused = [
        "evil.example",
        "evil.example:8000",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "0.0.0.0",
        "127.1",
        "2130706433",
        "[::ffff:127.0.0.1]",
        "",
        "localhost:8000@evil.example",
        "EVIL.EXAMPLE.",
    ]
    accepted = ["127.0.0.1", "127.0.0.1:8000", "localhost", "LOCALHOST.:80", "[::1]:8000", "[::1]"]
    with TestClient(app, base_url="http://127.0.0.1") as c:
        for host in refused:
            for path in ("/health", "/api/kg", "/"):
                out["refused_tried"] += 1
                out["refused_got_in"] += c.get(path, headers={"Host": host}).status_code != 400
        for host in accepted:
            out["accepted_tried"] += 1
            out["accepted_refused"] += c.get("/health", headers={"Host": host}).status_code != 200
    return dict(out)


def terminal(llm: LLMServer, env: dict[str, str]) -> dict[str, Any]:
    """Item 10: escape sequences in model replies printed by ``tkgqa ask`` and ``tkgqa llm complete``."""
    out: Counter[str] = Counter()
    payloads = [
        "\x1b[31mred",
        "\x1b]0;title\x07",
        "\x1b]8;;http://e\x1b\\x\x1b]8;;\x1b\\",
        "\x9b2J",
        "\x9d0;t\x9c",
        "\x1b]52;c;Zm9v\x07",
        "a\rb",
        "\x1bP1$r\x1b\\",
        "\x07\x08\x7f",
        "[link=http://e]x[/link]",
    ]
    for p in payloads:
        llm.body = completion(json.dumps([f"Barack Obama{p}"]))
        for args in (["ask", QUESTION, "--method", "llm_only", "--llm", "openai:m", "--llm-timeout", "10"],
                     ["llm", "complete", "--llm", "openai:m", "--no-cache", f"hi {p}"]):  # fmt: skip
            _, stdout, stderr, _ = cli(args, env)
            out["runs"] += 1
            out["control_chars_shown"] += bool(UNSAFE & set(stdout + stderr))
            out["tracebacks"] += "Traceback" in stderr
    return dict(out)


def main() -> None:
    llm = LLMServer()
    env = {**os.environ, "OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
    tmp = tempfile.mkdtemp()
    env["TKGQA_HOME"] = os.environ["TKGQA_HOME"] = tmp
    os.environ.update(OPENAI_BASE_URL=llm.url, TKGQA_LLM_RETRIES="0", TKGQA_LLM_TIMEOUT="10")
    try:
        result = {
            "llm": dribble_and_replies(llm, env),
            "runs": runs_browser(),
            "hosts": hosts(),
            "terminal": terminal(llm, env),
        }
    finally:
        llm.close()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
