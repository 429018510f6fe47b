"""``tkgqa ask`` and ``tkgqa demo`` as a user meets them: an abstention's reason said once, a demo count that
is not a number of questions refused as a usage error, an unknown method refused before anything is shown."""

from __future__ import annotations

import pytest

from cli_run import run_cli
from tkgqa.cli.ask_cmd import print_answer
from tkgqa.kg import load_demo_kg
from tkgqa.methods.base import Answer
from tkgqa.outcomes import AbstainReason


def test_an_episode_that_stopped_without_an_answer_says_no_answer_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ARI's reason is ``no answer (parse_failure)``; it was printed as ``no answer (no answer (…))``."""
    print_answer("Who?", Answer.abstain(AbstainReason.NO_ANSWER.note(stop="parse_failure")), load_demo_kg())
    shown = capsys.readouterr().out
    assert "no answer (parse_failure)" in shown and shown.count("no answer") == 1, shown


def test_another_reason_is_shown_in_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    print_answer("Who?", Answer.abstain(AbstainReason.PROGRAM_NO_ANSWER.note()), load_demo_kg())
    assert "no answer (the program found no answer in the KG)" in capsys.readouterr().out


@pytest.mark.parametrize("n", ["0", "-3"])
def test_demo_refuses_a_count_below_one(n: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--n 0`` ended in a ZeroDivisionError traceback; ``--n -3`` answered 57 questions."""
    code, out, err = run_cli(["demo", "--n", n], capsys)
    assert code == 2 and "Traceback" not in out + err
    assert "--n" in err and "demo questions answered" not in out


def test_demo_with_an_unknown_method_fails_before_printing_anything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(["demo", "--method", "nope"], capsys)
    assert code == 2 and "unknown method 'nope'" in out + err
    assert "bundled demo KG" not in out


def test_demo_answers_the_number_of_questions_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["demo", "--n", "2"], capsys)
    assert code == 0 and "/2 demo questions answered correctly" in out
