"""Contrastive time-aware retriever training (TimeR4 §4.4, Eq. 7–8).

From ``(question, gold fact)`` pairs of a **train/dev split** (never test: :func:`build_training_examples`
refuses it) we build three hard negatives per pair, as in the paper's Figure 2:

* ``time``    — the time shifted (same granularity, other period), content kept;
* ``content`` — the subject, relation or object replaced by another from the KG, time kept;
* ``both``    — both corruptions.

A corrupted fact that happens to be true in the KG is redrawn (up to a few times).

**Loss.** ``"infonce"`` (default) is the paper's setup ("in-batch negatives and three hard negatives"):
sentence-transformers' MultipleNegativesRankingLoss (softmax over cosine × ``scale`` against every positive
and hard negative in the batch) with hard negatives *weighted by type*: a negative of weight ``w`` enters the
softmax denominator as ``w · exp(logit)`` (``log w`` added to its logit); all weights 1 is exactly MNRL.
``"eq8"`` is the pointwise weighted loss of Eq. 8. As printed, Eq. 8 (``w_p·Y·exp(φ) + w_n·(1−Y)·exp(1−φ)``)
*grows* with a positive's similarity, so minimising it would push positives away; we implement the
evident intent with the two exponentials swapped: ``L = w_p·exp(1 − φ⁺) + Σ_type w_type·exp(φ⁻)``,
averaged over pairs.

**Pairs and where the model goes.** ``tkgqa timer4 train-retriever`` mines the pairs
(:mod:`tkgqa.methods.timer4.training_data`: TimeQuestions dev, or KG-generated questions for MultiTQ) and
saves the model to :func:`trained_retriever_dir` (``$TKGQA_HOME/models/timer4-tks/<dataset>``), where TimeR4
finds it (:func:`find_trained_retriever`).

Training is a plain PyTorch loop over the sentence-transformers model (no ``datasets``/``accelerate``
needed); it runs on CUDA when torch sees a GPU, else CPU (a few hundred pairs take well under a minute with
MiniLM on 2 cores). The model is saved with ``SentenceTransformer.save`` plus ``tkgqa_model.json``; load it
with :func:`load_time_aware_embedder` (or ``resolve_embedder("minilm:<path>")``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import ConfigError
from ..kg import Fact, KGStore
from ..time import Granularity, TimePoint
from .embedders import (
    MODEL_META_FILE,
    Embedder,
    SentenceTransformerEmbedder,
    bundled_minilm_path,
)
from .paths import models_dir, safe_name
from .verbalize import DEFAULT_VERBALIZER, Verbalizer

TRAIN_SPLITS = frozenset({"train", "dev", "valid", "validation"})
TRAINED_RETRIEVERS = "timer4-tks"


def trained_retriever_dir(key: str) -> Path:
    """Where ``tkgqa timer4 train-retriever`` saves the time-aware retriever for ``key`` (a dataset name such
    as ``multitq``, else a KG name): ``$TKGQA_HOME/models/timer4-tks/<key>`` (read at call time)."""
    return models_dir() / TRAINED_RETRIEVERS / safe_name(key)


def find_trained_retriever(key: str) -> Path | None:
    """The saved retriever for ``key`` (:func:`trained_retriever_dir`), or ``None`` when there is none."""
    path = trained_retriever_dir(key)
    return path if (path / "modules.json").is_file() else None


def trained_retrievers() -> dict[str, Path]:
    """Every saved time-aware retriever under ``$TKGQA_HOME/models/timer4-tks``: key → folder."""
    root = models_dir() / TRAINED_RETRIEVERS
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / "modules.json").is_file()}


class NegativeType(StrEnum):
    TIME = "time"
    CONTENT = "content"
    BOTH = "both"


NEGATIVE_ORDER = (NegativeType.TIME, NegativeType.CONTENT, NegativeType.BOTH)


@dataclass(frozen=True, slots=True)
class TrainingExample:
    question: str
    positive: Fact
    negatives: tuple[tuple[NegativeType, Fact], ...]

    def negative(self, kind: NegativeType) -> Fact:
        return next(f for t, f in self.negatives if t == kind)


# --- corruption -----------------------------------------------------------------------------------------
def _shift(point: TimePoint, amount: int) -> TimePoint:
    """Move ``point`` by ``amount`` units of its own granularity."""
    if point.granularity == Granularity.YEAR:
        return TimePoint(point.year + amount)
    if point.granularity == Granularity.MONTH:
        assert point.month is not None
        months = point.year * 12 + (point.month - 1) + amount
        return TimePoint(months // 12, months % 12 + 1)
    return TimePoint.from_ordinal(point.first_day + amount)


def corrupt_time(fact: Fact, rng: random.Random, *, max_shift_years: int = 10) -> Fact:
    """The same statement at another time (both ends shifted alike, granularity kept)."""
    anchor = fact.start or fact.end
    if anchor is None:
        raise ConfigError(f"cannot corrupt the time of a timeless fact: {fact}")
    per_year = {Granularity.YEAR: 1, Granularity.MONTH: 12, Granularity.DAY: 365}[anchor.granularity]
    amount = rng.randint(1, max_shift_years * per_year) * rng.choice((-1, 1))
    start = _shift(fact.start, amount) if fact.start else None
    end = _shift(fact.end, amount) if fact.end else None
    return Fact(fact.subject, fact.relation, fact.object, start, end)


def corrupt_content(
    fact: Fact, entities: Sequence[str], relations: Sequence[str], rng: random.Random
) -> Fact:
    """The fact with its subject, relation or object replaced by a different one (time kept)."""
    fields = ["subject", "object"] + (["relation"] if len(relations) > 1 else [])
    if len(entities) < 2:
        fields = [f for f in fields if f == "relation"]
    if not fields:
        raise ConfigError("content corruption needs at least two entities or two relations in the KG")
    which = rng.choice(fields)
    pool = relations if which == "relation" else entities
    current = getattr(fact, which)
    replacement = current
    while replacement == current:
        replacement = pool[rng.randrange(len(pool))]
    return Fact(
        replacement if which == "subject" else fact.subject,
        replacement if which == "relation" else fact.relation,
        replacement if which == "object" else fact.object,
        fact.start,
        fact.end,
    )


def make_negatives(
    fact: Fact, kg: KGStore, rng: random.Random, *, tries: int = 5
) -> dict[NegativeType, Fact]:
    """One negative of each type for a timed fact; redrawn while the corruption is a true KG fact."""
    entities, relations = kg.entities, kg.relations
    makers = {
        NegativeType.TIME: lambda: corrupt_time(fact, rng),
        NegativeType.CONTENT: lambda: corrupt_content(fact, entities, relations, rng),
        NegativeType.BOTH: lambda: corrupt_time(corrupt_content(fact, entities, relations, rng), rng),
    }
    out: dict[NegativeType, Fact] = {}
    for kind, make in makers.items():
        neg = make()
        for _ in range(tries):
            if kg.count(neg.subject, neg.relation, neg.object, time=neg.start) == 0:
                break
            neg = make()
        out[kind] = neg
    return out


def build_training_examples(
    pairs: Iterable[tuple[str, Fact]], kg: KGStore, *, split: str, seed: int = 0
) -> list[TrainingExample]:
    """Examples with one negative of each type; timeless facts are skipped (no time to corrupt)."""
    if split.strip().lower() not in TRAIN_SPLITS:
        raise ConfigError(
            f"training pairs must come from a train/dev split, got split={split!r}; never train on test"
        )
    rng = random.Random(seed)
    examples = []
    for question, fact in pairs:
        if fact.start is None and fact.end is None:
            continue
        negs = make_negatives(fact, kg, rng)
        examples.append(TrainingExample(question, fact, tuple((t, negs[t]) for t in NEGATIVE_ORDER)))
    return examples


# --- training -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContrastiveConfig:
    """Training settings; ``epochs`` = 10 and in-batch + 3 hard negatives (``infonce``) are the paper's
    (§5.1), the rest are ours (the paper gives no batch size or learning rate)."""

    epochs: int = 10
    batch_size: int = 16
    lr: float = 2e-5
    loss: Literal["infonce", "eq8"] = "infonce"
    scale: float = 20.0  # MNRL's default (temperature 0.05)
    w_pos: float = 1.0
    w_time: float = 1.0
    w_content: float = 1.0
    w_both: float = 1.0
    warmup_ratio: float = 0.1
    max_seq_length: int = 64
    seed: int = 0
    device: str | None = None  # None: CUDA if available, else CPU

    def negative_weights(self) -> list[float]:
        weights = {
            NegativeType.TIME: self.w_time,
            NegativeType.CONTENT: self.w_content,
            NegativeType.BOTH: self.w_both,
        }
        return [weights[t] for t in NEGATIVE_ORDER]


@dataclass(frozen=True)
class TrainingReport:
    path: Path
    device: str
    n_examples: int
    steps: int
    seconds: float
    epoch_losses: tuple[float, ...] = field(default_factory=tuple)


def contrastive_loss(q: Any, pos: Any, negs: Any, config: ContrastiveConfig) -> Any:
    """Loss of one batch: ``q``/``pos`` (B, d), ``negs`` (B, H, d), all L2-normalised torch tensors."""
    import torch
    import torch.nn.functional as F

    weights = torch.tensor(config.negative_weights(), dtype=q.dtype, device=q.device)
    if config.loss == "eq8":
        s_pos = (q * pos).sum(-1)
        s_neg = torch.einsum("bd,bhd->bh", q, negs)
        per = config.w_pos * torch.exp(1.0 - s_pos) + (weights[None, :] * torch.exp(s_neg)).sum(-1)
        return per.mean()
    if config.loss != "infonce":
        raise ConfigError(f"unknown loss {config.loss!r}; use infonce or eq8")
    b, h, _ = negs.shape
    logits_pos = q @ pos.T * config.scale  # (B, B): in-batch negatives
    flat = negs.transpose(0, 1).reshape(h * b, -1)  # column-major like MNRL: all type-0, then type-1 …
    log_w = torch.log(weights.clamp_min(1e-12)).repeat_interleave(b)
    logits_neg = q @ flat.T * config.scale + log_w[None, :]
    labels = torch.arange(b, device=q.device)
    return F.cross_entropy(torch.cat([logits_pos, logits_neg], dim=1), labels)


def _texts(ex: TrainingExample, kg: KGStore | None, verbalizer: Verbalizer) -> list[str]:
    return [
        ex.question,
        verbalizer(ex.positive, kg),
        *(verbalizer(ex.negative(t), kg) for t in NEGATIVE_ORDER),
    ]


def train_time_aware_retriever(
    examples: Sequence[TrainingExample],
    output_dir: str | os.PathLike[str],
    *,
    base: str | os.PathLike[str] | None = None,
    kg: KGStore | None = None,
    config: ContrastiveConfig = ContrastiveConfig(),
    verbalizer: Verbalizer = DEFAULT_VERBALIZER,
    progress: bool = False,
) -> TrainingReport:
    """Fine-tune ``base`` (default: bundled MiniLM) on ``examples`` and save it to ``output_dir``."""
    if not examples:
        raise ConfigError("no training examples")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ConfigError(
            "training needs torch and sentence-transformers; pip install 'tkgqa[retrieval]'"
        ) from None
    started = time.perf_counter()
    device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(config.seed)
    src = Path(base) if base is not None else bundled_minilm_path()
    model = SentenceTransformer(str(src), device=device, local_files_only=True)
    model.max_seq_length = config.max_seq_length
    rows = [_texts(ex, kg, verbalizer) for ex in examples]
    per_epoch = math.ceil(len(rows) / config.batch_size)
    total = per_epoch * config.epochs
    warmup = max(1, int(total * config.warmup_ratio))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="contrastive training", unit="step")
    model.train()
    try:
        epoch_losses = _train_epochs(model, rows, config, device, optimizer, schedule, bar)
    finally:
        if bar is not None:
            bar.close()
    model.eval()
    out = Path(output_dir)
    _save_model(model, out, {"base": str(src), "n_examples": len(examples)}, config, epoch_losses, device)
    return TrainingReport(
        out, device, len(examples), total, time.perf_counter() - started, tuple(epoch_losses)
    )


def _train_epochs(
    model: Any, rows: Sequence[Sequence[str]], config: ContrastiveConfig, device: str, optimizer: Any,
    schedule: Any, bar: Any,
) -> list[float]:  # fmt: skip
    """``config.epochs`` passes over ``rows`` (shuffled with ``config.seed``), one optimizer step per batch;
    the mean loss of each epoch."""
    import torch

    rng = random.Random(config.seed)
    epoch_losses: list[float] = []
    for _ in range(config.epochs):
        order = list(range(len(rows)))
        rng.shuffle(order)
        losses = []
        for start in range(0, len(order), config.batch_size):
            batch = [rows[i] for i in order[start : start + config.batch_size]]
            b, width = len(batch), len(batch[0])
            flat = [text for row in batch for text in row]
            prepare = getattr(model, "preprocess", None) or model.tokenize  # ST >= 6 renamed tokenize
            features = {k: v.to(device) if hasattr(v, "to") else v for k, v in prepare(flat).items()}
            emb = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1).view(
                b, width, -1
            )
            loss = contrastive_loss(emb[:, 0], emb[:, 1], emb[:, 2:], config)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(float(loss.detach().cpu()))
            if bar is not None:
                bar.update(1)
        epoch_losses.append(float(np.mean(losses)))
    return epoch_losses


def _save_model(
    model: Any, out: Path, about: dict[str, Any], config: ContrastiveConfig, epoch_losses: list[float],
    device: str,
) -> None:  # fmt: skip
    """Save the model to ``out`` with its :data:`MODEL_META_FILE` (id from the weights' digest)."""
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    weights = out / "model.safetensors"
    digest = (
        hashlib.sha256(weights.read_bytes()).hexdigest()[:16] if weights.is_file() else f"{time.time_ns():x}"
    )
    meta = {
        "id": f"tkgqa-tar-{digest}",
        **about,
        "config": {k: v for k, v in asdict(config).items()},
        "epoch_losses": epoch_losses,
        "device": device,
    }
    (out / MODEL_META_FILE).write_text(json.dumps(meta, indent=2, default=str))


def load_time_aware_embedder(
    path: str | os.PathLike[str], *, device: str | None = None
) -> SentenceTransformerEmbedder:
    """The fine-tuned retriever saved by :func:`train_time_aware_retriever`, as an :class:`Embedder`."""
    p = Path(path)
    if not (p / "modules.json").is_file():
        raise ConfigError(f"no saved sentence-transformers model at {p}")
    return SentenceTransformerEmbedder(p, device=device)


def negative_accuracy(
    embedder: Embedder,
    examples: Sequence[TrainingExample],
    kg: KGStore | None = None,
    *,
    verbalizer: Verbalizer = DEFAULT_VERBALIZER,
) -> dict[str, float]:
    """Per negative type, the fraction of examples whose gold fact is closer to the question than that
    negative (plus ``"all"``: closer than all three). Use it before/after training on held-out pairs."""
    if not examples:
        return {}
    rows = [_texts(ex, kg, verbalizer) for ex in examples]
    width = len(rows[0])
    vecs = embedder.encode([t for row in rows for t in row]).reshape(len(rows), width, -1)
    sims = np.einsum("nd,nkd->nk", vecs[:, 0], vecs[:, 1:])  # (n, 1 + H): gold, then negatives
    wins = sims[:, :1] > sims[:, 1:]
    out = {t.value: float(wins[:, j].mean()) for j, t in enumerate(NEGATIVE_ORDER)}
    out["all"] = float(wins.all(axis=1).mean())
    return out
