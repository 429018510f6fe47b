"""How answers are scored. All rules live here.

**Normalisation** (:func:`normalize_answer`, applied to gold answers and predictions alike; implemented once
in :mod:`tkgqa.query.text.normalize` so that methods' diagnostics and this harness agree):

1. A string that parses as a time (:func:`tkgqa.time.try_parse_time`: ``2012``, ``2012-05``,
   ``May 2012``, ``Jun 25th, 2006``, ``1994-03-01T00:00:00Z`` …) becomes its ISO form **at the granularity
   written**: ``"May 2012"`` → ``2012-05``, ``"Jun 25th, 2006"`` → ``2006-06-25``.
2. Anything else: accents stripped (NFKD), case folded, ``_`` and punctuation turned into single spaces,
   whitespace collapsed (``Citizen_(North_Korea)`` → ``citizen north korea``); if that text parses as a time
   (``march-2015``) rule 1 applies to it. Normalisation is idempotent.
3. A gold answer is the set of normal forms of its label *and* its id (``answer_ids`` aligned with
   ``answers``: a Wikidata QID, a KG name): a prediction equal to either counts. A prediction that is a KG
   name/QID also counts through its label (``label=`` callable, e.g. ``kg.label``).

**Strict** Hits@k (:func:`gold_rank`): one of the first ``k`` ranked predictions equals a gold answer after
normalisation. No coarsening: a day predicted for a month question is a miss (as MultiTQ's own evaluation);
a year predicted for a day question too.

**Lenient** hit (:func:`lenient_hit`, the substring rule of TimeR4/RTQA): a strict hit at any rank, or the
text form (rule 2) of a gold answer — its label, id or ISO time — occurs anywhere in the text form of the
output (the joined predictions plus the method's raw output). Plain substring, as in those papers
(``iran`` is found in ``iranian``).

**Closed answers** (yes/no questions, true/false claims, a choice among listed options: the question's
``extra["choices"]`` lists the possible answers — CR-LT-KGQA, Recipe-MPR): the lenient hit is the strict hit
at any rank. The substring rule would count any output that merely mentions ``yes`` or an option's words.

**Set metrics** (:func:`set_scores`, CLQA-Wiki): predictions and gold answers are matched one-to-one by
normal forms; precision = matched / distinct predictions, recall = matched / gold answers, F1 their harmonic
mean, exact-set = precision = recall = 1. No prediction → all 0 (a question without gold: all 0 too). Every
``report.json`` carries their means (``set_recall``, ``set_precision``, ``set_f1``, ``exact_set``); for the
datasets of :data:`SET_SCORED` (CLQA-Wiki, which LPKG scores by recall and precision, not EM/Hits@1) every
breakdown group carries ``recall``, ``precision`` and ``exact_set`` too.

**Breakdowns** (:func:`breakdown`) follow the papers' tables: MultiTQ overall / qlabel (Single, Multiple) /
answer_type (entity, time) / qtype / time_level; CronQuestions simple vs complex (simple_entity, simple_time
= simple; before_after, first_last, time_join = complex) and per type; TimeQuestions per type (Explicit,
Implicit, Temp.Ans, Ordinal; multi-label: a question counts in each of its types) and answer type;
CR-LT-KGQA per reasoning strategy and Recipe-MPR per query type (both multi-label ``types``).

**Paired comparison** (:func:`mcnemar`) of two runs on the same questions: ``b`` = questions only run A gets
right (strict Hits@1), ``c`` = only run B; exact two-sided binomial test when ``b + c < 25``, otherwise
χ² with continuity correction ``(|b - c| - 1)² / (b + c)`` (1 degree of freedom).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..datasets.cronquestions import complexity
from ..query.text.normalize import normalize_answer, normalize_text

LabelFn = Callable[[str], str]
EXACT_THRESHOLD = 25


# --- normalisation ------------------------------------------------------------------------------------
def answer_forms(*names: str | None) -> frozenset[str]:
    """Normal forms of the given spellings of one answer (label, id …), empty ones dropped."""
    return frozenset(f for f in (normalize_answer(n) for n in names if n is not None) if f)


def prediction_forms(prediction: str, label: LabelFn | None = None) -> frozenset[str]:
    """Normal forms of a prediction and (through ``label``) of the label of the name it may be."""
    names = [prediction]
    if label is not None:
        with contextlib.suppress(Exception):  # a label lookup must never break scoring
            names.append(label(prediction))
    return answer_forms(*names)


@dataclass(frozen=True)
class Gold:
    """Gold answers as normal-form sets (one per answer) plus their text forms for the lenient rule."""

    items: tuple[frozenset[str], ...]
    surfaces: tuple[str, ...]

    @classmethod
    def of(cls, answers: Sequence[str], answer_ids: Sequence[str] = ()) -> Gold:
        """Pair ``answers[i]`` with ``answer_ids[i]`` when the lists align; else every id is one more
        accepted spelling of every answer (e.g. a single QID for a single label)."""
        if len(answer_ids) == len(answers):
            items = [answer_forms(a, i) for a, i in zip(answers, answer_ids, strict=True)]
        else:
            items = [answer_forms(a, *answer_ids) for a in answers]
        surfaces = {normalize_text(x) for x in (*answers, *answer_ids)}
        surfaces |= {f for item in items for f in item}
        return cls(tuple(i for i in items if i), tuple(sorted(s for s in surfaces if s)))

    @classmethod
    def of_question(cls, question: Any) -> Gold:
        return cls.of(list(question.answers), list(question.answer_ids))

    def __len__(self) -> int:
        return len(self.items)

    def matches(self, forms: frozenset[str]) -> int | None:
        """Index of the first gold answer sharing a normal form with ``forms``, else ``None``."""
        for i, item in enumerate(self.items):
            if item & forms:
                return i
        return None


# --- per-question metrics -------------------------------------------------------------------------------
def gold_rank(predictions: Sequence[str], gold: Gold, label: LabelFn | None = None) -> int | None:
    """1-based rank of the first prediction equal to a gold answer (strict), or ``None``."""
    for rank, pred in enumerate(predictions, 1):
        if gold.matches(prediction_forms(pred, label)) is not None:
            return rank
    return None


def strict_hit(predictions: Sequence[str], gold: Gold, k: int = 1, label: LabelFn | None = None) -> bool:
    """Strict Hits@k for one question."""
    rank = gold_rank(predictions[:k], gold, label)
    return rank is not None


def lenient_hit(
    predictions: Sequence[str], raw_output: str, gold: Gold, label: LabelFn | None = None
) -> bool:
    """A gold answer appears anywhere in the output (see the module docstring)."""
    if gold_rank(predictions, gold, label) is not None:
        return True
    text = normalize_text(" | ".join([*predictions, raw_output or ""]))
    if not text:
        return False
    padded = f" {text} "
    return any(s in padded for s in gold.surfaces)


@dataclass(frozen=True)
class SetScores:
    precision: float
    recall: float
    f1: float
    exact: bool


def set_scores(predictions: Iterable[str], gold: Gold, label: LabelFn | None = None) -> SetScores:
    """Set precision / recall / F1 / exact match (one-to-one matching of predictions to gold answers)."""
    preds: list[frozenset[str]] = []
    for p in predictions:
        forms = prediction_forms(p, label)
        if forms and forms not in preds:
            preds.append(forms)
    if not preds or not gold.items:
        return SetScores(0.0, 0.0, 0.0, False)
    used: set[int] = set()
    matched = 0
    for forms in preds:
        for i, item in enumerate(gold.items):
            if i not in used and item & forms:
                used.add(i)
                matched += 1
                break
    precision, recall = matched / len(preds), matched / len(gold.items)
    f1 = 0.0 if matched == 0 else 2 * precision * recall / (precision + recall)
    return SetScores(precision, recall, f1, precision == 1.0 and recall == 1.0)


@dataclass(frozen=True)
class QuestionScore:
    """Every metric of one answered question."""

    rank: int | None
    strict_hit: bool
    lenient_hit: bool
    precision: float
    recall: float
    f1: float
    exact_set: bool


def score_answer(
    question: Any, predictions: Sequence[str], raw_output: str = "", label: LabelFn | None = None
) -> QuestionScore:
    """Score ranked ``predictions`` (and the raw output text) against ``question``'s gold answers."""
    gold = Gold.of_question(question)
    rank = gold_rank(predictions, gold, label)
    sets = set_scores(predictions, gold, label)
    extra = getattr(question, "extra", None)
    closed = isinstance(extra, Mapping) and bool(extra.get("choices"))
    return QuestionScore(
        rank=rank,
        strict_hit=rank == 1,
        lenient_hit=rank is not None or (not closed and lenient_hit(predictions, raw_output, gold, label)),
        precision=sets.precision,
        recall=sets.recall,
        f1=sets.f1,
        exact_set=sets.exact,
    )


# --- breakdowns ---------------------------------------------------------------------------------------
ORDER: dict[str, tuple[str, ...]] = {
    "qlabel": ("Single", "Multiple", "simple", "complex"),
    "complexity": ("simple", "complex"),
    "answer_type": ("entity", "time", "value"),
    "time_level": ("year", "month", "day"),
    "types": ("Explicit", "Implicit", "Temp.Ans", "Ordinal"),
    "qtype": (
        "equal", "before_after", "first_last", "equal_multi", "after_first", "before_last",
        "simple_entity", "simple_time", "time_join",
    ),
}  # fmt: skip
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "multitq": ("qlabel", "answer_type", "qtype", "time_level"),
    "cronquestions": ("complexity", "answer_type", "qtype"),
    "timequestions": ("types", "answer_type"),
    "clqa": ("qtype",),
    "crlt_qa": ("types",),
    "crlt_claims": ("types",),
    "recipe_mpr": ("types",),
}
DEFAULT_DIMENSIONS = ("qlabel", "answer_type", "qtype", "time_level", "types")


def _values(row: Mapping[str, Any], dim: str) -> list[str]:
    if dim == "complexity":
        value = complexity(row.get("qtype"))
        return [value] if value else []
    value = row.get(dim)
    if isinstance(value, list):
        return [str(v) for v in value]
    return [] if value in (None, "") else [str(value)]


#: Datasets scored by set recall/precision in their paper (CLQA-Wiki: LPKG §5, "in CLQA-Wiki, we use Recall
#: and Precision"): their breakdowns carry the set metrics per group too.
SET_SCORED = frozenset({"clqa"})


def group_stats(rows: Sequence[Mapping[str, Any]], *, set_metrics: bool = False) -> dict[str, Any]:
    """``n`` and the mean strict/lenient Hits@1 (and set F1) of ``rows``; ``set_metrics``: also the mean set
    recall, precision and exact-set match."""
    n = len(rows)

    def mean(key: str) -> float:
        return sum(float(r.get(key) or 0.0) for r in rows) / n

    if n == 0:
        return {"n": 0, "strict_hits@1": 0.0, "lenient_hits@1": 0.0}
    out = {
        "n": n,
        "strict_hits@1": mean("strict_hit"),
        "lenient_hits@1": mean("lenient_hit"),
        "f1": mean("f1"),
    }
    if set_metrics:
        out.update(recall=mean("recall"), precision=mean("precision"), exact_set=mean("exact_set"))
    return out


def breakdown(rows: Sequence[Mapping[str, Any]], dataset: str | None = None) -> dict[str, Any]:
    """``{"overall": stats, dim: {value: stats}}`` for the dimensions of ``dataset``'s paper tables
    (any dataset: the dimensions its rows fill). Values are ordered as in the papers, then alphabetically."""
    sets = (dataset or "") in SET_SCORED
    out: dict[str, Any] = {"overall": group_stats(rows, set_metrics=sets)}
    dims = DIMENSIONS.get(dataset or "", DEFAULT_DIMENSIONS)
    for dim in dims:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for row in rows:
            for value in _values(row, dim):
                groups.setdefault(value, []).append(row)
        if not groups:
            continue
        order = ORDER.get(dim, ())
        keys = sorted(groups, key=lambda v: (order.index(v) if v in order else len(order), v))
        out[dim] = {k: group_stats(groups[k], set_metrics=sets) for k in keys}
    return out


# --- paired comparison ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class McNemarResult:
    n: int
    b: int
    c: int
    statistic: float
    p_value: float
    method: str  # "exact" or "chi2"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar(a: Sequence[bool], b: Sequence[bool], exact_threshold: int = EXACT_THRESHOLD) -> McNemarResult:
    """McNemar's test on paired outcomes (``a[i]``, ``b[i]`` = run A / run B right on question ``i``)."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes differ in length: {len(a)} vs {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = only_a + only_b
    if n == 0:
        return McNemarResult(len(a), 0, 0, 0.0, 1.0, "exact")
    if n < exact_threshold:
        k = min(only_a, only_b)
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
        return McNemarResult(len(a), only_a, only_b, float(k), min(1.0, 2 * tail), "exact")
    stat = (abs(only_a - only_b) - 1) ** 2 / n
    return McNemarResult(len(a), only_a, only_b, stat, math.erfc(math.sqrt(stat / 2)), "chi2")
