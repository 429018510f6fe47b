"""``tkgqa mcp``: the Model Context Protocol server for LLM agents (needs the ``[mcp]`` extra). Over stdio by
default (an agent starts it as a subprocess); over streamable HTTP at ``/mcp`` with ``--http``. The same KG,
methods, policy and limits as ``tkgqa serve``: see :mod:`tkgqa.mcp_server`."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import ConfigError
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
from .serve_cmd import check_append_flags, check_defaults, read_token, service_settings
from .terminal import TerminalConsole

console = TerminalConsole(stderr=True)  # stdout is the protocol's in stdio mode


#: The flags that configure the HTTP server of ``--http`` (over stdio there is none).
HTTP_ONLY = ("host", "port", "max_body", "api_token_file", "allow_host")


def _refuse_http_flags(ctx: typer.Context) -> None:
    """A ConfigError naming the ``--http`` flags given without ``--http`` (they were silently ignored)."""
    given = [f"--{name.replace('_', '-')}" for name in HTTP_ONLY
             if getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE"]  # fmt: skip
    if given:
        raise ConfigError(f"{', '.join(given)}: only with --http (over stdio there is no network server)")


@app.command()
def mcp(
    ctx: typer.Context,
    kg: str | None = typer.Option(None, "--kg", help="KG file or .duckdb store (default: the demo KG)."),
    method: str = typer.Option("symbolic", "--method", help="Default method of the ask tool."),
    llm: str | None = typer.Option(None, "--llm", help="Default LLM spec of the methods that use one."),
    allow_method: AllowMethodFlag = None,
    allow_llm: AllowLLMFlag = None,
    allow_option: AllowOptionFlag = None,
    allow_append: bool = typer.Option(False, "--allow-append", help="Offer the append_facts tool."),
    ephemeral_append: EphemeralAppendFlag = False,
    create: CreateStoreFlag = False,
    request_timeout: RequestTimeoutFlag = 60.0,
    queue_limit: QueueLimitFlag = 64,
    max_pending: MaxPendingFlag = 256,
    method_workers: MethodWorkersFlag = 1,
    max_tokens: ClientMaxTokensFlag = 1024,
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP at http://HOST:PORT/mcp, not stdio."
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="With --http: interface; beyond loopback needs an API token."
    ),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="With --http: TCP port."),
    max_body: int = typer.Option(65536, "--max-body", help="With --http: largest request body in bytes."),
    api_token_file: Path | None = typer.Option(
        None, "--api-token-file", help="With --http: file holding the API token (else $TKGQA_API_TOKEN)."
    ),
    allow_host: list[str] | None = typer.Option(
        None, "--allow-host", help="With --http: a Host name clients may use besides loopback (repeatable)."
    ),
    llm_timeout: LLMTimeoutFlag = None,
    llm_retries: LLMRetriesFlag = None,
) -> None:
    """Serve the KG to LLM agents over the Model Context Protocol: tools ask, facts, timeline, neighbors
    (and append_facts with --allow-append), resource tkgqa://kg/summary.

    Over stdio by default: configure your agent to start `tkgqa mcp --kg FILE`. With --http, over
    streamable HTTP at http://HOST:PORT/mcp (loopback only unless an API token is set)."""
    from ..mcp_server import require_mcp

    require_mcp()
    from ..mcp_server.run import serve_mcp

    check_append_flags(kg, allow_append, ephemeral_append, create)
    check_defaults(method, llm)
    if not http:
        _refuse_http_flags(ctx)
    apply_llm_settings(llm_timeout, llm_retries)
    settings = service_settings(ctx.params, read_token(api_token_file) if http else None)
    console.print(f"tkgqa mcp: loading KG {kg or 'demo'} and method {method}…", highlight=False, markup=False)
    serve_mcp(
        kg, method, llm, settings, http=http, host=host, port=port,
        announce=lambda line: console.print(line, highlight=False, markup=False),
    )  # fmt: skip
