"""Word-level normalisation shared by the lexicon and the mention detector.

Everything here is general English knowledge: a tokenizer, a small rule-based lemmatizer (irregular verb
forms, inflection and derivation suffixes, British → American spelling) and a synonym table mapping words to
*concepts*. Relation names, entity roles and question words all go through :func:`concepts_of` so that
"condemned", "denounce" and "criticism" meet at the concept ``criticize``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?|['’]s\b")

_IRREGULAR_FORMS = {
    "make": "made", "take": "took taken", "meet": "met", "send": "sent", "pay": "paid",
    "give": "gave given", "seek": "sought", "speak": "spoke spoken", "hold": "held", "bring": "brought",
    "go": "went gone", "win": "won", "begin": "began begun", "lead": "led", "fight": "fought",
    "throw": "threw thrown", "strike": "struck", "say": "said", "tell": "told", "think": "thought",
    "keep": "kept", "leave": "left", "lose": "lost", "become": "became", "come": "came", "see": "saw seen",
    "do": "did done does", "be": "was were is are been am", "have": "has had", "get": "got gotten",
    "find": "found", "choose": "chose chosen", "write": "wrote written", "run": "ran", "sell": "sold",
    "buy": "bought", "teach": "taught", "drive": "drove driven", "stand": "stood", "build": "built",
    "flee": "fled", "fly": "flew flown", "forgive": "forgave forgiven", "swear": "swore sworn",
    "beat": "beaten", "withdraw": "withdrew withdrawn", "overthrow": "overthrew overthrown",
    "wear": "wore worn", "draw": "drew drawn", "grow": "grew grown", "know": "knew known",
    "rise": "rose risen", "sing": "sang sung", "spend": "spent", "lend": "lent", "mean": "meant",
    "feel": "felt", "deal": "dealt", "hear": "heard", "lay": "laid", "shoot": "shot",
    "bear": "bore born borne", "marry": "married", "die": "died dying", "lie": "lying", "tie": "tying",
    "hit": "hitting", "put": "putting", "set": "setting", "slay": "slew slain", "steal": "stole stolen",
    "freeze": "froze frozen", "break": "broke broken", "speed": "sped", "arise": "arose arisen",
    "undertake": "undertook undertaken", "bid": "bade", "child": "children", "man": "men",
    "woman": "women", "person": "people", "mouse": "mice",
}  # fmt: skip
IRREGULAR: dict[str, str] = {w: base for base, forms in _IRREGULAR_FORMS.items() for w in forms.split()}

SPELLING = {
    "defence": "defense", "offence": "offense", "labour": "labor", "honour": "honor", "favour": "favor",
    "programme": "program", "centre": "center", "theatre": "theater", "judgement": "judgment",
    "ministery": "ministry", "counselling": "counseling", "travelled": "traveled", "travelling": "traveling",
    "cancelled": "canceled", "signalled": "signaled", "armour": "armor", "behaviour": "behavior",
    "colour": "color", "neighbour": "neighbor", "rumour": "rumor", "catalogue": "catalog",
}  # fmt: skip

# concept → words (already lemmatised or surface forms); a word may belong to several concepts.
SYNONYMS: dict[str, str] = {
    "criticize": "criticize criticise criticism critic condemn condemnation denounce denunciation censure "
    "rebuke decry deplore slam blast lambast disapprove",
    "accuse": "accuse accusation blame allege allegation charge",
    "appeal": "appeal request ask plea petition urge beg solicit",
    "demand": "demand insist require",
    "praise": "praise endorse endorsement commend commendation laud applaud hail compliment acclaim "
    "support approve admire recommend",
    "threaten": "threaten threat menace intimidate",
    "negotiate": "negotiate negotiation bargain talk",
    "meet": "meet meeting",
    "consult": "consult consultation discuss discussion confer",
    "visit": "visit trip tour",
    "host": "host receive welcome",
    "sign": "sign",
    "agreement": "agreement deal accord treaty pact contract",
    "intent": "intent intention intend want wish plan hope desire willing willingness like aim eager ready "
    "interest interested keen would",
    "express": "express announce state declare voice show indicate signal",
    "cooperate": "cooperate cooperation collaborate collaboration partnership cooperative work",
    "diplomatic": "diplomatic diplomacy",
    "optimistic": "optimistic optimism optimistically positive positively hopeful upbeat favorable",
    "pessimistic": "pessimistic pessimism pessimistically negative negatively gloomy unfavorable",
    "empathetic": "empathetic empathy sympathy sympathetic condolence",
    "reject": "reject rejection refuse refusal decline rebuff deny spurn",
    "investigate": "investigate investigation probe inquire inquiry examine study scrutinize",
    "arrest": "arrest detain detention",
    "attack": "attack assault strike",
    "military": "military army troop",
    "force": "force",
    "conventional": "conventional",
    "aid": "aid assistance help relief",
    "provide": "provide give offer supply grant send deliver donate extend receive",
    "telephone": "telephone phone call",
    "speak": "speak spoke say talk remark comment",
    "statement": "statement comment remark",
    "release": "release free",
    "person": "person people individual",
    "protest": "protest demonstrate demonstration rally",
    "sanction": "sanction embargo boycott",
    "weapon": "weapon arm",
    "fight": "fight combat clash",
    "kill": "kill killing murder slay",
    "expel": "expel deport",
    "economic": "economic economically economy",
    "materially": "material materially",
    "humanitarian": "humanitarian",
    "accede": "accede yield concede",
    "yield": "yield surrender concede",
    "abduct": "abduct kidnap hijack hostage",
    "mediate": "mediate mediation mediator",
    "apologize": "apologize apology",
    "occupy": "occupy occupation",
    "confiscate": "confiscate seize seizure",
    "deny": "deny",
    "reduce": "reduce cut",
    "relation": "relation relationship tie",
    # words naming roles in ``Role_(Country)`` entities
    "ministry": "ministry minister ministery department affair office",
    "foreign": "foreign external",
    "official": "official officer authority",
    "combatant": "combatant fighter",
    "troop": "troop force soldier",
    "citizen": "citizen resident civilian national",
    "lawmaker": "lawmaker legislator",
    "legislature": "legislature parliament legislative",
    "media": "media press journalist reporter",
    "police": "police policeman policemen",
    "royal": "royal king monarchy",
    "representative": "representative delegate",
    "mayor": "mayor",
    "court": "court tribunal",
    "judge": "judge justice",
    # general words for the Wikidata-style relations of TimeQuestions / CronQuestions
    "award": "award prize honor honour medal win won receive trophy",
    "spouse": "spouse marry married marriage wife husband wed",
    "member": "member join belong",
    "team": "team club squad",
    "position": "position office post job serve role title",
    "educate": "educate education school college university study attend alma graduate graduated student",
    "employ": "employ employer work",
    "birth": "birth born birthday",
    "death": "death die dead",
    "child": "child son daughter kid",
    "parent": "parent father mother",
    "head": "head leader chief lead",
    "coach": "coach manager manage",
    "nominate": "nominate nomination nominee",
    "capital": "capital",
    "population": "population inhabitant",
    "president": "president presidency",
    "govern": "govern government administration",
    "penalty": "penalty sentence sentenced punishment punish",
    "form": "form kind type",
    "succession": "replace replaces replaced succeed succeeded successor predecessor precede preceded follow "
    "follows followed next previous",
    "governor": "governor",
}

LIGHT_WORDS = frozenset(
    {"make", "engage", "use", "take", "do", "have", "give", "get", "carry", "conduct", "be"}
)


def wordset(text: str) -> frozenset[str]:
    """The space-separated words of ``text`` as a set."""
    return frozenset(text.split())


LIGHT_WORDS = wordset("make engage use take do have give get carry conduct be")
STOPWORDS = wordset(
    "a an the of to in on at for by with from about against into onto as and or nor but than that this these "
    "those such its it their his her they them he she we you i me my your our which who whom whose what when "
    "where why how did does do is are was were be been being has have had would will shall can could should "
    "may might must 's ' tell please exact exactly specific specifically time date year years month months "
    "day days first last latest earliest final most recent previous next before after during since until "
    "same also ever again any some one ones country countries person people somebody someone other"
)


@dataclass(frozen=True, slots=True)
class Token:
    """A question token: lower-cased ``text``, the original spelling and its character offset."""

    text: str
    orig: str
    start: int

    @property
    def capitalized(self) -> bool:
        return self.orig[:1].isupper()


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[Token]:
    """Lower-case word tokens; ``X's`` becomes ``x`` + ``'s`` (a possessive marker token)."""
    out: list[Token] = []
    norm = re.sub(r"(?<=[sS])'(?=\s|$)", "'s", strip_accents(text).replace("’", "'"))
    for m in _TOKEN.finditer(norm.lower()):
        word = m.group(0)
        orig = norm[m.start() : m.end()]
        if word in {"'s", "’s"}:
            out.append(Token("'s", orig, m.start()))
        elif word.endswith(("'s", "’s")):
            out.append(Token(word[:-2], orig[:-2], m.start()))
            out.append(Token("'s", orig[-2:], m.end() - 2))
        elif "'" in word:
            out.append(Token(word.replace("'", ""), orig, m.start()))
        else:
            out.append(Token(word, orig, m.start()))
    return out


def words(text: str) -> list[str]:
    """Token texts of ``text`` (underscores and slashes count as spaces)."""
    return [t.text for t in tokenize(text.replace("_", " ").replace("/", " "))]


def _vocabulary() -> frozenset[str]:
    vocab: set[str] = set(IRREGULAR.values()) | set(SPELLING.values())
    for group in SYNONYMS.values():
        vocab.update(group.split())
    vocab.update(SYNONYMS)
    return frozenset(vocab)


VOCAB = _vocabulary()


def _candidates(w: str) -> list[str]:
    c = [w]
    if w.endswith("ies") and len(w) > 4:
        c.append(w[:-3] + "y")
    if w.endswith("ied") and len(w) > 4:
        c.append(w[:-3] + "y")
    if w.endswith("ing") and len(w) > 5:
        stem = w[:-3]
        c += [stem, stem + "e"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            c.append(stem[:-1])
    if w.endswith("ed") and len(w) > 4:
        stem = w[:-2]
        c += [stem, w[:-1]]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            c.append(stem[:-1])
    if w.endswith("es") and len(w) > 4:
        c.append(w[:-2])
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        c.append(w[:-1])
    if w.endswith("ise") or w.endswith("ised"):
        c.append(w.replace("ise", "ize"))
    if w.endswith("ation") and len(w) > 7:
        c += [w[:-5] + "ate", w[:-5] + "e", w[:-5]]
    if w.endswith("ion") and len(w) > 5:
        c += [w[:-3], w[:-3] + "e"]
    if w.endswith("ment") and len(w) > 6:
        c.append(w[:-4])
    if w.endswith("ly") and len(w) > 5:
        c.append(w[:-2])
    return c


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """Base form of ``word``: ``made`` → ``make``, ``criticised`` → ``criticize``, ``citizens`` →
    ``citizen``."""
    w = SPELLING.get(word, word)
    if w in IRREGULAR:
        return IRREGULAR[w]
    cands = _candidates(w)
    for cand in cands:
        cand = SPELLING.get(cand, cand)
        if cand.endswith("ise") and cand[:-3] + "ize" in VOCAB:
            return cand[:-3] + "ize"  # British -ise → -ize
        if cand in VOCAB:
            return cand
    # unknown word: plain inflection rules only
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def _concept_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for concept, group in SYNONYMS.items():
        for w in {concept, *group.split()}:
            table.setdefault(w, []).append(concept)
    return {w: tuple(cs) for w, cs in table.items()}


CONCEPTS = _concept_table()


@lru_cache(maxsize=65536)
def concepts_of(word: str) -> tuple[str, ...]:
    """The concepts a word stands for (its lemma when it is in no synonym group)."""
    if word in CONCEPTS:
        return CONCEPTS[word]
    base = lemma(word)
    return CONCEPTS.get(base, (base,))


_STEM_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ors", "or", "ions", "ion", "ments", "ment",
                  "ed", "es", "s", "e")  # fmt: skip


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Crude suffix-stripping stem shared by inflections and derivations (``discoverer``/``discovered`` →
    ``discov``); used to compare label words with question words."""
    w = SPELLING.get(word, word)
    w = IRREGULAR.get(w, w)
    for suf in _STEM_SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)]
            break
    if len(w) > 4 and w[-1] == w[-2]:
        w = w[:-1]
    return w


def content_words(tokens: Iterable[str]) -> list[str]:
    return [t for t in tokens if t not in STOPWORDS and t != "'s"]


def mention_key(text: str) -> str:
    """Lookup key of a label in the mention index, spelled the way :func:`tokenize` spells question words
    (accents stripped, lower case, leading ``the`` and possessive ``'s`` dropped), so a label's key equals
    the key of the question span that mentions it. Not an answer normaliser: answers are compared with
    :func:`tkgqa.query.normalize_answer`."""
    ws = words(text)
    if ws and ws[0] == "the" and len(ws) > 1:
        ws = ws[1:]
    return " ".join(w for w in ws if w != "'s")
