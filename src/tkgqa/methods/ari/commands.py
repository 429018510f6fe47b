"""``tkgqa ari build-memory`` / ``tkgqa ari show-memory``: ARI's history memory and methodologies.

The memory must come from questions other than those evaluated. History sources (``--source``):
``generated`` — MultiTQ-style questions generated from the KG with executor-computed gold
(:mod:`tkgqa.query.generate.questions`; the default for MultiTQ, whose shared copy has only test questions),
``dataset`` — a dev split or question file with gold (``--split``/``--questions``; the default elsewhere).
``--dataset demo`` uses the bundled demo questions over the demo KG. The memory's ``meta`` records the source.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ...cli.flags import DatasetDirFlag, DatasetKGFlag
from ...cli.terminal import TerminalConsole
from ...errors import ConfigError
from .build import HistorySource
from .variants import MemoryVariant

console = TerminalConsole()
#: ``tkgqa ari …`` (added to the command line by the package's descriptor, :mod:`.plugin`).
ari_app = typer.Typer(name="ari", help="ARI: build and inspect the history memory.", no_args_is_help=True)


def _check_memory_output(output: Path, force: bool) -> None:
    """``--output`` may be a new file or an ARI memory (rebuilt); a folder, or another file unless
    ``force``, is a ConfigError."""
    from ...errors import TKGQAError
    from .memory import ARIMemory

    path = output.expanduser()
    if path.is_dir():
        raise ConfigError(
            f"--output {str(path)!r} is a folder; give a file name, e.g. {path / 'memory.json'}"
        )
    if path.exists() and not force:
        try:
            ARIMemory.load(path)
        except TKGQAError:
            raise ConfigError(
                f"--output {str(path)!r} exists and is not an ARI memory (tkgqa did not write it); give "
                "another file, or --force to replace it"
            ) from None


@ari_app.command("build-memory")
def build_memory_cmd(
    dataset: str = typer.Option(
        "demo", "--dataset", help="demo, multitq, timequestions, cronquestions, jsonl."
    ),
    data_dir: DatasetDirFlag = None,
    questions: Path | None = typer.Option(None, "--questions", help="History question file (with gold)."),
    kg: DatasetKGFlag = None,
    source: HistorySource = typer.Option(
        HistorySource.AUTO,
        "--source",
        help="History questions: generated (from the KG; default for multitq), dataset (a split/file with "
        "gold; default otherwise).",
    ),
    patterns: str | None = typer.Option(
        None,
        "--patterns",
        help="--source generated: questions per pattern, e.g. 'equal=40,after_first=20' (default: --n over "
        "all patterns).",
    ),
    max_answers: int = typer.Option(
        5, "--max-answers", min=1, help="--source generated: largest gold answer set."
    ),
    split: str = typer.Option("dev", "--split", help="Split of history questions (never the test split)."),
    n: int = typer.Option(200, "--n", min=1, help="History questions (stratified sample by question type)."),
    llm: str | None = typer.Option(None, "--llm", help="LLM spec (policy llm and methodology induction)."),
    policy: str = typer.Option(
        "llm", "--policy", help="Who answers the history questions: llm, symbolic, oracle."
    ),
    preset: str = typer.Option("paper", "--preset", help="ARI preset: paper or ours."),
    n_clusters: int = typer.Option(10, "--n-clusters", min=1, help="K-means clusters."),
    variant: list[str] = typer.Option(
        ["clustered"], "--variant", help=f"Methodology sets: {', '.join(MemoryVariant)}."
    ),
    embedder: str = typer.Option(
        "auto",
        "--embedder",
        help="auto (minilm if installed, else hashing), minilm, model2vec, hashing, lexical.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample, the generator and K-means."),
    output: Path = typer.Option(..., "--output", help="Memory JSON to write."),
    force: bool = typer.Option(False, "--force", help="Replace an --output file that is not an ARI memory."),
) -> None:
    """Answer history questions with ARI (no guidance), cluster them and induce methodologies."""
    from ...llm import resolve_llm_arg
    from .build import build_memory, history_questions, parse_variants
    from .method import ARIMethod

    _check_memory_output(output, force)  # before the work: a file of yours is never replaced
    variants = parse_variants(variant)
    if policy == "llm" and llm is None:
        raise ConfigError(
            "--policy llm needs --llm SPEC (or use --policy symbolic/oracle with --llm for induction)"
        )
    chosen = HistorySource(source)
    found = history_questions(
        dataset,
        data_dir=data_dir,
        questions=questions,
        kg=kg,
        source=chosen,
        patterns=patterns,
        n=n,
        max_answers=max_answers,
        split=split,
        seed=seed,
    )
    history, store, meta = found.questions, found.kg, found.meta
    method = ARIMethod(
        policy=policy,
        llm=llm,
        preset=preset,
        no_guidance=True,
        embedder=embedder,
        n_clusters=n_clusters,
        seed=seed,
    )
    inducer = method.llm if method.llm is not None else resolve_llm_arg(llm)
    if inducer is None:
        console.print("[yellow]no --llm: the memory is clustered but has no methodologies[/yellow]")
    from ...cli import SLOW_WORK
    from ...cli.terminal import StageProgress

    progress = StageProgress(console)
    steps = "" if policy != "llm" else f" (ARI's agent: up to {method.config.t_max} LLM calls each)"
    console.print(
        f"[dim]building the memory: {len(history)} history questions{steps}"
        + (f", then methodologies induced per cluster with {inducer.model_id}" if inducer is not None else "")
        + "; progress and LLM calls show as they run[/dim]",
        highlight=False,
    )
    SLOW_WORK.calls = True
    memory, usage = build_memory(
        history,
        store,
        method,
        n_clusters=n_clusters,
        per_kind=method.config.examples_per_kind,
        induce_with=inducer,
        variants=variants,
        meta=meta,
        progress=progress,
        split=found.split,
    )
    SLOW_WORK.calls = False
    path = memory.save(output)
    correct = sum(1 for r in memory.records if r.correct)
    console.print(
        f"memory ({found.source.value} questions): {len(memory)} records ({correct} correct), "
        f"{len(set(memory.labels or []))} clusters, "
        f"methodologies {{{', '.join(f'{k}: {len(v)}' for k, v in memory.methodologies.items())}}}, "
        f"induction calls {usage.calls} → {path}",
        highlight=False,
    )


@ari_app.command("show-memory")
def show_memory(
    path: Path = typer.Argument(..., help="Memory JSON."),
    full: bool = typer.Option(False, "--full", help="Print whole methodologies."),
) -> None:
    """Clusters, their sizes and correctness, and the methodologies of a memory file."""
    from . import ARIMemory

    memory = ARIMemory.load(path)
    console.print(
        f"{len(memory)} records, embedder {memory.embedder_name!r}, meta {memory.meta}", highlight=False
    )
    table = Table("cluster", "records", "correct", "example (masked)")
    labels = memory.labels or [0] * len(memory)
    for c in sorted(set(labels)):
        members = [r for r, lab in zip(memory.records, labels, strict=True) if lab == c]
        table.add_row(
            str(c), str(len(members)), str(sum(1 for r in members if r.correct)), members[0].masked[:70]
        )
    console.print(table)
    for variant_name, table_ in memory.methodologies.items():
        for c, text in sorted(table_.items()):
            shown = text if full else text[:300] + ("…" if len(text) > 300 else "")
            console.print(f"[bold]{variant_name} / cluster {c}[/bold]\n{shown}\n", highlight=False)
