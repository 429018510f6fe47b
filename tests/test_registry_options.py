"""Option passing: dict options next to the short string form, ``--method-option``, ``--config run.toml``,
and ARI's typed embedder option."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from tkgqa.cli import _load_commands, app
from tkgqa.cli.run_config import effective_config, read_config_file
from tkgqa.errors import ConfigError
from tkgqa.methods import resolve_method
from tkgqa.methods.ari.config import EmbedderName
from tkgqa.methods.base import merge_options, parse_option_pairs

_load_commands()


@pytest.fixture(autouse=True)
def _home(isolated_home: Path) -> None:
    """Each test starts with an empty ``$TKGQA_HOME``."""


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=True)


# --- KEY=VALUE pairs ----------------------------------------------------------------------------------
def test_option_pairs_nest_and_parse_json() -> None:
    pairs = ["top_k=10", "Fallback-Options.policy=llm", "fallback_options.t_max=3", 'extra={"a": [1, 2]}']
    assert parse_option_pairs(pairs) == {
        "top_k": "10",
        "fallback_options": {"policy": "llm", "t_max": "3"},
        "extra": {"a": [1, 2]},
    }
    assert parse_option_pairs(["spec=a=b"]) == {"spec": "a=b"}  # only the first '=' splits
    for bad in ("novalue", "=x", "a..b=1", "2x=1"):
        with pytest.raises(ConfigError, match="use KEY=VALUE"):
            parse_option_pairs([bad])
    with pytest.raises(ConfigError, match="not valid JSON"):
        parse_option_pairs(["x={oops"])
    with pytest.raises(ConfigError, match="already set"):
        parse_option_pairs(["a=1", "a.b=2"])


IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
PLAIN = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).filter(
    lambda v: v == v.strip() and not v.startswith(("{", "["))
)


@given(st.dictionaries(IDENT, PLAIN, max_size=5))
def test_option_pairs_round_trip(options: dict[str, str]) -> None:
    assert parse_option_pairs(f"{k}={v}" for k, v in options.items()) == options


def test_merge_options_is_deep() -> None:
    base = {"fallback": "ari", "fallback_options": {"policy": "llm", "t_max": 3}}
    assert merge_options(base, {"fallback_options": {"t_max": 5}}) == {
        "fallback": "ari",
        "fallback_options": {"policy": "llm", "t_max": 5},
    }


# --- the dict form and the string form agree ---------------------------------------------------------------
def test_dict_form_equals_string_form() -> None:
    a = resolve_method("ari:policy=symbolic,top_k=7,no_filter=true")
    b = resolve_method("ari", policy="symbolic", top_k=7, no_filter=True)
    assert a.describe() == b.describe()
    assert resolve_method("ari:policy=symbolic,top_k=7", top_k=9).config.top_k == 9  # type: ignore[attr-defined]


# --- the CLI ------------------------------------------------------------------------------------------------
def test_eval_method_options_without_escaping(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = invoke(
        "eval", "--dataset", "demo", "--limit", "3", "--method", "hybrid",
        "--method-option", "fallback=ari", "--fallback-option", "policy=symbolic",
        "--fallback-option", "t_max=3", "--output", str(out), "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n"] == 3 and report["method"]["method"] == "hybrid"
    fallback = report["method"]["fallback"]
    assert fallback["method"] == "ari" and fallback["config"]["policy"] == "symbolic"
    assert fallback["config"]["t_max"] == 3
    on_disk = json.loads((out / "report.json").read_text("utf-8"))
    assert on_disk["run_config"] == report["run_config"]
    assert on_disk["run_config"]["method_options"] == {
        "fallback": "ari",
        "fallback_options": {"policy": "symbolic", "t_max": "3"},
    }


def test_eval_legacy_string_form_still_works(tmp_path: Path) -> None:
    result = invoke(
        "eval", "--dataset", "demo", "--limit", "2",
        "--method", "hybrid:fallback=ari:policy=symbolic;t_max=3",
        "--output", str(tmp_path / "r"), "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    fallback = json.loads(result.stdout)["method"]["fallback"]
    assert (fallback["config"]["policy"], fallback["config"]["t_max"]) == ("symbolic", 3)


def test_eval_config_file_with_flag_overrides(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text(
        f"""
        dataset = "demo"
        method = "hybrid"
        limit = 2
        seed = 4
        output = "{tmp_path / "from_file"}"

        [method_options]
        fallback = "ari"

        [method_options.fallback_options]
        policy = "symbolic"
        t_max = 2
        """.replace("\n        ", "\n"),
        "utf-8",
    )
    out = tmp_path / "from_flag"
    result = invoke(
        "eval", "--config", str(config), "--limit", "3", "--fallback-option", "t_max=4",
        "--output", str(out), "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert report["n"] == 3 and not (tmp_path / "from_file").exists()
    run = report["run_config"]
    assert (run["dataset"], run["limit"], run["seed"], run["output"]) == ("demo", 3, 4, str(out))
    assert run["method_options"] == {
        "fallback": "ari",
        "fallback_options": {"policy": "symbolic", "t_max": "4"},
    }
    assert report["method"]["fallback"]["config"]["t_max"] == 4


def test_a_flag_naming_another_method_drops_the_files_options(tmp_path: Path) -> None:
    config = tmp_path / "run.json"
    config.write_text(
        json.dumps({"dataset": "demo", "method": "ari", "method_options": {"top_k": 3}}), "utf-8"
    )
    cfg = effective_config(read_config_file(config), {"method": "symbolic", "output": "x"})
    assert cfg.method == "symbolic" and cfg.method_options == {}
    same = effective_config(read_config_file(config), {"method": "ari:oracle", "output": "x"})
    assert same.method_options == {"top_k": 3}


def test_config_errors_name_the_setting(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('dataset = "demo"\nmethd = "symbolic"\n', "utf-8")
    with pytest.raises(
        ConfigError, match=r"--method is required.*unknown setting 'methd' in --config; valid:"
    ):
        effective_config(read_config_file(config), {"output": "x"})
    result = invoke("eval", "--dataset", "demo", "--method", "symbolic")
    assert isinstance(result.exception, ConfigError) and "--output is required" in str(result.exception)
    config.write_text("dataset = [", "utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        read_config_file(config)
    yaml = tmp_path / "run.yaml"
    yaml.write_text("dataset: demo\n", "utf-8")
    with pytest.raises(ConfigError, match=r"use a \.toml or \.json file"):
        read_config_file(yaml)


@pytest.mark.parametrize(
    ("setting", "flag"),
    [({"seed": True}, "--seed"), ({"resume": "yes"}, "--resume"), ({"limit": "3"}, "--limit"),
     ({"limit": 2.0}, "--limit"), ({"workers": "2"}, "--workers"), ({"strict": 0}, "--strict")],
)  # fmt: skip
def test_config_values_of_the_wrong_type_are_errors_not_coerced(
    tmp_path: Path, setting: dict[str, Any], flag: str
) -> None:
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"dataset": "demo", "method": "symbolic", **setting}), "utf-8")
    key = next(iter(setting))
    with pytest.raises(ConfigError, match=rf"^{flag} \(or '{key}' in --config\): .*, got {setting[key]!r}$"):
        effective_config(read_config_file(config), {"output": "x"})
    typed = {"seed": 1, "resume": False, "limit": 3, "workers": 2, "strict": True, "sample": "random"}
    config.write_text(json.dumps({"dataset": "demo", "method": "symbolic", "executor": "ray", **typed}))
    cfg = effective_config(read_config_file(config), {"output": "x", "seed": 5, "resume": True})
    assert (cfg.seed, cfg.resume, cfg.limit, cfg.workers, cfg.strict) == (5, True, 3, 2, True)
    assert (cfg.sample, cfg.executor.value) == ("random", "ray")  # Literal/enum settings: strings in a file


def test_ask_takes_method_options(tmp_path: Path) -> None:
    result = invoke(
        "ask", "Is Barack Obama tall?", "--method", "hybrid", "--method-option", "fallback=ari",
        "--fallback-option", "policy=symbolic", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    route = json.loads(result.stdout)["trace"][0]
    assert route["type"] == "route" and route["fallback"] == "ari"


# --- ARI's embedder is a typed option --------------------------------------------------------------------
def test_ari_embedder_typo_is_a_config_error_listing_the_valid_values() -> None:
    with pytest.raises(ConfigError, match=r"embedder='minlm' .*'hashing', 'model2vec', 'minilm' or 'lexical"):
        resolve_method("ari:policy=symbolic,embedder=minlm")
    method = resolve_method("ari:policy=symbolic,embedder=lexical")
    assert method.config.embedder is EmbedderName.LEXICAL  # type: ignore[attr-defined]
    assert method.describe()["config"]["embedder"] == "lexical"


def test_ari_embedder_without_its_extra_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigError, match=r"'minilm' needs sentence_transformers.*tkgqa\[retrieval\]"):
        resolve_method("ari", policy="symbolic", embedder="minilm")
    monkeypatch.setitem(sys.modules, "model2vec", None)
    with pytest.raises(ConfigError, match=r"'model2vec' needs model2vec"):
        resolve_method("ari", policy="symbolic", embedder="model2vec")


def test_service_options_nest_as_dicts() -> None:
    from tkgqa.api.resolve import build_method

    method = build_method(
        "hybrid", options={"fallback": "ari", "fallback_options": {"policy": "symbolic", "t_max": 2}}
    )
    assert method.describe()["fallback"]["config"]["t_max"] == 2
