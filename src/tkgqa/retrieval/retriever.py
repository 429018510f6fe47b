"""The :class:`Retriever` facade: dense (optionally hybrid) fact retrieval with time-aware reranking.

``retrieve(question, kg, k)`` follows TimeR4 §4.2–4.5: embed the question, take the ``pool_size`` nearest
fact sentences (the whole KG through a persisted vector index, or only ``candidate_ids``), optionally fuse
a BM25 ranking by RRF, then rerank the pool by ``μ · sim + (1 − μ) · φ_t`` (Eq. 10) when a time constraint
is given, and return the best ``k`` as :class:`ScoredFact`.

Fact ids are positions in :class:`FactTable`: the store's iteration (insertion) order, which appends only
extend. Scoping dense scoring to the facts around the linked entities (:meth:`Retriever.candidates_around`)
avoids embedding a whole large KG with a slow model: MiniLM encodes ~280 facts/s on 2 cores, i.e. ~14
minutes for MultiTQ's 227k facts (once, cached).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from ..kg import Fact, KGStore
from ..kg.base import TimeQuery
from .cache import CachedEmbedder, EmbeddingCache
from .embedders import Embedder, resolve_embedder
from .index import IndexKind, VectorIndex, build_index, load_index, resolve_index_kind
from .lexical import BM25Retriever, rrf
from .paths import embeddings_dir, safe_name
from .temporal import DEFAULT_MU, Proximity, TimeConstraint, fuse, parse_time_constraint, time_scores
from .verbalize import DEFAULT_VERBALIZER, Verbalizer


@dataclass(frozen=True, slots=True)
class ScoredFact:
    """A retrieved fact: ``score`` orders results; ``sim`` is the cosine; ``time_score`` is φ_t (or None)."""

    fact: Fact
    score: float
    sim: float
    time_score: float | None
    fact_id: int = -1
    text: str = ""


class FactTable:
    """The facts of one KG in a fixed id order, with their sentences (built lazily)."""

    def __init__(self, kg: KGStore, verbalizer: Verbalizer = DEFAULT_VERBALIZER) -> None:
        self.kg = kg
        self.verbalizer = verbalizer
        self.facts: list[Fact] = list(kg)
        self._texts: list[str] | None = None
        self._ids: dict[Fact, int] | None = None
        self._fingerprint: str | None = None

    def __len__(self) -> int:
        return len(self.facts)

    @property
    def texts(self) -> list[str]:
        if self._texts is None:
            self._texts = self.verbalizer.many(self.facts, self.kg)
        return self._texts

    @property
    def fingerprint(self) -> str:
        """Hash of every sentence in order: names a persisted index."""
        if self._fingerprint is None:
            digest = hashlib.sha256()
            for t in self.texts:
                digest.update(t.encode("utf-8") + b"\n")
            self._fingerprint = digest.hexdigest()[:16]
        return self._fingerprint

    def id_of(self, fact: Fact) -> int | None:
        if self._ids is None:
            self._ids = {f: i for i, f in enumerate(self.facts)}
        return self._ids.get(fact)

    def ids_of(self, facts: Iterable[Fact]) -> list[int]:
        """Ids of the facts that are in the table, in order, without duplicates."""
        found = (self.id_of(f) for f in facts)
        return list(dict.fromkeys(i for i in found if i is not None))


class _KGState:
    def __init__(self, table: FactTable, size: int) -> None:
        self.table = table
        self.size = size
        self.index: VectorIndex | None = None
        self.bm25: BM25Retriever | None = None


class Retriever:
    """Dense / hybrid fact retriever with TimeR4 time-aware reranking.

    ``embedder``: a name for :func:`resolve_embedder` or an instance; fact vectors go through the on-disk
    cache unless ``cache=False``. ``pool_size`` facts are reranked; ``hybrid`` adds BM25 via RRF.
    ``rerank_extremes``: also rerank questions whose ``"auto"`` constraint is a bare first/last (no question
    time) by the first/last analogue of φ_t — off by default, as in the paper; ``proximity``: whether
    before/after facts are ranked by nearness to ``t_q`` (Eq. 9) for every question (``paper``) or only
    for first/last questions (``ordinal``; see :mod:`.temporal`)."""

    def __init__(
        self,
        embedder: str | Embedder = "hashing",
        *,
        cache: EmbeddingCache | bool = True,
        index_kind: IndexKind = "auto",
        mu: float = DEFAULT_MU,
        pool_size: int = 100,
        hybrid: bool = False,
        rrf_k: int = 60,
        horizon_days: float | None = None,
        rerank_extremes: bool = False,
        proximity: Proximity | str = Proximity.ORDINAL,
        verbalizer: Verbalizer = DEFAULT_VERBALIZER,
        persist_index: bool = True,
        progress: bool = False,
        batch_size: int = 64,
    ) -> None:
        if not 0.0 <= mu <= 1.0:
            raise ConfigError(f"mu must lie in [0, 1], got {mu}")
        self.embedder = resolve_embedder(embedder)
        self.fact_embedder: Embedder
        if cache is False:
            self.fact_embedder = self.embedder
        else:
            store = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache()
            self.fact_embedder = CachedEmbedder(self.embedder, store)
        self.index_kind = index_kind
        self.mu = mu
        self.pool_size = pool_size
        self.hybrid = hybrid
        self.rrf_k = rrf_k
        self.horizon_days = horizon_days
        self.rerank_extremes = rerank_extremes
        try:
            self.proximity = Proximity(proximity)
        except ValueError:
            valid = ", ".join(p.value for p in Proximity)
            raise ConfigError(f"unknown proximity {proximity!r}; use one of: {valid}") from None
        self.verbalizer = verbalizer
        self.persist_index = persist_index
        self.progress = progress
        self.batch_size = batch_size
        self._states: weakref.WeakKeyDictionary[Any, _KGState] = weakref.WeakKeyDictionary()

    # --- per-KG state ------------------------------------------------------------------------------
    def _state(self, kg: KGStore) -> _KGState:
        state = self._states.get(kg)
        if state is None or state.size != len(kg):  # appended facts: rebuild
            state = _KGState(FactTable(kg, self.verbalizer), len(kg))
            self._states[kg] = state
        return state

    def table(self, kg: KGStore) -> FactTable:
        return self._state(kg).table

    def index(self, kg: KGStore) -> VectorIndex:
        """The vector index over every fact of ``kg`` (embeds missing facts, loads or builds the index)."""
        state = self._state(kg)
        if state.index is None:
            table = state.table
            kind = resolve_index_kind(self.index_kind, len(table))
            ext = "npy" if kind == "numpy" else "faiss"
            path = (
                embeddings_dir()
                / "indexes"
                / f"{safe_name(self.embedder.name)}-{table.fingerprint}-{kind}.{ext}"
            )
            if self.persist_index and kind != "numpy" and path.is_file():
                state.index = load_index(path, kind)
            else:
                vectors = self.fact_embedder.encode(
                    table.texts, batch_size=self.batch_size, progress=self.progress
                )
                state.index = build_index(vectors, kind)  # type: ignore[arg-type]
                if self.persist_index and kind != "numpy":
                    state.index.save(path)
        return state.index

    def _bm25(self, kg: KGStore) -> BM25Retriever:
        state = self._state(kg)
        if state.bm25 is None:
            state.bm25 = BM25Retriever(state.table.texts)
        return state.bm25

    def candidates_around(
        self, kg: KGStore, entities: Iterable[str], *, time: TimeQuery = None, limit: int | None = None
    ) -> list[int]:
        """Ids of the facts whose subject or object is one of ``entities`` (optionally sharing a day with
        ``time``): the scope for dense scoring when the question's entities are linked."""
        facts: list[Fact] = []
        for e in entities:
            facts.extend(kg.facts(subject=e, time=time))
            facts.extend(kg.facts(object=e, time=time))
        ids = self.table(kg).ids_of(facts)
        return ids[:limit] if limit is not None else ids

    # --- retrieval ---------------------------------------------------------------------------------------
    def retrieve(
        self,
        question_text: str,
        kg: KGStore,
        k: int = 15,
        *,
        candidate_ids: Sequence[int] | None = None,
        time_constraint: TimeConstraint | str | None = None,
        rerank: bool = True,
    ) -> list[ScoredFact]:
        """The ``k`` best facts for the question. ``time_constraint``: a :class:`TimeConstraint`, a string
        like ``"before 2015-03"``, or ``"auto"`` (read from the question by :func:`parse_time_constraint`; a
        bare first/last reading is dropped unless ``rerank_extremes``). ``rerank=False`` or no constraint:
        the pool order (cosine, or RRF when hybrid)."""
        state = self._state(kg)
        table = state.table
        constraint = self.resolve_constraint(question_text, time_constraint)
        qv = self.embedder.encode([question_text], batch_size=1)[0]
        pool = max(self.pool_size, k)
        ids, sims, order_scores = (
            self._scope(question_text, qv, table, candidate_ids, pool)
            if candidate_ids is not None
            else self._search_all(question_text, qv, kg, pool)
        )
        if not len(ids):
            return []
        facts = [table.facts[i] for i in ids]
        tscores: npt.NDArray[np.float64] | None = None
        scores = order_scores
        if rerank and constraint is not None:
            nearest = self.proximity.nearest(question_text)
            tscores = time_scores(constraint, facts, horizon_days=self.horizon_days, nearest=nearest)
            scores = fuse(sims.astype(np.float64), tscores, self.mu)
        best = np.argsort(-scores, kind="stable")[:k]
        return [
            ScoredFact(
                fact=facts[j],
                score=float(scores[j]),
                sim=float(sims[j]),
                time_score=None if tscores is None else float(tscores[j]),
                fact_id=int(ids[j]),
                text=table.texts[ids[j]],
            )
            for j in best
        ]

    def resolve_constraint(self, text: str, given: TimeConstraint | str | None) -> TimeConstraint | None:
        """The constraint :meth:`retrieve` reranks ``text`` by, for ``given`` (see there)."""
        if given is None or isinstance(given, TimeConstraint):
            return given
        if given.strip().lower() == "auto":
            found = parse_time_constraint(text)
            if found is not None and found.time is None and not self.rerank_extremes:
                return None  # first/last without a question time: no φ_t (paper §4.5)
            return found
        kind, _, when = given.strip().partition(" ")
        return TimeConstraint.of(kind, when.strip() or None)

    def _fused(
        self, question: str, dense_ids: Sequence[int], bm25: BM25Retriever, pool: int
    ) -> list[tuple[int, float]]:
        """RRF of the dense ranking and BM25's (ids in the same numbering), cut to ``pool``."""
        lex, _ = bm25.search(question, pool)
        return rrf([list(dense_ids), [int(i) for i in lex]], k=self.rrf_k)[:pool]

    def _search_all(
        self, question: str, qv: npt.NDArray[np.float32], kg: KGStore, pool: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        table = self.table(kg)
        scores, ids = self.index(kg).search(qv[None, :], pool)
        keep = ids[0] >= 0
        dense_ids, dense_sims = ids[0][keep], scores[0][keep]
        if not self.hybrid:
            return dense_ids, dense_sims, dense_sims.astype(np.float64)
        fused = self._fused(question, dense_ids.tolist(), self._bm25(kg), pool)
        known = dict(zip(dense_ids.tolist(), dense_sims.tolist(), strict=True))
        extra = [i for i, _ in fused if i not in known]
        if extra:
            vecs = self.fact_embedder.encode([table.texts[i] for i in extra], batch_size=self.batch_size)
            known.update(zip(extra, (vecs @ qv).tolist(), strict=True))
        out_ids = np.array([i for i, _ in fused], dtype=np.int64)
        sims = np.array([known[i] for i, _ in fused], dtype=np.float32)
        return out_ids, sims, np.array([s for _, s in fused], dtype=np.float64)

    def _scope(
        self,
        question: str,
        qv: npt.NDArray[np.float32],
        table: FactTable,
        candidate_ids: Sequence[int],
        pool: int,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        ids = np.array(list(dict.fromkeys(int(i) for i in candidate_ids)), dtype=np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(table)):
            raise ConfigError(f"candidate ids must lie in 0..{len(table) - 1}")
        if not len(ids):
            return ids, np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float64)
        texts = [table.texts[i] for i in ids]
        sims_all = self.fact_embedder.encode(texts, batch_size=self.batch_size, progress=self.progress) @ qv
        order = np.argsort(-sims_all, kind="stable")[:pool]
        if not self.hybrid:
            return ids[order], sims_all[order], sims_all[order].astype(np.float64)
        fused = self._fused(question, order.tolist(), BM25Retriever(texts), pool)
        local = np.array([i for i, _ in fused], dtype=np.int64)
        return ids[local], sims_all[local], np.array([s for _, s in fused], dtype=np.float64)

    def warm(self, kg: KGStore) -> int:
        """Embed every fact of ``kg`` (cached) and build/persist its index; returns the fact count."""
        return len(self.index(kg))
