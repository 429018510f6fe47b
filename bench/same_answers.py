"""Same answers before and after a refactor: run a fixed set of offline evaluations, then diff two such runs.

    python bench/same_answers.py run OUT_DIR [--only NAME …] [--multitq-limit N]
    python bench/same_answers.py diff BEFORE_DIR AFTER_DIR

``run`` calls the ``tkgqa`` CLI of the interpreter it runs under (so ``PYTHONPATH=<tree>/src`` picks the tree)
for every job in :data:`JOBS` — the symbolic reasoner, ARI's oracle and symbolic policies, LPKG's random and
direct planners (symbolic reader), TimeR4's and CIK's coverage analyses and R3's offline embedding judge — on
the demo questions and the shared MultiTQ gold sample (skipped with a note when ``../shared/data`` is absent).

``diff`` compares every job's JSONL files (``results.jsonl``; coverage: its per-question rows) row by row
after dropping what changes from run to run (latency, timings, versions), and prints one line per job:
``same`` or the number of rows that differ with the first few differences. Exit status 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SHARED = Path(os.environ.get("TKGQA_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
MTQ = ["--dataset", "multitq", "--data-dir", str(SHARED / "multitq")]
DEMO = ["--dataset", "demo"]
RECIPE = ["--dataset", "recipe_mpr", "--data-dir", str(SHARED / "recipe_mpr")]

#: name → (CLI arguments after ``tkgqa``, needs shared data)
JOBS: dict[str, tuple[list[str], bool]] = {
    "demo_symbolic": (["eval", *DEMO, "--method", "symbolic"], False),
    "demo_ari_oracle": (["eval", *DEMO, "--method", "ari:policy=oracle"], False),
    "demo_ari_symbolic": (["eval", *DEMO, "--method", "ari:policy=symbolic"], False),
    "demo_lpkg_random": (["eval", *DEMO, "--method", "lpkg:planner=random,preset=ours"], False),
    "demo_lpkg_direct": (["eval", *DEMO, "--method", "lpkg:planner=direct,preset=ours"], False),
    "mtq_symbolic": (["eval", *MTQ, "--method", "symbolic"], True),
    "mtq_ari_oracle": (["eval", *MTQ, "--method", "ari:policy=oracle,embedder=hashing"], True),
    "mtq_ari_symbolic": (["eval", *MTQ, "--method", "ari:policy=symbolic,embedder=hashing"], True),
    "mtq_lpkg_random": (["eval", *MTQ, "--method", "lpkg:planner=random,preset=ours"], True),
    "mtq_lpkg_direct": (["eval", *MTQ, "--method", "lpkg:planner=direct,preset=ours"], True),
    "mtq_cov_timer4": (["analyze", "coverage", *MTQ, "--method", "timer4", "--embedder", "hashing"], True),
    "mtq_cov_cik": (["analyze", "coverage", *MTQ, "--method", "cik"], True),
    "recipe_r3_offline": (["eval", *RECIPE, "--method", "r3:judge=embedding,embedder=hashing"], True),
    "recipe_r3_fake": (["eval", *RECIPE, "--method", "r3:embedder=hashing", "--llm", "fake"], True),
}
#: every method that takes an LLM, on the demo questions with the scripted ``fake`` backend (issue #30: the
#: same rows before and after moving a method into its package)
FAKE_LLM_METHODS = [
    "ari",
    "timer4:embedder=hashing",
    "cik",
    "lpkg",
    "llm_only",
    "kg_rag:embedder=hashing",
    "react_kb",
    "cot_kb",
    "hybrid",
    "r3:embedder=hashing",
    "kaping:embedder=hashing",
    "cot0",
    "cot2",
]
for _spec in FAKE_LLM_METHODS:
    JOBS[f"demo_fake_{_spec.partition(':')[0]}"] = (
        ["eval", *DEMO, "--method", _spec, "--llm", "fake"],
        False,
    )

#: keys that change from run to run without a change in behaviour
VOLATILE = {"latency_s", "elapsed_s", "seconds", "started", "finished", "version", "tkgqa_version", "timings"}


def run(out: Path, only: list[str], limit: int | None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, (args, shared) in JOBS.items():
        if only and name not in only:
            continue
        if shared and not SHARED.is_dir():
            print(f"{name}: skipped (no shared data at {SHARED})")
            continue
        cmd = [sys.executable, "-m", "tkgqa", *args, "--output", str(out / name)]
        if limit is not None and name.startswith("mtq_"):
            cmd += ["--limit", str(limit)]
        t0 = time.monotonic()
        # pinned, so a diff is fair: hash seed, ARI's embedder (else the shell's TKGQA_ARI_EMBEDDER decides),
        # and a fresh home per job (else an LLM-cache hit from an earlier run changes `cached_calls`)
        home = out / ".home" / name
        shutil.rmtree(home, ignore_errors=True)
        env = {**os.environ, "PYTHONHASHSEED": "0", "TKGQA_ARI_EMBEDDER": "hashing", "TKGQA_HOME": str(home)}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        failed += proc.returncode != 0
        print(f"{name}: {status} ({time.monotonic() - t0:.0f} s)", flush=True)
    return 1 if failed else 0


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _rows(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # a run's own folder (TKGQA_HOME under it, named in a trace) differs between two runs: one placeholder
    run_root = json.dumps(str(folder.resolve().parent))[1:-1]
    for path in sorted(folder.glob("*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip():
                row = json.loads(line.replace(run_root, "<RUN>"))
                key = f"{path.name}:{row.get('qid', i)}" if isinstance(row, dict) else f"{path.name}:{i}"
                out[key] = _stable(row)
    return out


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}")
    return f"{path or '.'}: {json.dumps(a)[:120]} → {json.dumps(b)[:120]}"


def diff(before: Path, after: Path) -> int:
    differing = 0
    for name in JOBS:
        a_dir, b_dir = before / name, after / name
        if not a_dir.is_dir() or not b_dir.is_dir():
            print(f"{name}: not in both ({'before' if not a_dir.is_dir() else 'after'} missing)")
            continue
        a, b = _rows(a_dir), _rows(b_dir)
        changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if not changed:
            print(f"{name}: same ({len(a)} rows)")
            continue
        differing += 1
        print(f"{name}: {len(changed)} of {len(set(a) | set(b))} rows differ")
        for key in changed[:5]:
            print(f"    {key} {_first_difference(a.get(key), b.get(key))}")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run", help="run every job into OUT")
    p_run.add_argument("out", type=Path)
    p_run.add_argument("--only", nargs="*", default=[], choices=list(JOBS))
    p_run.add_argument("--multitq-limit", type=int, default=None)
    p_diff = sub.add_parser("diff", help="compare two run folders")
    p_diff.add_argument("before", type=Path)
    p_diff.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.cmd == "run":
        return run(args.out, args.only, args.multitq_limit)
    return diff(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
