"""``tkgqa kg embed``: embed every fact of a KG for dense retrieval (TimeR4, CIK-LLM) and build its index,
in this process or on Ray workers (:func:`tkgqa.eval.executor_jobs.embed_kg`)."""

from __future__ import annotations

import json

import typer

from ..eval.executor import ExecutorKind
from .flags import ExecutorFlag, RayAddressFlag, RayWorkersFlag
from .kg_cmd import PATH_HELP, cli_errors, kg_app
from .terminal import TerminalConsole

console = TerminalConsole()


@kg_app.command("embed")
def embed_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    embedder: str = typer.Option(
        "hashing", "--embedder", help="minilm, model2vec, hashing (as the retriever's --embedder)."
    ),
    index_kind: str = typer.Option("auto", "--index", help="auto, flat, hnsw or numpy."),
    batch_size: int = typer.Option(64, "--batch-size", help="Sentences per model batch."),
    executor: ExecutorFlag = ExecutorKind.LOCAL,
    ray_address: RayAddressFlag = None,
    workers: RayWorkersFlag = None,
    shard_size: int | None = typer.Option(None, "--shard-size", help="Sentences per Ray task (auto)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar (local)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Embed every fact sentence of PATH into the embedding cache ($TKGQA_HOME/embeddings) and build the
    KG's vector index, so retrieval runs find them ready. Resumable: cached sentences are not embedded
    again. With --executor ray the sentences are sharded over Ray workers; only this process writes."""
    from ..eval.executor import ExecutorConfig
    from ..eval.executor_jobs import embed_kg

    with cli_errors():
        config = ExecutorConfig.of(executor, address=ray_address, workers=workers)
        summary = embed_kg(
            path, embedder, executor=config, index_kind=index_kind, batch_size=batch_size,
            shard_size=shard_size, progress=progress,
        )  # fmt: skip
    if as_json:
        typer.echo(json.dumps(summary.to_dict()))
        return
    s = summary
    where = f"{s.executor} with {s.workers} workers" if s.executor == "ray" else s.executor
    console.print(
        f"{s.facts} facts of {s.kg}: {s.embedded} embedded, {s.cached} already cached ({s.embedder}, dim "
        f"{s.dim}, {s.index_kind} index) on {where} in {s.wall_s:.1f} s",
        highlight=False,
    )
