"""Where an evaluation's questions are answered: in this process (``local``, the default) or on Ray workers.

The runner's ``answer_rows`` yields one ``results.jsonl`` row per question in the order the rows are finished;
it appends each row as it arrives, so resume, the report and ``eval-compare`` do not depend on the
executor. With :attr:`ExecutorKind.RAY` (:mod:`tkgqa.eval.executor_ray`) the driver shards the questions
into small chunks and keeps every worker (a Ray actor that opened the KG once and built the method from the
same configuration) busy with them; a dead worker's unfinished chunks go to the others.

Ray is optional (the ``distributed`` extra): :func:`import_ray` turns its absence into a ConfigError that
names the extra.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..methods.base import Method

#: Environment variables a worker needs to behave as the driver does (cache folder, LLM endpoint, timeouts,
#: offline model loading); forwarded to every Ray worker (``runtime_env``), which matters on a real cluster.
FORWARDED_ENV_PREFIXES = ("TKGQA_", "OPENAI_", "HF_", "TRANSFORMERS_", "TIKTOKEN_")


class ExecutorKind(StrEnum):
    """How an evaluation (or a batch job) runs: in this process, or on a Ray cluster."""

    LOCAL = "local"
    RAY = "ray"


@dataclass(frozen=True, slots=True)
class ExecutorConfig:
    """``kind`` and, for Ray: the cluster ``address`` (``None``: the Ray instance this process already
    joined, else ``RAY_ADDRESS``, else a new local one), the number of ``workers`` (``None``: one per CPU of
    the cluster), a global ``llm_concurrency`` limit (backend calls in flight over all workers; ``None``: at
    most one per worker, as each worker answers one question at a time) and the questions per ``chunk``
    (``None``: chosen from the run's size)."""

    kind: ExecutorKind = ExecutorKind.LOCAL
    address: str | None = None
    workers: int | None = None
    llm_concurrency: int | None = None
    chunk_size: int | None = None

    def __post_init__(self) -> None:
        for name in ("workers", "llm_concurrency", "chunk_size"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name.replace('_', '-')} must be at least 1, got {value}")
        if self.kind is ExecutorKind.LOCAL and (self.address or self.workers or self.llm_concurrency):
            raise ConfigError(
                "--ray-address, --workers and --llm-concurrency only apply to --executor ray; add it, or "
                "drop them"
            )

    @classmethod
    def of(
        cls,
        kind: str | ExecutorKind | None,
        *,
        address: str | None = None,
        workers: int | None = None,
        llm_concurrency: int | None = None,
        chunk_size: int | None = None,
    ) -> ExecutorConfig:
        """The config for a CLI value of ``--executor`` (``None``: local; a ConfigError listing the choices
        for another value)."""
        try:
            parsed = ExecutorKind.LOCAL if kind is None else ExecutorKind(str(kind).strip().lower())
        except ValueError:
            choices = ", ".join(k.value for k in ExecutorKind)
            raise ConfigError(f"--executor must be one of {choices}; got {kind!r}") from None
        return cls(parsed, address, workers, llm_concurrency, chunk_size)

    def describe(self) -> dict[str, Any]:
        """For ``report.json``: how the run was executed (results do not depend on it)."""
        return {
            "kind": self.kind.value,
            "address": self.address,
            "workers": self.workers,
            "llm_concurrency": self.llm_concurrency,
        }


LOCAL = ExecutorConfig()


def import_ray() -> ModuleType:
    """The ``ray`` module, or a ConfigError naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray, which is not installed: pip install 'tkgqa[distributed]' (or "
            "pip install ray) — or run with --executor local"
        ) from None
    module: ModuleType = ray  # typed even where Ray is not installed (the lint-only install)
    return module


def forwarded_env() -> dict[str, str]:
    """The variables of :data:`FORWARDED_ENV_PREFIXES` set in this process (read now, at call time), and
    this process's LLM settings (``--llm-timeout``/``--llm-retries``) as the workers' environment."""
    from ..llm.openai_backend import llm_settings

    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV_PREFIXES)}
    return {**env, **llm_settings().as_env()}


def method_factory_for(method: Method | str, factory: Callable[[], Method] | None) -> Callable[[], Method]:
    """What a worker calls to build its own copy of the method: ``factory`` when given (the CLI passes the
    serialisable method spec: name, LLM spec, options), the registry for a method name, else the method
    object itself (shipped pickled; a method holding unpicklable state needs a ``factory``)."""
    if factory is not None:
        return factory
    if isinstance(method, str):
        from ..methods.base import resolve_method

        return functools.partial(resolve_method, method)
    return functools.partial(_same, method)


def _same(method: Method) -> Method:
    return method


def portable_kg_source(source: Any) -> Any:
    """A KG path every worker can open: relative paths made absolute (workers run in other folders);
    ``"demo"``, stores and ``None`` unchanged."""
    if isinstance(source, str | Path) and str(source) != "demo":
        path = Path(source).expanduser()
        return str(path.resolve()) if path.exists() else str(source)
    return source
