"""``tkgqa llm complete|log|prices|cache`` (CliRunner, ``fake`` backend) and the run-log aggregation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_http_fake import FakeServer, Reply, completion
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.cli.llm_cmd import parse_since
from tkgqa.errors import ConfigError
from tkgqa.llm import LLMCache, load_price_table, price_for, summarize_log

_load_commands()
runner = CliRunner()


def invoke(*args: str, stdin: str | None = None) -> Any:
    result = runner.invoke(app, ["llm", *args], input=stdin)
    assert result.exit_code == 0, result.output
    return result


def invoke_json(*args: str, stdin: str | None = None) -> Any:
    return json.loads(invoke(*args, "--json", stdin=stdin).stdout)


def log_rows(db: Path, *rows: dict[str, Any]) -> None:
    store = LLMCache(db)
    for row in rows:
        store.log(**row)


# --- complete -------------------------------------------------------------------------------------------
def test_complete_prints_text_and_usage_then_hits_the_cache(tkgqa_home: Path) -> None:
    first = invoke_json("complete", "--llm", "fake", "What is 2+2?")
    assert first["text"] == "OK" and first["backend"] == "fake" and first["model"] == "fake"
    assert first["prompt_tokens"] > 0 and first["completion_tokens"] > 0
    assert first["cached"] is False and first["cost_usd"] == 0.0 and first["latency_s"] >= 0
    again = invoke_json("complete", "--llm", "fake", "What is 2+2?")
    assert again["cached"] is True and again["prompt_tokens"] == first["prompt_tokens"]
    with_system = invoke_json("complete", "--llm", "fake", "What is 2+2?", "--system", "Be terse.")
    assert with_system["cached"] is False and with_system["prompt_tokens"] > first["prompt_tokens"]
    text = invoke("complete", "--llm", "fake", "What is 2+2?").stdout
    assert text.startswith("OK\n") and "cached" in text and "prompt" in text and "completion" in text


def test_complete_temperature_no_cache_and_stdin(tkgqa_home: Path) -> None:
    invoke_json("complete", "--llm", "fake", "hello")
    hot = invoke_json("complete", "--llm", "fake", "hello", "--temperature", "0.7", "--max-tokens", "5")
    assert hot["cached"] is False
    assert invoke_json("complete", "--llm", "fake", "hello", "--no-cache")["cached"] is False
    piped = invoke_json("complete", "--llm", "fake", "-", stdin="hello")
    assert piped["cached"] is True  # same request as the first one


def test_complete_errors(tkgqa_home: Path) -> None:
    result = runner.invoke(app, ["llm", "complete", "--llm", "fake", "   "])
    assert isinstance(result.exception, ConfigError) and "empty" in str(result.exception)
    result = runner.invoke(app, ["llm", "complete", "--llm", "nope", "hi"])
    assert isinstance(result.exception, ConfigError) and "unknown LLM backend" in str(result.exception)
    result = runner.invoke(app, ["llm", "complete", "--llm", "fake", "hi", "--max-tokens", "0"])
    assert result.exit_code == 2  # typer's range check


def test_api_key_is_never_printed_nor_stored(
    tkgqa_home: Path, fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-DO-NOT-LEAK-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    fake_server.script(
        Reply(
            body=completion(
                "Paris", prompt_tokens=2_000_000, completion_tokens=1_000_000, model="gpt-4o-mini"
            )
        )
    )
    outputs = [invoke("complete", "--llm", "openai:gpt-4o-mini", "Capital of France?").stdout]
    data = invoke_json("complete", "--llm", "openai:gpt-4o-mini", "Capital of France?", "--no-cache")
    assert fake_server.requests[0]["headers"]["Authorization"] == f"Bearer {secret}"
    assert data["text"] == "Paris" and data["cost_usd"] == pytest.approx(2 * 0.15 + 0.60)
    outputs += [json.dumps(data), invoke("log").stdout, invoke("cache", "info").stdout]
    assert all(secret not in out for out in outputs)
    assert secret.encode() not in (tkgqa_home / "llm.sqlite").read_bytes()


# --- log ------------------------------------------------------------------------------------------------
def test_log_sums_up_calls_per_model_and_method(tkgqa_home: Path) -> None:
    invoke("complete", "--llm", "fake", "one")
    invoke("complete", "--llm", "fake", "one")
    invoke("complete", "--llm", "fake", "two")
    log_rows(
        tkgqa_home / "llm.sqlite",
        {"method": "ari", "question_id": "q1", "backend": "openai", "model": "gpt-4o-mini-2024-07-18",
         "prompt_tokens": 1_000_000, "completion_tokens": 500_000, "latency_s": 2.0},
        {"method": "ari", "question_id": "q2", "backend": "openai", "model": "gpt-4o-mini-2024-07-18",
         "prompt_tokens": 1_000_000, "completion_tokens": 500_000, "latency_s": 0.1, "cached": 1},
        {"method": "ari", "question_id": "q2", "kind": "parse_failure", "backend": "openai",
         "model": "gpt-4o-mini-2024-07-18"},
    )  # fmt: skip
    data = invoke_json("log")
    total = data["total"]
    assert (total["calls"], total["cached_calls"], total["parse_failures"]) == (5, 2, 1)
    assert total["cost_usd"] == pytest.approx(0.15 + 0.5 * 0.60)  # the cached call is free
    models = {g["key"]: g for g in data["by_model"]}
    # the three fake calls took real time (any amount on a busy machine): the logged 2.1 s plus theirs
    assert total["latency_s"] == pytest.approx(2.1 + models["fake"]["latency_s"])
    assert models["fake"]["calls"] == 3 and models["fake"]["cost_usd"] == 0.0
    assert models["gpt-4o-mini-2024-07-18"]["prompt_tokens"] == 2_000_000
    methods = {g["key"]: g for g in data["by_method"]}
    assert methods["cli"]["calls"] == 3 and methods["ari"]["calls"] == 2
    assert data["unpriced_models"] == [] and data["prices"]["gpt-4o-mini"] == {"input": 0.15, "output": 0.6}
    only_ari = invoke_json("log", "--method", "ari")
    assert only_ari["total"]["calls"] == 2 and [g["key"] for g in only_ari["by_method"]] == ["ari"]
    table = invoke("log").stdout
    assert "per model" in table and "per method" in table and "gpt-4o-mini" in table and "5" in table


def test_log_since_prices_and_unpriced_models(tkgqa_home: Path, tmp_path: Path) -> None:
    db = tmp_path / "other.sqlite"
    log_rows(
        db,
        {"ts": 1_000.0, "method": "old", "backend": "openai", "model": "gpt-4o", "prompt_tokens": 10},
        {"method": "new", "backend": "openai", "model": "my-model", "prompt_tokens": 1_000_000},
        {"method": "new", "backend": "llamacpp", "model": "gpt-4o", "prompt_tokens": 1_000_000},
    )
    data = invoke_json("log", "--db", str(db))
    assert data["total"]["calls"] == 3 and data["unpriced_models"] == ["my-model"]
    assert data["total"]["cost_usd"] == pytest.approx(10 * 2.5 / 1e6)  # llamacpp is local: free
    recent = invoke_json("log", "--db", str(db), "--since", "1d")
    assert recent["total"]["calls"] == 2 and {g["key"] for g in recent["by_method"]} == {"new"}
    assert invoke_json("log", "--db", str(db), "--since", "2999-01-01")["total"]["calls"] == 0
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-model": [1.0, 2.0], "gpt-4o": {"input": 0, "output": 0}}))
    priced = invoke_json("log", "--db", str(db), "--prices", str(prices))
    assert priced["unpriced_models"] == [] and priced["total"]["cost_usd"] == pytest.approx(1.0)
    assert priced["prices"]["gpt-4o-mini"]["input"] == 0.15  # defaults kept
    assert "no price for" in invoke("log", "--db", str(db)).stdout
    empty = tmp_path / "empty.sqlite"
    log_rows(empty, {"method": "m", "backend": "openai", "model": "gpt-4o"})
    assert invoke("cache", "clear", "--log", "--db", str(empty)).exit_code == 0  # a cache, its log empty
    assert "no LLM calls logged" in invoke("log", "--db", str(empty)).stdout


@pytest.mark.parametrize("command", [["log"], ["cache", "info"], ["cache", "clear"], ["export", "run"]])
def test_a_db_that_does_not_exist_is_refused_not_created(
    tkgqa_home: Path, tmp_path: Path, command: list[str]
) -> None:
    """A mistyped ``--db`` made a new empty database there and said "no LLM calls logged"."""
    typo = tmp_path / "nope.sqlite"
    result = runner.invoke(app, ["llm", *command, "--db", str(typo)])
    assert result.exit_code == 2 and "is not a file" in result.output, result.output
    assert not typo.exists()


def test_log_errors(tkgqa_home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["llm", "log", "--since", "last tuesday"])
    assert isinstance(result.exception, ConfigError) and "--since" in str(result.exception)
    bad = tmp_path / "bad.json"
    for content in ("{not json", '["gpt-4o", 1]', '{"gpt-4o": [1]}', '{"gpt-4o": [-1, 2]}'):
        bad.write_text(content)
        result = runner.invoke(app, ["llm", "log", "--prices", str(bad)])
        assert isinstance(result.exception, ConfigError), content
    result = runner.invoke(app, ["llm", "log", "--prices", str(tmp_path / "missing.json")])
    assert isinstance(result.exception, ConfigError) and "cannot read" in str(result.exception)


def test_prices_command(tmp_path: Path) -> None:
    table = invoke_json("prices")
    assert table["gpt-4o"] == {"input": 2.5, "output": 10.0}
    assert "gpt-4o-mini" in invoke("prices").stdout


# --- cache ----------------------------------------------------------------------------------------------
def test_cache_info_and_clear(tkgqa_home: Path) -> None:
    info = invoke_json("cache", "info")
    assert info["exists"] is False and info["responses"] == 0
    assert not (tkgqa_home / "llm.sqlite").exists()  # info does not create the file
    invoke("complete", "--llm", "fake", "a")
    invoke("complete", "--llm", "fake", "b")
    invoke("complete", "--llm", "fake", "b")
    info = invoke_json("cache", "info")
    assert info["exists"] and info["size_bytes"] > 0 and (info["responses"], info["calls"]) == (2, 3)
    assert info["path"] == str(tkgqa_home / "llm.sqlite") and info["first_call"] <= info["last_call"]
    assert "responses" in invoke("cache", "info").stdout
    assert invoke_json("cache", "clear") == {"path": info["path"], "responses": 2, "calls": 0}
    assert invoke_json("cache", "info")["calls"] == 3  # the run log is kept
    assert invoke_json("complete", "--llm", "fake", "a")["cached"] is False
    cleared = invoke("cache", "clear", "--log").stdout
    assert "1 cached responses and 4 logged calls" in cleared
    assert invoke_json("cache", "info")["calls"] == 0


# --- library functions ----------------------------------------------------------------------------------
def test_parse_since() -> None:
    assert parse_since("2h", now=10_000.0) == 10_000.0 - 7200
    assert parse_since("30m", now=10_000.0) == 10_000.0 - 1800
    assert parse_since("1.5d", now=200_000.0) == 200_000.0 - 1.5 * 86400
    assert parse_since("2024-05-01T00:00:00+00:00") == 1714521600.0
    with pytest.raises(ConfigError):
        parse_since("soon")


def test_price_for_with_a_table() -> None:
    assert price_for("openai:gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert price_for("gpt-4o-2024") == (2.50, 10.00)
    table = {"my": (1.0, 1.0), "my-model": (2.0, 3.0)}
    assert price_for("My-Model-v2", table) == (2.0, 3.0) and price_for("gpt-4o", table) == (0.0, 0.0)


def test_load_price_table(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"A-Model": [1, 2.5], "b": {"input": 0.5, "output": 1}}')
    assert load_price_table(path) == {"a-model": (1.0, 2.5), "b": (0.5, 1.0)}


def test_summarize_log_groups_and_errors(tmp_path: Path) -> None:
    db = tmp_path / "log.sqlite"
    log_rows(
        db,
        {"method": "m1", "backend": "openai", "model": "gpt-4.1-nano", "prompt_tokens": 1_000_000},
        {"method": "m1", "backend": "openai", "model": "gpt-4.1-nano", "error": "LLMError: boom"},
        {"method": None, "backend": "fake", "model": "fake", "completion_tokens": 7},
    )
    summary = summarize_log(db)
    assert summary.total.calls == 3 and summary.total.errors == 1
    assert summary.total.cost_usd == pytest.approx(0.10)
    assert [g.key for g in summary.by_method] == ["m1", None]  # most calls first
    assert summary.by_model[0].key == "gpt-4.1-nano" and summary.by_model[0].errors == 1
    assert summarize_log(db, method="m1", prices={}).total.cost_usd == 0.0
    assert summarize_log(db, method="m1", prices={}).unpriced_models == ["gpt-4.1-nano"]
