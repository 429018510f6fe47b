"""``tkgqa mcp --http``: the MCP server over streamable HTTP at ``/mcp``, behind the service's request guard
(:class:`~tkgqa.service.guard.RequestGuard`): the same ``Host`` rule as ``tkgqa serve`` (DNS rebinding), the
API token on ``/mcp`` when the server has one (binding beyond loopback requires one:
:func:`tkgqa.service.server.check_binding`), the same body-size and JSON-depth limits."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from ..service.guard import RequestGuard
from ..service.policy import ServiceSettings

MCP_PATH = "/mcp"


def http_app(server: MCPServer, settings: ServiceSettings, host: str = "127.0.0.1") -> Any:
    """The ASGI app of ``server`` over streamable HTTP, guarded by ``settings`` (hosts, token, limits). The
    SDK's own Host check is off: the guard applies the service's rule (with ``--allow-host``)."""
    inner = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=settings.max_body_bytes,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host,
    )
    return RequestGuard(inner, settings=settings, protected=MCP_PATH)


def run_http(app: Any, host: str, port: int, *, log_level: str = "warning") -> None:
    """Serve ``app`` with uvicorn until stopped."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level=log_level.lower(), lifespan="on")
