"""``Question``: one benchmark (or user) question with its gold answers and annotations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..kg.fact import Fact

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
