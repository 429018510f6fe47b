"""Hypothesis for every parser of outside input that had none: arbitrary text raises nothing but the
documented error (ParseError for LLM output, DataError for data files, ConfigError for options/configs),
plus a round trip where the format has one.

Already fuzzed elsewhere (not repeated here): ``llm/parsing`` round trips (tests/llm/test_llm_parsing.py),
r3 prompts (tests/methods/test_r3_prompts.py), lpkg plans, KG loaders (tests/kg), CR-LT triples,
``parse_counts``, ``parse_program`` and fact lines of the service, option-pair round trips.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tkgqa.cli.run_config import read_config_file
from tkgqa.datasets import cronquestions, multitq, timequestions
from tkgqa.datasets.core import read_records
from tkgqa.datasets.jsonl import parse_row, read_jsonl_questions
from tkgqa.datasets.verbalized import FactSplitter
from tkgqa.errors import ConfigError, DataError, NotFoundError, ParseError
from tkgqa.kg.crlt import read_entries
from tkgqa.llm import extract_json, extract_json_list, extract_json_object, parse_string_list
from tkgqa.llm.lists import says_no_answer
from tkgqa.methods.ari import prompts as ari
from tkgqa.methods.base import parse_option_pairs
from tkgqa.methods.baselines import prompts as baselines
from tkgqa.methods.cik import prompts as cik
from tkgqa.methods.lpkg import prompts as lpkg
from tkgqa.methods.timer4 import prompts as timer4
from tkgqa.time import Granularity, TimePoint, parse_bound, parse_time, split_range, try_parse_time

FAST = settings(max_examples=150, deadline=None, database=None)
FILES = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Text that looks like model output often enough to reach deep into the parsers.
_TOKENS = st.sampled_from(
    [
        "[", "]", "[[", "]]", "{", "}", '"', "'", ",", "#", ":", "\n", " ", "None", "none", "Answer:",
        "Final answer:", "Question:", "search(", ")", "answer(", "1", "-1", "2015-03-21", "A", "Barack Obama",
        "`", "```json\n", "\n```", "- ", "1. ", "e3", "m.0abc", "\\", "\x00", "\u00e9",
    ]
)  # fmt: skip
_LLM_TEXT = st.one_of(st.text(max_size=200), st.lists(_TOKENS, max_size=40).map("".join))
_HOSTILE = [
    "[" * 1500,  # deeper than the recursion limit
    "[" * 1500 + "]" * 1500,
    "{" * 1500 + "}" * 1500,
    '{"a":' * 1500 + "1" + "}" * 1500,
    "[" + "1" * 5000 + "]",
    '{"a": ' + "9" * 5000 + "}",
    "Final answer: [" + "[" * 1500,
    "```json\n" + "[" * 1500 + "\n```",
]
ACTIONS = ["get_head_entity('A', 'r')", "answer('A')", "get_time('A', 'r', 'B')"]


def _llm_parsers() -> list[Callable[[str], object]]:
    verbalize = lpkg.verbalize_parser(2, [["A"], ["B"]])
    return [
        lambda t: ari.parse_action_choice(t, ACTIONS),
        lambda t: ari.parse_action_choice(t, ACTIONS, allow_free_answer=False),
        lambda t: ari.parse_constrained_choice(t, ACTIONS),
        ari.parse_methodology,
        lambda t: ari.parse_written_action(t, ACTIONS),
        baselines.parse_answer_list,
        cik.parse_relation_paths,
        cik.parse_rog_answer,
        verbalize.parse,
        lpkg.parse_lpkg_answer,
        timer4.parse_rewrite,
        timer4.parse_answers,
        extract_json,
        extract_json_list,
        extract_json_object,
        parse_string_list,
    ]


def _only_parse_errors(text: str) -> None:
    for parse in _llm_parsers():
        try:
            parse(text)
        except ParseError as exc:
            assert (isinstance(exc.raw, str) and exc.raw in text) or exc.raw.strip("[]") in text


# ---------------------------------------------------------------- LLM output


@FAST
@given(_LLM_TEXT)
def test_llm_output_parsers_raise_only_parse_errors(text: str) -> None:
    _only_parse_errors(text)


@pytest.mark.parametrize("text", _HOSTILE, ids=range(len(_HOSTILE)))
def test_deep_nesting_and_huge_numbers_are_parse_errors(text: str) -> None:
    """Regression: ``json.loads`` raises RecursionError / ValueError (4300-digit limit) on these."""
    _only_parse_errors(text)


_ANSWER = st.text(st.characters(codec="utf-8", categories=["L", "N"]), min_size=1, max_size=20).filter(
    lambda x: not says_no_answer(x)  # "None", "Unknown", … are dropped: they say there is no answer
)
_ANSWERS = st.lists(_ANSWER, min_size=1, max_size=6, unique=True)


@FAST
@given(_ANSWERS)
def test_baselines_answer_list_round_trips_json(answers: list[str]) -> None:
    assert baselines.parse_answer_list(json.dumps(answers)) == answers[:10]


@FAST
@given(_ANSWERS.filter(lambda xs: all(x.lower() != "none" for x in xs)))
def test_lpkg_answer_list_round_trips_the_paper_format(answers: list[str]) -> None:
    assert lpkg.parse_lpkg_answer("[" + "#".join(answers) + "]") == answers


@FAST
@given(_ANSWERS.filter(lambda xs: all(x.lower() != "none" for x in xs)), st.text(max_size=40))
def test_rog_final_answer_round_trips(answers: list[str], prose: str) -> None:
    prose = prose.replace("nswer", "")  # no second answer marker in the prose
    assert cik.parse_rog_answer(f"{prose}\nFinal answer: {json.dumps(answers)}") == answers


@FAST
@given(_ANSWERS)
def test_timer4_answers_round_trip(answers: list[str]) -> None:
    assert timer4.parse_answers(json.dumps(answers)) == answers


@FAST
@given(st.integers(0, len(ACTIONS) - 1), st.text(st.characters(categories=["L", "Zs"]), max_size=30))
def test_ari_dollar_action_is_chosen(index: int, prose: str) -> None:
    assert ari.parse_action_choice(f"{prose}\n${ACTIONS[index]}$", ACTIONS).index == index


# ---------------------------------------------------------------- time


@FAST
@given(st.text(max_size=60))
def test_time_parsers_raise_only_data_errors(text: str) -> None:
    found = try_parse_time(text)  # never raises
    try:
        assert parse_time(text) == found
    except DataError:
        assert found is None
    with contextlib.suppress(DataError):
        parse_bound(text)
    pair = split_range(text)
    assert pair is None or all(isinstance(p, str) for p in pair)


@FAST
@given(st.integers(-9999, 9999), st.integers(1, 12), st.integers(1, 28), st.sampled_from(list(Granularity)))
def test_time_round_trips_through_iso(year: int, month: int, day: int, level: Granularity) -> None:
    sign = "-" if year < 0 else ""
    coarse = parse_time(f"{sign}{abs(year):04d}-{month:02d}-{day:02d}").coarsen(level)
    assert isinstance(coarse, TimePoint) and coarse.granularity == level
    assert parse_time(coarse.iso()) == coarse


# ---------------------------------------------------------------- CLI options and run configs


_PAIR = st.one_of(
    st.text(max_size=40),
    st.tuples(st.from_regex(r"[a-z_.\-]{0,8}", fullmatch=True), _LLM_TEXT).map("=".join),
)


@FAST
@given(st.lists(_PAIR, max_size=5))
def test_option_pairs_raise_only_config_errors(pairs: list[str]) -> None:
    try:
        out = parse_option_pairs(pairs)
    except ConfigError as exc:
        assert len(str(exc)) < 1000
        return
    assert isinstance(out, dict)


@pytest.mark.parametrize("value", ["[" + "1" * 5000 + "]", "[" * 5000, "[" * 5000 + "]" * 5000])
def test_option_pair_with_unreadable_json_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match="--method-option"):
        parse_option_pairs([f"k={value}"])


_FILE_BYTES = st.one_of(
    st.binary(max_size=200),
    _LLM_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([h.encode() for h in _HOSTILE] + [b"\xff\xfe", b"a = [" * 2000, b"x = 1" + b"0" * 5000]),
)


@FILES
@given(data=_FILE_BYTES, suffix=st.sampled_from([".toml", ".json"]))
def test_run_config_files_raise_only_config_errors(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, suffix: str
) -> None:
    path = tmp_path_factory.mktemp("cfg") / f"run{suffix}"
    path.write_bytes(data)
    try:
        out = read_config_file(path)
    except ConfigError:
        return
    assert isinstance(out, dict)


# ---------------------------------------------------------------- dataset files and rows


@FILES
@given(data=_FILE_BYTES, suffix=st.sampled_from([".jsonl", ".json"]))
def test_question_files_raise_only_data_errors(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, suffix: str
) -> None:
    path = tmp_path_factory.mktemp("q") / f"questions{suffix}"
    path.write_bytes(data)
    try:
        rows = read_records(path)
        assert all(isinstance(r, dict) for r in rows)
        if suffix == ".jsonl":
            read_jsonl_questions(path)
    except DataError:
        pass


@FILES
@given(data=_FILE_BYTES)
def test_crlt_files_raise_only_data_errors(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("crlt") / "data.json"
    path.write_bytes(data)
    try:
        entries = read_entries(path)
    except (DataError, NotFoundError):
        return
    assert isinstance(entries, list)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_KEYS = [
    "question", "answers", "qid", "context", "extra", "answer_ids", "types", "entities", "times", "relations",
    "answer_type", "qtype", "qlabel", "time_level", "quid", "answer", "answers_type", "time_level", "Id",
    "Question", "Answer", "Temporal signal", "Type", "Data source", "type", "template", "paraphrases",
    "entities", "time", "subject", "relation", "object", "start", "end",
]  # fmt: skip
_ROW = st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=6), _JSON, max_size=8)


@FAST
@given(_ROW)
def test_dataset_rows_raise_only_data_errors(row: dict[str, object]) -> None:
    path = Path("fuzz.jsonl")
    loaders: list[Callable[[dict[str, object]], object]] = [
        lambda r: parse_row(r, path, 1, "jsonl"),
        lambda r: multitq.to_question(r, path, 1),
        lambda r: cronquestions.to_question(r, path, 1, {}),
        lambda r: timequestions.to_question(r, path, 1, "year"),
        lambda r: timequestions.to_question(r, path, 1, "day"),
    ]
    for load in loaders:
        with contextlib.suppress(DataError):
            load(row)


# ---------------------------------------------------------------- verbalised facts (TimeQuestions retrieved)

_VERBAL = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from(["Barack Obama", "position held", "President", "from", "to", "2009", "-44", "+2017",
                         "", ".", "date of birth", "member of", "12345678901234567890"]),
        max_size=10,
    ).map(" ".join),
)  # fmt: skip


@FAST
@given(st.lists(_VERBAL, max_size=6))
def test_verbalised_facts_never_raise(texts: list[str]) -> None:
    for parsed in FactSplitter(["position held", "member of"]).parse_many(texts):
        assert (parsed.fact is not None) == (parsed.status in ("ok", "reversed"))


_NAME = st.text(st.characters(categories=["L"]), min_size=1, max_size=12)


@FAST
@given(_NAME, _NAME, st.integers(1000, 2100), st.integers(1000, 2100))  # years 1/2916 mean "unknown"
def test_verbalised_fact_round_trips(subject: str, obj: str, y1: int, y2: int) -> None:
    parsed = FactSplitter(["position held"], include_extra=False).parse(
        f"{subject} position held {obj} from {y1} to {y2}."
    )
    assert parsed.fact is not None
    assert (parsed.fact.subject, parsed.fact.relation, parsed.fact.object) == (subject, "position held", obj)
    assert parsed.status == ("reversed" if y1 > y2 else "ok")


_RETRIEVED_KEYS = st.sampled_from(["id", "timer4_retrieved_facts", "question", "original_question"])


@FAST
@given(st.lists(st.dictionaries(_RETRIEVED_KEYS, _JSON, max_size=4), max_size=4))
def test_retrieved_rows_raise_only_data_errors(rows: list[dict[str, object]]) -> None:
    with contextlib.suppress(DataError):
        timequestions.parse_retrieved(rows, [])  # type: ignore[arg-type]
