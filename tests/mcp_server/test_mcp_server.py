"""``tkgqa mcp`` driven by the SDK's own client: in memory (the server object) and as a real stdio subprocess
started the way an agent starts it; the HTTP transport behind the service's guard."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the SDK: install tkgqa[mcp]")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tkgqa.mcp_server.server import SUMMARY_URI, build_server
from tkgqa.service.policy import ServiceSettings
from tkgqa.service.state import build_state

QUESTION = "Who visited China in November 2014?"
VISIT = {"subject": "Barack Obama", "relation": "Make a visit", "object": "China", "start": "2014-11-10"}
TOOLS = {"ask", "facts", "timeline", "neighbors"}


def run(body: Callable[[Client], Awaitable[Any]], server: Any = None) -> Any:
    async def main() -> Any:
        async with Client(server if server is not None else build_server(build_state(None))) as client:
            return await body(client)

    return asyncio.run(main())


def error_text(result: Any) -> str:
    assert result.is_error, result
    text = result.content[0].text
    assert "Traceback" not in text and "/work" not in text and str(Path.home()) not in text
    return text


def assert_obama_with_evidence(result: Any) -> None:
    assert not result.is_error, result.content
    out = result.structured_content
    assert out["answers"][0] == "Barack Obama"
    assert any(all(f[k] == v for k, v in VISIT.items()) for f in out["evidence"]), out["evidence"]
    assert out["abstained"] is False and out["program"]


def assert_no_answer_before_the_visit(result: Any) -> None:
    assert not result.is_error, result.content
    out = result.structured_content
    assert out["answers"] == [] and out["abstained"] is True and out["reason"]
    assert out["as_of"] == "2014-10"


def test_lists_the_tools_with_typed_documented_schemas() -> None:
    tools = run(lambda c: c.list_tools()).tools
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS  # no append_facts unless the server allows appends
    for tool in tools:
        assert tool.description and tool.output_schema, tool.name
        assert tool.input_schema["type"] == "object"
    ask = by_name["ask"].input_schema["properties"]
    assert ask["question"]["maxLength"] == 2000 and "as_of" in ask and "method" in ask
    assert by_name["ask"].input_schema["required"] == ["question"]
    assert {"answers", "evidence", "abstained", "reason", "program", "steps"} <= set(
        by_name["ask"].output_schema["properties"]
    )
    assert by_name["facts"].input_schema["properties"]["limit"]["maximum"] == 200
    assert by_name["ask"].annotations.read_only_hint is True


def test_asks_over_the_demo_kg_with_evidence_and_as_of_before_the_visit() -> None:
    async def body(c: Client) -> tuple[Any, Any]:
        return await c.call_tool("ask", {"question": QUESTION}), await c.call_tool(
            "ask", {"question": QUESTION, "as_of": "2014-10"}
        )

    answered, before = run(body)
    assert_obama_with_evidence(answered)
    assert_no_answer_before_the_visit(before)


def test_kg_tools_and_the_summary_resource() -> None:
    async def body(c: Client) -> dict[str, Any]:
        return {
            "facts": await c.call_tool(
                "facts",
                {
                    "subject": "barack obama",
                    "relation": "Make a visit",
                    "start": "2014-11",
                    "end": "2014-11",
                    "limit": 5,
                },
            ),
            "hidden": await c.call_tool(
                "facts", {"subject": "Barack Obama", "object": "China", "as_of": "2014-10"}
            ),
            "timeline": await c.call_tool("timeline", {"entity": "Barack Obama", "limit": 5, "offset": 2}),
            "neighbors": await c.call_tool("neighbors", {"entity": "Barack Obama", "limit": 3}),
            "summary": await c.read_resource(SUMMARY_URI),
            "resources": await c.list_resources(),
        }

    out = run(body)
    facts = out["facts"].structured_content
    assert facts["total"] == 1 and facts["facts"][0]["object"] == "China"
    assert all(f["start"] < "2014-10-32" for f in out["hidden"].structured_content["facts"])
    timeline = out["timeline"].structured_content
    starts = [f["start"] for f in timeline["facts"]]
    assert timeline["offset"] == 2 and len(starts) == 5 and starts == sorted(starts)
    assert timeline["total"] > 5 and timeline["first"]
    neighbors = out["neighbors"].structured_content
    assert len(neighbors["neighbors"]) == 3 and neighbors["n_facts"] == timeline["total"]
    summary = json.loads(out["summary"].contents[0].text)
    assert summary["facts"] == 400 and summary["start"] and "path" not in summary
    assert [str(r.uri) for r in out["resources"].resources] == [SUMMARY_URI]


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("ask", {"question": "x" * 5000}, "at most 2000 characters"),
        ("ask", {"question": "   "}, "the question is empty"),
        ("ask", {"question": QUESTION, "as_of": "yesterday-ish"}, "as_of 'yesterday-ish' is not a time"),
        ("ask", {"question": QUESTION, "method": "nosuch"}, "unknown method 'nosuch'"),
        (
            "ask",
            {"question": QUESTION, "method": "llm_only", "llm": "llamacpp:/etc/passwd"},
            "is not allowed on this server",
        ),
        (
            "ask",
            {"question": QUESTION, "method": "ari", "options": {"memory": "/etc/passwd"}},
            "names a file",
        ),
        ("facts", {"subject": "Barack Obama", "start": "13/13/13"}, "cannot parse time"),
        ("facts", {"start": "2015", "end": "2014"}, "starts (2015) after it ends (2014)"),
        ("facts", {"limit": 100000}, "less than or equal to 200"),
        ("timeline", {"entity": "Barak Obamma"}, "not found"),
        ("neighbors", {"entity": "Barack Obama", "time": "not a time"}, "cannot parse time"),
        ("append_facts", {"lines": "a\tb\tc\t2014"}, "Unknown tool"),
    ],
)
def test_bad_inputs_get_clean_one_line_errors(tool: str, args: dict[str, Any], expected: str) -> None:
    text = error_text(run(lambda c: c.call_tool(tool, args)))
    assert expected in text, text
    assert len(text) < 1500


def test_append_facts_only_when_allowed_and_the_next_question_sees_them() -> None:
    settings = ServiceSettings(allow_append=True, ephemeral_append=True)
    server = build_server(build_state(None, settings=settings))
    question = "Who visited Atlantis in March 2031?"

    async def body(c: Client) -> tuple[Any, Any, Any, Any]:
        names = {t.name for t in (await c.list_tools()).tools}
        before = await c.call_tool("ask", {"question": question})
        added = await c.call_tool(
            "append_facts", {"lines": "Ada Lovelace\tMake a visit\tAtlantis\t2031-03-02"}
        )
        bad = await c.call_tool("append_facts", {"lines": "only\ttwo"})
        after = await c.call_tool("ask", {"question": question})
        return names, before, added, (bad, after)

    names, before, added, (bad, after) = run(body, server)
    assert "append_facts" in names
    assert before.structured_content["answers"] == []
    assert added.structured_content["added"] == 1 and added.structured_content["persisted"] is False
    assert "request:1" in error_text(bad)
    assert after.structured_content["answers"] == ["Ada Lovelace"]


def test_concurrent_questions_are_bounded_by_the_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one worker and a queue of two, five questions at once to a slow LLM: two are answered, the rest
    are refused at once as Busy (never queued without bound, never a crash)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
    from stubs import llm_stub

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")
    settings = ServiceSettings(queue_limit=2, method_workers=1, request_timeout_s=30)
    with llm_stub() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/slow/v1")
        server = build_server(build_state(None, "llm_only", "openai:gpt-4o-mini", settings=settings))

        async def body(c: Client) -> list[Any]:
            calls = [c.call_tool("ask", {"question": f"{QUESTION} ({i})"}) for i in range(5)]
            return list(await asyncio.gather(*calls))

        results = run(body, server)
    answered = [r for r in results if not r.is_error]
    busy = [error_text(r) for r in results if r.is_error]
    assert len(answered) == 2 and all(r.structured_content["answers"] == ["Barack Obama"] for r in answered)
    assert len(busy) == 3 and all("Busy" in text and "already waiting" in text for text in busy)


def test_stdio_subprocess_as_an_agent_starts_it(tmp_path: Path) -> None:
    """``python -m tkgqa mcp`` over stdio: lists the tools, answers with the evidence fact, and the same
    question as of October 2014 gets no answer."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tkgqa", "mcp"], env=env, cwd=tmp_path)

    async def body(c: Client) -> tuple[Any, Any, Any]:
        tools = await c.list_tools()
        return (
            tools,
            await c.call_tool("ask", {"question": QUESTION}),
            await c.call_tool("ask", {"question": QUESTION, "as_of": "2014-10"}),
        )

    tools, answered, before = run(body, params)
    assert {t.name for t in tools.tools} == TOOLS
    assert_obama_with_evidence(answered)
    assert_no_answer_before_the_visit(before)


def test_http_transport_behind_the_service_guard() -> None:
    """``--http``: the MCP endpoint answers over loopback; a foreign Host is refused (DNS rebinding) and, with
    a token, a request without it gets 401 — the same guard as ``tkgqa serve``."""
    import threading
    import time
    import urllib.error
    import urllib.request

    import uvicorn

    from tkgqa.mcp_server.http import MCP_PATH, http_app
    from tkgqa.service.guard import allowed_hosts

    token = "t" * 24
    settings = ServiceSettings(api_token=token, allowed_hosts=allowed_hosts("127.0.0.1"))
    app = http_app(build_server(build_state(None, settings=settings)), settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}{MCP_PATH}"
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()

    def status(headers: dict[str, str]) -> tuple[int, str]:
        request = urllib.request.Request(
            url, data=hello, headers={"Content-Type": "application/json", **headers}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as res:
                return res.status, res.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    try:
        assert status({"Host": "evil.example"})[0] == 400
        code, body = status({})
        assert code == 401 and "API token" in body
        assert status({"Authorization": "Bearer wrong-token-of-some-length"})[0] == 401
        assert status({"Authorization": f"Bearer {token}", "Content-Length": str(10**6)})[0] == 413
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_progress_notifications_name_the_model_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a question waits on a model load, a client that asked for progress is told which model."""
    import tkgqa.mcp_server.server as mcp_module

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
    from stubs import llm_stub

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("TKGQA_LLM_RETRIES", "0")
    monkeypatch.setattr(mcp_module, "loading_now", lambda: [{"what": "MiniLM (sentence-transformers)"}])
    seen: list[str | None] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with llm_stub() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/slow/v1")
        server = build_server(build_state(None, "llm_only", "openai:gpt-4o-mini"))
        result = run(lambda c: c.call_tool("ask", {"question": QUESTION}, progress_callback=progress), server)
    assert not result.is_error and result.structured_content["answers"] == ["Barack Obama"]
    assert any(m and m.startswith("loading MiniLM (sentence-transformers)…") for m in seen), seen
