"""Re-run the attacks of issue #29 on loopback and count, per surface, the inputs tried, the tracebacks, the
hangs, the files lost and the secrets found.

    python bench/reliability_round4.py            # prints one JSON object: {surface: counts}
    python bench/reliability_round4.py --no-ray   # skips the Ray run (starting Ray takes ~20 s)

Everything runs as ``python -m tkgqa`` children (each with its own ``TKGQA_HOME``) or in-process against
the FastAPI app, inside a temporary folder; the only server is a fake OpenAI-compatible one on 127.0.0.1
that echoes its ``Authorization`` header and its path (which holds a key, through ``OPENAI_BASE_URL``). A
"traceback" is a Python traceback on stderr, an exit status other than 0/1/2 or an HTTP 5xx; a "hang" a
child past its time limit; a "file lost" a file the user had that changed or vanished; a "secret" the key
found in any output (stdout, stderr, a written file, an HTTP reply)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

KEY = "sk-round4-canary-0123456789abcdef"
KG = "Barack_Obama\tMake_a_visit\tChina\t2014-11-10\nAnn\tmeet\tBob\tNaN\nAnn\tmeet\tCy\t2001\n"
HOSTILE_QTYPE = "<img src=x onerror=alert(1)>|pipe\n# injected heading"
LIMIT_S = 120.0


class Counts(Counter[str]):
    """The five counts of one surface (``inputs``, ``tracebacks``, ``hangs``, ``files_lost``, ``secrets``)
    and ``failed``: an attack whose expected refusal or result did not happen (named in ``notes``)."""

    def __init__(self) -> None:
        super().__init__({k: 0 for k in ("inputs", "tracebacks", "hangs", "files_lost", "secrets", "failed")})
        self.notes: list[str] = []

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self["failed"] += 1
            self.notes.append(what)


def echo_server() -> tuple[ThreadingHTTPServer, str]:
    """An OpenAI-compatible server that answers ``['OK']`` quoting the path and Authorization it got."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            text = f"['OK'] (called at {self.path} with {self.headers.get('Authorization')})"
            body = json.dumps(
                {
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3},
                    "model": "m",
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class Attacker:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.env = {**os.environ, "TKGQA_HOME": str(self.home), "NO_COLOR": "1"}
        self.outputs: list[str] = []  # every stdout/stderr, searched for the key at the end

    def cli(
        self, c: Counts, args: list[str], timeout: float = LIMIT_S, env: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        c["inputs"] += 1
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "tkgqa", *args],
                env=env or self.env,
                capture_output=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            c["hangs"] += 1
            return -1, "", ""
        out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        self.outputs += [out, err]
        if "Traceback" in err or proc.returncode not in (0, 1, 2):
            c["tracebacks"] += 1
        return proc.returncode, out, err

    def keep(self, c: Counts, path: Path, before: bytes) -> None:
        """Count ``path`` as lost when its content is no longer ``before``."""
        if not path.is_file() or path.read_bytes() != before:
            c["files_lost"] += 1
            c.notes.append(f"lost {path.name}")

    # --- the surfaces --------------------------------------------------------------------------------------
    def llm_parse(self) -> Counts:
        c = Counts()
        src = self.root / "parse" / "in.jsonl"
        src.parent.mkdir()
        good = json.dumps({"id": 1, "response": "[Alpha, Beta]"}) + "\n"
        src.write_text(good, "utf-8")
        before = src.read_bytes()
        base = ["llm", "parse", "--task", "timer4.answer", str(src)]
        code, _, err = self.cli(c, [*base, "--output", str(src)])
        c.check(code == 2 and "erase the input" in err, "output = input not refused")
        link = src.with_name("link.jsonl")
        os.link(src, link)
        code, _, _ = self.cli(c, [*base, "--output", str(link)])
        c.check(code == 2, "hard link of the input not refused")
        self.keep(c, src, before)
        out = src.with_name("out.jsonl")
        out.write_text("precious\n", "utf-8")
        code, _, _ = self.cli(c, ["llm", "parse", "--task", "nope", str(src), "--output", str(out)])
        c.check(code == 2, "unknown task not refused")
        self.keep(c, out, b"precious\n")
        for target in (src.parent / "missing" / "o.jsonl", src.parent):
            code, _, err = self.cli(c, [*base, "--output", str(target)])
            c.check(
                code == 2 and len(err.strip().splitlines()) == 1, f"bad output {target.name}: not one line"
            )
        bad = src.with_name("bad.jsonl")
        lines = [b'{"id":1,"response":"\xff"}', b"[" * 100_000, b"{" * 300, b'{"id": ' + b"9" * 5000 + b"}",
                 b"x" * (17 * 1024 * 1024), good.strip().encode()]  # fmt: skip
        bad.write_bytes(b"\n".join(lines) + b"\n")
        code, out_text, err = self.cli(c, ["llm", "parse", "--task", "timer4.answer", str(bad), "--json"])
        c["inputs"] += len(lines) - 1
        rows = [json.loads(line) for line in out_text.splitlines()]
        c.check(code == 1 and [r["ok"] for r in rows] == [False] * 5 + [True], "hostile lines not rows")
        for device in ("/dev/zero", str(src.parent)):
            code, _, _ = self.cli(c, ["llm", "parse", "--task", "timer4.answer", device], timeout=30)
            c.check(code == 2, f"input {device} not refused")
        return c

    def replay(self) -> Counts:
        c = Counts()
        folder = self.root / "replay"
        folder.mkdir()
        fifo = folder / "fifo.jsonl"
        os.mkfifo(fifo)
        zero = folder / "zero.jsonl"
        zero.symlink_to("/dev/zero")
        cases: dict[str, Path] = {"fifo": fifo, "dev_zero": zero, "folder": folder}
        for name, data in {
            "not_utf8": b'{"response": "\xff", "id": "q"}\n',
            "deep": b"[" * 100_000 + b"\n",
            "huge_int": b'{"response": "x", "id": ' + b"9" * 5000 + b"}\n",
            "empty": b"",
        }.items():
            (folder / f"{name}.jsonl").write_bytes(data)
            cases[name] = folder / f"{name}.jsonl"
        for name, path in cases.items():
            out = str(self.root / "replay-runs" / name)
            args = ["eval", "--dataset", "demo", "--method", "llm_only", "--llm", f"replay:{path}",
                    "--limit", "1", "--no-progress", "--output", out]  # fmt: skip
            code, _, err = self.cli(c, args, timeout=60)
            c.check(code == 2 and len(err.strip().splitlines()) == 1, f"cassette {name}: {err.strip()[:120]}")
        return c

    def secrets(self, url: str) -> tuple[Counts, Path]:
        c = Counts()
        folder = self.root / "secrets"
        data = folder / "data"
        data.mkdir(parents=True)
        rows = [{"qid": f"q{i}", "question": f"Who won in {2000 + i}?", "answers": ["OK"]} for i in range(3)]
        (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
        (data / "kg.tsv").write_text("Ann\tmeet\tBob\t2001\n", "utf-8")
        env = {**self.env, "OPENAI_BASE_URL": f"{url}/{KEY}/v1", "OPENAI_API_KEY": KEY}
        run, cassette = folder / "run", folder / "rec.jsonl"
        base = [
            "eval",
            "--dataset",
            "jsonl",
            "--data-dir",
            str(data),
            "--method",
            "llm_only",
            "--no-progress",
        ]
        code, _, _ = self.cli(
            c,
            [*base, "--llm", "openai:m", "--output", str(run), "--record", str(cassette), "--json"],
            env=env,
        )
        c.check(code == 0, "recorded run failed")
        for args in (["llm", "export", str(run), "--output", str(folder / "export.jsonl")],
                     ["llm", "export", str(run)], ["llm", "log", "--qid", "q0", "--json"],
                     ["llm", "log", "--qid", "q0"], ["llm", "log", "--json"]):  # fmt: skip
            code, _, _ = self.cli(c, args, env=env)
            c.check(code == 0, f"{' '.join(args[:2])} failed")
        c.check(b"called at /***/v1" in cassette.read_bytes(), "the echo is not in the cassette")
        return c, folder

    def ownership(self) -> Counts:
        c = Counts()
        folder = self.root / "owners"
        mine: dict[Path, bytes] = {}
        for sub, names in {"rep": ("reproduce.md", "reproduce.json"), "ev": ("report.md", "notes.txt"),
                           "lp": ("train.jsonl",), "": ("notes.txt",)}.items():  # fmt: skip
            (folder / sub).mkdir(parents=True, exist_ok=True)
            for name in names:
                path = folder / sub / name
                path.write_bytes(f"mine: {name}\n".encode())
                mine[path] = path.read_bytes()
        attacks = {
            "reproduce": ["reproduce", "ari", "--table", "T1", "--data-root", str(folder / "nodata"),
                          "--output", str(folder / "rep"), "--no-progress"],
            "eval": ["eval", "--dataset", "demo", "--method", "symbolic", "--limit", "1", "--no-progress",
                     "--output", str(folder / "ev")],
            "lpkg data": ["lpkg", "data", "--kg", "demo", "--out", str(folder / "lp"), "--per-pattern", "1"],
            "--record": ["eval", "--dataset", "demo", "--method", "symbolic", "--limit", "1", "--no-progress",
                         "--output", str(folder / "new-run"), "--record", str(folder / "notes.txt")],
        }  # fmt: skip
        for name, args in attacks.items():
            code, _, err = self.cli(c, args)
            c.check(code == 2 and "--force" in err, f"{name} did not refuse a folder it did not write")
        self.cli(c, ["eval", "--dataset", "demo", "--method", "symbolic", "--limit", "1", "--no-progress",
                     "--output", str(folder / "run")])  # fmt: skip
        code, _, err = self.cli(
            c, ["llm", "export", str(folder / "run"), "--output", str(folder / "notes.txt")]
        )
        c.check(code == 2, "llm export replaced a file that is not a cassette")
        code, _, _ = self.cli(c, ["reproduce", "ari", "--table", "T1", "--data-root", str(folder / "nodata"),
                                  "--output", str(folder / "run"), "--no-progress"])  # fmt: skip
        c.check(code == 2, "reproduce took an eval run folder")
        for path, before in mine.items():
            self.keep(c, path, before)
        return c

    def markdown(self) -> Counts:
        c = Counts()
        data = self.root / "md"
        data.mkdir()
        row = {"qid": "1", "question": "Who visited China in November 2014?", "answers": ["Barack Obama"],
               "qtype": HOSTILE_QTYPE}  # fmt: skip
        (data / "test.jsonl").write_text(json.dumps(row) + "\n", "utf-8")
        (data / "kg.tsv").write_text(KG.splitlines()[0] + "\n", "utf-8")
        code, _, _ = self.cli(c, ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method",
                                  "symbolic", "--no-progress", "--output", str(data / "run")])  # fmt: skip
        text = (data / "run" / "report.md").read_text("utf-8") if code in (0, 1) else ""
        headings = [line for line in text.splitlines() if line.startswith("#")]
        c.check(bool(text) and "<img" not in text, "raw HTML in report.md")
        c.check(
            all(h == "# Evaluation report" or h.startswith("## by ") for h in headings), "a heading from data"
        )
        c.check("\n# injected" not in text, "injected heading")
        return c

    def ids_and_api(self, secrets_folder: Path) -> Counts:
        c = Counts()
        from fastapi.testclient import TestClient

        from tkgqa.service import create_app
        from tkgqa.service.policy import ServiceSettings

        data = self.root / "ids"
        data.mkdir()
        qids = ["../x", "a/b", "..", ".", "%2F", "a b?c#d"]
        rows = [
            {"qid": q, "question": "Who visited China in November 2014?", "answers": ["Barack Obama"]}
            for q in qids
        ]
        (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
        (data / "kg.tsv").write_text(KG.splitlines()[0] + "\n", "utf-8")
        runs = self.root / "runs"
        runs.mkdir()
        self.cli(c, ["eval", "--dataset", "jsonl", "--data-dir", str(data), "--method", "symbolic",
                     "--no-progress", "--output", str(runs / "R")])  # fmt: skip
        shutil.copytree(secrets_folder / "run", runs / "S")  # the recorded run, served
        from urllib.parse import quote, urlencode

        with TestClient(
            create_app(settings=ServiceSettings(runs_dir=str(runs))), base_url="http://127.0.0.1"
        ) as client:
            urls = []
            for q in qids:
                urls += [f"/api/runs/R/question?{urlencode({'qid': q})}",
                         f"/api/runs/R/gold-facts?{urlencode({'qid': q})}"]  # fmt: skip
                # A client rewrites "." and ".." path segments (the query form is for them), and Starlette's
                # TestClient decodes a path twice (uvicorn once), so "%" ids are asked by query here.
                if q not in (".", "..") and "%" not in q:
                    urls += [f"/api/runs/R/questions/{quote(q, safe='')}",
                             f"/api/runs/R/questions/{quote(q, safe='')}/gold-facts"]  # fmt: skip
            for url in urls:
                c["inputs"] += 1
                res = client.get(url)
                c["tracebacks"] += res.status_code >= 500
                c.check(res.status_code == 200, f"{url}: {res.status_code}")
            for url in ("/api/runs", "/api/runs/S", "/api/runs/S/results", "/api/runs/S/questions/q0"):
                c["inputs"] += 1
                res = client.get(url)
                c["tracebacks"] += res.status_code >= 500
                c["secrets"] += KEY in res.text
        return c

    def kg_skips(self, ray: bool) -> Counts:
        c = Counts()
        kg = self.root / "skip" / "kg.tsv"
        kg.parent.mkdir()
        kg.write_text(KG, "utf-8")

        def said_once(err: str) -> bool:
            return sum("'NaN'" in line and "skipped" in line for line in err.splitlines()) == 1

        for extra in ([], ["--json"]):
            code, out, err = self.cli(
                c, ["ask", "Who visited China in November 2014?", "--kg", str(kg), *extra]
            )
            c.check(code == 0 and said_once(err), f"ask {extra}: the skip is not said once")
            if extra:
                c.check(
                    any("'NaN'" in w for w in json.loads(out).get("warnings", [])), "ask --json: no warning"
                )
        code, _, err = self.cli(c, ["kg", "info", str(kg)])
        c.check(said_once(err), "kg info: the skip is not said once")
        executors: list[list[str]] = [[]] + ([["--executor", "ray", "--workers", "1"]] if ray else [])
        for extra in executors:
            out_dir = self.root / "skip" / f"run{len(extra)}"
            args = ["eval", "--dataset", "demo", "--kg", str(kg), "--method", "symbolic", "--limit", "2",
                    "--no-progress", "--json", "--output", str(out_dir), *extra]  # fmt: skip
            code, out, err = self.cli(c, args, timeout=300)
            c.check(said_once(err), f"eval {extra}: the skip is not said once")
            c.check(
                code in (0, 1) and any("'NaN'" in w for w in json.loads(out)["warnings"]),
                f"eval {extra}: not in report",
            )
        return c


def search_secrets(where: Counts, texts: list[str], folders: list[Path]) -> None:
    where["secrets"] += sum(KEY in t for t in texts)
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink() and KEY.encode() in path.read_bytes():
                where["secrets"] += 1
                where.notes.append(f"key in {path}")


def main() -> None:
    ray = "--no-ray" not in sys.argv
    server, url = echo_server()
    table: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        attacker = Attacker(Path(tmp))
        surfaces: dict[str, Callable[[], Counts]] = {
            "llm parse": attacker.llm_parse,
            "replay cassettes": attacker.replay,
            "output folders": attacker.ownership,
            "report.md": attacker.markdown,
            "KG skip warnings": lambda: attacker.kg_skips(ray),
        }
        for name, attack in surfaces.items():
            counts = attack()
            table[name] = {**counts, "notes": counts.notes}
        secret_counts, secrets_folder = attacker.secrets(url)
        api = attacker.ids_and_api(secrets_folder)
        table["runs API (ids, served results)"] = {**api, "notes": api.notes}
        search_secrets(secret_counts, attacker.outputs, [Path(tmp)])
        table["recorded run (secrets)"] = {**secret_counts, "notes": secret_counts.notes}
    server.shutdown()
    total = Counter[str]()
    for counts in table.values():
        total.update({k: v for k, v in counts.items() if isinstance(v, int)})
    table["total"] = dict(total)
    print(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
