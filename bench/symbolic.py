"""Throughput of the offline symbolic reasoner (questions/second on one core, after the KG is loaded).

Loads a benchmark's questions and KG (default: the MultiTQ gold sample and partial KG under
``../shared/data/multitq``), builds the reasoner's per-KG indexes once (timed separately: mention index +
relation lexicon), then answers every question ``--reps`` times in this single Python thread and prints
the rate. Also answers each question over the KG *before* timing and prints Hits@1 so a speed-up that
breaks answers is visible in the same run.

    .venv/bin/python bench/symbolic.py [--dataset multitq] [--data-dir DIR] [--reps 3]

The last line is ``questions_per_second=<float>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, as the issue asks

from tkgqa.datasets import load_dataset
from tkgqa.eval import score_answer
from tkgqa.kg import TemporalKG
from tkgqa.kg.loaders import load_kg
from tkgqa.methods import resolve_method

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = {name: ROOT.parent / "shared" / "data" / name for name in ("multitq", "cronquestions")}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", default="multitq", choices=sorted(DEFAULT_DIRS))
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    data_dir = args.data_dir or DEFAULT_DIRS[args.dataset]
    if not data_dir.exists():
        raise SystemExit(f"{data_dir} not found: pass --data-dir (the benchmark folder, see ../shared/data)")

    dataset = load_dataset(args.dataset, data_dir)
    t0 = time.perf_counter()
    kg = load_kg(dataset.kg_path) if dataset.kg_path else TemporalKG()
    load_s = time.perf_counter() - t0
    method = resolve_method("symbolic")

    t0 = time.perf_counter()
    answers = [method.answer(q, kg) for q in dataset.questions]  # first pass builds the per-KG indexes
    first_pass_s = time.perf_counter() - t0
    hits = sum(
        score_answer(q, [str(x) for x in a.answers], label=kg.label).strict_hit
        for a, q in zip(answers, dataset.questions, strict=True)
    )
    answered = sum(not a.abstained for a in answers)

    rates = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        for q in dataset.questions:
            method.answer(q, kg)
        rates.append(len(dataset.questions) / (time.perf_counter() - t0))

    n = len(dataset.questions)
    print(f"dataset={args.dataset} questions={n} kg_facts={len(kg)} kg_load_s={load_s:.2f}")
    print(f"first_pass_s={first_pass_s:.2f} (includes building the mention index and relation lexicon)")
    print(f"strict_hits@1={hits / n:.3f} answered={answered / n:.3f}")
    print(f"rates_q_per_s={[round(r) for r in rates]}")
    print(f"questions_per_second={statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
