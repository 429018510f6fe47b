"""The ``replay:`` backend and cassettes: matching by prompt / by question id and stage, misses, malformed
lines (DataError naming file:line), secrets never written, the replay counts in ``Answer.usage``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tkgqa.errors import DataError, LLMError, ReplayMiss
from tkgqa.llm import Message, llm_context, make_request, resolve_llm, usage_dict
from tkgqa.llm.replay_backend import (
    HEADER_KEY,
    ReplayLLM,
    cassette_header,
    cassette_line,
    read_cassette,
)


def write(path: Path, *lines: Any) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), "utf-8")
    return path


def test_prompt_match_is_whitespace_normalised(tmp_path: Path) -> None:
    f = write(tmp_path / "c.jsonl", {"prompt": "Question:\n  who  won?", "response": "['Ann']"})
    llm = ReplayLLM(str(f))
    resp = llm.complete(make_request("Question: who won?\n"))
    assert resp.text == "['Ann']"
    assert resp.usage.calls == 1 and resp.usage.replay_exact == 1 and resp.usage.replay_by_id == 0
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    with pytest.raises(ReplayMiss) as info:
        llm.complete(make_request("Question: who lost?"))
    assert not info.value.retryable and isinstance(info.value, LLMError)
    assert info.value.usage is not None and info.value.usage.replay_miss == 1


def test_messages_match_keeps_roles(tmp_path: Path) -> None:
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    f = write(tmp_path / "c.jsonl", {"messages": msgs, "response": "Hello", "usage": {"prompt_tokens": 7}})
    llm = ReplayLLM(str(f))
    resp = llm.complete(make_request([Message.system("Be  brief."), Message.user("Hi")]))
    assert resp.text == "Hello" and resp.usage.prompt_tokens == 7
    with pytest.raises(ReplayMiss):
        llm.complete(make_request([Message.user("Be brief."), Message.user("Hi")]))


def test_by_id_and_stage(tmp_path: Path) -> None:
    f = write(
        tmp_path / "c.jsonl",
        {"id": 7, "stage": "rewrite", "response": "R"},
        {"id": 7, "stage": "answer", "response": "A1"},
        {"id": 7, "stage": "answer", "response": "A2"},
        {"id": "8", "response": "single"},
    )
    llm = ReplayLLM(str(f))
    with llm_context(method="m", question_id="7"):
        with llm_context(stage="answer"):
            first = llm.complete(make_request("anything"))
            second = llm.complete(make_request("anything else"))
            third = llm.complete(make_request("a parse retry"))  # the last line answers again
        with llm_context(stage="rewrite"):
            rewrite = llm.complete(make_request("x"))
        with llm_context(stage="other"), pytest.raises(ReplayMiss):
            llm.complete(make_request("x"))
    assert [first.text, second.text, third.text, rewrite.text] == ["A1", "A2", "A2", "R"]
    assert first.usage.replay_by_id == 1 and first.usage.replay_exact == 0
    with llm_context(question_id="8", stage="whatever"):
        assert llm.complete(make_request("y")).text == "single"
    with pytest.raises(ReplayMiss):  # no question id: nothing to match by
        llm.complete(make_request("y"))


def test_resolved_by_spec_not_cached_and_logged_with_stage(tmp_path: Path, isolated_home: Path) -> None:
    f = write(tmp_path / "c.jsonl", {"prompt": "p", "response": "r"})
    llm = resolve_llm(f"replay:{f}")
    assert llm.name == "replay" and llm.cache_namespace().startswith(f"replay:{f}#")
    with llm_context(method="m", question_id="q1", stage="answer"):
        one = llm.complete(make_request("p"))
        two = llm.complete(make_request("p"))
    assert not one.cached and not two.cached and two.usage.replay_exact == 1
    from tkgqa.llm import LLMCache

    calls = LLMCache().calls(method="m")
    assert [c["stage"] for c in calls] == ["answer", "answer"] and LLMCache().info()["responses"] == 0
    assert usage_dict(one.usage, llm)["replay_exact"] == 1 and usage_dict(one.usage, llm)["cost_usd"] == 0


def test_usage_dict_has_no_replay_keys_for_other_backends() -> None:
    from tkgqa.llm import Usage

    assert "replay_exact" not in usage_dict(Usage(calls=1, prompt_tokens=3))


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("not json", "not a JSON line"),
        ("[1, 2]", "expected a JSON object"),
        ('{"prompt": "p"}', "'response'"),
        ('{"prompt": "p", "response": 3}', "'response'"),
        ('{"response": "r"}', "nothing to match"),
        ('{"id": true, "response": "r"}', "'id'"),
        ('{"id": 1, "stage": 2, "response": "r"}', "'stage'"),
        ('{"messages": [{"role": "bot", "content": "x"}], "response": "r"}', "'messages'[0]"),
        ('{"messages": [], "response": "r"}', "'messages'"),
        ('{"prompt": "p", "response": "r", "usage": {"prompt_tokens": -1}}', "usage.prompt_tokens"),
        (json.dumps({HEADER_KEY: 1}), "header"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, fragment: str) -> None:
    f = write(tmp_path / "bad.jsonl", {"prompt": "ok", "response": "fine"}, "", line)
    with pytest.raises(DataError) as info:
        read_cassette(f)
    assert info.value.path == str(f) and info.value.line == 3
    assert str(info.value).startswith(f"{f}:3: ") and fragment in str(info.value)


def test_empty_cassette_and_missing_file(tmp_path: Path) -> None:
    f = write(tmp_path / "empty.jsonl", {HEADER_KEY: 1, "model": "m"})
    with pytest.raises(DataError, match="no recorded reply"):
        read_cassette(f)
    from tkgqa.errors import ConfigError

    with pytest.raises(ConfigError, match=r"replay:FILE\.jsonl"):
        ReplayLLM(str(tmp_path / "absent.jsonl"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_line = st.fixed_dictionaries(
    {},
    optional={
        "prompt": _json | st.text(),
        "messages": _json,
        "id": _json,
        "stage": _json,
        "response": _json | st.text(),
        "usage": _json,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_line | _json, min_size=1, max_size=4))
def test_any_json_lines_read_or_fail_with_a_located_data_error(lines: list[Any]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        f = write(Path(tmp) / "c.jsonl", *[json.dumps(x) for x in lines])
        try:
            cassette = read_cassette(f)
        except DataError as exc:
            assert exc.path == str(f) and (exc.line is not None or "no recorded reply" in str(exc))
            return
        for entry in cassette.entries:
            assert isinstance(entry.response, str)
            assert entry.prompt is not None or entry.messages is not None or entry.qid is not None


_text = st.text(alphabet=st.characters(exclude_categories=["Cs"]))


@settings(max_examples=100, deadline=None)
@given(_text.filter(bool), _text, st.one_of(st.none(), _text))
def test_written_lines_read_back(prompt: str, response: str, stage: str | None) -> None:
    import tempfile

    request = make_request(prompt).stored()
    line = cassette_line(request=request, response=response, qid="q1", stage=stage)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "c.jsonl"
        f.write_text(json.dumps(line, ensure_ascii=False) + "\n", "utf-8")
        llm = ReplayLLM(str(f))
        assert llm.complete(make_request(prompt)).text == response


def test_cassettes_hold_no_secrets() -> None:
    request = make_request(
        "hi",
        extra={
            "api_key": "sk-secret",
            "extra_headers": {"Authorization": "Bearer sk-secret", "X-Trace": "t"},
            "extra_body": {"client-secret": "sk-secret", "top_p": 0.5},
        },
    ).stored()
    line = cassette_line(request=request, response="ok", qid="1")
    head = cassette_header(
        backend="openai", model="gpt-4o-mini", settings={"api_key": "sk-secret", "temperature": 0}
    )
    text = json.dumps(line) + json.dumps(head)
    assert "sk-secret" not in text
    assert line["request"]["extra"]["extra_body"] == {"top_p": 0.5}
    assert head["settings"] == {"temperature": 0} and head["tkgqa_version"]


def test_a_prompted_line_never_answers_another_prompt_by_id(tmp_path: Path) -> None:
    """A recorded prompt answers only itself and its parse re-asks; by-id fallback is opt-in."""
    f = write(tmp_path / "c.jsonl", {"id": 7, "stage": "answer", "prompt": "Who won?", "response": "Ann?"})
    llm = ReplayLLM(str(f))
    with llm_context(question_id="7", stage="answer"):
        with pytest.raises(ReplayMiss):
            llm.complete(make_request("Who lost?"))
        reask = [
            Message.user("Who  won?"),
            Message.assistant("Ann?"),
            Message.user("Your answer could not be parsed: no list. Reply again."),
        ]
        again = llm.complete(make_request(reask))
        assert again.text == "Ann?" and again.usage.replay_reask == 1 and again.usage.replay_by_id == 0
        twice = [*reask, Message.assistant("Ann?"), Message.user("Again.")]
        assert llm.complete(make_request(twice)).usage.replay_reask == 1
        with pytest.raises(ReplayMiss):  # another reply in the assistant turn: not a re-ask of this one
            llm.complete(make_request([reask[0], Message.assistant("Bob"), reask[2]]))
        opted = ReplayLLM(f"{f}?by_id=any")
        assert opted.by_id_any and opted.complete(make_request("Who lost?")).usage.replay_by_id == 1
