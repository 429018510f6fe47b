"""``tkgqa`` run in-process through :func:`tkgqa.cli.main` (its warning and skip listeners installed): the
exit status, stdout and stderr."""

from __future__ import annotations

import pytest

from tkgqa.cli import main


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err
