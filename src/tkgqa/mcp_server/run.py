"""Starting the MCP server (what ``tkgqa mcp`` runs): the service's state over the KG, the tools over it, and
the transport (stdio, or streamable HTTP behind the request guard)."""

from __future__ import annotations

from collections.abc import Callable

from ..credentials import redact
from ..kg.base import KGStore
from ..service.guard import check_binding
from ..service.policy import ServiceSettings
from ..service.state import build_state


def serve_mcp(
    kg: KGStore | str | None,
    method: str,
    llm: str | None,
    settings: ServiceSettings,
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = 8765,
    announce: Callable[[str], None] = lambda _line: None,
) -> None:
    """Serve ``kg`` over MCP until the client (stdio) or a signal (HTTP) ends it. ``announce`` gets one line
    when the server is ready (the CLI prints it on stderr: stdout is the protocol's in stdio mode)."""
    from .http import MCP_PATH, http_app, run_http
    from .server import build_server

    if http:
        check_binding(host, settings.api_token)
    state = build_state(kg, method, llm, settings=settings)
    server = build_server(state)
    where = f"http://{host}:{port}{MCP_PATH}" if http else "stdio"
    details = [
        f"KG {getattr(state.kg, 'name', kg)} ({len(state.kg):,} facts)",
        f"method {redact(method)}",
        *([f"LLM {redact(llm)}"] if llm else []),
        *(["append_facts on"] if settings.allow_append else []),
        *(["API token required"] if settings.api_token else []),
    ]
    announce(f"tkgqa mcp: {', '.join(details)} → {where}")
    try:
        if http:
            run_http(http_app(server, settings, host), host, port)
        else:
            server.run("stdio")
    finally:
        state.pool.close()
