"""The obfuscated-entity evaluation setting of the CIK-LLM paper (§4, Fig. 6), usable with any method: the
variant ``K′`` of a KG and its questions ``Q′``, in which the two halves of every word of every entity label
are swapped ("Roberto Baggio" → "Ertorob Giobag"), so the LLM cannot know the facts in advance while the
temporal and relational structure stays the same. Used by :mod:`tkgqa.eval.kg_view` (``tkgqa eval
--obfuscate``, ``tkgqa analyze coverage --obfuscate``); :mod:`tkgqa.methods.cik` re-exports the public names.

* :func:`obfuscate_word` / :func:`obfuscate_label` — the transform (a word of ``n`` letters splits at
  ``n // 2``; case follows the original word's: Title, UPPER or lower).
* :func:`obfuscate_kg` — from any :class:`KGStore`, a new in-memory :class:`TemporalKG` whose entity names
  are the obfuscated labels (spelled with ``_`` when the original names were); relations and times
  unchanged.
* :func:`obfuscate_question` — the same transform on the question words that are words of some entity label
  (capitalised, non-stopword words only, so "Who"/"In" stay; month and day names stay too, so "in May 2009"
  is still a time), and on entity answers; time answers unchanged.
  Mentions that are not spelled like the label ("Danish" for Denmark) cannot follow, so measurements link the
  question entities on the original KG first and pass them on (``Question.entities``) in ``K′`` names.
* :func:`obfuscate_setting` — the paper's evaluation setting (§4, "Comparison with a different TKG", Fig. 6):
  the questions ``Q′`` asked over ``K_all ∪ K′`` (``merge=True``, the default) or over ``K′`` alone; what
  ``tkgqa eval --obfuscate`` and ``tkgqa analyze coverage --obfuscate`` run. An obfuscated name that equals
  an original one (a label the swap leaves unchanged, such as "Toto") gets a ``_K′`` suffix so the two
  entities stay apart in the merged KG.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..datasets.base import Question
from ..kg import Fact, KGStore, TemporalKG
from ..time import MONTHS, try_parse_time

_WORD = re.compile(r"[^\W\d_]+")
_KEEP_WORDS = (
    "a an the of and or in on at to for from by with who what when where which whom whose how why did do "
    "does was were is are before after first last"
)
_KEEP = frozenset(_KEEP_WORDS.split())
# Time words of a question stay as they are ("in May 2009" is a time, not "Theresa May").
_WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
_TIME_WORDS = frozenset(MONTHS) | _WEEKDAYS


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


def obfuscate_kg(
    kg: KGStore, *, name: str | None = None, avoid: Collection[str] = ()
) -> tuple[TemporalKG, dict[str, str]]:
    """``K′`` and the map original name → obfuscated name; no obfuscated name is in ``avoid`` (the
    original names, when ``K′`` is merged with the original KG)."""
    mapping: dict[str, str] = {}
    labels: dict[str, str] = {}
    for ent in kg.entities:
        new_label = obfuscate_label(kg.label(ent))
        new_name = new_label.replace(" ", "_") if "_" in ent or " " not in ent else new_label
        if new_name in avoid:
            new_name += "_K′"
        base, k = new_name, 2
        while (new_name in labels and labels[new_name] != new_label) or new_name in avoid:  # collisions
            new_name = f"{base}_{k}"
            k += 1
        mapping[ent] = new_name
        labels[new_name] = new_label
    rel_labels = {r: kg.label(r) for r in kg.relations}
    facts = (Fact(mapping[f.subject], f.relation, mapping[f.object], f.start, f.end) for f in kg)
    out = TemporalKG(facts, labels={**labels, **rel_labels}, name=name or f"{kg.name}-obfuscated")
    return out, mapping


def obfuscate_text(text: str, vocabulary: set[str]) -> str:
    """Swap the halves of capitalised words of ``text`` that occur in entity labels (not stopwords, not
    month or day names: those are the question's times)."""

    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        low = w.lower()
        if w[0].isupper() and low in vocabulary and low not in _KEEP and low not in _TIME_WORDS:
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
            "answer_ids": [mapping.get(a, a) for a in question.answer_ids],
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


@dataclass(frozen=True)
class ObfuscatedSetting:
    """Questions ``Q′``, the KG they are asked over and what was done (for ``report.json``)."""

    questions: list[Question]
    kg: TemporalKG
    mapping: dict[str, str]
    merged: bool
    questions_linked: int  # questions whose entities were linked on the original KG (none were given)

    def describe(self) -> dict[str, object]:
        return {
            "obfuscated": True,
            "kg": "K_all ∪ K′" if self.merged else "K′",
            "facts": len(self.kg),
            "entities_renamed": len(self.mapping),
            "questions": len(self.questions),
            "questions_linked_on_original_kg": self.questions_linked,
            "rule": "the halves of each word of each entity label swapped (Roberto Baggio → Ertorob Giobag)",
        }


def obfuscate_setting(
    questions: Sequence[Question], kg: KGStore, *, merge: bool = True, max_entities: int = 3
) -> ObfuscatedSetting:
    """``Q′`` over ``K_all ∪ K′`` (``merge``) or ``K′``: each question's entities are linked on the original
    KG first (unless the dataset gives them), then text, entities, answers (labels and ids) and context facts
    are rewritten in ``K′`` spelling (:func:`obfuscate_question`)."""
    from .link import QuestionLinker

    avoid = set(kg.entities) if merge else set()
    k_prime, mapping = obfuscate_kg(kg, avoid=avoid)
    linker = QuestionLinker(max_entities)
    vocab = entity_label_words(kg)
    out: list[Question] = []
    linked = 0
    for q in questions:
        if not any(kg.has_entity(e) for e in q.entities):
            q = q.model_copy(update={"entities": linker(q, kg)})
            linked += 1
        out.append(obfuscate_question(q, vocab, mapping))
    if not merge:
        return ObfuscatedSetting(out, k_prime, mapping, False, linked)
    labels = {name: kg.label(name) for name in (*kg.entities, *kg.relations)}
    labels.update({name: k_prime.label(name) for name in k_prime.entities})
    merged = TemporalKG(kg, labels=labels, name=f"{kg.name}+obfuscated")
    merged.add(k_prime)
    return ObfuscatedSetting(out, merged, mapping, True, linked)
