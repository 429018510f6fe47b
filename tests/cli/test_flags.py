"""tkgqa.cli.flags: a flag several commands take is declared once; the server commands' limits default to
:class:`~tkgqa.service.policy.ServiceSettings`' own defaults."""

from __future__ import annotations

from typing import Any

import typer.main

from tkgqa.cli import _load_commands, app
from tkgqa.service.policy import ServiceSettings

#: serve/mcp flag → ServiceSettings field (the renames of serve_cmd.service_settings).
SETTINGS_FIELD = {
    "max_tokens": "max_tokens",
    "max_body": "max_body_bytes",
    "request_timeout": "request_timeout_s",
    "shutdown_timeout": "shutdown_timeout_s",
    "queue_limit": "queue_limit",
    "max_pending": "max_pending",
    "method_workers": "method_workers",
    "allow_append": "allow_append",
    "ephemeral_append": "ephemeral_append",
    "create": "create_store",
}


def _command(*path: str) -> Any:
    _load_commands()
    cmd: Any = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def _flags(cmd: Any) -> dict[str, tuple[object, str | None, tuple[str, ...]]]:
    return {p.name or "": (p.default, getattr(p, "help", None), tuple(p.opts)) for p in cmd.params}


def test_serve_and_mcp_limits_default_to_the_service_settings() -> None:
    defaults = ServiceSettings()
    for command in ("serve", "mcp"):
        flags = _flags(_command(command))
        checked = [name for name in SETTINGS_FIELD if name in flags]
        assert len(checked) >= 9, (command, checked)
        for name in checked:
            assert flags[name][0] == getattr(defaults, SETTINGS_FIELD[name]), (command, name)


def test_a_shared_flag_reads_the_same_in_every_command() -> None:
    commands = {
        "serve": _flags(_command("serve")),
        "mcp": _flags(_command("mcp")),
        "ask": _flags(_command("ask")),
        "eval": _flags(_command("eval")),
        "reproduce": _flags(_command("reproduce")),
        "kg embed": _flags(_command("kg", "embed")),
    }
    shared = {
        "llm_timeout": ("serve", "mcp", "ask", "eval", "reproduce"),
        "llm_retries": ("serve", "mcp", "ask", "eval", "reproduce"),
        "allow_method": ("serve", "mcp"),
        "allow_option": ("serve", "mcp"),
        "queue_limit": ("serve", "mcp"),
        "method_option": ("ask", "eval"),
        "policy": ("ask", "eval"),
    }
    for name, where in shared.items():
        seen = {commands[c][name][1:] for c in where}
        assert len(seen) == 1, (name, seen)
        (help_text, opts) = next(iter(seen))
        assert help_text and opts == ("--" + name.replace("_", "-"),)
