"""``tkgqa serve`` and ``tkgqa mcp`` refuse at start what would otherwise start a server that fails every
request, or ignore a flag: each case exits 2 with one line naming the flag, before anything loads."""

from __future__ import annotations

import pytest

from cli_run import run_cli

CASES = {
    "serve port out of range": (["serve", "--port", "70000"], "--port"),
    "serve log level": (["serve", "--log-level", "bogus"], "--log-level"),
    "serve unknown LLM backend": (["serve", "--llm", "bogus"], "unknown LLM backend 'bogus'"),
    "serve runs dir missing": (["serve", "--runs-dir", "no/such/folder"], "--runs-dir"),
    "serve ephemeral without append": (["serve", "--ephemeral-append"], "use it with --allow-append"),
    "mcp unknown method": (["mcp", "--method", "nope"], "unknown method 'nope'"),
    "mcp unknown LLM backend": (["mcp", "--llm", "bogus"], "unknown LLM backend 'bogus'"),
    "mcp host without http": (["mcp", "--host", "0.0.0.0"], "--host: only with --http"),
    "mcp port and allow-host without http": (
        ["mcp", "--port", "9000", "--allow-host", "x"],
        "--port, --allow-host",
    ),
    "mcp port out of range": (["mcp", "--http", "--port", "0"], "--port"),
    "serve max tokens": (
        ["serve", "--max-tokens", "0"],
        "--max-tokens (service setting max_tokens) must be > 0",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_server_flag_that_cannot_work_is_refused_at_start(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args, said = CASES[case]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and said in " ".join(err.split()), err
    assert "Traceback" not in out + err and "loading KG" not in out + err
