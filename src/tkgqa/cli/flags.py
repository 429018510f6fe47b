"""The flags several commands take with one meaning, each declared once as a typer ``Annotated`` alias: a
command writes ``llm_timeout: LLMTimeoutFlag = None`` and the flag's name, type and help come from here. A
flag whose help or type differs between commands (``--kg``, ``--dataset``, …) stays with its command; a check
that several commands make of a flag's value is here too (:func:`positive_number`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ConfigError
from ..eval.executor import ExecutorKind
from ..llm.openai_backend import DEFAULT_RETRIES, DEFAULT_TIMEOUT_S, RETRIES_ENV, TIMEOUT_ENV

# --- the LLM client: ask, eval, reproduce, serve, mcp ------------------------------------------------------
LLMTimeoutFlag = Annotated[
    float | None,
    typer.Option(
        "--llm-timeout",
        help="Seconds per LLM attempt, in total: connect, send and the whole reply (openai backend; "
        f"default {DEFAULT_TIMEOUT_S:.0f}, or ${TIMEOUT_ENV}).",
    ),
]
LLMRetriesFlag = Annotated[
    int | None,
    typer.Option(
        "--llm-retries",
        help=f"Retries of a failed LLM call: 429, 5xx, timeouts (default {DEFAULT_RETRIES}, or "
        f"${RETRIES_ENV}).",
    ),
]

# --- the method of one run: ask, eval ---------------------------------------------------------------------
LLMFlag = Annotated[
    str | None, typer.Option("--llm", help="LLM spec for LLM methods, e.g. openai:gpt-4o-mini.")
]
PolicyFlag = Annotated[
    str | None,
    typer.Option(
        "--policy",
        help="ARI policy: llm, symbolic or oracle; short for --method-option policy=X, for the methods with "
        "a policy only (ari, react_kb, cot_kb, hybrid).",
    ),
]
MethodOptionFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--method-option",
        help="A method option KEY=VALUE (repeatable); a dotted KEY nests (fallback_options.policy=llm), a "
        "VALUE starting with { or [ is JSON.",
    ),
]
FallbackOptionFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--fallback-option", help="hybrid: an option KEY=VALUE of the fallback method (repeatable)."
    ),
]

# --- a server's settings: serve, mcp (``serve_cmd.service_settings`` reads them by name) -----------------
AllowMethodFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-method",
        help="A method spec clients may pick (repeatable; default: every method by name and the presets).",
    ),
]
AllowLLMFlag = Annotated[
    list[str] | None,
    typer.Option("--allow-llm", help="An LLM spec clients may pick besides fake and --llm (repeatable)."),
]
AllowOptionFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-option",
        help="A method option clients may set (repeatable; replaces the options each method marks for "
        "clients on its config; never paths).",
    ),
]
ClientMaxTokensFlag = Annotated[
    int, typer.Option("--max-tokens", help="Upper bound of *tokens options from clients.")
]
RequestTimeoutFlag = Annotated[
    float,
    typer.Option(
        "--request-timeout", help="Seconds a question may take, queue time included; then it fails."
    ),
]
QueueLimitFlag = Annotated[
    int,
    typer.Option(
        "--queue-limit", help="Questions pending per method configuration; more are refused as busy."
    ),
]
MaxPendingFlag = Annotated[
    int, typer.Option("--max-pending", help="Questions pending in all; more are refused as busy.")
]
MethodWorkersFlag = Annotated[
    int,
    typer.Option("--method-workers", help="Method instances answering in parallel per configuration."),
]
EphemeralAppendFlag = Annotated[
    bool,
    typer.Option(
        "--ephemeral-append",
        help="With --allow-append on a KG held in memory (not a .duckdb store): accept appends that are lost "
        "at restart.",
    ),
]
CreateStoreFlag = Annotated[
    bool,
    typer.Option(
        "--create", help="With --kg FILE.duckdb --allow-append: create the store if it does not exist."
    ),
]

# --- work sharded over Ray: eval, kg embed, lpkg data -----------------------------------------------------
ExecutorFlag = Annotated[
    ExecutorKind | None,
    typer.Option(
        "--executor",
        case_sensitive=False,
        help="Where the work runs: local (this process; the default) or ray (Ray workers; extra "
        "'distributed').",
    ),
]
RayAddressFlag = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Ray cluster to join (host:6379 or ray://head:10001); default RAY_ADDRESS, else a local one.",
    ),
]
RayWorkersFlag = Annotated[
    int | None, typer.Option("--workers", help="Ray workers (default: one per cluster CPU).")
]

# --- a method's training/building commands over a benchmark: ari, timer4 ----------------------------------
DatasetDirFlag = Annotated[Path | None, typer.Option("--data-dir", help="The dataset folder.")]
DatasetKGFlag = Annotated[str | None, typer.Option("--kg", help="KG file (default: the dataset's).")]


# --- checks of a value -------------------------------------------------------------------------------------
def positive_number(value: float, flag: str) -> float:
    """``value`` when it is a positive finite number (a learning rate: ``--lr``), else a ConfigError naming
    ``flag``; called before any work."""
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{flag} must be a positive number, got {value}")
    return value
