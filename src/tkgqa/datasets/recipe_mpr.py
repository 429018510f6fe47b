"""Recipe-MPR (Zhang et al., SIGIR 2023): multi-aspect preference queries with five one-line recipe options,
one correct — the data of R3's preference-matching task — and our bundled personalised example set.

``500QA.json`` (the released file; the shared copy holds 350 entries): a list of ``{query, query_type
(Specific/Commonsense/Negated/Analogical/Temporal → 0/1), options (recipe id → description), answer (recipe
id), correctness_explanation (query aspect → matching words of the correct option)}``. There are no ids: a
question's id is ``mpr-<position>``.

Each question: gold ``answers`` = the correct option's description, ``answer_ids`` = its recipe id (either
counts); ``extra["choices"]`` = the descriptions (a closed answer, see :mod:`tkgqa.eval.scoring`),
``extra["options"]`` = ``[{"id", "text"}]`` in an order seeded per entry (the file lists the answer
first), ``extra["aspects"]`` = the gold aspects (kept out of what methods read); ``types`` = the query-type
labels set to 1. ``context`` = the facts a method may use:
``(recipe <id>, description, <text>)`` per option — there is no recipe KG in the release (R3 adds a
synthetic personal KG per user and a sixth option; those items are unpublished).

**Personalised examples** (``data_dir="personal_kg"``, or a folder holding ``personal_kg.json``): the
hand-written set in ``tkgqa/data/personal_kg`` — users with a personal KG, recipes with ingredient facts,
queries with six options of which one also satisfies the user's constraints. Then the question text is
``"<user>: <query>"``, ``extra["user"]`` names the user and ``context`` adds the user's personal facts and
the options' recipe facts (the KG R3 grounds on), ``extra["violates_personal"]`` the gold violations.
"""

from __future__ import annotations

import hashlib
import random
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError
from ..kg.fact import Fact
from .base import Question
from .core import Dataset, DatasetRequest, dataset_loader, find_file, read_json

MPR_FILE = "500QA.json"
PERSONAL_FILE = "personal_kg.json"
BUNDLED_PERSONAL = "personal_kg"  # data_dir value selecting the bundled personalised set
DESCRIPTION = "description"


def recipe_entity(recipe_id: str) -> str:
    """The KG name of a recipe option: ``recipe 08cb462fdf``."""
    return f"recipe {recipe_id}"


def bundled_personal_file() -> Path:
    """The bundled hand-written personalised example set (``tkgqa/data/personal_kg/personal_kg.json``)."""
    return Path(str(resources.files("tkgqa.data").joinpath(BUNDLED_PERSONAL, PERSONAL_FILE)))


def _option_facts(options: list[dict[str, str]]) -> list[Fact]:
    return [Fact(recipe_entity(o["id"]), DESCRIPTION, o["text"]) for o in options]


def _shuffled(options: list[dict[str, str]], index: int) -> list[dict[str, str]]:
    """The options in an order seeded by the entry's position: the released file lists the answer first in
    every entry, which a rule that stops at the first satisfying option (R3's) would read as a hint."""
    seed = int.from_bytes(hashlib.sha256(f"recipe_mpr:{index}".encode()).digest()[:8], "big")
    out = list(options)
    random.Random(seed).shuffle(out)
    return out


def mpr_questions(path: Path) -> list[Question]:
    """The Recipe-MPR entries of ``path`` as questions (see the module docstring)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("expected a JSON list of Recipe-MPR entries", path=str(path))
    out = []
    for i, row in enumerate(data):
        if not isinstance(row, dict) or not {"query", "options", "answer"} <= set(row):
            raise DataError(f"entry #{i} lacks query/options/answer", path=str(path))
        raw_options = row["options"]
        if not isinstance(raw_options, dict) or row["answer"] not in raw_options:
            raise DataError(
                f"entry #{i}: options must map recipe ids to text and hold the answer", path=str(path)
            )
        options = _shuffled([{"id": str(k), "text": str(v).strip()} for k, v in raw_options.items()], i)
        answer = str(row["answer"])
        qtypes = row.get("query_type") or {}
        out.append(
            Question(
                qid=f"mpr-{i:04d}",
                text=str(row["query"]).strip(),
                answers=[str(raw_options[answer]).strip()],
                answer_ids=[answer],
                answer_type="value",
                qtype="preference",
                types=[k for k, v in qtypes.items() if v] if isinstance(qtypes, dict) else [],
                dataset="recipe_mpr",
                context=_option_facts(options),
                extra={
                    "choices": [o["text"] for o in options],
                    "options": options,
                    "aspects": row.get("correctness_explanation") or {},
                },
            )
        )
    return out


def personal_questions(path: Path) -> list[Question]:
    """The personalised example set of ``path`` (format of ``tkgqa/data/personal_kg/personal_kg.json``)."""
    data = read_json(path)
    try:
        users: dict[str, list[list[str]]] = data["users"]
        recipes: dict[str, dict[str, Any]] = data["recipes"]
        queries: list[dict[str, Any]] = data["queries"]
    except (KeyError, TypeError):
        raise DataError("expected an object with 'users', 'recipes' and 'queries'", path=str(path)) from None
    out = []
    for q in queries:
        user, qid = str(q.get("user", "")), str(q.get("id", ""))
        if user not in users:
            raise DataError(f"query {qid}: unknown user {user!r}", path=str(path))
        missing = [r for r in q.get("options", []) if r not in recipes]
        if missing or q.get("answer") not in q.get("options", []):
            raise DataError(
                f"query {qid}: unknown options {missing} or answer not among them", path=str(path)
            )
        options = [{"id": r, "text": str(recipes[r]["description"])} for r in q["options"]]
        facts = [Fact(user, rel, obj) for rel, obj in users[user]]
        facts += _option_facts(options)
        facts += [
            Fact(recipe_entity(r), rel, obj) for r in q["options"] for rel, obj in recipes[r].get("facts", [])
        ]
        answer = str(q["answer"])
        out.append(
            Question(
                qid=qid,
                text=f"{user}: {q['query']}",
                answers=[str(recipes[answer]["description"])],
                answer_ids=[answer],
                answer_type="value",
                qtype="preference",
                types=["Personal"],
                dataset="recipe_mpr",
                entities=[user],
                context=facts,
                extra={
                    "choices": [o["text"] for o in options],
                    "options": options,
                    "user": user,
                    "violates_personal": dict(q.get("violates_personal") or {}),
                },
            )
        )
    return out


@dataset_loader("recipe_mpr")
def load_recipe_mpr(request: DatasetRequest) -> Dataset:
    """Recipe-MPR (``data_dir``: the ``recipe_mpr`` folder or ``500QA.json``), or the personalised examples
    (``data_dir="personal_kg"`` for the bundled set, or a folder/file ``personal_kg.json``). Each question's
    facts are its ``context``; ``kg`` is not used (options and personal KGs are per question)."""
    if request.kg is not None:
        raise ConfigError("recipe_mpr questions carry their own facts (options, personal KG); pass no kg")
    if request.context not in (None, "retrieved"):
        raise ConfigError("recipe_mpr questions are answered over their own facts: leave context unset")
    root, questions = request.root, request.questions
    if root is not None and str(request.data_dir) == BUNDLED_PERSONAL and not root.exists():
        qfile = bundled_personal_file()
    elif root is not None and root.is_dir() and (root / PERSONAL_FILE).is_file() and questions is None:
        qfile = root / PERSONAL_FILE
    else:
        qfile = find_file("Recipe-MPR questions", root, questions, [MPR_FILE, "data/" + MPR_FILE, "*.json"])
    personal = qfile.name == PERSONAL_FILE
    qs = personal_questions(qfile) if personal else mpr_questions(qfile)
    meta = {"questions_file": str(qfile), "split": request.split, "personalised": personal}
    if not personal:
        meta["option_order"] = "shuffled, seeded per entry (the file lists the answer first)"
    return Dataset("recipe_mpr", qs, None, meta)
