"""Fine-tuning the planner on CPU (LPKG §3.3): SmolLM2-135M (the bundled GGUF, dequantised by
``transformers``) with LoRA (``peft``; or full fine-tuning, ``full=True``), loss on the plan tokens only.

A run lives in one directory (default ``$TKGQA_HOME/lpkg/planners/<name>-<data hash>-<config hash>``):
``config.json`` (training settings, data sha256, base model, steps done, losses, CPU time), ``loss.jsonl``
(one row per step, eval rows), ``loss.png``, ``adapter/`` (the LoRA adapter) and ``checkpoint/`` (adapter,
optimizer and scheduler state every ``save_every`` steps: a stopped run resumes where it stopped, with the
same batches). After training the adapter is exported to GGUF for llama.cpp (:func:`export_gguf`) when
llama.cpp's conversion scripts are available (``llama_cpp_src``: the llama-cpp-python sdist — ``pip download
--no-deps --no-binary :all: llama-cpp-python==<installed version>`` — or its extracted ``vendor/llama.cpp``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ConfigError, TKGQAError
from ...llm import tkgqa_home
from .data import PlanningExample, file_hash
from .model import END_TOKEN, base_gguf, chat_text, load_base, require_training_stack
from .planner import planners_dir

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
Progress = Callable[[dict[str, Any]], None]


class TrainConfig(BaseModel):
    """Fine-tuning settings (LoRA r=16 on all projections by default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int = Field(default=200, ge=1)
    batch_size: int = Field(default=8, ge=1)
    lr: float = Field(default=2e-4, gt=0)
    warmup: int = Field(default=10, ge=0)
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    lora_dropout: float = Field(default=0.05, ge=0, lt=1)
    full: bool = False
    max_len: int = Field(default=384, ge=32)
    eval_every: int = Field(default=25, ge=1)
    eval_size: int = Field(default=48, ge=1)
    save_every: int = Field(default=10, ge=1)
    seed: int = 0
    threads: int | None = None

    def digest(self) -> str:
        keys = self.model_dump(exclude={"eval_every", "eval_size", "save_every", "threads", "steps"})
        return hashlib.sha256(json.dumps(keys, sort_keys=True).encode()).hexdigest()[:6]


@dataclass(frozen=True)
class TrainResult:
    path: Path
    steps: int
    train_loss: float
    heldout_loss: float | None
    cpu_minutes: float
    wall_minutes: float
    gguf: Path | None


def _encode(tok: Any, ex: PlanningExample, max_len: int) -> tuple[list[int], list[int]]:
    msgs = ex.messages()
    prompt = chat_text(tok, msgs[:-1], generation_prompt=True)
    full = chat_text(tok, msgs, generation_prompt=False)
    if not full.startswith(prompt):  # the template renders the reply after the generation prompt
        full = prompt + msgs[-1]["content"] + END_TOKEN + "\n"
    p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    ids = tok(full, add_special_tokens=False)["input_ids"][:max_len]
    labels = [-100] * min(len(p_ids), len(ids)) + ids[len(p_ids) :]
    return ids, labels


def _batch(rows: Sequence[tuple[list[int], list[int]]], pad: int) -> dict[str, Any]:
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = [r[0] + [pad] * (width - len(r[0])) for r in rows]
    labels = [r[1] + [-100] * (width - len(r[1])) for r in rows]
    mask = [[1] * len(r[0]) + [0] * (width - len(r[0])) for r in rows]
    return {
        "input_ids": torch.tensor(ids),
        "attention_mask": torch.tensor(mask),
        "labels": torch.tensor(labels),
    }


def _schedule(lengths: Sequence[int], steps: int, batch: int, seed: int) -> list[list[int]]:
    """The example indices of every step (the same on resume): seeded epochs of shuffled examples, cut
    into windows of 16 batches sorted by length (so a batch pads little), the batches shuffled again."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    while len(out) < steps:
        epoch = list(range(len(lengths)))
        rng.shuffle(epoch)
        window = 16 * batch
        batches: list[list[int]] = []
        for w in range(0, len(epoch), window):
            chunk = sorted(epoch[w : w + window], key=lambda i: lengths[i])
            batches.extend(chunk[i : i + batch] for i in range(0, len(chunk), batch))
        rng.shuffle(batches)
        out.extend(batches)
    return out[:steps]


def plan_loss(model: Any, batch: dict[str, Any]) -> Any:
    """Mean cross-entropy over the plan tokens, computing logits at those positions only (the vocabulary
    projection of the prompt and padding positions is skipped: less time, far less memory)."""
    import torch.nn.functional as F

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    hidden = base.model(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
    ).last_hidden_state
    labels = batch["labels"][:, 1:]
    mask = labels != -100
    logits = base.lm_head(hidden[:, :-1][mask])
    return F.cross_entropy(logits.float(), labels[mask])


def evaluate_loss(model: Any, rows: Sequence[tuple[list[int], list[int]]], pad: int, batch: int = 8) -> float:
    """Mean loss per plan token over ``rows``."""
    import torch

    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            b = _batch(rows[i : i + batch], pad)
            n = int((b["labels"][:, 1:] != -100).sum())
            total += float(plan_loss(model, b)) * n
            count += n
    model.train()
    return total / max(1, count)


def run_dir(name: str, data_sha: str, config: TrainConfig) -> Path:
    return planners_dir() / f"{name}-{data_sha[:8]}-{config.digest()}"


def train_planner(
    train: Sequence[PlanningExample],
    heldout: Sequence[PlanningExample],
    *,
    data_sha256: str,
    config: TrainConfig | None = None,
    name: str = "smollm2-lpkg",
    out: str | Path | None = None,
    progress: Progress | None = None,
) -> TrainResult:
    """Fine-tune (or resume fine-tuning) the planner; see the module docstring."""
    cfg = config or TrainConfig()
    require_training_stack()
    import torch

    if not train:
        raise ConfigError("no training examples: build planning data with `tkgqa lpkg data` first")
    path = Path(out) if out is not None else run_dir(name, data_sha256, cfg)
    info_path = path / "config.json"
    info = _run_info(path, data_sha256, cfg)
    torch.manual_seed(cfg.seed)
    model, tok = load_base(threads=cfg.threads)
    pad = tok.convert_tokens_to_ids(END_TOKEN)
    (path / "base_config").mkdir(exist_ok=True)
    model.config.save_pretrained(path / "base_config")
    tok.save_pretrained(path / "base_config")
    trainable = _trainable(model, path, cfg)
    params = [p for p in trainable.parameters() if p.requires_grad]
    opt, sched, start = _optimizer(trainable, params, path, cfg)
    rows = [_encode(tok, ex, cfg.max_len) for ex in train]
    held = [_encode(tok, ex, cfg.max_len) for ex in heldout]
    eval_rows = random.Random(cfg.seed).sample(held, min(cfg.eval_size, len(held))) if held else []
    schedule = _schedule([len(r[0]) for r in rows], cfg.steps, cfg.batch_size, cfg.seed)
    log = (path / "loss.jsonl").open("a", encoding="utf-8")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    cpu_before = float(info.get("cpu_seconds", 0.0))
    wall_before = float(info.get("wall_seconds", 0.0))
    base_info = _base_info(rows, len(held), data_sha256, cfg)
    trainable.train()
    loss = float("nan")
    try:
        for step in range(start, cfg.steps):
            t0 = time.perf_counter()
            loss = _optimizer_step(
                trainable, _batch([rows[i] for i in schedule[step]], pad), params, opt, sched
            )
            cpu_now = cpu_before + time.process_time() - cpu0
            row: dict[str, Any] = {
                "step": step + 1,
                "loss": round(loss, 5),
                "lr": sched.get_last_lr()[0],
                "seconds": round(time.perf_counter() - t0, 2),
                "cpu_seconds": round(cpu_now, 1),
            }

            if eval_rows and ((step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps):
                row["heldout_loss"] = round(evaluate_loss(trainable, eval_rows, pad), 5)
            log.write(json.dumps(row) + "\n")
            log.flush()
            if progress is not None:
                progress(row)
            if (step + 1) % cfg.save_every == 0 or step + 1 == cfg.steps:
                _checkpoint(path, trainable, opt, sched, step + 1, cfg.full)
                cpu = cpu_before + time.process_time() - cpu0
                wall = wall_before + time.perf_counter() - wall0
                _write_info(
                    info_path, {**base_info, "steps_done": step + 1, "cpu_seconds": cpu, "wall_seconds": wall}
                )
    finally:
        log.close()
    heldout_loss = evaluate_loss(trainable, held, pad) if held else None
    trainable.save_pretrained(path / ("model" if cfg.full else "adapter"))
    cpu = cpu_before + time.process_time() - cpu0
    wall = wall_before + time.perf_counter() - wall0
    final = {**base_info, "steps_done": cfg.steps, "cpu_seconds": cpu, "wall_seconds": wall,
             "final_train_loss": loss, "heldout_loss": heldout_loss}  # fmt: skip
    _write_info(info_path, final)
    plot_losses(path)
    return TrainResult(path, cfg.steps, loss, heldout_loss, cpu / 60, wall / 60, None)


def _run_info(path: Path, data_sha256: str, cfg: TrainConfig) -> dict[str, Any]:
    """The run folder's ``config.json`` so far (empty for a new run); a run with other data or settings in
    ``path`` is a ConfigError."""
    path.mkdir(parents=True, exist_ok=True)
    info_path = path / "config.json"
    info: dict[str, Any] = json.loads(info_path.read_text("utf-8")) if info_path.is_file() else {}
    if info and (info.get("data_sha256") != data_sha256 or info.get("config_digest") != cfg.digest()):
        raise ConfigError(f"{path} holds a run with other data or settings; use another --name or --out")
    return info


def _trainable(model: Any, path: Path, cfg: TrainConfig) -> Any:
    """What is trained: the whole model (``full``), else a LoRA adapter on it (the checkpoint's, resuming)."""
    if cfg.full:
        return model
    from peft import LoraConfig, PeftModel, get_peft_model

    ckpt_adapter = path / "checkpoint" / "adapter"
    if (ckpt_adapter / "adapter_config.json").is_file():
        return PeftModel.from_pretrained(model, str(ckpt_adapter), is_trainable=True)
    lora = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=list(TARGETS), task_type="CAUSAL_LM")  # fmt: skip
    return get_peft_model(model, lora)


def _optimizer(trainable: Any, params: list[Any], path: Path, cfg: TrainConfig) -> tuple[Any, Any, int]:
    """AdamW with warm-up then cosine decay to 10 %, and the step to start from: both restored from the
    run's checkpoint when there is one."""
    import torch

    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        progress_ = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress_)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    start = 0
    state_path = path / "checkpoint" / "state.pt"
    if state_path.is_file():
        state = torch.load(state_path, weights_only=False)
        if cfg.full:
            trainable.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        start = int(state["step"])
    return opt, sched, start


def _base_info(rows: Sequence[Any], n_heldout: int, data_sha256: str, cfg: TrainConfig) -> dict[str, Any]:
    """What ``config.json`` says of the run whatever its progress: the base model, data, settings."""
    return {
        "base_gguf": base_gguf().name, "base_size": base_gguf().stat().st_size, "data_sha256": data_sha256,
        "config_digest": cfg.digest(), "train": cfg.model_dump(), "n_train": len(rows),
        "n_heldout": n_heldout,
        "truncated": sum(1 for r in rows if len(r[0]) >= cfg.max_len),
        "method": "full" if cfg.full else "lora", "gguf_adapter": None,  # stale once training moves on
    }  # fmt: skip


def _optimizer_step(trainable: Any, batch: Any, params: list[Any], opt: Any, sched: Any) -> float:
    """One step on ``batch`` (gradients clipped at norm 1); its loss."""
    import torch

    loss_t = plan_loss(trainable, batch)
    loss_t.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    sched.step()
    opt.zero_grad()
    return float(loss_t.detach())


def _checkpoint(path: Path, model: Any, opt: Any, sched: Any, step: int, full: bool) -> None:
    import torch

    ckpt = path / "checkpoint"
    tmp = path / "checkpoint.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    state = {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": step}
    if full:
        state["model"] = model.state_dict()
    else:
        model.save_pretrained(tmp / "adapter")
    torch.save(state, tmp / "state.pt")
    shutil.rmtree(ckpt, ignore_errors=True)
    tmp.rename(ckpt)


def _write_info(path: Path, info: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    tmp.replace(path)


def read_losses(path: Path) -> list[dict[str, Any]]:
    f = path / "loss.jsonl"
    if not f.is_file():
        return []
    rows: dict[int, dict[str, Any]] = {}
    for line in f.read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[int(row["step"])] = row  # a resumed run rewrites the steps after its checkpoint
    return [rows[k] for k in sorted(rows)]


def plot_losses(path: Path) -> Path | None:
    """``loss.png``: training loss per step (and its running mean) and held-out loss."""
    rows = read_losses(path)
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    losses = [r["loss"] for r in rows]
    window = 10
    smooth = [
        sum(losses[max(0, i - window + 1) : i + 1]) / len(losses[max(0, i - window + 1) : i + 1])
        for i in range(len(losses))
    ]
    held = [(r["step"], r["heldout_loss"]) for r in rows if "heldout_loss" in r]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, losses, alpha=0.3, label="train loss (per step)")
    ax.plot(steps, smooth, label=f"train loss ({window}-step mean)")
    if held:
        ax.plot([s for s, _ in held], [h for _, h in held], "o-", label="held-out loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss per plan token")
    ax.set_title(f"LPKG planner fine-tuning ({path.name})")
    ax.legend()
    fig.tight_layout()
    out = path / "loss.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


# --- GGUF export ---------------------------------------------------------------------------------------
def convert_script(src: str | Path | None) -> Path:
    """llama.cpp's ``convert_lora_to_gguf.py`` from ``src`` (the llama-cpp-python sdist ``.tar.gz``, its
    extracted tree or ``vendor/llama.cpp``); ``$TKGQA_LLAMA_CPP_SRC`` when ``src`` is None."""
    given = src or os.environ.get("TKGQA_LLAMA_CPP_SRC")
    if not given:
        raise ConfigError(
            "no llama.cpp conversion scripts: `pip download --no-deps --no-binary :all: "
            "llama-cpp-python==VERSION` "
            "(the installed version) and pass the .tar.gz as --llama-cpp-src (or set TKGQA_LLAMA_CPP_SRC)"
        )
    path = Path(given).expanduser()
    if path.is_file() and path.name.endswith((".tar.gz", ".tgz")):
        dest = tkgqa_home() / "lpkg" / "llama_cpp" / path.name.removesuffix(".tar.gz").removesuffix(".tgz")
        if not (dest / "convert_lora_to_gguf.py").is_file():
            _extract(path, dest)
        path = dest
    for cand in (path, path / "vendor" / "llama.cpp", *path.glob("*/vendor/llama.cpp")):
        if (cand / "convert_lora_to_gguf.py").is_file():
            return cand / "convert_lora_to_gguf.py"
    raise ConfigError(f"convert_lora_to_gguf.py not found under {path}")


def _extract(archive: Path, dest: Path) -> None:
    """Only llama.cpp's Python conversion code (convert scripts, conversion/, gguf-py/) from the sdist."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if "llama.cpp" not in parts or not member.isfile():
                continue
            rel = Path(*parts[parts.index("llama.cpp") + 1 :])
            top = rel.parts[0] if rel.parts else ""
            if not (
                top in {"conversion", "gguf-py"} or (len(rel.parts) == 1 and rel.name.startswith("convert_"))
            ):
                continue
            if ".." in rel.parts:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            fh = tar.extractfile(member)
            if fh is not None:
                target.write_bytes(fh.read())


def export_gguf(planner: str | Path, src: str | Path | None = None) -> Path:
    """Convert the planner's LoRA adapter to GGUF (f32) next to it and record it in ``config.json``; the
    file name carries the adapter's hash (so LLM cache entries of an older adapter are never reused)."""
    path = Path(planner)
    adapter = path / "adapter"
    if not (adapter / "adapter_config.json").is_file():
        raise ConfigError(f"{path} has no LoRA adapter (adapter/adapter_config.json); train it first")
    script = convert_script(src)
    weights = next(adapter.glob("adapter_model.*"))
    out = path / f"adapter-{file_hash(weights)[:10]}.gguf"
    cmd = [sys.executable, str(script), "--base", str(path / "base_config"), "--outfile", str(out),
           "--outtype", "f32", str(adapter)]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0 or not out.is_file():
        raise TKGQAError(f"GGUF export failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    info_path = path / "config.json"
    info = json.loads(info_path.read_text("utf-8"))
    info["gguf_adapter"] = out.name
    _write_info(info_path, info)
    return out
