"""``tkgqa timer4 train-retriever``: TimeR4's time-aware retriever (§4.4), trained and saved under TKGQA_HOME.

Pairs ``(question, gold fact)`` come from questions other than those evaluated (``--source``):
``generated`` — MultiTQ-style questions generated from the KG with executor-computed gold (the default for
MultiTQ, whose shared copy has only test questions; any generated text equal to a test question is
dropped); ``dataset`` — a train/dev split with gold answers (``--split dev``; the default elsewhere, e.g.
TimeQuestions dev). Each pair gets the paper's three hard negatives (time, content, both incorrect); the loss
is in-batch + 3 hard negatives (InfoNCE), 10 epochs by default (the paper's). The model is saved to
``$TKGQA_HOME/models/timer4-tks/<dataset>`` (``--output`` overrides), where ``--method timer4`` finds it
(``tks_embedder=auto``); ``training.json`` beside it records the source, the pair counts and, on held-out
pairs, how often the gold fact beats each negative type before and after training.
"""

from __future__ import annotations

import json
import random
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from ...cli.flags import DatasetDirFlag, DatasetKGFlag, positive_number
from ...cli.terminal import TerminalConsole
from ...datasets.core import refuse_test_split
from ...errors import ConfigError

console = TerminalConsole()
#: ``tkgqa timer4 …`` (added to the command line by the package's descriptor, :mod:`.plugin`).
timer4_app = typer.Typer(name="timer4", help="TimeR4: train the time-aware retriever.", no_args_is_help=True)

NO_DEV_SPLIT = ("multitq",)  # shared copies without a train/dev split with gold answers


class PairSource(StrEnum):
    AUTO = "auto"  # generated for MultiTQ, dataset otherwise
    DATASET = "dataset"
    GENERATED = "generated"


def _pairs(
    dataset: str,
    data_dir: Path | None,
    kg_path: str | None,
    source: PairSource,
    split: str,
    n: int,
    seed: int,
) -> tuple[list[Any], Any, dict[str, Any]]:
    """The mined pairs, the KG and a description of where they came from."""
    from ...datasets import load_dataset
    from ...kg.loaders import load_demo_kg, load_kg
    from .training_data import generated_pairs, mine_dataset_pairs

    if source is PairSource.AUTO:
        source = PairSource.GENERATED if dataset in NO_DEV_SPLIT or dataset == "demo" else PairSource.DATASET
    if dataset == "demo":
        kg = load_kg(kg_path) if kg_path else load_demo_kg()
        exclude: set[str] = set()
    else:
        ds = load_dataset(dataset, data_dir, split="test") if source is PairSource.GENERATED else None
        exclude = {q.text.strip().lower() for q in ds.questions} if ds is not None else set()
        path = kg_path or (str(ds.kg_path) if ds is not None and ds.kg_path else None)
        if source is PairSource.DATASET:
            dev = load_dataset(dataset, data_dir, split=split, **({"kg": kg_path} if kg_path else {}))
            path = path or (str(dev.kg_path) if dev.kg_path else None)
            if path is None:
                raise ConfigError(f"no KG file found for {dataset}; pass --kg PATH")
            kg = load_kg(path)
            qs = [q for q in dev.questions if q.answers]
            random.Random(seed).shuffle(qs)
            pairs = mine_dataset_pairs(qs, kg)[:n]
            return pairs, kg, {"source": "dataset", "split": split, "questions": len(qs), "kg": path}
        if path is None:
            raise ConfigError(f"no KG file found for {dataset}; pass --kg PATH")
        kg = load_kg(path)
    pairs, generated = generated_pairs(kg, n + 50, seed=seed)
    kept = [p for p in pairs if p[0].strip().lower() not in exclude]
    meta = {
        "source": "generated",
        "generated_questions": len(generated),
        "dropped_equal_to_test": len(pairs) - len(kept),
        "kg": kg_path or kg.name,
    }
    kept = kept[:n]
    return kept, kg, meta


@timer4_app.command("train-retriever")
def train_retriever_cmd(
    dataset: str = typer.Option("multitq", "--dataset", help="multitq, timequestions, … or demo."),
    data_dir: DatasetDirFlag = None,
    kg: DatasetKGFlag = None,
    source: PairSource = typer.Option(
        PairSource.AUTO,
        "--source",
        help="Pairs from generated questions (default for multitq) or a train/dev split (dataset).",
    ),
    split: str = typer.Option("dev", "--split", help="--source dataset: the split (never test)."),
    n: int = typer.Option(1000, "--n", min=2, help="Training pairs (before the held-out cut)."),
    held_out: float = typer.Option(0.1, "--held-out", min=0.0, max=0.5, help="Pairs kept for evaluation."),
    epochs: int = typer.Option(10, "--epochs", min=1, help="Epochs (the paper: 10)."),
    batch_size: int = typer.Option(16, "--batch-size", min=2, help="Pairs per batch (in-batch negatives)."),
    lr: float = typer.Option(2e-5, "--lr", help="Learning rate."),
    loss: str = typer.Option("infonce", "--loss", help="infonce (in-batch + 3 hard negatives) or eq8."),
    base: Path | None = typer.Option(None, "--base", help="Base model (default: bundled MiniLM)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generator, the negatives and the shuffle."),
    output: Path | None = typer.Option(
        None, "--output", help="Model folder (default: $TKGQA_HOME/models/timer4-tks/<dataset>)."
    ),
) -> None:
    """Mine (question, gold fact) pairs, build the three negative types, fine-tune and save the retriever."""
    from ...retrieval import resolve_embedder
    from ...retrieval.training import (
        ContrastiveConfig,
        build_training_examples,
        load_time_aware_embedder,
        negative_accuracy,
        train_time_aware_retriever,
        trained_retriever_dir,
    )

    if loss not in ("infonce", "eq8"):
        raise ConfigError(f"--loss must be infonce or eq8, got {loss!r}")
    positive_number(lr, "--lr")
    refuse_test_split(split, "train the retriever")  # whatever --source: --split test is never meant
    pairs, store, meta = _pairs(dataset, data_dir, kg, source, split, n, seed)
    if len(pairs) < 2:
        raise ConfigError(f"only {len(pairs)} training pairs found ({meta}); use another --source or --kg")
    cut = int(len(pairs) * held_out)
    split_name = "train" if meta["source"] == "generated" else split
    train = build_training_examples(pairs[cut:], store, split=split_name, seed=seed)
    evaluation = build_training_examples(pairs[:cut], store, split=split_name, seed=seed + 1)
    base_model = resolve_embedder(f"minilm:{base}" if base else "minilm")
    before = negative_accuracy(base_model, evaluation, store) if evaluation else {}
    config = ContrastiveConfig(
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        loss="eq8" if loss == "eq8" else "infonce",
        seed=seed,
    )
    out = output or trained_retriever_dir(dataset)
    console.print(f"{len(train)} training pairs ({meta['source']}), {len(evaluation)} held out → {out}")
    report = train_time_aware_retriever(train, out, base=base, kg=store, config=config, progress=True)
    after = negative_accuracy(load_time_aware_embedder(report.path), evaluation, store) if evaluation else {}
    summary = {
        **meta,
        "dataset": dataset,
        "pairs": len(train),
        "held_out": len(evaluation),
        "negatives": ["time", "content", "both"],
        "loss": loss,
        "epochs": epochs,
        "batch_size": batch_size,
        "steps": report.steps,
        "seconds": round(report.seconds, 1),
        "device": report.device,
        "epoch_losses": list(report.epoch_losses),
        "gold_beats_negative_before": before,
        "gold_beats_negative_after": after,
    }
    (report.path / "training.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    console.print(json.dumps({k: summary[k] for k in ("pairs", "steps", "seconds", "device")}))
    if evaluation:
        console.print(f"held-out gold beats negatives: before {before} → after {after}")
    console.print(f"saved {report.path}")
