"""Terminal output (issue #23, item 10): model and KG text reaches the terminal without escape sequences or
control characters (:func:`tkgqa.sanitize.terminal_text`, used by the CLI's one console), whatever it holds;
``--json`` output keeps its meaning with every control character escaped."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_run import run_cli
from tkgqa.errors import LLMError
from tkgqa.llm.base import LLM_BACKENDS
from tkgqa.sanitize import clean_json, terminal_json, terminal_text
from tkgqa.testing import FakeLLM

#: What a terminal must never receive: C0 but newline and tab, DEL, C1.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

ATTACKS = {
    "colour": ("\x1b[31;1mred\x1b[0m", "red"),
    "clear screen and home": ("\x1b[2J\x1b[Hhi", "hi"),
    "window title (BEL)": ("\x1b]0;pwned\x07Paris", "Paris"),
    "window title (ST)": ("\x1b]2;pwned\x1b\\Paris", "Paris"),
    "OSC 8 hyperlink": ("\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),
    "clipboard write": ("\x1b]52;c;cm0gLXJmIH4=\x07ok", "ok"),
    "8-bit CSI": ("\x9b31mred", "red"),
    "8-bit OSC": ("\x9d0;title\x9cok", "ok"),
    "DCS": ("\x1bPq#0;2;0;0;0\x1b\\ok", "ok"),
    "charset switch": ("\x1b(0lqk\x1b(B", "lqk"),
    "carriage return overwrite": ("rm -rf ~\rls      ", "rm -rf ~ls      "),
    "backspaces and bell": ("ab\x08\x08\x07cd", "abcd"),
    "unterminated OSC": ("\x1b]0;never ends", "0;never ends"),
    "lone ESC and DEL": ("a\x1b\x7fb", "ab"),
}


@pytest.mark.parametrize("raw,shown", list(ATTACKS.values()), ids=list(ATTACKS))
def test_terminal_text_removes_escape_sequences_and_controls(raw: str, shown: str) -> None:
    assert terminal_text(raw) == shown


def test_terminal_text_keeps_ordinary_text() -> None:
    text = "Barack Obama\tvisited China — 中国, 2014-11-10\nnext line \u00e9\u0301 \U0001f600"
    assert terminal_text(text) == text
    assert terminal_text("lone \ud800 surrogate") == "lone \ufffd surrogate"


@given(st.text())
def test_terminal_text_never_leaves_a_control_character(text: str) -> None:
    shown = terminal_text(text)
    assert UNSAFE.search(shown) is None
    assert terminal_text(shown) == shown
    shown.encode("utf-8")  # no lone surrogate either


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda t: st.lists(t, max_size=3)
                    | st.dictionaries(st.text(max_size=4), t, max_size=3), max_leaves=8))  # fmt: skip
def test_terminal_json_means_the_same_and_holds_no_control_character(value: Any) -> None:
    line = terminal_json(value)
    assert UNSAFE.search(line) is None and "\n" not in line
    assert json.loads(line) == clean_json(value)


EVIL_REPLY = '["\x1b]0;pwned\x07Barack \x1b[31mObama\x1b[0m\x9b2J"]'


@pytest.fixture
def evil_llm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    """The LLM backend ``evil``: a FakeLLM whose every reply is full of escape sequences."""
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(LLM_BACKENDS, "_factories", dict(LLM_BACKENDS._factories))
    monkeypatch.setattr(LLM_BACKENDS, "_order", dict(LLM_BACKENDS._order))
    LLM_BACKENDS.add("evil", functools.partial(FakeLLM, responses=lambda _request: EVIL_REPLY))
    yield "evil"


def test_ask_prints_no_escape_sequence_from_the_model(
    evil_llm: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["ask", "Who visited China in November 2014?", "--method", "llm_only", "--llm", evil_llm]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "Barack Obama" in out and UNSAFE.search(out + err) is None, repr(out)
    code, out, err = run_cli([*args, "--json"], capsys)
    assert code == 0 and UNSAFE.search(out.rstrip("\n")) is None, repr(out)
    assert json.loads(out)["answers"] == [
        json.loads(EVIL_REPLY, strict=False)[0]
    ]  # the JSON still says what was answered


def test_llm_complete_prints_the_reply_without_escape_sequences(
    evil_llm: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["llm", "complete", "--llm", evil_llm, "hello", "--no-cache"], capsys)
    assert code == 0, err
    assert "Barack Obama" in out and UNSAFE.search(out.replace("\n", "")) is None, repr(out)


def test_error_messages_quoting_the_server_are_printed_safely(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An LLM error quotes what the server said (``HTTP 400 from …: <message>``): printed without escapes."""
    monkeypatch.setenv("TKGQA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(LLM_BACKENDS, "_factories", dict(LLM_BACKENDS._factories))
    monkeypatch.setattr(LLM_BACKENDS, "_order", dict(LLM_BACKENDS._order))

    def fail(_request: Any) -> str:
        raise LLMError("HTTP 400 from http://127.0.0.1/v1: \x1b]0;pwned\x07\x1b[2Jbad \x9b31mrequest")

    LLM_BACKENDS.add("down", functools.partial(FakeLLM, responses=fail))
    args = ["ask", "Who visited China in November 2014?", "--method", "llm_only", "--llm", "down"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "bad request" in err.replace("\n", " ")
    assert UNSAFE.search(err.replace("\n", "")) is None, repr(err)
