"""The obfuscated-entity variant ``K′`` of a KG and its questions (CIK-LLM §4, "Datasets"): the two halves of
every word of every entity label are swapped ("Roberto Baggio" → "Ertorob Giobag"), so the LLM cannot know
the facts in advance while the temporal and relational structure stays the same.

* :func:`obfuscate_word` / :func:`obfuscate_label` — the transform (a word of ``n`` letters splits at
  ``n // 2``; case follows the original word's: Title, UPPER or lower).
* :func:`obfuscate_kg` — a new :class:`TemporalKG` whose entity names are the obfuscated labels (spelled with
  ``_`` when the original names were); relations and times unchanged.
* :func:`obfuscate_question` — the same transform on the question words that are words of some entity label
  (capitalised, non-stopword words only, so "Who"/"In" stay), and on entity answers; time answers unchanged.
  Mentions that are not spelled like the label ("Danish" for Denmark) cannot follow, so measurements link the
  question entities on the original KG first and pass them on (``Question.entities``) in ``K′`` names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ...datasets.base import Question
from ...kg import Fact, KGStore, TemporalKG
from ...time import try_parse_time

_WORD = re.compile(r"[^\W\d_]+")
_KEEP_WORDS = (
    "a an the of and or in on at to for from by with who what when where which whom whose how why did do "
    "does was were is are before after first last"
)
_KEEP = frozenset(_KEEP_WORDS.split())


def obfuscate_word(word: str) -> str:
    """``Roberto`` → ``Ertorob``, ``Baggio`` → ``Giobag``; words shorter than 2 letters stay."""
    if len(word) < 2:
        return word
    half = len(word) // 2
    swapped = word[half:] + word[:half]
    if word.isupper():
        return swapped.upper()
    if word[0].isupper():
        return swapped[0].upper() + swapped[1:].lower()
    return swapped.lower()


def obfuscate_label(label: str) -> str:
    """Every word of ``label`` obfuscated, except lower-case function words ("of", "the")."""

    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        return w if w.islower() and w in _KEEP else obfuscate_word(w)

    return _WORD.sub(sub, label)


def entity_label_words(kg: KGStore) -> set[str]:
    """Lower-cased words of all entity labels (what :func:`obfuscate_question` may rewrite)."""
    out: set[str] = set()
    for name in kg.entities:
        out.update(w.lower() for w in _WORD.findall(kg.label(name)))
    return out


def obfuscate_kg(kg: KGStore, *, name: str | None = None) -> tuple[TemporalKG, dict[str, str]]:
    """``K′`` and the map original name → obfuscated name."""
    mapping: dict[str, str] = {}
    labels: dict[str, str] = {}
    for ent in kg.entities:
        new_label = obfuscate_label(kg.label(ent))
        new_name = new_label.replace(" ", "_") if "_" in ent or " " not in ent else new_label
        base, k = new_name, 2
        while new_name in labels and labels[new_name] != new_label:  # two labels colliding after the swap
            new_name = f"{base}_{k}"
            k += 1
        mapping[ent] = new_name
        labels[new_name] = new_label
    rel_labels = {r: kg.label(r) for r in kg.relations}
    facts = (Fact(mapping[f.subject], f.relation, mapping[f.object], f.start, f.end) for f in _all_facts(kg))
    out = TemporalKG(facts, labels={**labels, **rel_labels}, name=name or f"{kg.name}-obfuscated")
    return out, mapping


def _all_facts(kg: KGStore) -> Iterable[Fact]:
    if isinstance(kg, TemporalKG):
        return iter(kg)
    return kg.facts()


def obfuscate_text(text: str, vocabulary: set[str]) -> str:
    """Swap the halves of capitalised non-stopword words of ``text`` that occur in entity labels."""

    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        if w[0].isupper() and w.lower() in vocabulary and w.lower() not in _KEEP:
            return obfuscate_word(w)
        return w

    return _WORD.sub(sub, text)


def obfuscate_question(question: Question, vocabulary: set[str], mapping: Mapping[str, str]) -> Question:
    """``Q′``: the question text, entity annotations and entity answers of ``question`` in ``K′`` spelling."""

    def answer(a: str) -> str:
        return a if try_parse_time(a.strip()) is not None else obfuscate_label(a)

    return question.model_copy(
        update={
            "text": obfuscate_text(question.text, vocabulary),
            "answers": [answer(a) for a in question.answers],
            "entities": [mapping.get(e, e) for e in question.entities],
            "context": None
            if question.context is None
            else [
                Fact(
                    mapping.get(f.subject, f.subject),
                    f.relation,
                    mapping.get(f.object, f.object),
                    f.start,
                    f.end,
                )
                for f in question.context
            ],
            "extra": {**question.extra, "obfuscated": True},
        }
    )
