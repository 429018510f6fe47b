"""TimeR4 on MultiTQ: answer coverage@n of FKS / TKS / TKS + rerank for the paper preset and each variant.

Runs ``tkgqa analyze coverage --method timer4`` once per variant (each a set of ``-o KEY=VALUE`` options on
top of the common ones) and prints a markdown table of coverage@15 (and @5/@10/@20 with ``--all-n``).
``--train`` first trains the time-aware retriever (``tkgqa timer4 train-retriever``; ``--pairs``,
``--epochs``; the paper's 10 epochs take ~26 min for 240 pairs on 2 busy CPU cores).

    python bench/timer4_variants.py --output runs/timer4_variants            # model2vec, all 350 questions
    python bench/timer4_variants.py --train --pairs 240 --epochs 5 --trained  # + the trained-TKS comparison

Run it with ``nice -n 10`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

COMMON = ["--dataset", "multitq", "--data-dir", "../shared/data/multitq", "--method", "timer4"]
TKGQA = str(Path(sys.executable).with_name("tkgqa"))  # the venv's script, whatever PATH says
FAST = ["--embedder", "model2vec", "-o", "tks_embedder=fks", "-o", "cache_embeddings=false"]

# name → extra options (model2vec everywhere: MiniLM over the whole KG takes ~14 min once on 2 cores)
VARIANTS: dict[str, list[str]] = {
    "paper (scope kg)": [],
    "scope=entities": ["--scope", "entities"],
    "fact_retrieval=false (w/o fact retrieval)": ["-o", "fact_retrieval=false"],
    "phi_norm=pool": ["-o", "phi_norm=pool"],
    "proximity=ordinal": ["-o", "proximity=ordinal"],
    "rewrite_policy=detect": ["-o", "rewrite_policy=detect"],
    "ours (scope kg)": ["-o", "preset=ours", "--scope", "kg"],
}
# trained vs untrained TKS, MiniLM on the entity scope (the whole-KG MiniLM index is too slow to build here)
TRAINED: dict[str, list[str]] = {
    "minilm, TKS untrained": ["-o", "tks_embedder=fks"],
    "minilm, TKS trained": [],
}
TRAINED_COMMON = ["--embedder", "minilm", "--scope", "entities", "-o", "max_candidates=300"]


def run(name: str, options: list[str], out: Path, limit: int | None) -> dict[str, object]:
    folder = out / "".join(c if c.isalnum() else "_" for c in name)
    cmd = [TKGQA, "analyze", "coverage", *COMMON, *options, "--output", str(folder)]
    if limit:
        cmd += ["--limit", str(limit)]
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL)
    return json.loads((folder / "coverage.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, default=Path("runs/timer4_variants"))
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ap.add_argument("--all-n", action="store_true", help="report @5/@10/@15/@20, not only @15")
    ap.add_argument("--train", action="store_true", help="train the time-aware retriever first")
    ap.add_argument("--pairs", type=int, default=240)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--trained", action="store_true", help="also compare trained vs untrained TKS")
    ap.add_argument("--trained-limit", type=int, default=60)
    args = ap.parse_args()
    if args.train:
        subprocess.run(
            [TKGQA, "timer4", "train-retriever", "--dataset", "multitq", "--data-dir",
             "../shared/data/multitq", "--n", str(args.pairs), "--epochs", str(args.epochs)],
            check=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )  # fmt: skip
    ns = ("5", "10", "15", "20") if args.all_n else ("15",)
    rows = [(name, run(name, FAST + opts, args.output, args.limit)) for name, opts in VARIANTS.items()]
    if args.trained:
        rows += [
            (name, run(name, TRAINED_COMMON + opts, args.output, args.trained_limit))
            for name, opts in TRAINED.items()
        ]
    head = [f"{stage} @{n}" for stage in ("FKS", "TKS", "TKS+rerank") for n in ns]
    print("| variant | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for name, cov in rows:
        cells = [f"{cov[stage][n]:.3f}" for stage in ("fks", "tks", "tks_rerank") for n in ns]  # type: ignore[index]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
