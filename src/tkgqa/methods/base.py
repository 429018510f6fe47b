"""What every method shares: the ``Answer`` it returns, the ``Method`` base class and the registry."""

from __future__ import annotations

import dataclasses
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Self, final

from pydantic import BaseModel, ConfigDict

from ..datasets.base import Question
from ..errors import ConfigError, TKGQAError
from ..kg.base import KGStore
from ..kg.fact import Fact
from ..llm import AnswerUsage, LLMBackend, Usage, answer_usage, llm_context, resolve_llm_arg
from ..outcomes import Abstention, ResultRow
from ..prompts.ask import Refused
from ..registry import Registry
from ..trace import TraceStep, as_step, trace_json
from .options import (  # noqa: F401 - the option helpers, re-exported where they were imported from
    SHOWN_OPTIONS,
    merge_config,
    merge_options,
    option_problem,
    options_from,
    parse_option_pairs,
    parse_options,
    value_form,
)
from .package import plugin_method_references


@dataclass(frozen=True)
class Answer:
    """A method's answer: ranked answer strings, the facts that support them, a trace and LLM usage.

    ``answers`` empty with ``abstained`` set means the method declined to answer (``reason`` says why: an
    :class:`~tkgqa.outcomes.Abstention`, ``None`` when there is none; its text is what :meth:`to_dict` and a
    row's ``reason`` write). A string given as ``reason`` (a third-party method's) is read by
    :meth:`Abstention.of <tkgqa.outcomes.Abstention.of>`.
    ``trace`` is a tuple of typed steps (:class:`~tkgqa.trace.TraceStep`: a symbolic program, an agent's
    actions, prompts' outputs), written as JSON by :meth:`to_dict`; a dict given as a step (a third-party
    method's) becomes a :class:`~tkgqa.trace.RecordedStep`.
    """

    answers: list[str]
    evidence: list[Fact] = field(default_factory=list)
    trace: Sequence[TraceStep] = ()
    usage: AnswerUsage = field(default_factory=AnswerUsage)
    abstained: bool = False
    reason: Abstention | None = None
    raw_output: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "trace", tuple(as_step(s) for s in self.trace))
        reason: object = self.reason
        if reason is not None and not isinstance(reason, Abstention):
            text = reason if isinstance(reason, str) else str(reason)  # a member stays one (a StrEnum)
            object.__setattr__(self, "reason", Abstention.of(text))

    @classmethod
    def abstain(cls, reason: Abstention | str, trace: Sequence[TraceStep] = (), **kw: Any) -> Answer:
        """An abstention; ``reason``: best an :class:`~tkgqa.outcomes.Abstention` (``AbstainReason.X.note()``)
        or a member; other text (a plugin's) is read by :meth:`~tkgqa.outcomes.Abstention.of`."""
        return cls(answers=[], abstained=True, reason=Abstention.of(reason), trace=trace, **kw)

    @property
    def reason_text(self) -> str:
        """The reason as written (a row's ``reason``): its text, ``""`` when there is none."""
        return self.reason.text if self.reason is not None else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "answers": list(self.answers),
            "evidence": [f.to_dict() for f in self.evidence],
            "trace": trace_json(self.trace),
            "usage": self.usage.to_dict(),
            "abstained": self.abstained,
            "reason": self.reason_text,
            "raw_output": self.raw_output,
        }


class StepKind(StrEnum):
    """What a :class:`StepEvent` reports."""

    ACTION = "action"  # an agent's chosen action and the size of its result (ARI)
    STOP = "stop"  # the agent loop ended without an action (policy stopped, unparsable reply)
    BRANCH = "branch"  # a search branch starts (R3: its axiom)
    CHECK = "check"  # an answer attempt and its mechanical check (R3: verdict, rejected replies)
    EXPAND = "expand"  # the search expands to more evidence (R3: the entity to expand)
    STAGE = "stage"  # a pipeline stage finished (TimeR4: retrieval/rewrite/rerank; LPKG: a plan step)


@dataclass(frozen=True)
class StepEvent:
    """One step of a multi-step method, reported while the method runs (the service streams them).

    ``index`` orders the events of one question; ``label`` is one line for people; ``count`` the size of the
    step's result (facts, items) when it has one; ``ok`` the outcome of a check when the step is one;
    ``data`` a few JSON-ready details."""

    kind: StepKind
    index: int
    label: str
    count: int | None = None
    ok: bool | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    #: the registered name of the method that reports the step; left empty, :func:`report_step` fills it in
    #: from the :meth:`Method.answer` running (so no method names itself)
    method: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "kind": str(self.kind),
            "index": self.index,
            "label": self.label,
            "count": self.count,
            "ok": self.ok,
            "data": dict(self.data),
        }


class StepCancelled(TKGQAError):
    """The question was cancelled between two steps (its client went away): not an answer, not an
    abstention. Raised by a step reporter; methods let it propagate."""


StepReporter = Callable[[StepEvent], None]
_STEP_REPORTER: ContextVar[StepReporter | None] = ContextVar("tkgqa_step_reporter", default=None)
#: the registered name of the method whose :meth:`Method.answer` is running (innermost: a hybrid's part)
_STEP_METHOD: ContextVar[str] = ContextVar("tkgqa_step_method", default="")


def report_step(event: StepEvent) -> None:
    """Hand ``event`` to the reporter of the current context (none: nothing happens), its ``method`` filled
    in with the running method's name when left empty. The reporter may raise :class:`StepCancelled` to stop
    the method between steps; methods call this between steps only."""
    reporter = _STEP_REPORTER.get()
    if reporter is not None:
        reporter(event if event.method else dataclasses.replace(event, method=_STEP_METHOD.get()))


@contextmanager
def step_reporter(reporter: StepReporter | None) -> Iterator[None]:
    """Within the block (in this thread/context), :func:`report_step` calls ``reporter``. Methods need no
    argument for it, so every method and plugin works with or without one."""
    token = _STEP_REPORTER.set(reporter)
    try:
        yield
    finally:
        _STEP_REPORTER.reset(token)


@dataclass(frozen=True)
class SetupNotes:
    """What a method's :meth:`Method.setup` found, kept as ``Method.notes`` (frozen, like the config once the
    method is built): the ``settings`` it decided from a resource (ARI: the embedder its memory was clustered
    with; R3: the demonstrations found), applied to ``config`` once by the constructor, and the ``fallbacks``
    it took (``report.json``'s ``fallbacks``). A method's subclass adds what its config's
    :meth:`~MethodConfig.deviations` need."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    fallbacks: tuple[str, ...] = ()


#: The notes of a method whose setup found nothing to note.
NO_NOTES = SetupNotes()


class MethodConfig(BaseModel):
    """Base of every method's configuration (serialized into results). Unknown settings are errors, so a
    mistyped option in ``--method "name:key=value"`` never goes silently unused."""

    model_config = ConfigDict(extra="forbid")

    def effective(self) -> Self:
        """This config with every setting left open filled in (a preset's values); itself here."""
        return self

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        """The settings in force (call on the effective config) that differ from the method's paper, each with
        the paper's side, ``notes`` (what the method's setup found) included; none here (a method without a
        paper, or without preset-dependent settings)."""
        return []

    def unspecified(self) -> list[str]:
        """The settings the method's paper leaves open (our choices, in force in every preset); none here."""
        return []


class Preset(StrEnum):
    """Which defaults fill a method's unset settings: ``paper`` (the paper's configuration wherever it gives
    one; the default) or ``ours`` (the project's variants, each also a named option)."""

    PAPER = "paper"
    OURS = "ours"


def shown_setting(name: str, value: Any) -> str:
    """How a setting's value is written in ``deviations`` (enum values bare, booleans lower-case)."""
    return value.value if isinstance(value, StrEnum) else str(value).lower()


class PresetConfig(MethodConfig):
    """A method configuration with a :class:`Preset`: every setting named in ``preset_table`` that is left
    unset (``None``) takes the preset's value. ``paper_side``/``ours_side`` say in words what each setting
    means on each side; :meth:`preset_deviations` lists the settings in force that differ from the paper
    (for ``report.json``). Subclasses define the three tables as class variables, and ``paper_values`` for the
    settings outside the presets that the paper gives one value (:meth:`paper_value_deviations`)."""

    preset_table: ClassVar[Mapping[Preset, Mapping[str, Any]]] = {}
    paper_side: ClassVar[Mapping[str, str]] = {}
    ours_side: ClassVar[Mapping[str, str]] = {}

    preset: Preset = Preset.PAPER

    def preset_value(self, name: str) -> Any:
        """The value of a preset-dependent setting: the one given, else the preset's."""
        value = getattr(self, name)
        return self.preset_table[self.preset][name] if value is None else value

    def preset_updates(self) -> dict[str, Any]:
        """Every preset-dependent setting with its value in force."""
        return {name: self.preset_value(name) for name in self.preset_table[self.preset]}

    def effective(self) -> Self:
        """This config with every unset setting filled from its preset. Idempotent."""
        return self.model_copy(update=self.preset_updates())

    def deviations(self, notes: SetupNotes = NO_NOTES) -> list[str]:
        """The preset-dependent settings in force that differ from the paper (subclasses add their own)."""
        return self.preset_deviations()

    def preset_deviations(self, shown: Callable[[str, Any], str] = shown_setting) -> list[str]:
        """The preset-dependent settings in force that differ from the paper, each with both sides."""
        out: list[str] = []
        for name, paper in self.preset_table[Preset.PAPER].items():
            actual = self.preset_value(name)
            if actual != paper:
                out.append(
                    f"{name}={shown(name, actual)}: {self.ours_side[name]} (paper: {self.paper_side[name]})"
                )
        return out

    #: Settings outside the presets for which the paper gives one value: name → the paper's value.
    paper_values: ClassVar[Mapping[str, Any]] = {}

    def paper_value_deviations(self) -> list[str]:
        """``name=value (paper: value)`` for each setting of :attr:`paper_values` set to another value."""
        return [
            f"{name}={getattr(self, name)} (paper: {paper})"
            for name, paper in self.paper_values.items()
            if getattr(self, name) != paper
        ]


def no_llm_methods_error(method: str) -> ConfigError:
    """The one error for an LLM given to a method that takes none: it names the methods that take one."""
    takers = []
    for name in METHODS.names():
        try:
            factory = METHODS.factory(name)
        except TKGQAError:  # a method whose extra is missing still takes an LLM if its config says so
            continue
        if isinstance(factory, type) and issubclass(factory, Method) and factory.takes_llm():
            takers.append(name)
    return ConfigError(
        f"the {method} method takes no LLM: drop --llm, or pick a method that uses one "
        f"({', '.join(takers)}), e.g. --method ari --llm SPEC"
    )


def missing_llm_error(method: str, *, alternative: str = "") -> ConfigError:
    """The one error for an LLM method given no LLM: it names the CLI flag (the library's keyword is the
    same word, ``llm``)."""
    instead = f" (or {alternative})" if alternative else ""
    return ConfigError(
        f"the {method} method needs an LLM{instead}: add --llm SPEC, e.g. --llm openai:gpt-4o-mini "
        f"(OPENAI_API_KEY set) or --llm llamacpp:smollm2 (offline, tiny; each call takes seconds on a CPU); "
        f"a server: tkgqa serve --llm SPEC"
    )


class Method(ABC):
    """A QA method: ``answer(question, kg)`` → :class:`Answer`. Stateless across questions unless noted. A
    subclass implements :meth:`reason`; :meth:`answer` (final) wraps it.

    Every method is built alike: ``Method(config=None, *, llm=None, spec=None, **overrides)``. ``spec`` is the
    text after the method's name (``"ari:oracle"``, ``"timer4:no_rerank"``), read with the class's
    :attr:`spec_flags` and :attr:`spec_positional`; ``overrides`` are settings of :attr:`config_class` (they
    win over ``spec``, and both over ``config``); unknown settings are errors. ``llm`` (a spec or a backend)
    becomes the config's ``llm`` setting, for a method whose config has one. ``requested`` is the config as
    given, ``config`` the effective one (a preset's values filled in). A subclass declares its config class
    and does its own wiring in :meth:`setup`; :meth:`describe` (what ``report.json`` records) and
    :meth:`deviations` come from the config."""

    name: ClassVar[str] = "method"
    config_class: ClassVar[type[MethodConfig]] = MethodConfig
    #: bare words of ``spec`` → (setting, value): ``"no_rerank"`` → ``("rerank", False)``
    spec_flags: ClassVar[Mapping[str, tuple[str, Any]]] = {}
    #: the setting a bare word of ``spec`` that is no flag sets (``"ari:oracle"`` → ``policy``), if any
    spec_positional: ClassVar[str | None] = None
    #: whether the method cannot be built without an LLM (one that can answer some questions without
    #: checks in :meth:`setup` or :meth:`reason`)
    needs_llm: ClassVar[bool] = False

    config: MethodConfig
    requested: MethodConfig
    llm: LLMBackend | None = None
    notes: SetupNotes = NO_NOTES

    def __init__(
        self,
        config: MethodConfig | None = None,
        *,
        llm: str | LLMBackend | None = None,
        spec: str | None = None,
        **overrides: Any,
    ) -> None:
        given = {**self.parse_spec(spec), **overrides}
        if (llm is not None or "llm" in given) and not self.takes_llm():
            raise no_llm_methods_error(self.name)
        if isinstance(llm, str):
            given["llm"] = llm
        elif llm is not None and self.takes_llm():
            given["llm"] = f"{llm.name}:{llm.model_id}"  # recorded; the backend itself is used
        self.requested = merge_config(self.config_class, config, self.prepare(given), method=self.name)
        self.config = self.requested.effective()
        self.llm = self.resolve_llm(llm)
        if self.needs_llm and self.llm is None:
            raise missing_llm_error(self.name)
        self.notes = self.setup() or NO_NOTES
        if self.notes.settings:  # decided by setup from a resource: the config is final from here on
            self.config = self.config.model_copy(update=dict(self.notes.settings))

    def resolve_llm(self, given: str | LLMBackend | None) -> LLMBackend | None:
        """The backend the method calls: the one given, else the config's ``llm`` spec resolved (``None``
        for a method that takes no LLM, or when none is given)."""
        if isinstance(given, LLMBackend):
            return given
        return resolve_llm_arg(getattr(self.config, "llm", None)) if self.takes_llm() else None

    @classmethod
    def parse_spec(cls, spec: str | None) -> dict[str, Any]:
        """The settings written in ``spec`` (the text after ``name:``), not yet validated. A method with
        presets also reads the bare words ``paper`` and ``ours`` (``"cik:ours"``)."""
        flags = dict(cls.spec_flags)
        if issubclass(cls.config_class, PresetConfig):
            flags = {**{p.value: ("preset", p) for p in Preset}, **flags}
        return parse_options(spec, method=cls.name, flags=flags, positional=cls.spec_positional)

    @classmethod
    def takes_llm(cls) -> bool:
        """Whether the method takes an LLM (its config has an ``llm`` setting)."""
        return "llm" in cls.config_class.model_fields

    def prepare(self, overrides: dict[str, Any]) -> dict[str, Any]:
        """Hook: the given settings as the config takes them (a subclass fixes or defaults some)."""
        return overrides

    def setup(self) -> SetupNotes | None:
        """Hook: the method's own wiring once ``config`` and ``llm`` are set (retrievers, planners, …); it
        returns what it found (:class:`SetupNotes`: settings decided, fallbacks taken; ``None``: nothing),
        and never reassigns ``config``."""
        return None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "answer" in cls.__dict__:
            raise TypeError(
                f"{cls.__module__}.{cls.__qualname__} defines answer(): implement reason(question, kg) -> "
                "Answer instead (Method.answer wraps it: the LLM context, the step events' method name, the "
                "check that an Answer comes back)"
            )

    @final
    def answer(self, question: Question, kg: KGStore) -> Answer:
        """Answer ``question`` over ``kg``: :meth:`reason` within the LLM context of this method and
        question (the tags of its LLM calls) and with this method's name on its step events; anything but
        an :class:`Answer` coming back is a TypeError. Not overridable: a method implements :meth:`reason`."""
        token = _STEP_METHOD.set(self.name)
        try:
            with llm_context(method=self.name, question_id=question.qid):
                answer = self.reason(question, kg)
        finally:
            _STEP_METHOD.reset(token)
        if not isinstance(answer, Answer):
            raise TypeError(f"{type(self).__name__}.reason returned {type(answer).__name__}, not Answer")
        return answer

    @abstractmethod
    def reason(self, question: Question, kg: KGStore) -> Answer:
        """The method's own reasoning: ``question`` over ``kg`` → :class:`Answer` (called by :meth:`answer`,
        which sets up its context)."""

    @final
    def deviations(self) -> list[str]:
        """Every setting in force that differs from the method's paper, with the paper's side: the config's
        :meth:`MethodConfig.deviations` given what :meth:`setup` found (:attr:`notes`)."""
        return self.config.deviations(self.notes)

    def describe(self) -> dict[str, Any]:
        """What ``report.json`` records: the method, its effective settings (``config``), the settings as
        given (``requested``, when a preset left some unset), its LLM, and for a method with presets the
        preset, the deviations from the paper in force and the settings the paper leaves open."""
        out: dict[str, Any] = {"method": self.name, "config": self.config.model_dump(mode="json")}
        requested = getattr(self, "requested", self.config)  # a plugin's own constructor may set only config
        if requested != self.config:
            out["requested"] = requested.model_dump(mode="json")
        if self.takes_llm():
            out["llm"] = None if self.llm is None else self.llm.cache_namespace()
        if isinstance(self.config, PresetConfig):
            out["preset"] = Preset(self.config.preset).value
            out["deviations"] = self.deviations()
            out["unspecified_by_paper"] = self.config.unspecified()
        return out

    def report_metrics(self, rows: Sequence[ResultRow]) -> dict[str, Any]:
        """Method-specific aggregates of an evaluation's ``results.jsonl`` rows, written to ``report.json`` as
        ``method_metrics`` (e.g. LPKG's plan parse rate); none by default."""
        return {}


#: Every method by name: the built-in packages' methods are lazy references added by :mod:`tkgqa.methods`
#: when it is imported (each package's ``plugin.py``); third-party ones come from entry points, the
#: ``tkgqa.methods`` group (one Method class each) and :data:`~tkgqa.methods.package.PACKAGE_GROUP`.
METHODS: Registry[Method] = Registry("method", Method, plugin_sources=plugin_method_references)


def resolve_method(spec: str | type | Method, /, **options: Any) -> Method:
    """Resolve a method from a name (``"symbolic"``, ``"ari"``…), a class or an instance, configured with
    ``options`` (the dict form: ``resolve_method("hybrid", fallback="ari", fallback_options={"policy":
    "llm"})``; values are validated by the method's config, unknown settings are errors).

    The short string form puts options after the name: ``"symbolic:relax=false"``, ``"ari:oracle"``,
    ``"timer4:no_rerank"``. A method whose constructor takes ``spec`` parses them itself (flags, a positional
    value); for any other they are parsed as ``key=value`` pairs by :func:`parse_options`. Keyword
    ``options`` win over the same settings in the string."""
    if isinstance(spec, str) and ":" in spec:
        name, _, arg = spec.partition(":")
        factory = METHODS.factory(name)
        try:
            takes_spec = "spec" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            takes_spec = True
        if not takes_spec:
            return METHODS.resolve(name, **{**parse_options(arg, method=name.strip()), **options})
    return METHODS.resolve(spec, **options)


# --- the answer step of LLM methods, from the one ask helper's outcome (:mod:`tkgqa.prompts.ask`) ---------
@dataclass(frozen=True, eq=False, repr=False)
class RefusedStep(TraceStep):
    """A step whose LLM reply was refused (:func:`abstain_refused`): ``{key: name, "error": message}`` —
    e.g. ``{"step": "answer", "error": …}``; ``key`` is the trace's naming key (``step``, or ``type`` for
    the baselines)."""

    key: str
    name: str
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {self.key: self.name, "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self | None:
        if len(data) != 2 or not isinstance(data.get("error"), str):
            return None
        key = next(k for k in data if k != "error")
        name = data[key]
        return cls(key, name, data["error"]) if key in ("step", "type") and isinstance(name, str) else None


def abstain_refused(
    refused: Refused,
    trace: list[TraceStep],
    usage: Usage,
    llm: LLMBackend | None,
    *,
    entry: tuple[str, str],
    evidence: Sequence[Fact] = (),
) -> Answer:
    """Abstain with ``refused.reason``: a :class:`RefusedStep` (``entry``: its key and name, the error)
    appended to ``trace``; ``usage`` is the question's (the refusal's own included where the caller counts
    it)."""
    trace.append(RefusedStep(*entry, refused.message))
    return Answer.abstain(
        refused.reason,
        trace,
        usage=answer_usage(usage, llm),
        raw_output=refused.raw,
        evidence=list(evidence),
    )


def listed_answer(
    answers: list[str],
    text: str,
    trace: Sequence[TraceStep],
    usage: Usage,
    llm: LLMBackend | None,
    *,
    empty: Abstention | str,
    evidence: Sequence[Fact] = (),
) -> Answer:
    """``answers`` (read from the reply ``text``), or an abstention with reason ``empty`` when there are
    none."""
    if not answers:
        return Answer.abstain(
            empty, trace, usage=answer_usage(usage, llm), raw_output=text, evidence=list(evidence)
        )
    return Answer(answers, list(evidence), trace, answer_usage(usage, llm), raw_output=text)
