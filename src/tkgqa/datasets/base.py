"""``Question``: one benchmark (or user) question with its gold answers and annotations."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..kg.fact import Fact
from ..kg.validate import clean_name

AnswerType = Literal["entity", "time", "value"]

#: ``Question.extra`` key: the per-question facts exactly as the dataset ships them (a list of strings, e.g.
#: TimeQuestions' "S rel O from Y1 to Y2." sentences), beside their parsed form in ``context``; what
#: ``timer4:facts=dataset`` shows the model.
RETRIEVED_FACTS = "retrieved_facts"


class Question(BaseModel):
    """A question. ``answers`` are gold answer strings (labels or ISO times); ``answer_ids`` keeps QIDs.

    ``context`` holds per-question facts when a dataset ships them (TimeQuestions with TimeR4's retrieved
    facts); methods then answer over a KG built from those facts only.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    qid: str
    text: str
    answers: list[str] = Field(default_factory=list)
    answer_ids: list[str] = Field(default_factory=list)
    answer_type: AnswerType | None = None
    time_level: str | None = None
    qtype: str | None = None
    qlabel: str | None = None
    types: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    times: list[str] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)
    dataset: str = "custom"
    context: list[Fact] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("context")
    @classmethod
    def _stored_names(cls, facts: list[Fact] | None) -> list[Fact] | None:
        """Context facts with their names as a store holds them (:func:`tkgqa.kg.validate.clean_name`: NFC,
        invisible marks at the ends dropped); a name a store cannot hold is a DataError naming it."""
        if facts is None:
            return None
        out = []
        for f in facts:
            names = (clean_name(f.subject, "subject"), clean_name(f.relation, "relation"))
            obj = clean_name(f.object, "object")
            same = names == (f.subject, f.relation) and obj == f.object
            out.append(f if same else replace(f, subject=names[0], relation=names[1], object=obj))
        return out
