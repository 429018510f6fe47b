"""Offline token counting.

Order of preference for :func:`count_tokens`:

1. an explicit ``tokenizer`` (``text -> token ids``, e.g. a local llama.cpp model's ``tokenize``);
2. tiktoken's ``cl100k_base`` — only when tiktoken is importable *and* its BPE file (with the right
   sha256) is already in tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or
   ``<tmp>/data-gym-cache``); nothing is ever downloaded;
3. an approximation: ``ceil(1.3 * words + punctuation marks)``, where words are ``\\w+`` runs and every
   other non-space character counts as one piece. On English prose it lands within ~15% of cl100k.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .base import Message

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_WORD = re.compile(r"\w+")
_PUNCT = re.compile(r"[^\w\s]")

Tokenizer = Callable[[str], Sequence[int]]


def tiktoken_cache_file(url: str = CL100K_URL) -> Path:
    """Where tiktoken would look for the cached BPE file of ``url`` (env read at call time)."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache_dir:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()


@functools.lru_cache(maxsize=4)
def _load_cl100k(cache_file: str, mtime_ns: int, size: int) -> Any:
    """Load cl100k if ``cache_file`` holds the exact BPE data (else tiktoken would re-download); else None."""
    try:
        digest = hashlib.sha256(Path(cache_file).read_bytes()).hexdigest()
        if digest != CL100K_SHA256:
            return None
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:
        return None


def offline_encoding() -> Any:
    """tiktoken's cl100k encoding when available offline, else ``None``; never downloads."""
    cache_file = tiktoken_cache_file()
    try:
        st = cache_file.stat()
    except OSError:
        return None
    return _load_cl100k(str(cache_file), st.st_mtime_ns, st.st_size)


def approx_tokens(text: str) -> int:
    """The documented approximation: ``ceil(1.3 * words + punctuation)``."""
    if not text:
        return 0
    words = len(_WORD.findall(text))
    punct = len(_PUNCT.findall(text))
    return math.ceil(1.3 * words + punct)


def count_tokens(text: str, tokenizer: Tokenizer | None = None) -> int:
    """Number of tokens in ``text`` (see the module docstring for which counter is used)."""
    if not text:
        return 0
    if tokenizer is not None:
        return len(tokenizer(text))
    enc = offline_encoding()
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return approx_tokens(text)


def counter_name(tokenizer: Tokenizer | None = None) -> str:
    """Which counter :func:`count_tokens` would use: ``"tokenizer"``, ``"cl100k"`` or ``"approx"``."""
    if tokenizer is not None:
        return "tokenizer"
    return "cl100k" if offline_encoding() is not None else "approx"


def count_message_tokens(messages: Iterable[Message], tokenizer: Tokenizer | None = None) -> int:
    """Tokens of a chat prompt: contents plus OpenAI's overhead of 4 per message and 3 for the reply."""
    msgs = list(messages)
    if not msgs:
        return 0
    return sum(count_tokens(m.content, tokenizer) + 4 for m in msgs) + 3
