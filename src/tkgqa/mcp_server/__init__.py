"""``tkgqa mcp``: the Model Context Protocol server for LLM agents (the ``[mcp]`` extra: the official ``mcp``
SDK). It answers over the same KG, methods and policy as ``tkgqa serve`` — one
:class:`~tkgqa.service.state.ServiceState`, the same method pool, allow-lists and limits — through tools
(``ask``, ``facts``, ``timeline``, ``neighbors``, ``append_facts`` when the server allows appends) and a
resource (``tkgqa://kg/summary``). Over stdio by default; over streamable HTTP behind the service's request
guard (:mod:`tkgqa.service.guard`: the ``Host`` rule, the API token, body limits) with ``--http``.

The SDK is imported only when a server is built, so ``import tkgqa.mcp_server`` works without it.
"""

from __future__ import annotations

import importlib.util

from ..errors import ConfigError

__all__ = ["require_mcp"]


def require_mcp() -> None:
    """Raise :class:`ConfigError` unless the MCP SDK is importable."""
    if importlib.util.find_spec("mcp") is None:
        raise ConfigError("tkgqa mcp needs the MCP SDK: install tkgqa[mcp] (pip install 'tkgqa[mcp]')")
