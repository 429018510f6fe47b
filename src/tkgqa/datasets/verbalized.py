"""Split verbalised facts ``"S rel O from Y1 to Y2."`` (TimeR4's retrieved facts, ARI's tool output) into
:class:`~tkgqa.kg.Fact` objects.

Rule: every whole-word occurrence of a relation label (Wikidata property labels: the label file(s) given plus
:data:`~tkgqa.datasets.wikidata.EXTRA_RELATION_LABELS`) after the first word is a candidate split; the best
candidate has, in order: a non-empty object, a *known* subject, the longest relation label, the shortest
subject. Known subjects are the subjects/objects of the facts that have exactly one candidate split (pass 1
of :meth:`FactSplitter.parse_many`) plus any entity labels given. A weak label (``of``) is used only when no
other label occurs. A fact whose only split leaves an empty object (TimeR4 drops literal values:
``"Taraz population  from 1989 to 1989."``) has status ``no_object``; one without any label ``unsplit``.
Years 1 and 2916 (and an empty end) are the open markers of the TimeQuestions/CronQuestions KGs (→ ``None``);
a start after the end (a few source errors) is swapped (status ``reversed``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import DataError
from ..kg.fact import Fact
from ..time import parse_bound
from .wikidata import EXTRA_RELATION_LABELS, WEAK_RELATION_LABELS

Status = Literal["ok", "reversed", "unsplit", "no_object", "no_time", "bad_time"]
Split = tuple[str, str, str]
_FACT = re.compile(r"^(?P<body>.*?)\s+from\s+(?P<start>[+-]?\d*)\s+to\s+(?P<end>[+-]?\d*)\s*\.?\s*$", re.S)


@dataclass(frozen=True, slots=True)
class ParsedFact:
    """The outcome of parsing one verbalised fact: ``fact`` is set when ``status`` is ``ok`` or ``reversed``
    (start after end in the source: the two are swapped)."""

    text: str
    status: Status
    fact: Fact | None = None


class FactSplitter:
    """Splits verbalised facts with a relation label list (see the module docstring for the rule)."""

    def __init__(
        self,
        relation_labels: Iterable[str] = (),
        entity_labels: Collection[str] = frozenset(),
        *,
        include_extra: bool = True,
    ) -> None:
        labels = {lab.strip() for lab in relation_labels if lab.strip()}
        if include_extra:
            labels.update(EXTRA_RELATION_LABELS)
        weak = {w for w in WEAK_RELATION_LABELS if include_extra and w not in labels}
        self._by_first: dict[str, list[tuple[str, ...]]] = {}
        for lab in labels | weak:
            words = tuple(lab.split())
            self._by_first.setdefault(words[0], []).append(words)
        self._weak = {tuple(w.split()) for w in weak}
        self._entities = entity_labels
        self.n_relation_labels = len(labels)

    def candidates(self, body: str) -> list[Split]:
        """Every ``(subject, relation, object)`` split of ``body`` at a relation label (object may be "")."""
        words = body.split()
        strong: list[Split] = []
        weak: list[Split] = []
        for i in range(1, len(words)):
            for label in self._by_first.get(words[i], ()):
                j = i + len(label)
                if tuple(words[i:j]) == label:
                    found = (" ".join(words[:i]), " ".join(label), " ".join(words[j:]))
                    (weak if label in self._weak else strong).append(found)
        return strong or weak

    def split(self, body: str, known: Collection[str] = frozenset()) -> Split | None:
        """The best split of ``body``, or ``None`` if no relation label occurs in it."""
        found = self.candidates(body)
        if not found:
            return None

        def score(c: Split) -> tuple[int, int, int, int]:
            s, r, o = c
            return (int(bool(o)), int(s in known or s in self._entities), len(r), -len(s))

        return max(found, key=score)

    def parse(self, text: str, known: Collection[str] = frozenset()) -> ParsedFact:
        """Parse one verbalised fact (``"S rel O from Y1 to Y2."``)."""
        m = _FACT.match(text.strip())
        if m is None:
            return ParsedFact(text, "no_time")
        try:
            start, end = parse_bound(m["start"]), parse_bound(m["end"])
        except DataError:
            return ParsedFact(text, "bad_time")
        reversed_times = start is not None and end is not None and start.first_day > end.last_day
        if reversed_times:
            start, end = end, start
        parts = self.split(m["body"], known)
        if parts is None:
            return ParsedFact(text, "unsplit")
        if not parts[2]:
            return ParsedFact(text, "no_object")
        status: Status = "reversed" if reversed_times else "ok"
        return ParsedFact(text, status, Fact(parts[0], parts[1], parts[2], start, end))

    def known_names(self, texts: Iterable[str]) -> set[str]:
        """Subjects and objects of the facts with exactly one candidate split (pass 1 of ``parse_many``)."""
        known: set[str] = set()
        for text in texts:
            m = _FACT.match(text.strip())
            if m is None:
                continue
            found = {c for c in self.candidates(m["body"]) if c[2]}
            if len(found) == 1:
                s, _, o = found.pop()
                known.update((s, o))
        return known

    def parse_many(self, texts: Sequence[str]) -> list[ParsedFact]:
        """Parse many facts; unambiguous ones first teach which names are entities (see module docstring)."""
        known = self.known_names(texts)
        return [self.parse(t, known) for t in texts]


def status_counts(parsed: Iterable[ParsedFact]) -> Counter[str]:
    return Counter(p.status for p in parsed)


def read_label_file(path: str | Path) -> dict[str, str]:
    """``id<TAB>label`` lines (Wikidata ``wd_id2*_text.txt``) as a dict; malformed lines raise DataError."""
    out: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                ident, sep, label = line.partition("\t")
                if not sep:
                    raise DataError(
                        f"expected 'id<TAB>label', got {line[:80]!r}", path=str(path), line=lineno
                    )
                out[ident] = label
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    return out
