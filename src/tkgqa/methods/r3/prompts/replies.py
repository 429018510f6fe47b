"""What R3's parsers (:mod:`.ours`, :mod:`.paper`) return: the verdict, a
surfaced axiom, the grounded answer's cited steps and the premise checks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


class PremiseStatus(StrEnum):
    SATISFIED = "satisfied"
    VIOLATED = "violated"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Axiom:
    """A surfaced commonsense axiom: premises ⇒ conclusion, with the one-sentence rule it came as."""

    rule: str
    premises: tuple[str, ...]
    conclusion: str = ""
    hint: bool = False  # no rule: the paper's "hint or definition of terms" reply, kept as the guidance

    def text(self) -> str:
        """The axiom as one text (what pruning embeds)."""
        parts = [self.rule, *(p for p in self.premises if p != self.rule)]
        return " ".join(parts + ([self.conclusion] if self.conclusion else []))

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "rule": self.rule,
            "premises": list(self.premises),
            "conclusion": self.conclusion,
        }
        if self.hint:
            out["hint"] = True
        return out


@dataclass(frozen=True)
class Step:
    """One reasoning step and what it cites: fact ids (``F3``), rule ids (``R1``), or an assumption."""

    text: str
    facts: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    assumption: bool = False

    @property
    def kind(self) -> str:
        """``fact`` (cites facts), ``axiom`` (cites rules only), ``assumption`` (marked as one) or
        ``reasoning`` (cites and assumes nothing)."""
        if self.facts:
            return "fact"
        if self.rules:
            return "axiom"
        return "assumption" if self.assumption else "reasoning"

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "facts": list(self.facts), "rules": list(self.rules), "kind": self.kind}


@dataclass(frozen=True)
class GroundedAnswer:
    steps: tuple[Step, ...]
    verdict: Verdict

    @property
    def cited_facts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for s in self.steps for f in s.facts))


@dataclass(frozen=True)
class PremiseCheck:
    premise: int  # 1-based
    status: PremiseStatus
    facts: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "premise": self.premise,
            "status": str(self.status),
            "facts": list(self.facts),
            "note": self.note,
        }
