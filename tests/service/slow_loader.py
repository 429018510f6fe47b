"""A fake slow model load through the real load site: :func:`slow_minilm` puts a stand-in
``sentence_transformers`` module in ``sys.modules`` whose ``SentenceTransformer`` takes ``LOAD_S`` seconds
to "load", and registers the method ``loads_minilm``, which embeds the question with the bundled-MiniLM
:class:`~tkgqa.retrieval.embedders.SentenceTransformerEmbedder` (so the first question waits for the load,
as the first ARI/TimeR4 question does) and answers ``Barack Obama``."""

from __future__ import annotations

import contextlib
import sys
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np

from tkgqa.datasets import Question
from tkgqa.kg import KGStore
from tkgqa.methods.base import METHODS, Answer, Method, MethodConfig, merge_config
from tkgqa.retrieval import embedders

LOAD_S = 3.0
METHOD = "loads_minilm"


class _FakeSentenceTransformer:
    def __init__(self, path: str, device: str | None = None, local_files_only: bool = True) -> None:
        time.sleep(LOAD_S)

    def get_sentence_embedding_dimension(self) -> int:
        return 8

    def encode(self, texts: list[str], **_: Any) -> Any:
        return np.ones((len(texts), 8), dtype=np.float32)


class LoadsMiniLMConfig(MethodConfig):
    pass


class LoadsMiniLM(Method):
    """Embeds the question with MiniLM (loaded on first use), then answers Barack Obama."""

    name: ClassVar[str] = METHOD

    def __init__(self, config: LoadsMiniLMConfig | None = None, **overrides: object) -> None:
        from tkgqa.retrieval.embedders import SentenceTransformerEmbedder

        self.config: LoadsMiniLMConfig = merge_config(LoadsMiniLMConfig, config, overrides)
        self.embedder = SentenceTransformerEmbedder()

    def reason(self, question: Question, kg: KGStore) -> Answer:
        self.embedder.encode([question.text])
        return Answer(["Barack Obama"], trace=[{"note": "embedded the question"}])


@contextmanager
def slow_minilm() -> Iterator[str]:
    """The fake module and the ``loads_minilm`` method while the block runs (both removed after)."""
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = _FakeSentenceTransformer  # type: ignore[attr-defined]
    saved = sys.modules.get("sentence_transformers")
    sys.modules["sentence_transformers"] = module
    METHODS.add(METHOD, LoadsMiniLM)
    quiet = embedders.quiet_model_loading  # imports transformers (tens of seconds on a busy machine)
    embedders.quiet_model_loading = contextlib.nullcontext  # type: ignore[assignment]
    try:
        yield METHOD
    finally:
        embedders.quiet_model_loading = quiet  # type: ignore[assignment]
        METHODS._factories.pop(METHOD, None)  # the registry has no removal: tests only
        METHODS._order.pop(METHOD, None)
        if saved is None:
            sys.modules.pop("sentence_transformers", None)
        else:
            sys.modules["sentence_transformers"] = saved
