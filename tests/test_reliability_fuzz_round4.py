"""Issue #29: hypothesis over ``tkgqa llm parse`` (any bytes: one row per non-blank line, never an
exception), cassettes (any bytes: a Cassette or a DataError/ConfigError naming the file) and the report
renderers (any value in a cell or a line keeps the table's shape, adds no heading and no raw HTML)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.cli.llm_parse_cmd import parse_file
from tkgqa.errors import ConfigError, DataError
from tkgqa.eval.report import build_report, render_markdown
from tkgqa.eval.reproduce.render import render_estimates
from tkgqa.llm.replay_backend import read_cassette
from tkgqa.markdown import md_cell, md_row
from tkgqa.methods.package import parse_tasks
from tkgqa.outcomes import ResultRow
from tkgqa.userfiles import bounded_lines

FAST = settings(max_examples=120, deadline=None, database=None)
FILES = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# Bytes that look like JSONL often enough to reach the tasks: fragments of lines, brackets, bad UTF-8.
_PIECES = st.sampled_from(
    [b'{"id": 1, "response": "', b'"}', b"[", b"]", b"{", b"}", b"\n", b"\xff", b"\xc3", b"\\u", b"null",
     b'"candidate_actions": ["a"], ', b'"original_question": "q", ', b"- a\n", b"'x'", b"1e999", b" "]
)  # fmt: skip
_BYTES = st.lists(st.one_of(_PIECES, st.binary(max_size=8)), max_size=40).map(b"".join)
HOSTILE = st.lists(
    st.sampled_from([*"|<>&\n\r#*_`[]\\~ab\u2028", "<img src=x onerror=alert(1)>", "\n# h"]), max_size=12
).map("".join)


@FAST
@given(data=_BYTES, task=st.sampled_from(sorted(parse_tasks())))
def test_llm_parse_answers_every_line_and_raises_nothing(data: bytes, task: str) -> None:
    out = io.StringIO()
    summary = parse_file(task, bounded_lines(io.BytesIO(data)), out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    lines = [line for line in data.split(b"\n") if line.strip()]
    assert len(rows) == summary["lines"] == len(lines)
    assert all(set(r) == {"id", "ok", "value", "reason"} for r in rows)
    assert summary["ok"] + summary["refused"] + summary["bad_input"] == summary["lines"]


@FILES
@given(data=_BYTES)
def test_cassettes_raise_only_documented_errors(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("cassette") / "c.jsonl"
    path.write_bytes(data)
    try:
        cassette = read_cassette(path)
    except (DataError, ConfigError) as exc:
        assert str(path) in str(exc) and "\n" not in str(exc).strip()
        return
    assert cassette.entries and all(isinstance(e.response, str) for e in cassette.entries)


def _unescaped(text: str, char: str) -> int:
    return len(re.findall(rf"(?<!\\){re.escape(char)}", text.replace("\\\\", "")))


@FAST
@given(values=st.lists(HOSTILE, min_size=1, max_size=5))
def test_a_markdown_row_keeps_its_columns(values: list[str]) -> None:
    row = md_row(values)
    assert "\n" not in row and "\r" not in row and "<" not in row and ">" not in row
    assert _unescaped(row, "|") == len(values) + 1
    assert all("\n" not in md_cell(v) for v in values)


@FAST
@given(qtype=HOSTILE, method=HOSTILE, error=HOSTILE)
def test_report_md_from_hostile_data_has_only_its_own_headings(qtype: str, method: str, error: str) -> None:
    rows = [
        ResultRow(qid="1", question="q", predictions=("a",), gold=("a",), qtype=qtype or "x"),
        ResultRow(qid="2", question="q", predictions=(), gold=("a",), qtype="y", error=error or "e"),
    ]
    report = build_report(rows, method={"method": method}, dataset={"name": method}, warnings=[error])
    text = render_markdown(report)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings[0] == "# Evaluation report"
    assert all(
        h == "# Evaluation report" or (h.startswith("## by ") and h[6:].isidentifier()) for h in headings
    )
    assert "<img" not in text and "<" not in text.replace("&lt;", "")
    for line in text.splitlines():
        if line.startswith("| ") and line.count(" | ") >= 3:  # a breakdown row: 4 columns, always
            assert _unescaped(line, "|") == 5


@FAST
@given(note=HOSTILE, run_id=HOSTILE)
def test_the_dry_run_table_keeps_its_columns(note: str, run_id: str) -> None:
    estimate = {
        "run_id": run_id, "method": "m", "dataset": "d", "cells": 1, "questions": 2,
        "calls_per_question": 1.0, "prompt_tokens_per_question": 10.0, "prompt_tokens": 20.0, "note": note,
    }  # fmt: skip
    table = [line for line in render_estimates([estimate], "how").splitlines() if line.startswith("|")]
    assert len(table) == 3 and all(_unescaped(line, "|") == 10 for line in table)


def test_report_md_escapes_the_attack_of_the_issue(tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)>|pipe\n# injected heading"
    rows = [ResultRow(qid="1", question="q", predictions=("a",), gold=("a",), qtype=hostile)]
    text = render_markdown(build_report(rows, method={"method": "symbolic"}, dataset={"name": "demo"}))
    assert "<img" not in text and "\n# injected" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;\\|pipe # injected heading" in text
