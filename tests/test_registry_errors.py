from __future__ import annotations

import pytest

from tkgqa.errors import ConfigError, DataError, NotFoundError, ParseError, RateLimitError, TKGQAError
from tkgqa.kg import Fact
from tkgqa.methods import Answer
from tkgqa.registry import Registry
from tkgqa.time import parse_time


class Greeter:
    def __init__(self, spec: str = "world", punct: str = "!") -> None:
        self.spec = spec
        self.punct = punct


def make_registry() -> Registry[Greeter]:
    reg: Registry[Greeter] = Registry("greeter")
    reg.add("hello", Greeter)
    return reg


def test_resolve_by_name_passes_spec_and_kwargs() -> None:
    g = make_registry().resolve("hello:there", punct="?")
    assert (g.spec, g.punct) == ("there", "?")


def test_resolve_class_and_instance() -> None:
    reg = make_registry()
    assert reg.resolve(Greeter, spec="x").spec == "x"
    inst = Greeter()
    assert reg.resolve(inst) is inst


def test_unknown_name_lists_known() -> None:
    with pytest.raises(ConfigError, match="unknown greeter 'nope'; known: hello"):
        make_registry().resolve("nope")


def test_errors_share_root_and_render_context() -> None:
    err = DataError("bad date", path="kg.tsv", line=7)
    assert str(err) == "kg.tsv:7: bad date"
    nf = NotFoundError("entity 'Obma' not found", suggestions=["Obama"])
    assert "did you mean: 'Obama'" in str(nf)
    pe = ParseError("no action", raw="blah", expected="one of the candidate actions")
    assert pe.raw == "blah" and "expected one of the candidate actions" in str(pe)
    assert RateLimitError("429").retryable
    for e in (err, nf, pe, RateLimitError("x")):
        assert isinstance(e, TKGQAError)


def test_answer_to_dict_round_trips_evidence() -> None:
    fact = Fact("A", "visit", "B", parse_time("2014-11-10"), parse_time("2014-11-10"))
    d = Answer(answers=["B"], evidence=[fact], trace=[{"program": "tails(A, visit)"}]).to_dict()
    assert d["evidence"] == [fact.to_dict()]
    assert Fact.from_dict(d["evidence"][0]) == fact
    assert Answer.abstain("no entity").abstained
