"""``openai:<model>``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp).

Talks HTTP with ``httpx`` (no ``openai`` package needed). The base URL and API key come from the
arguments or from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, read at each call. The key is only ever put
in the ``Authorization`` header: it is not logged, not part of the cache key and redacted from errors.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError, ContextWindowError, LLMError, ParseError, RateLimitError
from .base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse, Usage, with_choice_instruction
from .parsing import extract_choice
from .tokens import count_message_tokens, count_tokens

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_CONTEXT_MARKERS = (
    "maximum context length",
    "context length",
    "context_length",
    "context window",
    "too long",
)
_GUIDED_MODES = (None, "vllm", "llamacpp")


def _sanitize_url(url: str) -> str:
    """Drop credentials, query and fragment from a URL (for cache keys and messages)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


@LLM_BACKENDS.register("openai")
class OpenAIBackend(LLMBackend):
    """Chat completions over HTTP with timeouts and bounded, jittered exponential-backoff retries.

    ``guided`` opts into server-side constraints that plain OpenAI rejects: ``"vllm"`` sends
    ``guided_choice``/``guided_grammar``; ``"llamacpp"`` sends ``grammar`` (choices become a GBNF grammar).
    Without it, choices are enforced by the prompt plus validation (:func:`extract_choice`).
    """

    name = "openai"

    def __init__(
        self,
        spec: str | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        guided: str | None = None,
        extra_body: dict[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        model = model or spec
        if not model:
            raise ConfigError("openai backend needs a model, e.g. 'openai:gpt-4o-mini'")
        if guided not in _GUIDED_MODES:
            raise ConfigError(f"guided must be one of {_GUIDED_MODES}, got {guided!r}")
        self.model_id = model
        self._base_url = base_url
        self.__api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.guided = guided
        self.extra_body = dict(extra_body or {})
        self._sleep = sleep
        self._rng = random.Random()

    @property
    def base_url(self) -> str:
        return (self._base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")

    def _api_key(self) -> str | None:
        return self.__api_key or os.environ.get("OPENAI_API_KEY") or None

    def endpoint(self) -> str:
        base = self.base_url
        return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"

    def cache_namespace(self) -> str:
        return f"openai:{self.model_id}@{_sanitize_url(self.base_url)}"

    def build_body(self, request: LLMRequest) -> dict[str, Any]:
        """The JSON body for ``request`` (no credentials in it)."""
        messages = list(request.messages)
        if request.choices:
            messages = with_choice_instruction(messages, request.choices)
        body: dict[str, Any] = {
            "model": request.model or self.model_id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.stop:
            body["stop"] = list(request.stop)
        if request.seed is not None:
            body["seed"] = request.seed
        if request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.json_schema},
            }
        if self.guided == "vllm":
            if request.choices:
                body["guided_choice"] = list(request.choices)
            elif request.grammar:
                body["guided_grammar"] = request.grammar
        elif self.guided == "llamacpp":
            from .llamacpp_backend import choice_grammar

            grammar = choice_grammar(request.choices) if request.choices else request.grammar
            if grammar:
                body["grammar"] = grammar
        body.update(self.extra_body)
        body.update(request.extra)
        return body

    def complete(self, request: LLMRequest) -> LLMResponse:
        import httpx

        body = self.build_body(request)
        headers = {"Content-Type": "application/json"}
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.endpoint()
        start = time.perf_counter()
        timeout = httpx.Timeout(self.timeout, connect=min(10.0, self.timeout))
        with httpx.Client(timeout=timeout) as client:
            data = self._post_with_retries(client, url, body, headers)
        latency = time.perf_counter() - start
        return self._to_response(request, data, latency)

    def _post_with_retries(
        self, client: Any, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        import httpx

        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            try:
                resp = client.post(url, json=body, headers=headers)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                error: LLMError = LLMError(
                    f"{type(exc).__name__} calling {_sanitize_url(url)}: {self._redact(str(exc))}",
                    retryable=True,
                )
            else:
                if resp.status_code < 400:
                    try:
                        return dict(resp.json())
                    except ValueError as exc:
                        raise LLMError(
                            f"non-JSON reply from {_sanitize_url(url)}: {resp.text[:200]!r}"
                        ) from exc
                error = self._http_error(resp.status_code, resp)
                retry_after = _retry_after(resp.headers.get("retry-after"))
            if not error.retryable or attempt == self.max_retries:
                raise error
            delay = min(self.backoff_max, self.backoff_base * 2**attempt) * (0.5 + self._rng.random() / 2)
            if retry_after is not None:
                delay = min(self.backoff_max, max(delay, retry_after))
            log.warning(
                "LLM call failed (%s); retry %d/%d in %.2fs", error, attempt + 1, self.max_retries, delay
            )
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _http_error(self, status: int, resp: Any) -> LLMError:
        message = self._redact(_server_message(resp))
        text = f"HTTP {status} from {_sanitize_url(str(resp.request.url))}: {message}"
        if status == 429:
            return RateLimitError(text)
        if status in (400, 413, 422) and any(m in message.lower() for m in _CONTEXT_MARKERS):
            return ContextWindowError(text)
        return LLMError(text, retryable=status >= 500 or status == 408)

    def _redact(self, text: str) -> str:
        key = self._api_key()
        return text.replace(key, "***") if key else text

    def _to_response(self, request: LLMRequest, data: dict[str, Any], latency: float) -> LLMResponse:
        try:
            text = data["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(f"unexpected reply shape (no choices[0].message): {str(data)[:200]}") from exc
        raw_usage = data.get("usage") or {}
        prompt = raw_usage.get("prompt_tokens")
        completion = raw_usage.get("completion_tokens")
        usage = Usage(
            prompt_tokens=prompt if prompt is not None else count_message_tokens(request.messages),
            completion_tokens=completion if completion is not None else count_tokens(text),
            calls=1,
        )
        if request.choices:
            try:
                text = extract_choice(text, request.choices)
            except ParseError as exc:
                raise ParseError(
                    "the reply is not one of the choices", raw=text, expected=exc.expected
                ) from exc
        return LLMResponse(
            text=text, usage=usage, latency_s=latency, model=data.get("model") or self.model_id
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend(model_id={self.model_id!r}, base_url={_sanitize_url(self.base_url)!r})"


def _server_message(resp: Any) -> str:
    try:
        data = resp.json()
    except ValueError:
        return str(resp.text)[:500] or resp.reason_phrase
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or err)[:500]
        return str(err)[:500]
    return str(data)[:500]


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
