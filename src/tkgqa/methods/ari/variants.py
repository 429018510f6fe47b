"""ARI's methodology sets (a module of its own, importing nothing: ``tkgqa ari build-memory --help`` lists
them without loading the method's configuration)."""

from __future__ import annotations

from enum import StrEnum


class MemoryVariant(StrEnum):
    """A methodology set of the history memory (:class:`~.memory.ARIMemory`, keyed by the value): induced per
    cluster (the paper) or once from the whole memory (``global``, the "w/o History Cluster" ablation), from
    correct and incorrect processes (the paper) or from the correct ones only ("w/o Incorrect Examples")."""

    CLUSTERED = "clustered"
    GLOBAL = "global"
    CLUSTERED_CORRECT_ONLY = "clustered-correct-only"
    GLOBAL_CORRECT_ONLY = "global-correct-only"

    @classmethod
    def of(cls, *, clustered: bool, incorrect: bool) -> MemoryVariant:
        """The set with these two properties (each pair names exactly one)."""
        return next(v for v in cls if v.clustered == clustered and v.incorrect == incorrect)

    @property
    def clustered(self) -> bool:
        """Whether a methodology is induced per cluster (else once, from the whole memory)."""
        return self in (MemoryVariant.CLUSTERED, MemoryVariant.CLUSTERED_CORRECT_ONLY)

    @property
    def incorrect(self) -> bool:
        """Whether the incorrect processes are shown too."""
        return self in (MemoryVariant.CLUSTERED, MemoryVariant.GLOBAL)
