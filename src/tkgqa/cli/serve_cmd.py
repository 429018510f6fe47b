"""``tkgqa serve``: the HTTP API and web UI (needs the ``[service]`` extra: FastAPI and uvicorn).

The server decides what clients may choose (``--allow-method``, ``--allow-llm``, ``--allow-option``) and the
limits (queue, deadline, body size, ``max_tokens``); binding beyond loopback needs an API token
(``TKGQA_API_TOKEN`` or ``--api-token-file``). See :mod:`tkgqa.service.policy`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from ..errors import ConfigError
from ..kg.formats import is_persistent_store
from ..llm.openai_backend import apply_llm_settings
from . import app
from .flags import (
    AllowLLMFlag,
    AllowMethodFlag,
    AllowOptionFlag,
    ClientMaxTokensFlag,
    CreateStoreFlag,
    EphemeralAppendFlag,
    LLMRetriesFlag,
    LLMTimeoutFlag,
    MaxPendingFlag,
    MethodWorkersFlag,
    QueueLimitFlag,
    RequestTimeoutFlag,
)
from .terminal import TerminalConsole

console = TerminalConsole(stderr=True)


class LogLevel(StrEnum):
    """uvicorn's log levels (``--log-level``)."""

    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    DEBUG = "debug"
    TRACE = "trace"


TOKEN_ENV = "TKGQA_API_TOKEN"


def read_token(token_file: Path | None) -> str | None:
    """The API token: the first line of ``token_file``, else ``$TKGQA_API_TOKEN``, else ``None``."""
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").strip().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read --api-token-file {str(token_file)!r} ({exc})") from None
        if not lines or not lines[0].strip():
            raise ConfigError(f"--api-token-file {str(token_file)!r} is empty")
        return lines[0].strip()
    return os.environ.get(TOKEN_ENV) or None


def check_append_flags(kg: str | None, allow_append: bool, ephemeral_append: bool, create: bool) -> None:
    """Appends only to a store that keeps them, unless --ephemeral-append says losing them is fine."""
    persistent = is_persistent_store(kg)
    if allow_append and not persistent and not ephemeral_append:
        raise ConfigError(
            f"--allow-append on {'KG ' + repr(kg) if kg else 'the default KG'}: it is held in memory, so "
            "appended facts would be lost at restart; serve a DuckDB store (tkgqa kg convert KG "
            "store.duckdb, then --kg store.duckdb), or add --ephemeral-append to accept appends that last "
            "until restart"
        )
    if create and not (persistent and allow_append):
        raise ConfigError(
            "--create makes a new DuckDB store to append to: use it with --kg FILE.duckdb --allow-append"
        )
    if ephemeral_append and not allow_append:
        raise ConfigError(
            "--ephemeral-append says appends may be lost at restart: use it with --allow-append"
        )


def check_defaults(method: str, llm: str | None) -> None:
    """The default method and LLM backend named at start exist: an unknown one would fail every request
    of a server that started (ConfigError with the known names, before anything loads)."""
    from ..llm.base import LLM_BACKENDS
    from ..methods.base import METHODS

    METHODS.spec_factory(method)
    if llm:
        LLM_BACKENDS.spec_factory(llm)


#: The flags of ``tkgqa serve`` and ``tkgqa mcp`` that become :class:`~tkgqa.service.policy.ServiceSettings`
#: fields as given (under their field's name, see :func:`service_settings`).
SHARED_LIMITS = (
    "max_tokens", "max_body", "request_timeout", "queue_limit", "max_pending", "method_workers",
    "allow_append", "ephemeral_append", "create",
)  # fmt: skip


def service_settings(flags: Mapping[str, Any], token: str | None, **limits: Any) -> Any:
    """The :class:`~tkgqa.service.policy.ServiceSettings` of the flags ``tkgqa serve`` and ``tkgqa mcp``
    share, read from ``flags`` (the command's parameters, ``ctx.params``): the allow-lists (``fake`` is always
    an allowed LLM), the hosts the server answers to and the :data:`SHARED_LIMITS`; ``token``: the API token;
    ``limits``: the command's other settings by their flag's name (``shutdown_timeout``, …)."""
    from ..service.guard import allowed_hosts
    from ..service.policy import ServiceSettings, parse_list

    renamed = {"max_body": "max_body_bytes", "request_timeout": "request_timeout_s",
               "shutdown_timeout": "shutdown_timeout_s", "create": "create_store"}  # fmt: skip
    given = {**{k: flags[k] for k in SHARED_LIMITS}, **limits}
    return ServiceSettings(
        allow_methods=parse_list(flags["allow_method"]),
        allow_llms=("fake", *(parse_list(flags["allow_llm"]) or ())),
        allow_options=parse_list(flags["allow_option"]),
        api_token=token,
        allowed_hosts=allowed_hosts(flags["host"], parse_list(flags["allow_host"]) or ()),
        **{renamed.get(k, k): v for k, v in given.items()},
    )


@app.command()
def serve(
    ctx: typer.Context,
    kg: str | None = typer.Option(
        None, "--kg", help="KG file (default: --dataset's KG, else the bundled demo KG)."
    ),
    dataset: str | None = typer.Option(
        None,
        "--dataset",
        help="The benchmark the KG comes from (multitq, cronquestions, demo…): the UI offers a few of its "
        "questions as examples, one per question type; its KG is served unless --kg is given.",
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="--dataset's folder (as released); not needed for demo."
    ),
    method: str = typer.Option(
        "symbolic", "--method", help="Default method (symbolic, ari:policy=symbolic, …)."
    ),
    llm: str | None = typer.Option(None, "--llm", help="Default LLM spec, e.g. fake or openai:gpt-4o-mini."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Interface to listen on; beyond loopback (0.0.0.0) needs an API token."
    ),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    log_level: LogLevel = typer.Option(
        LogLevel.INFO, "--log-level", case_sensitive=False, help="Server log level."
    ),
    allow_method: AllowMethodFlag = None,
    allow_llm: AllowLLMFlag = None,
    allow_option: AllowOptionFlag = None,
    max_tokens: ClientMaxTokensFlag = 1024,
    request_timeout: RequestTimeoutFlag = 60.0,
    queue_limit: QueueLimitFlag = 64,
    max_pending: MaxPendingFlag = 256,
    method_workers: MethodWorkersFlag = 1,
    max_body: int = typer.Option(65536, "--max-body", help="Largest request body in bytes (413 beyond)."),
    shutdown_timeout: float = typer.Option(
        3.0, "--shutdown-timeout", help="Seconds to let running requests finish on SIGTERM/Ctrl+C."
    ),
    api_token_file: Path | None = typer.Option(
        None, "--api-token-file", help=f"File holding the API token (else ${TOKEN_ENV})."
    ),
    allow_append: bool = typer.Option(
        False,
        "--allow-append",
        help="Let clients append facts (POST /api/kg/facts); beyond loopback only with the API token.",
    ),
    ephemeral_append: EphemeralAppendFlag = False,
    create: CreateStoreFlag = False,
    runs_dir: Path | None = typer.Option(
        None, "--runs-dir", help="A folder of `tkgqa eval` outputs to browse in the web UI (read-only)."
    ),
    llm_timeout: LLMTimeoutFlag = None,
    llm_retries: LLMRetriesFlag = None,
    allow_host: list[str] | None = typer.Option(
        None,
        "--allow-host",
        help="A host name clients may use in their Host header besides 127.0.0.1, localhost, [::1] and "
        "--host (repeatable; '*': any). Others get 400 (guards against DNS rebinding).",
    ),
) -> None:
    """Serve the question-answering API and a web UI (open http://HOST:PORT/ in a browser).

    --llm is the default LLM of the methods that use one; methods without an LLM (symbolic) ignore it.
    With --dataset (and --data-dir), the example questions come from that benchmark's question set."""
    from ..credentials import redact
    from ..service import require_service

    require_service(server=True)
    from ..service.app import create_app
    from ..service.server import check_binding, make_server

    check_append_flags(kg, allow_append, ephemeral_append, create)
    check_defaults(method, llm)
    if runs_dir is not None and not runs_dir.expanduser().is_dir():
        raise ConfigError(f"--runs-dir {str(runs_dir)!r} is not a folder (a folder of `tkgqa eval` outputs)")
    apply_llm_settings(llm_timeout, llm_retries)
    token = read_token(api_token_file)
    check_binding(host, token)
    settings = service_settings(
        ctx.params,
        token,
        shutdown_timeout=shutdown_timeout,
        runs_dir=str(runs_dir) if runs_dir is not None else None,
    )
    ds = None
    if dataset is not None:
        from ..datasets import load_dataset

        ds = load_dataset(dataset, data_dir)
        if kg is None and ds.kg_path is None:
            raise ConfigError(
                f"dataset {dataset!r} names no KG file (its questions carry their own facts); pass --kg PATH"
            )
    elif data_dir is not None:
        raise ConfigError("--data-dir needs --dataset NAME (e.g. --dataset multitq --data-dir DIR)")
    application = create_app(kg=kg, default_method=method, llm=llm, settings=settings, dataset=ds)
    kg_name = getattr(application.state.tkgqa.kg, "name", kg)
    console.print(
        f"[bold]tkgqa serve[/bold]: KG {kg_name}, method {redact(method)}"
        + (f", examples from {ds.name} ({len(ds)} questions)" if ds is not None else "")
        + (f", LLM {redact(llm)}" if llm else "")
        + (", API token required" if token else "")
        + f" → http://{host}:{port}/",
        highlight=False,
    )
    make_server(application, host, port, log_level=log_level.value).run()
