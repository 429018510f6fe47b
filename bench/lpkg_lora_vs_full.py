"""LoRA vs full fine-tuning of the LPKG planner per CPU-minute: the same batches (same seed, same data) for a
few steps each, then the loss per plan token on the same held-out sample and the CPU time. A short
side-by-side, not a full training run. Full runs write a ~1.6 GB checkpoint (model + AdamW state) to --out.

    HF_HUB_OFFLINE=1 nice -n 5 .venv/bin/python bench/lpkg_lora_vs_full.py --data runs/lpkg/data \\
        --steps 8 --threads 1 --out /tmp/lpkg_lvf > runs/lpkg/lora_vs_full.log 2>&1
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

from tkgqa.methods.lpkg.data import file_hash, read_examples
from tkgqa.methods.lpkg.train import TrainConfig, read_losses, train_planner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--arms", default="lora,full", help="lora, full or both (comma-separated)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--max-len", type=int, default=384)
    ap.add_argument("--lora-lr", type=float, default=5e-4)
    ap.add_argument("--full-lr", type=float, default=5e-5)
    ap.add_argument("--heldout", type=int, default=48, help="held-out examples for the loss")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", type=Path, required=True, help="scratch folder (full runs write ~2 GB)")
    args = ap.parse_args()
    train = read_examples(args.data / "train.jsonl")
    held_all = read_examples(args.data / "heldout.jsonl")
    held = random.Random(0).sample(held_all, min(args.heldout, len(held_all)))
    sha = file_hash(args.data / "sft_train.jsonl")
    rows = []
    arms = [a.strip() for a in args.arms.split(",")]
    for full, lr in ((False, args.lora_lr), (True, args.full_lr)):
        name = "full" if full else "lora"
        if name not in arms:
            continue
        out = args.out / name
        shutil.rmtree(out, ignore_errors=True)
        cfg = TrainConfig(
            steps=args.steps, batch_size=args.batch_size, lr=lr, warmup=2, full=full, max_len=args.max_len,
            eval_every=10_000, save_every=10_000, threads=args.threads,
        )  # fmt: skip
        result = train_planner(train, held, data_sha256=sha, config=cfg, out=out)
        losses = [r["loss"] for r in read_losses(out)]
        row = {
            "method": name, "lr": lr, "steps": result.steps, "cpu_minutes": round(result.cpu_minutes, 2),
            "wall_minutes": round(result.wall_minutes, 2),
            "cpu_s_per_step": round(60 * result.cpu_minutes / result.steps, 1),
            "first_loss": losses[0], "last3_loss": round(sum(losses[-3:]) / len(losses[-3:]), 4),
            "heldout_loss": None if result.heldout_loss is None else round(result.heldout_loss, 4),
        }  # fmt: skip
        print(json.dumps(row), flush=True)
        print(json.dumps({"method": name, "losses": losses}), flush=True)
        rows.append(row)
        shutil.rmtree(out, ignore_errors=True)  # full runs: a 0.5 GB model + 1 GB optimizer state
    print("| method | lr | steps | CPU min | CPU s/step | loss step 1 | loss (last 3) | held-out loss |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['method']} | {r['lr']:g} | {r['steps']} | {r['cpu_minutes']} | {r['cpu_s_per_step']} | "
              f"{r['first_loss']:.3f} | {r['last3_loss']:.3f} | {r['heldout_loss']} |")  # fmt: skip


if __name__ == "__main__":
    main()
