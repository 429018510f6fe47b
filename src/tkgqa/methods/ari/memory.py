"""ARI's history memory (§3.4): stored reasoning processes, K-means clusters of their (masked) questions
and the abstract methodology the LLM induced for each cluster.

Methodologies are kept per *variant* (:class:`~.config.MemoryVariant`): ``clustered`` (the paper),
``global`` (no-clustering ablation: one methodology from the whole memory) and their ``-correct-only``
versions (no-incorrect-examples ablation). The memory is one JSON file: ``ARIMemory.save``/``load``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from ...errors import DataError
from ...llm import LLMBackend, Usage
from ...prompts.ask import Refused, ask
from ...retrieval.embedders import Embedder
from .prompts import methodology_prompt
from .variants import MemoryVariant

GLOBAL_CLUSTER = -1
UNASSIGNED = -2
FORMAT_VERSION = 1


class HistoryStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidates: list[str] = Field(default_factory=list)
    action: str | None = None
    result: str = ""


class HistoryRecord(BaseModel):
    """One question's reasoning process and whether it ended correct (``None``: no gold)."""

    model_config = ConfigDict(frozen=True)

    qid: str
    question: str
    masked: str
    steps: list[HistoryStep] = Field(default_factory=list)
    answers: list[str] = Field(default_factory=list)
    gold: list[str] = Field(default_factory=list)
    correct: bool | None = None
    qtype: str | None = None

    def example_text(self, with_candidates: bool = False) -> str:
        """The record as an induction sample: per step the candidate set P_t (``with_candidates``: Eq. 4
        stores ``(q, t_i, P_t_i, a_t_i)``), the action and what it retrieved, then the verdict (the authors'
        format)."""
        lines = [f"Question: {self.question}"]
        for i, step in enumerate(self.steps):
            if with_candidates and step.candidates:
                lines.append(f"Candidate actions {i}: {step.candidates}")
            lines.append(f"LLM Action {i}: ${step.action}$" if step.action else f"LLM Action {i}: (invalid)")
            lines.append(f"Retrieval {i}: {step.result or 'Wrong action, unable to get data.'}")
        if self.correct:
            lines.append("Correct!")
        else:
            lines.append(f"Wrong! The answer is {self.gold}")
        return "\n".join(lines)


def kmeans(
    x: npt.NDArray[np.float32], k: int, *, seed: int = 0, n_init: int = 5, max_iter: int = 100
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """K-means (k-means++ seeding, best of ``n_init`` runs by inertia). Returns (centroids, labels)."""
    data = np.asarray(x, dtype=np.float64)
    n = len(data)
    if n == 0:
        raise DataError("cannot cluster an empty memory")
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    best: tuple[float, npt.NDArray[np.float64], npt.NDArray[np.int64]] | None = None
    for _ in range(n_init):
        centroids = _kmeans_pp(data, k, rng)
        labels = np.zeros(n, dtype=np.int64)
        for it in range(max_iter):
            dist = ((data[:, None, :] - centroids[None, :, :]) ** 2).sum(-1)
            new = dist.argmin(1)
            if it and np.array_equal(new, labels):
                break
            labels = new
            for c in range(k):
                members = data[labels == c]
                centroids[c] = members.mean(0) if len(members) else data[rng.integers(n)]
        inertia = float(((data - centroids[labels]) ** 2).sum())
        if best is None or inertia < best[0]:
            best = (inertia, centroids.copy(), labels.copy())
    assert best is not None
    return best[1], best[2]


def _kmeans_pp(data: npt.NDArray[np.float64], k: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    n = len(data)
    centroids = [data[rng.integers(n)]]
    for _ in range(1, k):
        d2 = np.min(((data[:, None, :] - np.asarray(centroids)[None]) ** 2).sum(-1), axis=1)
        total = d2.sum()
        idx = int(rng.choice(n, p=d2 / total)) if total > 0 else int(rng.integers(n))
        centroids.append(data[idx])
    return np.asarray(centroids, dtype=np.float64)


class ARIMemory:
    """History records + clusters + methodologies; JSON-persisted."""

    def __init__(
        self,
        records: Sequence[HistoryRecord] = (),
        *,
        n_clusters: int = 10,
        embedder_name: str = "",
        centroids: list[list[float]] | None = None,
        labels: list[int] | None = None,
        methodologies: dict[str, dict[int, str]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.records = list(records)
        self.n_clusters = n_clusters
        self.embedder_name = embedder_name
        self.centroids = centroids
        self.labels = labels
        self.methodologies: dict[str, dict[int, str]] = {k: dict(v) for k, v in (methodologies or {}).items()}
        self.meta = dict(meta or {})
        self.pending = 0  # online additions since the last refresh

    def __len__(self) -> int:
        return len(self.records)

    def add(self, record: HistoryRecord) -> None:
        self.records.append(record)
        self.centroids = self.labels = None  # clusters are stale
        self.pending = 0

    def add_online(self, record: HistoryRecord) -> None:
        """Algorithm 1 line 16: add a processed question to H_q while keeping the current clusters and
        methodologies in use until :meth:`refresh` (re-clustering and re-inducing is costly)."""
        self.records.append(record)
        if self.labels is not None:
            self.labels.append(UNASSIGNED)  # not an induction sample of any cluster until the next refresh
        self.pending += 1

    def refresh(
        self,
        embedder: Embedder,
        llm: LLMBackend | None,
        *,
        variant: tuple[bool, bool] = (True, True),
        per_kind: int = 3,
        with_candidates: bool = False,
        seed: int = 0,
    ) -> Usage:
        """Re-cluster every record and re-induce the ``(clustered, incorrect)`` methodology variant (the
        authors' ``add_memory``): after online additions."""
        self.fit(embedder, seed=seed)
        self.pending = 0
        if llm is None:
            return Usage()
        clustered, incorrect = variant
        _, usage = self.induce(
            llm, clustered=clustered, incorrect=incorrect, per_kind=per_kind, with_candidates=with_candidates
        )
        return usage

    # --- clustering ---------------------------------------------------------------------------------
    def fit(self, embedder: Embedder, *, seed: int = 0) -> None:
        """Cluster the records' masked questions (K-means on normalised embeddings)."""
        vecs = embedder.encode([r.masked for r in self.records])
        centroids, labels = kmeans(vecs, self.n_clusters, seed=seed)
        self.centroids = centroids.tolist()
        self.labels = [int(x) for x in labels]
        self.embedder_name = embedder.name

    def nearest_cluster(self, masked: str, embedder: Embedder) -> int:
        """The cluster whose centroid is most similar (cosine) to the masked question (Eq. 5)."""
        if not self.centroids:
            raise DataError("the memory has no clusters; build it with `tkgqa ari build-memory`")
        if self.embedder_name and embedder.name != self.embedder_name:
            raise DataError(
                f"the memory was clustered with embedder {self.embedder_name!r}, not {embedder.name!r}; "
                "use the same embedder setting"
            )
        q = np.asarray(embedder.encode([masked])[0], dtype=np.float64)
        c = np.asarray(self.centroids, dtype=np.float64)
        sims = (c @ q) / (np.linalg.norm(c, axis=1) * (np.linalg.norm(q) or 1.0) + 1e-12)
        return int(np.argmax(sims))

    def members(self, cluster: int) -> list[HistoryRecord]:
        if cluster == GLOBAL_CLUSTER or self.labels is None:
            return list(self.records)
        return [r for r, c in zip(self.records, self.labels, strict=True) if c == cluster]

    # --- methodology --------------------------------------------------------------------------------
    def examples(self, cluster: int, per_kind: int) -> tuple[list[HistoryRecord], list[HistoryRecord]]:
        """Up to ``per_kind`` correct and incorrect records of a cluster (spread over the whole memory for
        the global cluster)."""
        members = self.members(cluster)
        correct = [r for r in members if r.correct is True]
        wrong = [r for r in members if r.correct is False]
        if cluster == GLOBAL_CLUSTER and self.labels is not None:
            correct, wrong = self._spread(correct), self._spread(wrong)
        return correct[:per_kind], wrong[:per_kind]

    def _spread(self, records: list[HistoryRecord]) -> list[HistoryRecord]:
        """Round-robin over clusters, so a global sample covers the question types."""
        assert self.labels is not None
        by_cluster: dict[int, list[HistoryRecord]] = {}
        label_of = {id(r): c for r, c in zip(self.records, self.labels, strict=True)}
        for r in records:
            by_cluster.setdefault(label_of.get(id(r), 0), []).append(r)
        out: list[HistoryRecord] = []
        queues = [list(v) for _, v in sorted(by_cluster.items())]
        while any(queues):
            for q in queues:
                if q:
                    out.append(q.pop(0))
        return out

    def induce(
        self,
        llm: LLMBackend,
        *,
        clustered: bool = True,
        incorrect: bool = True,
        per_kind: int = 3,
        with_candidates: bool = False,
        retries: int = 1,
        max_tokens: int = 600,
        on_cluster: Callable[[int], None] | None = None,
    ) -> tuple[dict[int, str], Usage]:
        """Ask the LLM for one methodology per cluster (Figure 9) and store them under the variant key.

        ``per_kind`` correct and ``per_kind`` incorrect samples per cluster (3 + 3 is ours, as in the authors'
        code: the paper gives no number); ``with_candidates`` shows each step's candidate set P_t."""
        clusters = sorted(c for c in set(self.labels or []) if c >= 0) if clustered else [GLOBAL_CLUSTER]
        if clustered and self.labels is None:
            raise DataError("cluster the memory (fit) before inducing per-cluster methodologies")
        found: dict[int, str] = {}
        usage = Usage()
        for c in clusters:
            good, bad = self.examples(c, per_kind)
            if not good and not bad:
                continue
            prompt = methodology_prompt(
                [r.example_text(with_candidates) for r in good],
                [r.example_text(with_candidates) for r in bad] if incorrect else None,
            )
            parsed = ask(llm, prompt, retries=retries, max_tokens=max_tokens)
            usage = usage + parsed.usage
            if isinstance(parsed, Refused):
                continue
            found[c] = parsed.value
            if on_cluster is not None:
                on_cluster(c)
        self.methodologies[MemoryVariant.of(clustered=clustered, incorrect=incorrect).value] = found
        return found, usage

    def methodology_for(self, masked: str, embedder: Embedder, variant: str) -> tuple[int | None, str | None]:
        """(cluster, methodology text) for a masked question under ``variant``; (None, None) if unknown."""
        table = self.methodologies.get(variant)
        if not table:
            return None, None
        if variant.startswith("global"):
            return GLOBAL_CLUSTER, table.get(GLOBAL_CLUSTER)
        cluster = self.nearest_cluster(masked, embedder)
        return cluster, table.get(cluster)

    # --- persistence --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "tkgqa-ari-memory",
            "version": FORMAT_VERSION,
            "n_clusters": self.n_clusters,
            "embedder": self.embedder_name,
            "meta": self.meta,
            "centroids": self.centroids,
            "labels": self.labels,
            "methodologies": {k: {str(c): t for c, t in v.items()} for k, v in self.methodologies.items()},
            "records": [r.model_dump(mode="json") for r in self.records],
        }

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(p)
        return p

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, path: str | None = None) -> ARIMemory:
        if data.get("format") != "tkgqa-ari-memory":
            raise DataError("not an ARI memory file (missing format 'tkgqa-ari-memory')", path=path)
        try:
            records = [HistoryRecord.model_validate(r) for r in data.get("records", [])]
            methodologies = {
                k: {int(c): str(t) for c, t in v.items()}
                for k, v in (data.get("methodologies") or {}).items()
            }
        except (ValueError, TypeError, AttributeError) as exc:
            raise DataError(f"malformed ARI memory: {exc}", path=path) from exc
        return cls(
            records,
            n_clusters=int(data.get("n_clusters", 10)),
            embedder_name=str(data.get("embedder", "")),
            centroids=data.get("centroids"),
            labels=data.get("labels"),
            methodologies=methodologies,
            meta=data.get("meta") or {},
        )

    @classmethod
    def load(cls, path: str | Path) -> ARIMemory:
        p = Path(path)
        if not p.is_file():
            from ...errors import NotFoundError

            raise NotFoundError(
                f"ARI memory file {str(p)!r} does not exist; build one with `tkgqa ari build-memory`"
            )
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise DataError(f"invalid JSON: {str(exc)[:200]}", path=str(p)) from exc
        if not isinstance(data, dict):
            raise DataError(
                f"an ARI memory file holds a JSON object, not a {type(data).__name__}; "
                "build one with `tkgqa ari build-memory`",
                path=str(p),
            )
        return cls.from_dict(data, path=str(p))
