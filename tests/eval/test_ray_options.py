"""The executor options without a cluster: validation, the CLI enum, and Ray as an optional import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tkgqa.errors import ConfigError
from tkgqa.eval.executor import ExecutorConfig, ExecutorKind, forwarded_env, import_ray, portable_kg_source
from tkgqa.eval.executor_ray import chunk_size_for


def test_of_parses_the_cli_value_and_rejects_others() -> None:
    assert ExecutorConfig.of("RAY", workers=2).kind is ExecutorKind.RAY
    assert ExecutorConfig.of("local") == ExecutorConfig()
    with pytest.raises(ConfigError, match="--executor must be one of local, ray"):
        ExecutorConfig.of("dask")


@pytest.mark.parametrize("field", ["workers", "llm_concurrency", "chunk_size"])
def test_counts_must_be_positive(field: str) -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        ExecutorConfig(ExecutorKind.RAY, **{field: 0})  # type: ignore[arg-type]


def test_ray_options_without_ray_executor_are_refused() -> None:
    with pytest.raises(ConfigError, match="only apply to --executor ray"):
        ExecutorConfig(workers=2)


def test_missing_ray_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r"tkgqa\[distributed\]"):
        import_ray()


def test_forwarded_env_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKGQA_HOME", "/somewhere")
    monkeypatch.setenv("UNRELATED_VAR", "x")
    env = forwarded_env()
    assert env["TKGQA_HOME"] == "/somewhere" and "UNRELATED_VAR" not in env


def test_portable_kg_source_makes_paths_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kg.txt").write_text("a\tr\tb\t2000\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert portable_kg_source("kg.txt") == str(tmp_path / "kg.txt")
    assert portable_kg_source("demo") == "demo" and portable_kg_source(None) is None


def test_chunk_size_is_small_and_given_wins() -> None:
    assert chunk_size_for(1000, 2, None) == 16
    assert chunk_size_for(10, 4, None) == 1
    assert chunk_size_for(1000, 2, 5) == 5


def test_eval_cli_lists_the_executor_choices_and_refuses_an_unknown_one() -> None:
    import tkgqa.cli.eval_cmd  # noqa: F401  (registers the commands)
    from tkgqa.cli import app

    result = CliRunner().invoke(app, ["eval", "--dataset", "demo", "--executor", "dask", "--output", "x"])
    assert result.exit_code != 0
    assert "dask" in result.output and "local" in result.output and "ray" in result.output


def test_embed_kg_locally_fills_the_cache_and_resumes() -> None:
    from tkgqa.eval.executor_jobs import embed_kg

    first = embed_kg("demo", "hashing")
    assert first.facts == 400 and first.embedded == first.facts - first.cached and first.executor == "local"
    again = embed_kg("demo", "hashing")
    assert again.embedded == 0 and again.cached == first.embedded + first.cached


def test_a_run_file_sets_the_executor_and_flags_override_it() -> None:
    from tkgqa.cli.run_config import effective_config

    file_values = {"dataset": "demo", "method": "symbolic", "output": "o", "executor": "ray", "workers": 3}
    cfg = effective_config(file_values, {})
    assert (cfg.executor, cfg.workers) == (ExecutorKind.RAY, 3)
    assert effective_config(file_values, {"workers": 2}).workers == 2
    with pytest.raises(ConfigError, match="--executor"):
        effective_config({**file_values, "executor": "spark"}, {})
    with pytest.raises(ConfigError, match="--workers"):
        effective_config({**file_values, "workers": 0}, {})
