"""The run log: a versioned schema with append-only migrations, and calls linked to what the model saw
(``tkgqa llm log --qid``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.errors import ConfigError
from tkgqa.llm import SCHEMA_VERSION, LLMCache, Message, llm_context, make_request, resolve_llm, summarize_log
from tkgqa.llm.schema import MIGRATIONS, migrate
from tkgqa.testing import FakeLLM

_load_commands()
runner = CliRunner()

#: The file layout tkgqa wrote before the schema had a version (PRAGMA user_version 0).
OLD_SCHEMA = """
CREATE TABLE responses (
    key TEXT PRIMARY KEY, backend TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, kind TEXT NOT NULL DEFAULT 'call',
    method TEXT, question_id TEXT, backend TEXT, model TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0, cached INTEGER NOT NULL DEFAULT 0, error TEXT
);
CREATE INDEX calls_question ON calls (method, question_id);
INSERT INTO calls (ts, method, question_id, backend, model, prompt_tokens, completion_tokens)
    VALUES (1000.0, 'ari', 'q17', 'openai', 'gpt-4o-mini-2024-07-18', 1000000, 0);
"""


def old_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    conn.close()
    return path


def columns(path: Path, table: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    finally:
        conn.close()


def invoke(*args: str) -> Any:
    result = runner.invoke(app, ["llm", *args])
    assert result.exit_code == 0, result.output
    return result


# --- schema -----------------------------------------------------------------------------------------------
def test_new_file_gets_the_current_version(tmp_path: Path) -> None:
    store = LLMCache(tmp_path / "new.sqlite")
    assert store.schema_version() == SCHEMA_VERSION == len(MIGRATIONS) >= 2
    assert {"request_key", "response", "request_model"} <= columns(store.path, "calls")
    assert store.info()["schema_version"] == SCHEMA_VERSION


def test_old_file_is_migrated_on_open_and_keeps_its_rows(tmp_path: Path) -> None:
    path = old_db(tmp_path / "old.sqlite")
    assert "request_key" not in columns(path, "calls")
    store = LLMCache(path)
    rows = store.calls()
    assert store.schema_version() == SCHEMA_VERSION
    assert {"request_key", "response", "request_model"} <= columns(path, "calls")
    assert "requests" in {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert len(rows) == 1 and rows[0]["question_id"] == "q17" and rows[0]["request_key"] is None
    # the old row is still priced (by the model that answered: the one asked for was not recorded)
    assert summarize_log(path).total.cost_usd == pytest.approx(0.15)
    llm = resolve_llm(FakeLLM(["new"]), cache_path=str(path))
    with llm_context(method="ari", question_id="q17"):
        llm.complete(make_request("again"))
    assert [r["response"] for r in LLMCache(path).calls(question_id="q17")] == [None, "new"]


def test_migrations_run_in_order_once(tmp_path: Path) -> None:
    conn = sqlite3.connect(old_db(tmp_path / "old.sqlite"))
    assert migrate(conn) == 0
    assert migrate(conn) == SCHEMA_VERSION  # nothing left to do
    conn.execute("PRAGMA user_version = 1")  # as if only step 1 had run: step 2 must be idempotent
    assert migrate(conn) == 1
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_a_newer_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(ConfigError, match="newer than this tkgqa"):
        LLMCache(path).calls()


# --- what the model saw -----------------------------------------------------------------------------------
def ask(question_id: str, text: str, *, extra: dict[str, Any] | None = None) -> None:
    llm = resolve_llm(FakeLLM(lambda r: f"answer to {r.messages[-1].content}"))
    messages = [Message.system("Answer briefly."), Message.user(text)]
    with llm_context(method="llm_only", question_id=question_id):
        llm.complete(make_request(messages, extra=extra or {}))


def test_log_qid_shows_messages_and_responses(tkgqa_home: Path) -> None:
    ask("q17", "Who visited Iraq in 2005?", extra={"api_key": "sk-NEVER-STORED", "top_p": 1})
    ask("q17", "Who visited Iraq in 2005?")  # a cache hit: same response, logged once more
    ask("q18", "Something else?")
    data = json.loads(invoke("log", "--qid", "q17", "--json").stdout)
    assert data["question_id"] == "q17" and len(data["calls"]) == 2
    first, second = data["calls"]
    assert first["request"]["request"]["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Who visited Iraq in 2005?"},
    ]
    assert first["request"]["request"]["extra"] == {"top_p": 1}
    assert first["response"] == second["response"] == "answer to Who visited Iraq in 2005?"
    assert (first["cached"], second["cached"]) == (False, False)  # extra differs: two entries
    assert first["request_key"] != second["request_key"] and first["method"] == "llm_only"
    text = invoke("log", "--qid", "q17").stdout
    assert "Answer briefly." in text and "Who visited Iraq in 2005?" in text and "response:" in text
    assert "Something else" not in text and "2 calls for question q17" in text
    assert (
        "sk-NEVER-STORED" not in text and b"sk-NEVER-STORED" not in (tkgqa_home / "llm.sqlite").read_bytes()
    )
    assert "no LLM calls logged for question q99" in invoke("log", "--qid", "q99").stdout
    assert json.loads(invoke("log", "--qid", "q17", "--method", "other", "--json").stdout)["calls"] == []


def test_log_qid_on_cache_hits_and_old_rows(tkgqa_home: Path) -> None:
    ask("q1", "Same question?")
    ask("q1", "Same question?")
    calls = json.loads(invoke("log", "--qid", "q1", "--json").stdout)["calls"]
    assert [c["cached"] for c in calls] == [False, True]
    assert calls[0]["request_key"] == calls[1]["request_key"] and calls[1]["request"] is not None
    assert calls[1]["prompt_tokens"] == calls[0]["prompt_tokens"] > 0  # tokens kept on the hit
    db = old_db(tkgqa_home.parent / "old.sqlite")
    text = invoke("log", "--qid", "q17", "--db", str(db)).stdout
    assert "request not recorded" in text
    invoke("cache", "clear", "--log")
    assert LLMCache().info()["requests"] == 0 and LLMCache().info()["calls"] == 0


def test_parse_failures_and_backend_rejections_are_logged_with_tokens(tkgqa_home: Path) -> None:
    from tkgqa.llm import complete_parsed, extract_json_object

    llm = resolve_llm(FakeLLM(["not json", '{"a": 1}']))
    with llm_context(method="m", question_id="qp"):
        out = complete_parsed(llm, "json please", extract_json_object)
    rows = LLMCache().calls(question_id="qp")
    assert [r["kind"] for r in rows] == ["call", "parse_failure", "call"]
    assert [r["response"] for r in rows] == ["not json", None, '{"a": 1}']
    summary = summarize_log(method="m").total
    assert (summary.calls, summary.parse_failures) == (out.usage.calls, out.usage.parse_failures) == (2, 1)
    assert summary.prompt_tokens == out.usage.prompt_tokens
