"""Surface rules for questions over a small per-question context KG (used by :mod:`.contextual`).

* :func:`exact_spans` — a mention whose label occurs word for word in the question gets that occurrence as
  its span (the fuzzy scan can stretch a span over a neighbour: "… of France has position held as king of
  France").
* :func:`phrase_positions` — where a relation label occurs word for word in the question (templated
  questions name their relations: "what is *nominated for* of X that is *statement is subject of* is Y").
* :func:`year_in_name` — the year an event's name carries ("1983 World Series"): a time question whose facts
  carry no time is answered by such events.
* :func:`alias_mentions` — common English short names of countries ("US", "U.S.", "America", "UK", "Britain")
  for contexts that hold the full name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..text.frame import Target
from ..text.mentions import EntityMention
from ..text.words import Token, words

_YEAR = re.compile(r"(?<![\d-])(1[0-9]{3}|20[0-9]{2})(?![\d-])")

# Short English names of countries → the words of their full names (general knowledge, not data-specific).
_COUNTRY_ALIASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("us",): ("united", "states", "of", "america"),
    ("u", "s"): ("united", "states", "of", "america"),
    ("usa",): ("united", "states", "of", "america"),
    ("america",): ("united", "states", "of", "america"),
    ("united", "states"): ("united", "states", "of", "america"),
    ("uk",): ("united", "kingdom"),
    ("britain",): ("united", "kingdom"),
    ("great", "britain"): ("united", "kingdom"),
    ("ussr",): ("soviet", "union"),
}


def occurrences(tokens: list[str], phrase: list[str]) -> list[int]:
    """Start positions of ``phrase`` as a contiguous word sequence of ``tokens``."""
    n = len(phrase)
    if n == 0:
        return []
    return [k for k in range(len(tokens) - n + 1) if tokens[k : k + n] == phrase]


def exact_spans(tokens: list[Token], mentions: dict[str, EntityMention]) -> dict[str, EntityMention]:
    """Mentions whose label occurs verbatim get that span (the occurrence overlapping their old span, else
    the last one); spans of longer labels win (they are placed first)."""
    texts = [t.text for t in tokens]
    out = dict(mentions)
    taken: list[tuple[int, int]] = []
    for name in sorted(mentions, key=lambda e: -len(words(e))):
        m = mentions[name]
        label = words(name)
        found = occurrences(texts, label)
        free = [k for k in found if all(k + len(label) <= a or b <= k for a, b in taken)]
        if not free:
            continue
        near = [k for k in free if k < m.end and m.start < k + len(label)]
        k = near[0] if near else free[-1]
        taken.append((k, k + len(label)))
        if (k, k + len(label)) != (m.start, m.end):
            out[name] = EntityMention(k, k + len(label), name, max(m.score, 2.0), m.kind, 1.0)
    return out


def phrase_positions(tokens: list[Token], label: str) -> list[int]:
    """Where the relation label ``label`` (of at least two words) occurs verbatim in the question."""
    label_words = words(label)
    if len(label_words) < 2:
        return []
    return occurrences([t.text for t in tokens], label_words)


def year_in_name(name: str) -> str | None:
    """The single year a name carries ("1983 World Series" → ``1983``), else ``None``."""
    found = set(_YEAR.findall(name))
    return found.pop() if len(found) == 1 else None


def alias_mentions(tokens: list[Token], entities: Iterable[str]) -> dict[str, EntityMention]:
    """Mentions of context entities by a short country name ("US" → "United States of America")."""
    texts = [t.text for t in tokens]
    by_words = {tuple(words(e)): e for e in entities}
    out: dict[str, EntityMention] = {}
    for short, full in _COUNTRY_ALIASES.items():
        entity = by_words.get(full)
        if entity is None:
            continue
        for k in occurrences(texts, list(short)):
            if short == ("us",) and not _country_us(texts, k, tokens):
                continue
            out.setdefault(entity, EntityMention(k, k + len(short), entity, 1.5, "label", 1.0))
    return out


_PRONOUN_LEADS = frozenset(
    {"tell", "told", "give", "gave", "show", "let", "help", "helped", "for", "to", "with", "among", "against"}
)


def _country_us(texts: list[str], k: int, tokens: list[Token]) -> bool:
    """ "us" names the country unless it follows a word that takes the pronoun ("tell us", "for us")."""
    if tokens[k].orig in {"US", "U.S"}:
        return True
    return k == 0 or texts[k - 1] not in _PRONOUN_LEADS


# Words that ask for the *end* of a fact's interval, beyond those of :mod:`.frame` ("when did she complete
# her studies", "die while married to", "replace X as", "go away from", "no longer").
_MORE_END_WORDS = frozenset(
    {"complete", "completed", "completes", "completion", "die", "died", "dies", "away", "longer", "replace",
     "replaced", "quit", "quits", "split", "separated", "separate"}
)  # fmt: skip
_SPAN_WORDS = frozenset({"dates", "between"})


def refine_target(tokens: list[Token], target: Target) -> Target:
    """Time targets the shared frame misses ("between what dates …", "how long …", "give me the end time
    for …") and more end-of-interval cues."""
    texts = [t.text for t in tokens]
    kind, use_end = target.kind, target.use_end
    if kind == "entity":
        asks_span = any(w in _SPAN_WORDS for w in texts) and "dates" in texts
        how_long = any(texts[k : k + 2] == ["how", "long"] for k in range(len(texts)))
        item = _asked_time_item(texts)
        if asks_span or how_long or item is not None:
            kind = "time"
            use_end = item == "end"
    if kind == "time" and not use_end and any(w in _MORE_END_WORDS for w in texts):
        use_end = True
    if (kind, use_end) == (target.kind, target.use_end):
        return target
    return Target(kind, target.granularity, target.wh_position, use_end)


def _asked_time_item(texts: list[str]) -> str | None:
    """ "(the) end time for/of X" or "start time for/of X" asked for (not "… that is end time is 1930")."""
    for k in range(len(texts) - 2):
        if texts[k] in {"start", "end"} and texts[k + 1] == "time" and texts[k + 2] in {"for", "of"}:
            return texts[k]
    return None
