"""The duplicates budget of ``make lint`` reads the count off the report of ``duplicates`` and skips where
the command is absent."""

from __future__ import annotations

import pytest

import duplicates_budget as budget

REPORT = """\
55 pairs of places (294 files read), each sharing runs of 6 or more identical or same-shape lines (46 by \
shape alone, 12 of those marked boilerplate)
D1 tkgqa/methods/ari/prompts.py:67-117 ~ tkgqa/methods/ari/prompts.py:97-129 shape (+5 more runs)
(+54 more pairs)
left out: 3 runs of 6 lines that stand in more than 8 places each (too common to list)
"""


def test_the_count_is_the_first_line() -> None:
    assert budget.count_pairs(REPORT) == 55
    assert (
        budget.count_pairs("1 pair of places (3 files read), each sharing …\nD1 a.py:1-6 ~ b.py:1-6\n") == 1
    )
    assert budget.count_pairs("no duplicates (12 files read)\n") == 0


@pytest.mark.parametrize(
    "report",
    ["", "usage: duplicates …\n", REPORT + "incomplete: time: 40 of 294 files not paired\n"],
)
def test_a_partial_or_foreign_report_is_an_error(report: str) -> None:
    with pytest.raises(ValueError):
        budget.count_pairs(report)


def test_absent_command_skips(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(budget.shutil, "which", lambda name: None)
    assert budget.main() == 0
    assert "skipped" in capsys.readouterr().out


def test_the_budget_holds_here() -> None:
    if budget.shutil.which("duplicates") is None:
        pytest.skip("the duplicates command is not installed")
    assert budget.main() == 0
