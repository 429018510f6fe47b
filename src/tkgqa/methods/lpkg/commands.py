"""``tkgqa lpkg``: LPKG's planning data, planner training and planning (see :mod:`tkgqa.methods.lpkg`).

    tkgqa lpkg ground --kg KG [--per-pattern N]            # pattern instances per pattern (counts)
    tkgqa lpkg data --kg KG [--kg KG2] --out DIR            # planning data + SFT export (+ --llm SPEC)
    tkgqa lpkg data … --executor ray [--workers N]          # the same files, built on Ray workers
    tkgqa lpkg train --data DIR [--steps 200]               # LoRA fine-tuning of SmolLM2-135M on CPU
    tkgqa lpkg export-gguf PLANNER --llama-cpp-src SDIST    # adapter → GGUF for llama.cpp inference
    tkgqa lpkg plan "question" --planner finetuned:NAME     # one plan, parsed (and run with --kg)
    tkgqa lpkg data … --patterns paper                      # only LPKG's nine patterns (Figure 3)

Evaluation goes through ``tkgqa eval --method lpkg`` (plan metrics in ``report.json``'s ``method_metrics``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ...cli.flags import ExecutorFlag, RayAddressFlag, RayWorkersFlag, positive_number
from ...cli.terminal import TerminalConsole
from ...errors import ConfigError
from ...eval.executor import ExecutorKind
from ...userfiles import claim_folder
from .planning_jobs import kg_slug as _slug

console = TerminalConsole()
#: ``tkgqa lpkg …`` (added to the command line by the package's descriptor, :mod:`.plugin`).
lpkg_app = typer.Typer(
    name="lpkg", help="LPKG: planning data from a KG, planner training, planning.", no_args_is_help=True
)


def chosen_patterns(values: list[str] | None, *, flag: str = "--patterns") -> tuple[Any, ...] | None:
    """The values of ``flag``: ``paper`` (LPKG's nine, Figure 3), ``temporal``, ``all`` or pattern names
    (repeatable or comma-separated); ``None`` when not given (all patterns)."""
    from ...query.generate.patterns import LPKG_PATTERNS, TEMPORAL_PATTERNS, PatternType

    if not values:
        return None
    groups = {"paper": LPKG_PATTERNS, "temporal": TEMPORAL_PATTERNS, "all": tuple(PatternType)}
    out: list[PatternType] = []
    for value in values:
        for word in (w.strip() for w in value.split(",")):
            if not word:
                continue
            if word.lower() in groups:
                out.extend(groups[word.lower()])
                continue
            try:
                out.append(PatternType(word))
            except ValueError:
                names = ", ".join(p.value for p in PatternType)
                raise ConfigError(
                    f"unknown pattern {word!r} in {flag}: use paper (LPKG's nine), temporal, all, or "
                    f"pattern names ({names})"
                ) from None
    return tuple(dict.fromkeys(out))


#: ``--max-answers`` and ``--seed`` of the commands that ground patterns (ground, data).
MaxAnswersOpt: Any = typer.Option(10, "--max-answers", min=1, help="Largest answer set an instance may have.")
SeedOpt: Any = typer.Option(0, "--seed", help="Seed of the sampling (the same seed, the same instances).")


def _grounding(
    per_pattern: int, max_answers: int, seed: int, patterns: list[str] | None, *, flag: str
) -> Any:
    from ...query.generate.grounding import GroundingConfig
    from ...query.generate.patterns import PatternType

    chosen = chosen_patterns(patterns, flag=flag) or tuple(PatternType)
    return GroundingConfig(patterns=chosen, per_pattern=per_pattern, max_answers=max_answers, seed=seed)


@lpkg_app.command("ground")
def ground_cmd(
    kg: str = typer.Option(..., "--kg", help="KG file (any format the loaders read; demo: bundled)."),
    per_pattern: int = typer.Option(100, "--per-pattern", min=1, help="Instances wanted per pattern."),
    max_answers: int = MaxAnswersOpt,
    pattern: list[str] | None = typer.Option(None, "--pattern", help="Only these patterns (repeatable)."),
    seed: int = SeedOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
) -> None:
    """Ground the patterns in a KG and report how many instances each yields."""
    from ...api.resolve import open_kg
    from ...query.generate.grounding import ground

    result = ground(open_kg(kg), _grounding(per_pattern, max_answers, seed, pattern, flag="--pattern"))
    if as_json:
        print(json.dumps({"counts": result.counts, "attempts": result.attempts}, indent=2))
        return
    table = Table("pattern", "instances", "attempts", title=f"pattern instances in {kg}")
    for p, n in result.counts.items():
        table.add_row(p, str(n), str(result.attempts[p]))
    console.print(table)


#: What the marker of a planning-data folder names (:func:`tkgqa.userfiles.claim_folder`).
LPKG_DATA_COMMAND = "tkgqa lpkg data"


def _is_planning_folder(folder: Path) -> bool:
    """A planning-data folder from before folders were marked: it has the ``summary.json`` and
    ``planning.jsonl`` this command writes."""
    return (folder / "summary.json").is_file() and (folder / "planning.jsonl").is_file()


@lpkg_app.command("data")
def data_cmd(
    kg: list[str] = typer.Option(..., "--kg", help="KG file (repeatable: data from several KGs)."),
    out: Path = typer.Option(..., "--out", help="Output folder."),
    per_pattern: int = typer.Option(100, "--per-pattern", min=1, help="Instances per pattern and KG."),
    max_answers: int = MaxAnswersOpt,
    holdout: float = typer.Option(
        0.1, "--holdout", min=0.0, max=1.0, help="Share of examples held out (entity-disjoint), 0 to 1."
    ),
    llm: str | None = typer.Option(None, "--llm", help="Verbalise with this LLM (templates otherwise)."),
    sft_format: str = typer.Option(
        "messages", "--format", help="SFT format: messages, prompt_completion, alpaca."
    ),
    seed: int = SeedOpt,
    executor: ExecutorFlag = ExecutorKind.LOCAL,
    ray_address: RayAddressFlag = None,
    workers: RayWorkersFlag = None,
    patterns: list[str] | None = typer.Option(
        None,
        "--patterns",
        help="Only these patterns: paper (LPKG's nine: 1p 2p 3p 2i 3i 2u ip pi compare), temporal, all, or "
        "names (repeatable or comma-separated). Default: all.",
    ),
    force: bool = typer.Option(
        False, "--force", help="Write into --out even when it holds files `tkgqa lpkg data` did not write."
    ),
) -> None:
    """Planning data: ground, verbalise, gold plans; train/held-out split; SFT export. One shard per (KG,
    pattern), seeded from --seed and the pattern: --executor ray builds the shards on Ray workers and
    writes the same files as the local run. --out must be new, empty or a folder this command wrote."""
    from ...eval.executor import ExecutorConfig
    from .data import (
        SFTFormat,
        counts_by_pattern,
        export_sft,
        split_by_entities,
        write_examples,
    )
    from .planning_jobs import planning_data

    try:
        fmt = SFTFormat(sft_format)
    except ValueError:
        raise ConfigError(f"--format must be one of {', '.join(SFTFormat)}") from None
    config = ExecutorConfig.of(executor, address=ray_address, workers=workers)
    chosen = chosen_patterns(patterns)
    out = claim_folder(out, LPKG_DATA_COMMAND, force=force, legacy=_is_planning_folder, option="--out")
    data = planning_data(
        kg, per_pattern=per_pattern, max_answers=max_answers, seed=seed, llm=llm, executor=config,
        patterns=chosen,
    )  # fmt: skip
    examples, grounding, kg = data.examples, data.grounding, data.kgs
    for path in kg:
        v = grounding[path]["verbalized"]
        console.print(f"[dim]{path}: {data.per_kg[path]} examples ({v['template']} template, {v['llm']} LLM, "
                      f"{v['llm_failed']} LLM failures)[/dim]")  # fmt: skip
    where = f"ray, {data.workers} workers" if data.executor == "ray" else data.executor
    console.print(f"[dim]built on {where} in {data.wall_s:.1f} s[/dim]")
    train, held = split_by_entities(examples, holdout, seed=seed)
    write_examples(out / "planning.jsonl", examples)
    write_examples(out / "train.jsonl", train)
    write_examples(out / "heldout.jsonl", held)
    for path in kg:  # per-KG held-out questions: `tkgqa eval --dataset jsonl --data-dir … --kg KG`
        mine = [e for e in held if e.qid.startswith(f"{_slug(path)}-")]
        write_examples(out / f"heldout.{_slug(path)}.jsonl", mine)
    sft = export_sft(train, out / "sft_train.jsonl", fmt)
    sft_held = export_sft(held, out / "sft_heldout.jsonl", fmt)
    counts = counts_by_pattern(examples)
    summary: dict[str, Any] = {
        "kgs": kg, "per_pattern": per_pattern, "max_answers": max_answers, "holdout": holdout, "seed": seed,
        "verbalizer": llm or "template", "n": len(examples),
        "patterns": [str(p) for p in chosen] if chosen else "all",
        "n_train": len(train), "n_heldout": len(held),
        "counts": counts, "heldout_counts": counts_by_pattern(held), "grounding": grounding,
        "sft_train": {"rows": sft.rows, "sha256": sft.sha256, "format": str(fmt)},
        "sft_heldout": {"rows": sft_held.rows, "sha256": sft_held.sha256},
    }  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", "utf-8")
    table = Table("pattern", *[_slug(k) for k in counts], title=f"planning examples ({out})")
    patterns = sorted({p for per in counts.values() for p in per}, key=str)
    for p in patterns:
        table.add_row(p, *[str(per.get(p, 0)) for per in counts.values()])
    console.print(table)
    console.print(
        f"train {len(train)}  held-out {len(held)}  → {out}/sft_train.jsonl (sha256 {sft.sha256[:12]})"
    )


@lpkg_app.command("export")
def export_data_cmd(
    data: Path = typer.Option(..., "--data", help="Folder written by `tkgqa lpkg data`."),
    sft_format: str = typer.Option("messages", "--format", help="messages, prompt_completion or alpaca."),
) -> None:
    """(Re-)write sft_train.jsonl / sft_heldout.jsonl from the folder's train/held-out examples."""
    from .data import SFTFormat, export_sft, read_examples

    try:
        fmt = SFTFormat(sft_format)
    except ValueError:
        raise ConfigError(f"--format must be one of {', '.join(SFTFormat)}") from None
    for split in ("train", "heldout"):
        rep = export_sft(read_examples(data / f"{split}.jsonl"), data / f"sft_{split}.jsonl", fmt)
        console.print(f"{rep.path}: {rep.rows} rows, sha256 {rep.sha256}")


@lpkg_app.command("train")
def train_cmd(
    data: Path = typer.Option(..., "--data", help="Folder written by `tkgqa lpkg data`."),
    steps: int = typer.Option(
        200, "--steps", min=1, help="Optimizer steps (one batch each; the examples are cycled in epochs)."
    ),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Training examples per step."),
    lr: float = typer.Option(
        2e-4, "--lr", help="Peak learning rate of AdamW, > 0 (10 warm-up steps, then cosine decay to 10 %)."
    ),
    lora_r: int = typer.Option(
        16, "--lora-r", min=1, help="LoRA rank (alpha = 2 × rank); not used with --full."
    ),
    full: bool = typer.Option(False, "--full", help="Full fine-tuning instead of LoRA."),
    max_len: int = typer.Option(
        384, "--max-len", min=32, help="Tokens per example (prompt and plan); longer ones are cut."
    ),
    eval_every: int = typer.Option(
        25, "--eval-every", min=1, help="Held-out loss every N steps (and after the last)."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Use only the first N training examples."),
    name: str = typer.Option("smollm2-lpkg", "--name", help="Run name (under $TKGQA_HOME/lpkg/planners)."),
    out: Path | None = typer.Option(
        None, "--out", help="Run folder (default: from name, data and settings)."
    ),
    threads: int | None = typer.Option(None, "--threads", min=1, help="torch threads."),
    llama_cpp_src: str | None = typer.Option(
        None, "--llama-cpp-src", help="llama-cpp-python sdist for GGUF export."
    ),
    seed: int = typer.Option(
        0,
        "--seed",
        help="Seed of torch (LoRA weights, dropout), the batch order and the held-out examples scored.",
    ),
) -> None:
    """Fine-tune the planner on CPU (resumes a stopped run with the same data and settings)."""
    from .data import file_hash, read_examples
    from .train import TrainConfig, export_gguf, train_planner

    positive_number(lr, "--lr")  # before any file is read
    train = read_examples(data / "train.jsonl")[:limit]
    held = read_examples(data / "heldout.jsonl")
    sha = file_hash(data / "sft_train.jsonl")
    if limit is not None:
        sha = f"{sha[:56]}{limit:08d}"
    cfg = TrainConfig(
        steps=steps, batch_size=batch_size, lr=lr, lora_r=lora_r, lora_alpha=2 * lora_r, full=full,
        max_len=max_len, eval_every=eval_every, seed=seed, threads=threads,
    )  # fmt: skip

    def progress(row: dict[str, Any]) -> None:
        extra = f"  held-out {row['heldout_loss']:.4f}" if "heldout_loss" in row else ""
        console.print(f"step {row['step']}/{steps}  loss {row['loss']:.4f}  {row['seconds']:.1f}s  "
                      f"cpu {row['cpu_seconds'] / 60:.1f} min{extra}", highlight=False)  # fmt: skip

    result = train_planner(train, held, data_sha256=sha, config=cfg, name=name, out=out, progress=progress)
    console.print(
        f"planner: {result.path}  held-out loss {result.heldout_loss}  cpu {result.cpu_minutes:.1f} min"
    )
    if not full:
        try:
            gguf = export_gguf(result.path, llama_cpp_src)
            console.print(f"GGUF adapter for llama.cpp: {gguf}")
        except ConfigError as exc:
            console.print(f"[yellow]no GGUF export ({exc}); the planner runs with transformers[/yellow]")


@lpkg_app.command("export-gguf")
def export_cmd(
    planner: str = typer.Argument(..., help="Planner folder or name."),
    llama_cpp_src: str | None = typer.Option(None, "--llama-cpp-src", help="llama-cpp-python sdist or tree."),
) -> None:
    """Convert a trained planner's LoRA adapter to GGUF (llama.cpp inference on the wheel's base GGUF)."""
    from .planner import resolve_planner_path
    from .train import export_gguf

    console.print(str(export_gguf(resolve_planner_path(planner), llama_cpp_src)))


@lpkg_app.command("plan")
def plan_cmd(
    question: str = typer.Argument(..., help="The question to plan, in natural language."),
    planner: str = typer.Option("icl", "--planner", help="icl, finetuned:PATH, random or direct."),
    llm: str | None = typer.Option(None, "--llm", help="LLM of the in-context planner."),
    demos: str | None = typer.Option(
        None, "--demos", help="Planning-data JSONL, or the authors' official planning prompt (.json)."
    ),
    k: int | None = typer.Option(None, "--k", help="Demonstrations (default: the preset's, 10 or 4)."),
    preset: str = typer.Option(
        "paper", "--preset", help="paper (official prompt, KG-derived demonstrations) or ours (compact)."
    ),
    kg: str | None = typer.Option(None, "--kg", help="Also execute the plan over this KG ('demo': bundled)."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan (and its answers) as JSON."),
) -> None:
    """Plan one question (and run the plan with --kg). The paper preset's demonstrations are derived from
    --kg (the bundled demo KG without it) unless --demos names a file."""
    from ...api.resolve import open_kg
    from ...llm import resolve_llm_arg
    from ..base import merge_config
    from .config import LPKGConfig, PlanDemoSource, PlanFormat
    from .data import kg_demos
    from .planner import ICLPlanner, resolve_planner

    given = {"preset": preset, "planner": planner, "demos": demos, **({"k": k} if k is not None else {})}
    if not question.strip():
        raise ConfigError('the question is empty: e.g. tkgqa lpkg plan "Who visited China after Obama?"')
    cfg = merge_config(LPKGConfig, None, given, method="lpkg").effective()
    n = int(cfg.preset_value("k"))
    from_kg = demos is None and PlanDemoSource(cfg.preset_value("demo_source")) is PlanDemoSource.KG
    official = PlanFormat(cfg.preset_value("plan_format")) is PlanFormat.OFFICIAL
    p = resolve_planner(
        planner, llm=resolve_llm_arg(llm), demos=demos, k=n, official=official, demos_later=from_kg
    )
    if from_kg and isinstance(p, ICLPlanner):
        p.set_demos(kg_demos(open_kg(kg or "demo"), n, seed=cfg.seed))
    out = p.plan(question)
    data: dict[str, Any] = {
        "text": out.text, "parsed": out.plan is not None, "error": out.error,
        "shape": out.plan.shape() if out.plan else None,
        "pattern": str(out.plan.pattern()) if out.plan else None, "seconds": out.seconds,
    }  # fmt: skip
    if kg is not None:
        from ...api.resolve import answer_payload
        from ...datasets.base import Question
        from .. import resolve_method

        method = resolve_method("lpkg", **given, llm=llm)
        data["answer"] = answer_payload(method.answer(Question(qid="adhoc", text=question), open_kg(kg)))
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    console.print(out.text or "(empty reply)", highlight=False, markup=False)
    console.print(
        f"parsed: {data['parsed']}  shape: {data['shape']}  pattern: {data['pattern']}  {out.error}"
    )
    if "answer" in data:
        console.print(f"answers: {data['answer']['answers']}")
