"""The one secret policy: which keys, headers and options hold credentials, so they are never logged,
cached, stored or sent back (a leaf module: it imports nothing from tkgqa).

A name is a secret when, lower-cased with ``-`` read as ``_``, it is one of :data:`SECRET_FIELDS` or contains
one of :data:`SECRET_PARTS` (so ``Authorization``, ``X-API-Key``, ``openai_api_key`` and ``client_secret``
are; ``max_tokens`` and ``tokenizer`` are not). Two uses of the one rule:

* :func:`without_secrets` drops those entries (LLM cache keys, the run log, recorded requests: what is
  hashed or written must not hold a credential, and must not change when only the credential changes);
* :func:`redact` masks them with :data:`REDACTED`, and in every string :func:`redact_text` masks what looks
  like a credential wherever it is: API keys (``sk-…``) and bearer tokens (:data:`SECRET_TEXT`), the
  ``user:password@`` of a URL, and the value of a secret query parameter (``?api_key=…``). It is the one
  redaction rule for everything tkgqa writes or serves: cassettes (``--record``, ``tkgqa llm export``),
  ``results.jsonl``, ``run.json``, ``report.json``/``report.md``, ``tkgqa llm log``, server logs and API
  responses — model replies and URLs included (a key echoed by a model, a key in ``OPENAI_BASE_URL``'s
  path).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Names that are credentials as a whole (``token`` is, ``max_tokens`` is not).
SECRET_FIELDS: frozenset[str] = frozenset(
    {
        "api_key",
        "apikey",
        "x_api_key",
        "api_token",
        "access_token",
        "auth_token",
        "bearer_token",
        "token",
        "authorization",
        "proxy_authorization",
        "password",
        "secret",
        "client_secret",
        "credentials",
    }
)
#: Parts of names that make them credentials wherever they appear (``openai_api_key``, ``db_password``).
SECRET_PARTS: tuple[str, ...] = (
    "api_key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "authorization",
    "bearer",
    "credential",
)
#: Text that looks like a credential wherever it appears: an OpenAI-style key, a bearer token.
SECRET_TEXT = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+[A-Za-z0-9._\-]{20,})")
REDACTED = "***"
#: The ``user[:password]@`` part of a URL.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s@]+@")
#: A ``name=value`` query (or form) parameter of a URL.
_QUERY_PARAM = re.compile(r"([?&;])([^=&#;\s]+)=([^&#;\s]*)")


def is_secret_field(name: str) -> bool:
    """Whether a key, header or option called ``name`` holds a credential (see the module's rule)."""
    key = name.strip().lower().replace("-", "_")
    return key in SECRET_FIELDS or any(part in key for part in SECRET_PARTS)


def without_secrets(value: Any) -> Any:
    """``value`` with every secret entry (:func:`is_secret_field`) removed from the dicts in it, at any
    depth; nothing else changes."""
    if isinstance(value, dict):
        return {k: without_secrets(v) for k, v in value.items() if not is_secret_field(str(k))}
    if isinstance(value, list | tuple):
        return [without_secrets(v) for v in value]
    return value


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped part masked by :data:`REDACTED`: API keys and bearer tokens
    (:data:`SECRET_TEXT`, anywhere: a model reply, a URL path), a URL's ``user:password@`` and the values of
    query parameters whose names are secret (``?api_key=…&token=…``)."""
    if "://" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    if "=" in text:
        text = _QUERY_PARAM.sub(
            lambda m: f"{m.group(1)}{m.group(2)}={REDACTED}" if is_secret_field(m.group(2)) else m.group(0),
            text,
        )
    return SECRET_TEXT.sub(REDACTED, text)


def redact(value: Any) -> Any:
    """``value`` with secrets masked: values under secret keys (:func:`is_secret_field`) and, in every
    string, credential-shaped text (:func:`redact_text`)."""
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if isinstance(k, str) and is_secret_field(k) else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
