"""ARI offline measurements (no LLM): the Fig. 8 prompt an LLM policy would see, counted in tokens, and the
symbolic/oracle policies' Hits@1, under ARI settings given on the command line.

The episode is driven by an offline policy (``symbolic``: the symbolic reasoner's program compiled to
actions; ``oracle``: the gold-guided search); at every step the prompt that :class:`LLMPolicy` would send for
the same view is built and counted with :func:`tkgqa.llm.tokens.count_message_tokens` (cl100k when cached
offline, else the word-based approximation). Usage::

    python bench/ari_prompt_tokens.py --limit 60 --policy symbolic "preset=paper" "preset=ours" \\
        "preset=paper,truncate_results=true" "preset=ours,fallback_answer=false"
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from tkgqa.datasets import load_dataset
from tkgqa.eval.runner import select_questions
from tkgqa.kg.loaders import load_kg
from tkgqa.llm.tokens import count_message_tokens, counter_name
from tkgqa.methods import resolve_method
from tkgqa.methods.ari.config import ExampleSet
from tkgqa.methods.ari.gold import value_matches_gold
from tkgqa.methods.ari.policies import ActionPromptStyle, Decision, LLMPolicy, Policy, StepView
from tkgqa.testing import FakeLLM


class CountingPolicy:
    """Wraps an offline policy; counts the tokens of the prompt an LLM policy would get at each step."""

    def __init__(self, inner: Policy, prompt: LLMPolicy, methodology: str | None) -> None:
        self.inner = inner
        self.prompt = prompt
        self.name = inner.name
        self.tokens: list[int] = []
        self.methodology = methodology

    def choose(self, view: StepView) -> Decision:
        self.tokens.append(count_message_tokens(self.prompt.messages(view)))
        return self.inner.choose(view)


def run(setting: str, questions: list[Any], kg: Any, policy: str) -> dict[str, float]:
    options = dict(p.split("=", 1) for p in setting.split(",") if p)
    method: Any = resolve_method("ari", policy=policy, **options)
    c = method.config
    style = ActionPromptStyle(n_examples=c.n_examples, examples=ExampleSet(c.examples))
    prompt = LLMPolicy(FakeLLM(), choice_mode="free", style=style)
    original = method.make_policy
    counters: list[CountingPolicy] = []

    def make_policy(question: Any, store: Any) -> Policy:
        counting = CountingPolicy(original(question, store), prompt, None)
        counters.append(counting)
        return counting

    method.make_policy = make_policy
    hits = 0
    start = time.time()
    for q in questions:
        answer = method.answer(q, kg)
        hits += bool(answer.answers) and value_matches_gold(kg, answer.answers[0], q.answers)
    tokens = [t for cp in counters for t in cp.tokens]
    per_q = [sum(cp.tokens) for cp in counters]
    return {
        "hits": hits,
        "n": len(questions),
        "steps": len(tokens),
        "prompt_tokens_per_step": statistics.mean(tokens) if tokens else 0.0,
        "prompt_tokens_max": max(tokens, default=0),
        "prompt_tokens_per_question": statistics.mean(per_q) if per_q else 0.0,
        "seconds": time.time() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("settings", nargs="+", help="ARI options, e.g. 'preset=paper,truncate_results=true'")
    parser.add_argument("--data-dir", default="../shared/data/multitq")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", default="symbolic", choices=["symbolic", "oracle"])
    args = parser.parse_args()
    ds = load_dataset("multitq", args.data_dir)
    assert ds.kg_path is not None
    kg = load_kg(str(ds.kg_path))
    questions = select_questions([q for q in ds.questions if q.answers], args.limit, "stratified", args.seed)
    print(f"tokens counted with {counter_name()}; {len(questions)} questions; policy {args.policy}")
    print("| setting | Hits@1 | steps | prompt tokens/step (mean) | max | prompt tokens/question |")
    print("|---|---|---|---|---|---|")
    for setting in args.settings:
        r = run(setting, questions, kg, args.policy)
        print(
            f"| `{setting}` | {r['hits']}/{r['n']} | {r['steps']} | {r['prompt_tokens_per_step']:.0f} | "
            f"{r['prompt_tokens_max']} | {r['prompt_tokens_per_question']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
