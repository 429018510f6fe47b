"""``openai:<model>``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp).

Talks HTTP with ``httpx`` (no ``openai`` package needed). The base URL and API key come from the
arguments or from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, read at each call. The key is only ever put
in the ``Authorization`` header: it is not logged, not part of the cache key and redacted from errors. The
base URL is checked before use (:func:`check_base_url`: http(s), a host, no ``user:password``, no query).

Timeouts and retries are settings: the ``timeout``/``max_retries`` arguments, else this process's
:class:`LLMSettings` (the CLI's ``--llm-timeout``/``--llm-retries``, installed by :func:`use_llm_settings`),
else the environment variables ``TKGQA_LLM_TIMEOUT`` (seconds per attempt, default :data:`DEFAULT_TIMEOUT_S`)
and ``TKGQA_LLM_RETRIES`` (retries after the first attempt, default :data:`DEFAULT_RETRIES`), read at each
call. Nothing here writes the environment: a worker process (Ray) gets the settings as its own environment
(:meth:`LLMSettings.as_env`). The timeout is one *total*
deadline per attempt: connecting, sending and every byte of the reply (a server that dribbles a byte a second
is cut off like one that says nothing; :func:`post_within`). One stalled call costs at most about
``timeout × (retries + 1)`` plus the back-off between attempts (≤ ``backoff_max`` each).

The reply is read as UTF-8 with U+FFFD for bytes that are not (a torn character is not an error), lone
surrogates (a ``\ud800`` escape in the JSON) are made UTF-8-safe, and ``usage`` is read by type
(:func:`token_count`): a count that is not a whole number in range (``"lots"``, ``"abc"``, ``1e308``, ``-5``,
``true``) is recorded as absent (estimated locally, with a warning in the log) — never an exception.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..credentials import redact_text, without_secrets
from ..errors import ConfigError, ContextWindowError, LLMError, ParseError, RateLimitError
from ..registry import install_hint
from ..sanitize import clean_text
from ..usage import Usage
from .base import LLM_BACKENDS, LLMBackend, LLMRequest, LLMResponse, with_choice_instruction
from .parsing import extract_choice
from .tokens import count_message_tokens, count_tokens

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Seconds per attempt (at most 10 s of it to connect) unless ``timeout=`` or ``TKGQA_LLM_TIMEOUT``.
DEFAULT_TIMEOUT_S = 60.0
#: Retries after a retryable failure (429, 5xx, timeout) unless ``max_retries=`` or ``TKGQA_LLM_RETRIES``.
DEFAULT_RETRIES = 4
TIMEOUT_ENV = "TKGQA_LLM_TIMEOUT"
RETRIES_ENV = "TKGQA_LLM_RETRIES"
MAX_TIMEOUT_S = 3600.0
MAX_RETRIES = 20
#: The largest reply body read; a server sending more gets an LLMError.
MAX_REPLY_BYTES = 32 * 1024 * 1024
#: The largest token count taken from a reply's ``usage``; beyond it the count is treated as absent.
MAX_USAGE_TOKENS = 10**9
_CONTEXT_MARKERS = (
    "maximum context length",
    "context length",
    "context_length",
    "context window",
    "too long",
)
_GUIDED_MODES = (None, "vllm", "llamacpp")
#: What to do about an HTTP error status (appended to the LLMError's message).
_STATUS_HINTS = {
    401: "check OPENAI_API_KEY",
    403: "the API key may not use this model or endpoint",
    404: "check the model name and OPENAI_BASE_URL",
}


def _sanitize_url(url: str) -> str:
    """Drop credentials, query and fragment from a URL and mask a key-shaped path segment (for cache keys,
    run descriptions and messages; :func:`~tkgqa.credentials.redact_text`)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, redact_text(parts.path.rstrip("/")), "", ""))


def check_timeout(value: float | str, source: str = "--llm-timeout") -> float:
    """``value`` as seconds in (0, :data:`MAX_TIMEOUT_S`]; ConfigError naming ``source`` otherwise."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not 0 < seconds <= MAX_TIMEOUT_S:  # also false for nan
        raise ConfigError(f"{source} must be a number of seconds in (0, {MAX_TIMEOUT_S:.0f}]; got {value!r}")
    return seconds


def check_retries(value: int | str, source: str = "--llm-retries") -> int:
    """``value`` as a retry count in [0, :data:`MAX_RETRIES`]; ConfigError naming ``source`` otherwise."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = -1
    if not 0 <= count <= MAX_RETRIES or isinstance(value, bool):
        raise ConfigError(f"{source} must be a whole number in [0, {MAX_RETRIES}]; got {value!r}")
    return count


@dataclass(frozen=True)
class LLMSettings:
    """The HTTP backends' timeout per attempt and retry count for this process; ``None``: the environment
    variable (``TKGQA_LLM_TIMEOUT``/``TKGQA_LLM_RETRIES``), else the default. Checked at construction."""

    timeout: float | None = None
    retries: int | None = None

    def __post_init__(self) -> None:
        if self.timeout is not None:
            object.__setattr__(self, "timeout", check_timeout(self.timeout))
        if self.retries is not None:
            object.__setattr__(self, "retries", check_retries(self.retries))

    def as_env(self) -> dict[str, str]:
        """The settings given, as the environment of a worker process (which reads them as its default)."""
        env = {TIMEOUT_ENV: repr(self.timeout)} if self.timeout is not None else {}
        if self.retries is not None:
            env[RETRIES_ENV] = str(self.retries)
        return env


_settings = LLMSettings()


def use_llm_settings(settings: LLMSettings) -> LLMSettings:
    """Install ``settings`` for this process (every backend called afterwards reads them); returns the
    previous ones, so a caller can restore them."""
    global _settings
    previous, _settings = _settings, settings
    return previous


def llm_settings() -> LLMSettings:
    """This process's settings (:func:`use_llm_settings`)."""
    return _settings


def llm_timeout() -> float:
    """The timeout per attempt: the installed :class:`LLMSettings`, else ``$TKGQA_LLM_TIMEOUT`` (read now),
    else :data:`DEFAULT_TIMEOUT_S`."""
    if _settings.timeout is not None:
        return _settings.timeout
    env = os.environ.get(TIMEOUT_ENV)
    return check_timeout(env, TIMEOUT_ENV) if env else DEFAULT_TIMEOUT_S


def llm_retries() -> int:
    """The retry count: the installed :class:`LLMSettings`, else ``$TKGQA_LLM_RETRIES`` (read now), else
    :data:`DEFAULT_RETRIES`."""
    if _settings.retries is not None:
        return _settings.retries
    env = os.environ.get(RETRIES_ENV)
    return check_retries(env, RETRIES_ENV) if env else DEFAULT_RETRIES


def apply_llm_settings(timeout: float | None = None, retries: int | None = None) -> LLMSettings:
    """The CLI's ``--llm-timeout``/``--llm-retries`` as this process's :class:`LLMSettings` (checked first:
    a bad value is a ConfigError and changes nothing); ``None`` keeps the current value of that one."""
    current = llm_settings()
    settings = LLMSettings(
        current.timeout if timeout is None else timeout, current.retries if retries is None else retries
    )
    use_llm_settings(settings)
    return settings


def check_base_url(url: str, source: str = "OPENAI_BASE_URL") -> str:
    """``url`` without a trailing slash if it can take the API path; else a ConfigError saying what is
    wrong (never echoing a password): http(s) only, a host, a valid port, no ``user:password`` (the key
    goes in ``OPENAI_API_KEY``), no ``?query`` or ``#fragment``, no spaces."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{source} is not a valid URL ({exc}); use e.g. http://127.0.0.1:8080/v1") from None
    shown = _sanitize_url(url) if parts.hostname else "(no host)"
    problem = ""
    if parts.scheme not in ("http", "https"):
        problem = "it must start with http:// or https://"
    elif not parts.hostname:
        problem = "it has no host"
    elif parts.username is not None or parts.password is not None:
        problem = "it holds user:password; put the API key in OPENAI_API_KEY instead"
    elif parts.query or parts.fragment or "?" in url or "#" in url:
        problem = "it has a ?query or #fragment, which cannot be combined with the API path; drop it"
    elif any(c.isspace() or ord(c) < 32 for c in url):
        problem = "it contains spaces or control characters"
    elif port == 0:
        problem = "port 0 is not a port"
    if problem:
        raise ConfigError(f"{source} {shown!r} cannot be used: {problem} (e.g. https://api.openai.com/v1)")
    return url.rstrip("/")


@dataclass(frozen=True)
class HTTPReply:
    """A whole HTTP reply: status, headers and body (read within the attempt's deadline)."""

    status: int
    headers: Mapping[str, str]
    content: bytes
    url: str

    @property
    def text(self) -> str:
        """The body as UTF-8, U+FFFD in place of bytes that are not."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body parsed as JSON (a leading BOM ignored; torn UTF-8 read with U+FFFD); ValueError if it
        is not JSON (RecursionError for absurd nesting)."""
        return json.loads(self.text.removeprefix("\ufeff"))


class _Exchange:
    """One POST on its own thread, so the caller can stop waiting at a deadline (see :func:`post_within`)."""

    def __init__(self, client: Any, url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        self.client = client
        self.args = (url, body, headers)
        self.reply: HTTPReply | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.expired = False

    def run(self) -> None:
        url, body, headers = self.args
        try:
            with self.client.stream("POST", url, json=body, headers=headers) as resp:
                chunks: list[bytes] = []
                size = 0
                for chunk in resp.iter_bytes():
                    if self.expired:
                        return
                    size += len(chunk)
                    if size > MAX_REPLY_BYTES:
                        raise LLMError(
                            f"the reply from {_sanitize_url(url)} is over {MAX_REPLY_BYTES:,} bytes"
                        )
                    chunks.append(chunk)
                self.reply = HTTPReply(
                    resp.status_code, resp.headers, b"".join(chunks), str(resp.request.url)
                )
        except BaseException as exc:  # handed to the caller (ignored once it stopped waiting)
            self.error = exc
        finally:
            self.done.set()


def post_within(
    client: Any, url: str, body: dict[str, Any], headers: dict[str, str], seconds: float
) -> HTTPReply:
    """POST ``body`` and read the whole reply within ``seconds`` in total (connect, send, every byte).

    The exchange runs on a daemon thread; the caller waits at most ``seconds`` and then gets a retryable
    LLMError while the client is closed under the exchange, which ends at its next read (each read is
    bounded by ``seconds`` too). So a reply dribbled a byte a second, a stalled name lookup or a server
    that never answers all end the attempt on time and free the calling thread. Transport errors are
    raised as they are (the caller maps them)."""
    exchange = _Exchange(client, url, body, headers)
    thread = threading.Thread(target=exchange.run, name="tkgqa-llm-http", daemon=True)
    thread.start()
    if not exchange.done.wait(seconds):
        exchange.expired = True
        try:
            client.close()
        except Exception:  # closing under a running exchange: best effort, the deadline already holds
            log.debug("closing the HTTP client after the deadline failed", exc_info=True)
        raise LLMError(
            f"no complete reply from {_sanitize_url(url)} within {seconds:g} s (the LLM timeout is the "
            f"total per attempt: --llm-timeout / ${TIMEOUT_ENV})",
            retryable=True,
        )
    if exchange.error is not None:
        raise exchange.error
    assert exchange.reply is not None
    return exchange.reply


def token_count(value: Any, field: str) -> int | None:
    """A ``usage`` token count as an int in [0, :data:`MAX_USAGE_TOKENS`]; ``None`` (absent) for anything
    else — a string, a bool, a fraction, ``1e308``, a negative number — with a warning naming it."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS:
        return value
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_USAGE_TOKENS:
        return int(value)
    log.warning(
        "the LLM reply's usage.%s is not a token count (%s); estimated locally", field, repr(value)[:40]
    )
    return None


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
        timeout: float | None = None,
        max_retries: int | None = None,
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
        self.timeout = check_timeout(timeout, "timeout") if timeout is not None else None
        self.max_retries = check_retries(max_retries, "max_retries") if max_retries is not None else None
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

    def attempt_timeout(self) -> float:
        """Seconds per attempt: the ``timeout`` argument, else :func:`llm_timeout`."""
        return self.timeout if self.timeout is not None else llm_timeout()

    def retries(self) -> int:
        """Retries after the first attempt: ``max_retries``, else :func:`llm_retries`."""
        return self.max_retries if self.max_retries is not None else llm_retries()

    def endpoint(self) -> str:
        source = "base_url" if self._base_url else "OPENAI_BASE_URL"
        base = check_base_url(self.base_url, source)
        return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"

    def cache_namespace(self) -> str:
        """Model, endpoint (without credentials, query or fragment) and whatever this backend adds to every
        body: the guided-decoding mode and ``extra_body`` (credential fields dropped)."""
        namespace = f"openai:{self.model_id}@{_sanitize_url(self.base_url)}"
        if self.guided is not None:
            namespace += f";guided={self.guided}"
        if self.extra_body:
            body = json.dumps(
                without_secrets(self.extra_body), sort_keys=True, ensure_ascii=False, default=str
            )
            namespace += f";extra_body={body}"
        return namespace

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
        try:
            import httpx
        except ModuleNotFoundError as exc:
            raise ConfigError(f"the openai backend needs httpx: {install_hint('httpx')}") from exc

        key = self._api_key()
        if not key and not self._base_url and not os.environ.get("OPENAI_BASE_URL"):
            raise ConfigError(
                f"openai:{self.model_id} has no API key and no base URL: set OPENAI_API_KEY to use the "
                "public OpenAI API, or OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1) for a local "
                "OpenAI-compatible server (llama.cpp, vLLM, Ollama); nothing was sent"
            )
        body = self.build_body(request)
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.endpoint()
        start = time.perf_counter()
        data = self._post_with_retries(httpx, url, body, headers)
        latency = time.perf_counter() - start
        return self._to_response(request, data, latency)

    def _attempt(self, httpx: Any, url: str, body: dict[str, Any], headers: dict[str, str]) -> HTTPReply:
        """One attempt on a fresh client, within the attempt's total deadline (:func:`post_within`)."""
        seconds = self.attempt_timeout()
        client = httpx.Client(timeout=httpx.Timeout(seconds, connect=min(10.0, seconds)))
        try:
            return post_within(client, url, body, headers, seconds)
        finally:
            client.close()

    def _post_with_retries(
        self, httpx: Any, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        max_retries = self.retries()
        for attempt in range(max_retries + 1):
            retry_after: float | None = None
            try:
                resp = self._attempt(httpx, url, body, headers)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                error: LLMError = LLMError(
                    f"{type(exc).__name__} calling {_sanitize_url(url)}: {self._redact(str(exc))}",
                    retryable=True,
                )
            except LLMError as exc:
                error = exc
            else:
                if resp.status < 400:
                    try:
                        data = resp.json()
                    except (ValueError, RecursionError) as exc:
                        shown = clean_text(resp.text[:200])
                        raise LLMError(f"non-JSON reply from {_sanitize_url(url)}: {shown!r}") from exc
                    if not isinstance(data, dict):
                        raise LLMError(f"reply from {_sanitize_url(url)} is a JSON {type(data).__name__}")
                    return data
                error = self._http_error(resp.status, resp)
                retry_after = _retry_after(resp.headers.get("retry-after"))
            if not error.retryable or attempt == max_retries:
                if attempt:
                    error.args = (f"{error} (gave up after {attempt + 1} attempts)",)
                raise error
            delay = min(self.backoff_max, self.backoff_base * 2**attempt) * (0.5 + self._rng.random() / 2)
            if retry_after is not None:
                delay = min(self.backoff_max, max(delay, retry_after))
            log.warning("LLM call failed (%s); retry %d/%d in %.2fs", error, attempt + 1, max_retries, delay)
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _http_error(self, status: int, resp: HTTPReply) -> LLMError:
        message = self._redact(_server_message(resp))
        text = f"HTTP {status} from {_sanitize_url(resp.url)}: {message}"
        hint = _STATUS_HINTS.get(status) or ("the server failed; try again later" if status >= 500 else "")
        if hint:
            text += f" ({hint})"
        if status == 429:
            return RateLimitError(text)
        if status in (400, 413, 422) and any(m in message.lower() for m in _CONTEXT_MARKERS):
            return ContextWindowError(text)
        return LLMError(text, retryable=status >= 500 or status == 408)

    def _redact(self, text: str) -> str:
        key = self._api_key()
        return redact_text(text.replace(key, "***") if key else text)

    def _to_response(self, request: LLMRequest, data: dict[str, Any], latency: float) -> LLMResponse:
        try:
            text = clean_text(str(data["choices"][0]["message"].get("content") or ""))
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(f"unexpected reply shape (no choices[0].message): {str(data)[:200]}") from exc
        raw_usage = data.get("usage")
        if not isinstance(raw_usage, dict):
            if raw_usage is not None:
                log.warning(
                    "the LLM reply's usage is not an object (%s); estimated locally", repr(raw_usage)[:40]
                )
            raw_usage = {}
        prompt = token_count(raw_usage.get("prompt_tokens"), "prompt_tokens")
        completion = token_count(raw_usage.get("completion_tokens"), "completion_tokens")
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
                    "the reply is not one of the choices", raw=text, expected=exc.expected, usage=usage
                ) from exc
        return LLMResponse(
            text=text,
            usage=usage,
            latency_s=latency,
            model=clean_text(str(data.get("model") or self.model_id)),
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend(model_id={self.model_id!r}, base_url={_sanitize_url(self.base_url)!r})"


def _server_message(resp: HTTPReply) -> str:
    try:
        data = resp.json()
    except (ValueError, RecursionError):
        return clean_text(resp.text[:500]) or _reason_phrase(resp.status)
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or err)[:500]
        return str(err)[:500]
    return str(data)[:500]


def _reason_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "unknown status"


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
