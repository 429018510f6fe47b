"""``replay:FILE.jsonl``: an LLM backend that answers from recorded replies (a *cassette*), offline.
``replay:NAME`` with a recording's catalogue name (``tkgqa data list``) reads its cassette in the data root.

A cassette is JSON lines. An optional first line, the header, says what was recorded::

    {"tkgqa_cassette": 1, "tkgqa_version": "0.1.0", "backend": "openai", "model": "gpt-4o-mini",
     "settings": {...}, "method": {...}}

Every other line is one recorded reply (unknown fields are ignored):

* ``{"prompt": TEXT, "response": TEXT}`` or ``{"messages": [{"role", "content"}…], "response": TEXT}``
  matches a request whose prompt is the same up to whitespace (runs of whitespace read as one space; a
  ``prompt`` is compared with the request's messages' contents joined) — counted as ``exact``;
* ``{"id": QID, "stage": STAGE, "response": TEXT}`` (or ``{"id", "response"}`` for a single-stage method)
  — a line *without* a prompt — matches a request made for that question id and stage (the
  :func:`~tkgqa.llm.cache.llm_context` tags) — counted as ``by_id``. Several lines of one question and stage
  answer its requests in order; the last one answers any further request of that question and stage. A line
  without ``stage`` answers a request of any stage of its question.
* A line *with* a prompt is matched by its prompt only: a request whose prompt differs is a miss, never
  answered by the question id (that would hand a reply to a prompt that was never sent). The one exception
  is a parse re-ask (:func:`~tkgqa.llm.parsing.complete_parsed`: the recorded exchange, the recorded reply as
  the assistant turn, then the request to answer again): it gets the same recorded reply, as the model would
  re-read its own answer at temperature 0 — counted as ``reask``. Matching any line by id as a fallback is
  opt-in: ``replay:FILE.jsonl?by_id=any`` (counted as ``by_id``).
* optional ``usage``: ``{"prompt_tokens", "completion_tokens"}`` as recorded (else counted offline).

A request that matches nothing raises :class:`~tkgqa.errors.ReplayMiss` (an LLM error, not retried), so an
evaluation records an error row, never an abstention. ``Answer.usage`` and ``report.json`` count the four
outcomes (``replay: {exact, by_id, reask, miss}``). Replies are never cached (they come from the file) and
cost 0.

:func:`cassette_header` and :func:`cassette_line` build what ``tkgqa eval --record`` and
``tkgqa llm export`` write (:mod:`tkgqa.eval.record`), with credentials removed by the rule of the cache
key (:func:`~tkgqa.credentials.without_secrets`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..credentials import redact, without_secrets
from ..errors import ConfigError, DataError, ReplayMiss
from ..usage import Usage
from ..userfiles import parse_json, read_input
from .base import LLMBackend, LLMRequest, LLMResponse, Message
from .cache import current_llm_context
from .tokens import count_message_tokens, count_tokens

#: The header line's marker key and the format version it carries.
HEADER_KEY = "tkgqa_cassette"
CASSETTE_VERSION = 1
_ROLES = ("system", "user", "assistant")


def normalize_ws(text: str) -> str:
    """``text`` with every run of whitespace read as one space, trimmed: how prompts are compared."""
    return " ".join(text.split())


def prompt_key(messages: Sequence[Message]) -> str:
    """A request's prompt as compared with a recorded ``prompt``: its contents, whitespace-normalised."""
    return normalize_ws(" ".join(m.content for m in messages))


def messages_key(messages: Sequence[Message]) -> tuple[tuple[str, str], ...]:
    """A request's messages as compared with recorded ``messages``: (role, whitespace-normalised content)."""
    return tuple((m.role, normalize_ws(m.content)) for m in messages)


@dataclass(frozen=True)
class Recorded:
    """One recorded reply: its text, where it is (``line``) and what it matches."""

    response: str
    line: int
    qid: str | None = None
    stage: str | None = None
    prompt: str | None = None
    messages: tuple[tuple[str, str], ...] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class Cassette:
    """A cassette read and checked: its header (``{}`` when it has none) and its replies in file order."""

    path: Path
    header: Mapping[str, Any]
    entries: tuple[Recorded, ...]
    digest: str


def _fail(path: Path, line: int, message: str) -> DataError:
    return DataError(
        f"{message}; a cassette line is a JSON object with 'response' (text) and 'prompt', 'messages' or "
        "'id' (see `tkgqa llm export`)",
        path=str(path),
        line=line,
    )


def _messages(value: Any, path: Path, line: int) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise _fail(path, line, "'messages' must be a non-empty list of {role, content} objects")
    out: list[tuple[str, str]] = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or m.get("role") not in _ROLES or not isinstance(m.get("content"), str):
            raise _fail(
                path, line, f"'messages'[{i}] must be {{'role': system|user|assistant, 'content': text}}"
            )
        out.append((m["role"], normalize_ws(m["content"])))
    return tuple(out)


def _tokens(value: Any, path: Path, line: int) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise _fail(path, line, "'usage' must be an object {prompt_tokens, completion_tokens}")
    found: list[int | None] = []
    for key in ("prompt_tokens", "completion_tokens"):
        n = value.get(key)
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise _fail(path, line, f"'usage.{key}' must be a non-negative integer, got {n!r}")
        found.append(n)
    return found[0], found[1]


def parse_entry(data: Any, path: Path, line: int) -> Recorded:
    """One cassette line (already JSON-decoded) → :class:`Recorded`; DataError naming ``path:line``."""
    if not isinstance(data, dict):
        raise _fail(path, line, f"expected a JSON object, got {type(data).__name__}")
    response = data.get("response")
    if not isinstance(response, str):
        raise _fail(path, line, "'response' must be the recorded reply text (a string)")
    qid = data.get("id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, str | int)):
        raise _fail(path, line, f"'id' must be a question id (string or integer), got {qid!r}")
    stage = data.get("stage")
    if stage is not None and not isinstance(stage, str):
        raise _fail(path, line, f"'stage' must be a string, got {stage!r}")
    prompt = data.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise _fail(path, line, "'prompt' must be the prompt text (a string)")
    messages = _messages(data["messages"], path, line) if data.get("messages") is not None else None
    if prompt is None and messages is None and qid is None:
        raise _fail(
            path, line, "the line has none of 'prompt', 'messages', 'id': nothing to match a request by"
        )
    p_tokens, c_tokens = _tokens(data.get("usage"), path, line)
    return Recorded(
        response=response,
        line=line,
        qid=None if qid is None else str(qid),
        stage=stage,
        prompt=None if prompt is None else normalize_ws(prompt),
        messages=messages,
        prompt_tokens=p_tokens,
        completion_tokens=c_tokens,
    )


def read_cassette(path: str | Path) -> Cassette:
    """Read and check a cassette; DataError naming ``file:line`` for a malformed line, an empty file."""
    p = Path(path).expanduser()
    try:  # a regular file only (a FIFO or /dev/zero is refused at once), size-capped
        data = read_input(p, what="the cassette")
    except ConfigError as exc:
        raise ConfigError(
            f"{exc}; pass --llm replay:FILE.jsonl with a file written by `tkgqa eval --record` or "
            "`tkgqa llm export`"
        ) from None
    header: dict[str, Any] = {}
    entries: list[Recorded] = []
    for lineno, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            item = parse_json(raw)
        except ValueError as exc:
            raise _fail(p, lineno, f"not a JSON line ({exc})") from None
        if isinstance(item, dict) and HEADER_KEY in item:
            if header or entries:
                raise _fail(p, lineno, f"a header line ({HEADER_KEY!r}) may only be the first line")
            header = item
            continue
        entries.append(parse_entry(item, p, lineno))
    if not entries:
        raise DataError("the cassette holds no recorded reply", path=str(p))
    return Cassette(p, header, tuple(entries), hashlib.sha256(data).hexdigest())


#: The option that lets any line answer by question id and stage (``replay:FILE.jsonl?by_id=any``).
BY_ID_ANY = "?by_id=any"


def split_replay_spec(source: str | Path) -> tuple[str | Path, bool]:
    """``(the cassette, whether any line may answer by question id)`` of a ``replay:`` spec's argument."""
    text = str(source)
    if text.endswith(BY_ID_ANY):
        return text[: -len(BY_ID_ANY)], True
    return source, False


def cassette_path(source: str | Path) -> Path:
    """``source`` as a file; a recording's catalogue name that is not a file here (``timer4-chatgpt``) is
    that recording's cassette under the data root (NotFoundError naming ``tkgqa data fetch NAME`` when it
    has not been fetched)."""
    path = Path(source).expanduser()
    if isinstance(source, str) and not path.exists():
        from ..datasets.sources.catalogue import recording_path

        found = recording_path(source)
        if found is not None:
            return found
    return path


class ReplayLLM(LLMBackend):
    """Answers from a cassette (see the module docstring). ``spec``: the file (``replay:FILE.jsonl``, with
    ``?by_id=any`` to let every line answer by question id and stage when its prompt does not match)."""

    name = "replay"
    cacheable = False

    def __init__(
        self, spec: str | None = None, *, path: str | Path | None = None, by_id_any: bool = False
    ) -> None:
        source = path if path is not None else spec
        if not source:
            raise ConfigError("the replay backend needs a cassette: --llm replay:FILE.jsonl")
        source, opted = split_replay_spec(source)
        self.by_id_any = by_id_any or opted
        self.cassette = read_cassette(cassette_path(source))
        self.model_id = str(self.cassette.header.get("model") or self.cassette.path.name)
        self._by_messages: dict[tuple[tuple[str, str], ...], Recorded] = {}
        self._by_prompt: dict[str, Recorded] = {}
        self._by_id: dict[str, list[Recorded]] = {}
        for e in self.cassette.entries:
            if e.messages is not None:
                self._by_messages.setdefault(e.messages, e)
            if e.prompt is not None:
                self._by_prompt.setdefault(e.prompt, e)
            has_prompt = e.messages is not None or e.prompt is not None
            if e.qid is not None and (self.by_id_any or not has_prompt):
                self._by_id.setdefault(e.qid, []).append(e)
        self._served: dict[tuple[str, str | None], int] = {}
        self._lock = threading.Lock()

    def cache_namespace(self) -> str:
        """The file and its content hash: what a run report names as its LLM."""
        return f"replay:{self.cassette.path}#{self.cassette.digest[:12]}"

    def _by_question(self, qid: str, stage: str | None) -> Recorded | None:
        lines = self._by_id.get(qid, [])
        staged = [e for e in lines if e.stage is not None and e.stage == stage]
        candidates = staged or [e for e in lines if e.stage is None]
        if not candidates:
            return None
        with self._lock:
            n = self._served.get((qid, stage), 0)
            self._served[(qid, stage)] = n + 1
        return candidates[min(n, len(candidates) - 1)]

    def _exact(self, messages: Sequence[Message]) -> Recorded | None:
        hit = self._by_messages.get(messages_key(messages))
        return hit if hit is not None else self._by_prompt.get(prompt_key(messages))

    def _reask(self, messages: Sequence[Message]) -> Recorded | None:
        """The recorded reply a parse re-ask repeats: ``messages`` end with that reply (the assistant turn)
        and a user turn, and what precedes them is a recorded prompt (or itself such a re-ask)."""
        if len(messages) < 3 or messages[-2].role != "assistant" or messages[-1].role != "user":
            return None
        head = messages[:-2]
        asked = self._exact(head) or self._reask(head)
        if asked is not None and normalize_ws(asked.response) == normalize_ws(messages[-2].content):
            return asked
        return None

    def find(self, request: LLMRequest) -> tuple[Recorded, str] | None:
        """The recorded reply for ``request`` and how it was found (``exact``, ``reask``, ``by_id``), or
        ``None``."""
        hit = self._exact(request.messages)
        if hit is not None:
            return hit, "exact"
        again = self._reask(request.messages)
        if again is not None:
            return again, "reask"
        ctx = current_llm_context()
        qid = ctx.get("question_id")
        if qid is not None:
            found = self._by_question(str(qid), ctx.get("stage"))
            if found is not None:
                return found, "by_id"
        return None

    def complete(self, request: LLMRequest) -> LLMResponse:
        found = self.find(request)
        if found is None:
            ctx = current_llm_context()
            shown = prompt_key(request.messages)[:160]
            raise ReplayMiss(
                f"no recorded reply in {self.cassette.path} for this request (question id "
                f"{ctx.get('question_id')!r}, stage {ctx.get('stage')!r}; prompt {shown!r}): record the "
                "run with `tkgqa eval --record FILE`, or replay a cassette of the same method and settings",
                usage=Usage(calls=1, replay_miss=1),
            )
        entry, how = found
        usage = Usage(
            prompt_tokens=(
                entry.prompt_tokens
                if entry.prompt_tokens is not None
                else count_message_tokens(request.messages)
            ),
            completion_tokens=(
                entry.completion_tokens
                if entry.completion_tokens is not None
                else count_tokens(entry.response)
            ),
            calls=1,
            replay_exact=int(how == "exact"),
            replay_by_id=int(how == "by_id"),
            replay_reask=int(how == "reask"),
        )
        return LLMResponse(text=entry.response, usage=usage, latency_s=0.0, model=self.model_id)


# --- writing ----------------------------------------------------------------------------------------------
def cassette_header(
    *, backend: str | None, model: str | None, settings: Mapping[str, Any], **more: Any
) -> dict[str, Any]:
    """The header line: what was recorded (backend, model, settings, anything in ``more``) and tkgqa's
    version. Credentials are removed (:func:`~tkgqa.credentials.without_secrets`) and credential-shaped
    text masked (:func:`~tkgqa.credentials.redact`: a key in the base URL, in a setting)."""
    from .. import __version__

    head = {
        HEADER_KEY: CASSETTE_VERSION,
        "tkgqa_version": __version__,
        "backend": backend,
        "model": model,
        "settings": dict(settings),
        **more,
    }
    return dict(redact(without_secrets(head)))


def cassette_line(
    *,
    request: Mapping[str, Any],
    response: str,
    qid: str | None = None,
    stage: str | None = None,
    method: str | None = None,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> dict[str, Any]:
    """One recorded call: the stored request (``LLMRequest.stored()``: its ``messages`` and its settings
    under ``request``, credentials removed), the reply, the question id and stage, the recorded tokens.
    Credential-shaped text is masked everywhere (:func:`~tkgqa.credentials.redact`: a key the model echoed,
    a key in a prompt)."""
    clean = redact(without_secrets(dict(request)))
    messages = clean.pop("messages", [])
    line: dict[str, Any] = {"id": qid, "stage": stage, "method": method, "messages": messages}
    line["response"] = redact(response)
    line["request"] = {k: v for k, v in clean.items() if v is not None and v != {}}
    if prompt_tokens is not None or completion_tokens is not None:
        line["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return line


def dump_line(data: Mapping[str, Any]) -> str:
    """One cassette line (UTF-8 JSON, newline-terminated)."""
    return json.dumps(data, ensure_ascii=False, sort_keys=False) + "\n"
