"""``tkgqa eval --config run.toml``: the whole of an evaluation run in one file (TOML or JSON).

    # run.toml
    dataset = "multitq"                 # read from the data root (`tkgqa data fetch multitq`), or:
    # data_dir = "path/to/multitq"
    method = "hybrid"
    llm = "openai:gpt-4o-mini"
    limit = 200
    sample = "stratified"
    seed = 0
    output = "runs/hybrid"

    [method_options]
    fallback = "ari"

    [method_options.fallback_options]
    policy = "llm"
    t_max = 3

    # optional: run on Ray workers (extra 'distributed')
    # executor = "ray"
    # workers = 4
    # llm_concurrency = 8

Command-line flags override the file's values (``--method-option``/``--fallback-option`` are merged into
``method_options`` key by key; a ``--method`` naming another method drops the file's ``method_options``).
The effective configuration is recorded in the run's ``report.json`` under ``run_config``. Relative paths
are read from the current directory, like the flags.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from ..errors import ConfigError
from ..eval.executor import ExecutorKind
from ..methods.base import merge_options, parse_option_pairs

SampleMode = Literal["stratified", "random", "first"]
ContextMode = Literal["retrieved", "kg"]


class RunConfig(BaseModel):
    """Everything that defines an evaluation run (``tkgqa eval``); unknown keys are errors, and so is a
    number or a true/false of the wrong type (``seed = true``, ``limit = "3"``: never coerced)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(description="dataset name (DATASETS.names(): multitq, timequestions, …, demo)")
    data_dir: str | None = Field(default=None, description="the dataset folder as released")
    questions: str | None = Field(default=None, description="question file overriding data_dir's")
    kg: str | None = Field(default=None, description="KG file overriding the dataset's ('demo': bundled)")
    context: ContextMode | None = Field(default=None, description="retrieved (per-question facts) or kg")
    method: str = Field(description="method name, optionally with the short options 'name:a=1,b=2'")
    method_options: dict[str, JsonValue] = Field(default_factory=dict, description="the method's options")
    llm: str | None = Field(default=None, description="LLM spec, e.g. openai:gpt-4o-mini")
    policy: str | None = Field(
        default=None, description="ARI policy: llm, symbolic or oracle (methods with a policy only)"
    )
    limit: int | None = Field(default=None, ge=1, strict=True, description="evaluate this many questions")
    sample: SampleMode | None = Field(
        default=None, description="how limit chooses the questions (needs limit)"
    )
    seed: int = Field(default=0, strict=True, description="seed of the random/stratified sample")
    output: str = Field(description="run folder (results.jsonl, report.*)")
    resume: bool = Field(default=True, strict=True, description="skip questions already in the run")
    retry_errors: bool = Field(default=True, strict=True, description="a resume answers the error rows again")
    strict: bool = Field(
        default=False, strict=True, description="missing optional inputs are errors, not warnings"
    )
    as_of: str | None = Field(
        default=None, description="answer over the KG as of this time (kg.as_of, clipped); 'all': K_all"
    )
    obfuscate: bool = Field(
        default=False,
        strict=True,
        description="ask the questions Q′ over K_all ∪ K′ (entity labels obfuscated)",
    )
    executor: ExecutorKind = Field(
        default=ExecutorKind.LOCAL, description="local (this process) or ray (Ray workers)"
    )
    ray_address: str | None = Field(default=None, description="Ray cluster to join (default RAY_ADDRESS)")
    workers: int | None = Field(
        default=None, ge=1, strict=True, description="Ray workers (default: one per cluster CPU)"
    )
    llm_concurrency: int | None = Field(
        default=None, ge=1, strict=True, description="Ray: LLM calls in flight over all workers at most"
    )


#: Field → the flag that sets it (for error messages).
FLAGS = {name: "--" + name.replace("_", "-") for name in RunConfig.model_fields}


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The settings of a ``.toml`` or ``.json`` run file (keys may use ``-`` for ``_``)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"run config {str(p)!r} does not exist")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"run config {str(p)!r} is not UTF-8 text ({exc.reason})") from None
    try:
        if p.suffix.lower() == ".toml":
            data: Any = tomllib.loads(text)
        elif p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(f"run config {str(p)!r}: use a .toml or .json file")
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError/JSONDecodeError, huge ints, deep nesting
        raise ConfigError(
            f"run config {str(p)!r} is not valid {p.suffix[1:].upper()}: {str(exc)[:300]}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"run config {str(p)!r} must hold a table/object of settings")
    return {str(k).replace("-", "_"): v for k, v in data.items()}


def _method_name(spec: Any) -> str:
    return str(spec).partition(":")[0].strip().lower() if spec is not None else ""


def effective_config(
    file_values: Mapping[str, Any],
    flags: Mapping[str, Any],
    method_options: Mapping[str, Any] | None = None,
    *,
    source: str = "--config",
) -> RunConfig:
    """The run's configuration: ``file_values`` overridden by the ``flags`` that were given (not ``None``)
    and ``method_options`` merged into the file's (key by key). ConfigError names what is missing or
    wrong, with the flag that sets it; a ``sample`` without a ``limit`` (it would choose nothing) is one."""
    data = dict(file_values)
    given = {k: v for k, v in flags.items() if v is not None}
    if "method" in given and _method_name(given["method"]) != _method_name(data.get("method")):
        data.pop("method_options", None)  # they were the other method's
    data.update(given)
    base_options = data.get("method_options") or {}
    if not isinstance(base_options, Mapping):
        raise ConfigError(f"{source}: method_options must be a table of settings, got {base_options!r}")
    data["method_options"] = merge_options(base_options, method_options or {})
    cfg = _validated(data, source)
    if cfg.sample is not None and cfg.limit is None:
        raise ConfigError(
            f"--sample {cfg.sample} (or 'sample' in {source}) chooses which --limit questions are evaluated; "
            "without --limit every question is: give --limit N, or drop --sample"
        )
    return cfg


def _validated(data: Mapping[str, Any], source: str) -> RunConfig:
    """``data`` as a RunConfig; a ConfigError naming each wrong or missing setting with its flag."""
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            field = str(err["loc"][0]) if err["loc"] else "?"
            where = FLAGS.get(field, field)
            if field not in RunConfig.model_fields:
                problems.append(f"unknown setting {field!r} in {source}; valid: {', '.join(FLAGS)}")
            elif err["type"] == "missing":
                problems.append(f"{where} is required (or {field!r} in {source})")
            else:
                problems.append(f"{where} (or {field!r} in {source}): {err['msg']}, got {err['input']!r:.80}")
        raise ConfigError("; ".join(problems)) from None


def cli_method_options(method_option: list[str] | None, fallback_option: list[str] | None) -> dict[str, Any]:
    """``--method-option`` pairs, with ``--fallback-option K=V`` read as ``fallback_options.K=V``."""
    options = parse_option_pairs(method_option or [])
    fallback = parse_option_pairs(fallback_option or [], option="--fallback-option")
    return merge_options(options, {"fallback_options": fallback}) if fallback else options
