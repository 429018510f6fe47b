"""``tkgqa lpkg data --executor ray`` on a real local Ray cluster (``ray.init(num_cpus=2)``): the same files,
byte for byte, as the local executor; the same examples whatever the number of workers; a worker's error
reaches the driver; a missing Ray is a ConfigError."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import tkgqa.methods.lpkg.commands  # noqa: F401  (registers the commands)
from tkgqa.cli import app
from tkgqa.errors import ConfigError, TKGQAError
from tkgqa.eval.executor import ExecutorConfig, ExecutorKind
from tkgqa.methods.lpkg.planning_jobs import planning_data
from tkgqa.query.generate.patterns import PatternType

pytestmark = pytest.mark.slow

RAY = ExecutorConfig(ExecutorKind.RAY)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One local Ray instance for the module (starting one costs ~10 s)."""
    ray = pytest.importorskip("ray", reason="the distributed extra (ray) is not installed")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def _data(tmp_path: Path, name: str, *extra: str) -> dict[str, bytes]:
    out = tmp_path / name
    args = ["lpkg", "data", "--kg", "demo", "--per-pattern", "3", "--holdout", "0.2", "--seed", "7"]
    res = CliRunner().invoke(app, [*args, "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_ray_writes_the_same_files_as_local(cluster: Any, tmp_path: Path) -> None:
    local = _data(tmp_path, "local")
    ray2 = _data(tmp_path, "ray2", "--executor", "ray", "--workers", "2")
    expected = {"planning.jsonl", "train.jsonl", "heldout.jsonl", "heldout.demo.jsonl", "summary.json",
                "sft_train.jsonl", "sft_heldout.jsonl", ".tkgqa-owner.json"}  # fmt: skip
    assert set(local) == expected
    assert local == ray2
    assert local["planning.jsonl"].count(b"\n") > len(PatternType)  # several examples of most patterns


def test_examples_do_not_depend_on_the_number_of_workers(cluster: Any) -> None:
    one = planning_data(["demo"], per_pattern=2, executor=ExecutorConfig(ExecutorKind.RAY, workers=1))
    three = planning_data(
        ["demo", "demo"], per_pattern=2, executor=ExecutorConfig(ExecutorKind.RAY, workers=3)
    )
    local = planning_data(["demo"], per_pattern=2)
    assert (one.workers, three.workers, three.kgs) == (1, 3, ["demo"])  # a KG given twice counts once
    assert one.examples == three.examples == local.examples
    assert [e.qid for e in local.examples] == [f"demo-{i}" for i in range(len(local.examples))]
    assert one.grounding == local.grounding


def test_a_workers_error_reaches_the_driver(cluster: Any, tmp_path: Path) -> None:
    with pytest.raises(TKGQAError, match="does not exist"):  # the KG loader's NotFoundError, not a Ray one
        planning_data([str(tmp_path / "no-such-kg.txt")], per_pattern=1, executor=RAY)


def test_missing_ray_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(ConfigError, match="distributed"):
        planning_data(["demo"], per_pattern=1, executor=RAY)
