"""What clients of ``tkgqa serve`` may choose, decided by the server at start (:class:`ServiceSettings`), and
the check of each request against it (:class:`RequestPolicy`). No FastAPI here.

* **Methods**: by default every registered method by its bare name (``symbolic``, ``ari``…) and the presets
  (``ari:policy=symbolic``); ``--allow-method`` replaces that with an explicit list of specs. A spec with
  options written in it (``ari:memory=…``) is allowed only when listed verbatim.
* **LLMs**: ``fake`` and the server's ``--llm``; ``--allow-llm`` adds others (``openai:gpt-4o-mini``). A
  client cannot pick another model to spend the server's key, nor ``llamacpp:/some/path`` to open a file.
* **Options**: only the settings the method marks on its config as client options
  (:func:`tkgqa.methods.client.client_option`; plugins too), or the keys of ``--allow-option`` for every
  method; keys that name files, models, LLMs or other methods (:data:`NEVER_FROM_REQUESTS`, or
  ``*_path``/``*_file``/``*_dir``…) are refused even when marked or listed. String values are short words
  (no ``/``, ``\\``, ``:`` or ``~``: paths are never taken from requests); numbers are finite and bounded
  (``*tokens`` ≤ ``max_tokens``, ``*retries`` ≤ :data:`MAX_RETRIES`, any other ≤ ``max_number`` in size, and
  within the config field's own bounds), numeric strings too.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, TKGQAError
from .errors import NotAllowedError

#: Method specs offered besides the bare method names (the web UI lists them).
METHOD_PRESETS = ("ari:policy=symbolic",)
#: LLM specs the web UI suggests; only the allowed ones are listed by ``/api/methods``.
LLM_PRESETS = ("fake", "llamacpp:smollm2", "openai:gpt-4o-mini")
DEFAULT_ALLOWED_LLMS = ("fake",)
#: Option keys no client may set, whatever a config marks or the allow-list says: they name files, models,
#: LLMs (the request's ``llm`` field and its allow-list cover those) or other methods, or grow server state.
NEVER_FROM_REQUESTS = frozenset(
    {
        "llm",
        "memory",
        "online_memory",
        "demos",
        "planner",
        "embedder",
        "tks_embedder",
        "primary",
        "fallback",
        "examples",
        "cache_size",
        "cache_embeddings",
    }
)
_PATHLIKE_KEY = re.compile(
    r"(^|_)(paths?$|(file|files|dir|dirs|folder|url|home|key|secret|password|token|model)(_|$))"
)
_WORD = re.compile(r"[A-Za-z0-9_\-. ]{0,100}")
_NUMBER = re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*|\s*[-+]?(inf|infinity|nan)\s*", re.I)
MAX_RETRIES = 5
MAX_OPTIONS = 32
#: The longest question a client may send (``POST /api/ask``, the MCP tool ``ask``).
MAX_QUESTION_CHARS = 2000
#: The longest name a client may send: an entity, relation or label, a method or LLM spec (HTTP query
#: parameters and fields, MCP tool arguments). Not the store's own limit on a name
#: (:data:`tkgqa.kg.validate.MAX_NAME_CHARS`, what a KG file may hold).
MAX_CLIENT_NAME_CHARS = 200


def forbidden_option(key: str) -> bool:
    """Whether ``key`` may never come from a request (a path, model, LLM or method option)."""
    return key in NEVER_FROM_REQUESTS or _PATHLIKE_KEY.search(key) is not None


#: The settings a client may read (:meth:`ServiceSettings.limits`); each must be > 0.
#: The settings ``tkgqa serve``/``tkgqa mcp`` take from a flag, and its name (for error messages).
_FLAG_OF = {
    "max_tokens": "--max-tokens", "max_body_bytes": "--max-body", "request_timeout_s": "--request-timeout",
    "queue_limit": "--queue-limit", "max_pending": "--max-pending", "method_workers": "--method-workers",
    "shutdown_timeout_s": "--shutdown-timeout",
}  # fmt: skip
_CLIENT_LIMITS = (
    "max_tokens",
    "max_number",
    "max_body_bytes",
    "max_json_depth",
    "request_timeout_s",
    "queue_limit",
    "max_pending",
)


@dataclass(frozen=True)
class ServiceSettings:
    """The server's limits and allow-lists (``tkgqa serve`` flags; ``create_app(settings=…)``).

    ``allow_methods=None``: every registered method by name plus :data:`METHOD_PRESETS`.
    ``allow_options=None``: each method's client options (marked on its config); a tuple replaces them for
    every method. ``api_token``: when set, every ``/api/`` request must send ``Authorization: Bearer
    <token>`` (binding beyond loopback requires one). ``queue_limit``: questions pending (queued + running)
    per method instance; ``max_pending``: over all methods; beyond either a request gets 429 with
    ``Retry-After``.
    ``method_workers``: method instances answering in parallel per (method, LLM, options).
    ``allow_append``: ``POST /api/kg/facts`` may append facts to the served KG (off by default); only to a
    store that keeps them (a DuckDB file) unless ``ephemeral_append`` (then each response says they last until
    restart). ``create_store``: a ``--kg`` DuckDB file that does not exist is created (else refused).
    ``runs_dir``: a folder of ``tkgqa eval`` outputs the runs browser lists (``None``: no runs browser).
    ``allowed_hosts``: the ``Host`` names the server answers to, others get 400 (DNS rebinding;
    :func:`tkgqa.service.guard.allowed_hosts`, which ``tkgqa serve`` always sets); ``None``: no check."""

    allow_methods: tuple[str, ...] | None = None
    allow_llms: tuple[str, ...] = DEFAULT_ALLOWED_LLMS
    allow_options: tuple[str, ...] | None = None
    max_tokens: int = 1024
    max_number: float = 1000
    max_body_bytes: int = 64 * 1024
    max_json_depth: int = 32
    request_timeout_s: float = 60.0
    queue_limit: int = 64
    max_pending: int = 256
    method_workers: int = 1
    shutdown_timeout_s: float = 3.0
    allow_append: bool = False
    ephemeral_append: bool = False
    create_store: bool = False
    runs_dir: str | None = None
    api_token: str | None = field(default=None, repr=False)
    allowed_hosts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        bad = sorted(k for k in self.allow_options or () if forbidden_option(k))
        if bad:
            raise ConfigError(
                f"--allow-option {', '.join(bad)}: these options name files, models, LLMs or methods and are "
                "never taken from requests; set them in the server's --method spec instead"
            )
        positive = {
            **self.limits(),
            "method_workers": self.method_workers,
            "shutdown_timeout_s": self.shutdown_timeout_s,
        }
        for name, value in positive.items():
            if not value > 0:
                flag = _FLAG_OF.get(name)
                said = f"{flag} (service setting {name})" if flag else f"service setting {name}"
                raise ConfigError(f"{said} must be > 0, got {value!r}")
        if self.api_token is not None and len(self.api_token.strip()) < 16:
            raise ConfigError("the API token must have at least 16 characters (e.g. `openssl rand -hex 24`)")

    def limits(self) -> dict[str, Any]:
        """The limits a client may want to know (``/api/methods``), the token excluded."""
        return {name: getattr(self, name) for name in _CLIENT_LIMITS}


class RequestPolicy:
    """Checks the method, LLM and options of one request against :class:`ServiceSettings`."""

    def __init__(self, settings: ServiceSettings, default_method: str, default_llm: str | None) -> None:
        self.settings = settings
        self.default_method = default_method.strip()
        self.default_llm = default_llm
        self.llms = tuple(dict.fromkeys([*settings.allow_llms, *([default_llm] if default_llm else [])]))
        self._check_allowed_options()

    def _check_allowed_options(self) -> None:
        """``--allow-option`` names settings of the methods this server allows: a key none of them has (a
        typo) would let clients set nothing while the operator believes otherwise (ConfigError at start).
        Methods that cannot be loaded here (a missing extra) cannot be served either, so they do not count."""
        if not self.settings.allow_options:
            return
        from ..methods.base import METHODS
        from ..methods.client import config_class_of

        names = dict.fromkeys(spec.partition(":")[0].strip() for spec in self.allowed_methods())
        known: set[str] = set()
        for name in names:
            try:
                config = config_class_of(METHODS.factory(name))
            except TKGQAError:
                continue
            known.update(config.model_fields if config is not None else ())
        unknown = sorted(set(self.settings.allow_options) - known)
        if unknown:
            close = [m for k in unknown for m in difflib.get_close_matches(k, sorted(known), n=1)]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(
                f"--allow-option {', '.join(unknown)}: no method this server allows has such a setting{hint}"
            )

    # --- what is allowed ------------------------------------------------------------------------------
    def method_allowed(self, spec: str) -> bool:
        if spec == self.default_method:
            return True
        if self.settings.allow_methods is not None:
            return spec in self.settings.allow_methods
        if spec in METHOD_PRESETS:
            return True
        from ..methods.base import METHODS

        return ":" not in spec and spec in METHODS.names()

    def allowed_methods(self) -> list[str]:
        """The method specs a client may name (``/api/methods``)."""
        if self.settings.allow_methods is not None:
            return list(dict.fromkeys([self.default_method, *self.settings.allow_methods]))
        from ..methods.base import METHODS

        return list(dict.fromkeys([self.default_method, *METHODS.names(), *METHOD_PRESETS]))

    def options(self, spec: str) -> frozenset[str]:
        """The option keys a client may set for the method of ``spec``: its client options (marked on its
        config), or ``--allow-option``'s keys; never a key :func:`forbidden_option` names."""
        if self.settings.allow_options is not None:
            return frozenset(self.settings.allow_options)
        from ..methods.client import method_client_options

        name = spec.partition(":")[0].strip()
        return frozenset(k for k in method_client_options(name) if not forbidden_option(k))

    def method_options(self) -> dict[str, list[str]]:
        """Each allowed method's client options by name (``/api/methods``); none for a method that cannot
        be loaded here (a missing extra)."""
        out: dict[str, list[str]] = {}
        for name in dict.fromkeys(spec.partition(":")[0].strip() for spec in self.allowed_methods()):
            try:
                out[name] = sorted(self.options(name))
            except ConfigError:
                out[name] = []
        return out

    def describe(self) -> dict[str, Any]:
        by_method = self.method_options()
        return {
            "methods": self.allowed_methods(),
            "llms": list(self.llms),
            "options": sorted({k for keys in by_method.values() for k in keys}),
            "method_options": by_method,
            "limits": self.settings.limits(),
        }

    # --- the checks ---------------------------------------------------------------------------------
    def method(self, requested: str | None) -> str:
        """The method spec to run: the server's default when none is named; NotAllowedError (403) for one
        outside the allow-list, ConfigError (400) for an unknown name."""
        spec = (requested or "").strip() or self.default_method
        if self.method_allowed(spec):
            return spec
        from ..methods.base import METHODS

        name = spec.partition(":")[0].strip()
        if name not in METHODS:
            METHODS.factory(name)  # raises the registry's "unknown method …; known: …" ConfigError
        raise NotAllowedError(
            f"method {_show(spec)} is not allowed on this server; allowed: "
            f"{', '.join(self.allowed_methods())} (pass options in 'options', not in the method spec; the "
            "operator allows more with tkgqa serve --allow-method)"
        )

    def llm(self, requested: str | None) -> str | None:
        """The LLM spec to use: the server's ``--llm`` when none is named; NotAllowedError otherwise unless
        the spec is in the allow-list verbatim."""
        if requested is None or not requested.strip():
            return self.default_llm
        spec = requested.strip()
        if spec in self.llms:
            return spec
        raise NotAllowedError(
            f"LLM {_show(spec)} is not allowed on this server; allowed: {', '.join(self.llms) or 'none'} "
            "(the operator allows more with tkgqa serve --allow-llm)"
        )

    def check_options(self, options: Mapping[str, Any], spec: str) -> dict[str, Any]:
        """``options`` for the method of ``spec`` if every key is allowed for it (:meth:`options`) and every
        value is a short word, a bounded number or a boolean (a dict for ``*_options`` keys, checked the
        same way)."""
        return self._check(options, spec, self.options(spec))

    def _check(self, options: Mapping[str, Any], spec: str, allowed: frozenset[str]) -> dict[str, Any]:
        if len(options) > MAX_OPTIONS:
            raise ConfigError(f"too many options ({len(options)}); at most {MAX_OPTIONS}")
        out: dict[str, Any] = {}
        for key, value in options.items():
            if forbidden_option(key) or key not in allowed:
                why = "names a file, model, LLM or method" if forbidden_option(key) else "is not allowed"
                raise NotAllowedError(
                    f"option {_show(key)} {why} for method {_show(spec)} on this server; allowed options: "
                    f"{', '.join(sorted(allowed)) or 'none'} (the operator sets others with tkgqa serve "
                    "--allow-option)"
                )
            out[key] = self._value(key, value, spec, allowed)
        return out

    def _value(self, key: str, value: Any, spec: str, allowed: frozenset[str], nested: bool = False) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, Mapping):
            if nested or not key.endswith("_options"):
                raise ConfigError(f"option {_show(key)} takes a single value, not an object")
            return self._check(value, spec, allowed)
        if isinstance(value, int | float):
            return self._number(key, value)
        if isinstance(value, str):
            if _NUMBER.fullmatch(value):
                self._number(key, float(value))
                return value
            if not _WORD.fullmatch(value) or value.startswith("."):
                raise ConfigError(
                    f"option {_show(key)}: {_show(value)} is not a plain value (letters, digits, '_', '-', "
                    "'.', at most 100 characters; paths are never taken from requests)"
                )
            return value
        raise ConfigError(f"option {_show(key)}: unsupported value type {type(value).__name__}")

    def _number(self, key: str, value: float) -> float:
        if not math.isfinite(value):
            raise ConfigError(f"option {_show(key)} must be a finite number")
        if key.endswith("tokens"):
            low, high = 1.0, float(self.settings.max_tokens)
        elif key.endswith("retries"):
            low, high = 0.0, float(MAX_RETRIES)
        else:
            low, high = -float(self.settings.max_number), float(self.settings.max_number)
        if not low <= value <= high:
            raise ConfigError(
                f"option {_show(key)} = {value:g} is out of range: this server allows {low:g} … {high:g}"
            )
        return value


def _show(text: str, limit: int = 60) -> str:
    from ..sanitize import shorten

    return shorten(text, limit)


def parse_list(values: Iterable[str] | None) -> tuple[str, ...] | None:
    """A repeatable flag's values (stripped, duplicates and empty ones dropped); ``None`` when none given.
    Commas are kept: a method spec may hold them (``ari:policy=symbolic,top_k=5``)."""
    if not values:
        return None
    return tuple(dict.fromkeys(v.strip() for v in values if v.strip()))
