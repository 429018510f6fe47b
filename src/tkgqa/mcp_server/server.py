"""The MCP server's tools and resource over one :class:`~tkgqa.service.state.ServiceState`
(:func:`build_server`). Every tool checks its input (sizes bounded in the published schema), runs the same
code as the HTTP service (the method pool and its policy for ``ask``, :mod:`tkgqa.service.kg_views` for the
KG), and turns a project error into a tool error with the CLI's message (clipped, secrets masked); any other
exception is logged on the server and reaches the client only as "internal error (TypeName)". No traceback,
no server path, no secret reaches a client.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ParamSpec, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..api.resolve import OptionValue
from ..api.views import labelled_fact
from ..errors import ConfigError, TKGQAError
from ..kg.base import KGStore
from ..kg.fact import Fact
from ..kg.neighborhood import entity_lifetime
from ..kg.queries import kg_summary
from ..loading import loading_now
from ..sanitize import clean_text
from ..service.errors import exception_body
from ..service.kg_views import append_lines, neighbourhood, resolve_name
from ..service.live import MAX_APPEND_LINES
from ..service.policy import MAX_CLIENT_NAME_CHARS, MAX_QUESTION_CHARS
from ..service.state import ServiceState
from ..service.submit import Submitted, submit_question, wait_for_answer
from ..time.interval import Interval
from ..time.point import parse_time
from .models import (
    MAX_EVIDENCE,
    MAX_STEP_CHARS,
    MAX_STEPS,
    AppendOut,
    AskOut,
    FactPage,
    NeighborsOut,
    TimelineOut,
)

log = logging.getLogger("tkgqa.mcp")

P = ParamSpec("P")
T = TypeVar("T")

MAX_DATE_CHARS = 40
MAX_PAGE = 200
SUMMARY_URI = "tkgqa://kg/summary"

Name = Annotated[
    str, Field(min_length=1, max_length=MAX_CLIENT_NAME_CHARS, description="A KG name or label.")
]
OptName = Annotated[str | None, Field(max_length=MAX_CLIENT_NAME_CHARS)]
Date = Annotated[
    str | None,
    Field(max_length=MAX_DATE_CHARS, description="A date: 2014, 2014-11 or 2014-11-08 (None: no bound)."),
]
Offset = Annotated[int, Field(ge=0, le=10_000_000, description="Facts to skip (paging).")]
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"Facts per page (at most {MAX_PAGE}).")]

INSTRUCTIONS = """Answers questions over a temporal knowledge graph, with the KG facts that support each
answer. Use `ask` for a natural-language question ("Who visited China in November 2014?"); `as_of` answers
over the KG as it was known at that date (facts that started later are hidden). An abstention is an answer:
`abstained` with a `reason`. Use `facts`, `timeline` and `neighbors` to read the KG itself; the resource
tkgqa://kg/summary gives its size, time span and most frequent relations."""


def tool_errors(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """A project error becomes a :class:`ToolError` with its message (the one the CLI prints; clipped, secrets
    masked, near matches of an unknown name appended); anything else is logged here and reported as
    "internal error (TypeName)"."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except ToolError:
            raise
        except TKGQAError as exc:
            body = exception_body(exc)
            hint = (
                ""
                if "did you mean" in body["error"] or not body.get("suggestions")
                else (f" (did you mean: {', '.join(body['suggestions'][:5])}?)")
            )
            raise ToolError(f"{body['type']}: {body['error']}{hint}") from None
        except Exception as exc:
            log.exception("unexpected error in an MCP tool")
            raise ToolError(f"internal error ({type(exc).__name__}); see the server log") from None

    return wrapper


def _window(start: str | None, end: str | None) -> Interval | None:
    """The time window of ``start``…``end`` (either may be open); DataError for a date that does not parse."""
    first = parse_time(start) if start and start.strip() else None
    last = parse_time(end) if end and end.strip() else None
    if first is None and last is None:
        return None
    if first is not None and last is not None and first.first_day > last.last_day:
        raise ConfigError(f"the window starts ({first}) after it ends ({last}): swap start and end")
    return Interval(first, last)


def _page(facts: list[Fact], kg: KGStore, offset: int, limit: int) -> list[dict[str, Any]]:
    return [labelled_fact(f, kg) for f in facts[offset : offset + limit]]


def _steps(trace: list[Any]) -> list[str]:
    """One line per trace step: its name and its other fields, cut at :data:`MAX_STEP_CHARS`."""
    out = []
    for step in trace[:MAX_STEPS]:
        if isinstance(step, dict):
            name = str(step.get("step") or step.get("action") or "step")
            rest = {k: v for k, v in step.items() if k != "step"}
            line = f"{name}: {json.dumps(rest, ensure_ascii=False, default=str)}"
        else:
            line = str(step)
        out.append(line if len(line) <= MAX_STEP_CHARS else line[: MAX_STEP_CHARS - 1] + "…")
    return out


def ask_result(payload: dict[str, Any]) -> AskOut:
    """The ``ask`` tool's result from the answer's JSON (:func:`tkgqa.api.resolve.answer_payload`)."""
    program = next((s["program"] for s in payload["trace"] if isinstance(s, dict) and "program" in s), None)
    return AskOut(
        question=payload["question"],
        method=payload["method"],
        llm=payload["llm"],
        kg=payload["kg"],
        as_of=payload["as_of"],
        answers=payload["answers"],
        evidence=payload["evidence"][:MAX_EVIDENCE],
        evidence_total=len(payload["evidence"]),
        abstained=payload["abstained"] or not payload["answers"],
        reason=payload["reason"] or "",
        missing=payload["missing"],
        program=str(program) if program is not None else None,
        steps=_steps(payload["trace"]),
        usage=payload["usage"],
        latency_ms=payload["latency_ms"] or 0.0,
    )


async def wait_answer(state: ServiceState, submitted: Submitted, ctx: Context | None) -> Any:
    """The queued question's answer within the server's deadline
    (:func:`~tkgqa.service.submit.wait_for_answer`); a client that asked for progress is told which models
    load (a first question often loads one) and each step the method reports."""
    future, channel = submitted.future, submitted.channel
    shown: list[object] = []
    steps = 0

    async def tick() -> None:
        nonlocal shown, steps
        if ctx is None:
            return
        loads = loading_now() if future.running() else []
        if [x["what"] for x in loads] != shown:
            shown = [x["what"] for x in loads]
            if shown:
                names = ", ".join(str(w) for w in shown)
                await ctx.report_progress(steps, None, f"loading {names}… (a first question loads it)")
        for event in channel.drain():
            steps += 1
            await ctx.report_progress(steps, None, event.label[:MAX_STEP_CHARS])

    timeout = state.settings.request_timeout_s
    return await wait_for_answer(future, timeout, state.pool, channel, tick=tick)


def build_server(state: ServiceState, *, name: str = "tkgqa") -> MCPServer:
    """The MCP server over ``state``: tools ``ask``, ``facts``, ``timeline``, ``neighbors`` (and
    ``append_facts`` when ``state.settings.allow_append``), the resource :data:`SUMMARY_URI`."""
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    live = state.live
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    methods = ", ".join(state.policy.allowed_methods()[:20])

    @server.tool(
        description="Answer a natural-language question over the temporal KG: ranked answers with the KG "
        "facts that support them, the program the method ran and a summary of its steps; an abstention "
        f"says why. Methods allowed here: {methods} (default {state.default_method}).",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    @tool_errors
    async def ask(
        question: Annotated[str, Field(max_length=MAX_QUESTION_CHARS, description="The question.")],
        method: Annotated[
            str | None,
            Field(max_length=MAX_CLIENT_NAME_CHARS, description="A method spec (default: the server's)."),
        ] = None,
        as_of: Annotated[
            str | None,
            Field(
                max_length=MAX_DATE_CHARS,
                description="Answer over the KG as known at this date (e.g. 2014-06): later facts hidden.",
            ),
        ] = None,
        llm: Annotated[
            str | None, Field(max_length=MAX_CLIENT_NAME_CHARS, description="An LLM spec the server allows.")
        ] = None,
        options: Annotated[
            dict[str, OptionValue] | None,
            Field(max_length=32, description="Method options the server allows (short words, numbers)."),
        ] = None,
        ctx: Context | None = None,
    ) -> AskOut:
        submitted = submit_question(
            state, clean_text(question), method=method, llm=llm, options=options, as_of=as_of, qid="mcp"
        )
        answer = await wait_answer(state, submitted, ctx)
        return ask_result(submitted.payload(answer))

    @server.tool(
        description="KG facts matching a subject, relation and/or object (names or labels) within a time "
        "window, ordered by start time, a page at a time; as_of hides facts that started later.",
        annotations=read_only,
    )
    @tool_errors
    async def facts(
        subject: OptName = None,
        relation: OptName = None,
        object: OptName = None,
        start: Date = None,
        end: Date = None,
        as_of: Date = None,
        offset: Offset = 0,
        limit: Limit = 20,
    ) -> FactPage:
        def run() -> dict[str, Any]:
            kg = live.at(as_of)
            linkers = live.derived.linkers
            s = resolve_name(live, subject) if subject else None
            o = resolve_name(live, object) if object else None
            r = None
            if relation:
                r = relation if kg.has_relation(relation) else linkers.relations.resolve(relation)
            window = _window(start, end)
            found = kg.facts(s, r, o, window, limit=offset + limit)
            total = kg.count(s, r, o, window)
            return {"total": total, "offset": offset, "facts": _page(found, kg, offset, limit)}

        return FactPage(**await anyio.to_thread.run_sync(run))

    @server.tool(
        description="An entity's facts in time order (as subject or object), a page at a time, with when it "
        "first and last appears; as_of hides facts that started later.",
        annotations=read_only,
    )
    @tool_errors
    async def timeline(
        entity: Name, start: Date = None, end: Date = None, as_of: Date = None, offset: Offset = 0,
        limit: Limit = 50,
    ) -> TimelineOut:  # fmt: skip
        def run() -> dict[str, Any]:
            kg = live.at(as_of)
            name = resolve_name(live, entity)
            found = kg.incident(name, time=_window(start, end))
            life = entity_lifetime(kg, name).to_dict() if found or kg.has_entity(name) else {}
            return {
                "entity": name,
                "label": kg.label(name),
                "first": life.get("first"),
                "last": life.get("last"),
                "total": len(found),
                "offset": offset,
                "facts": _page(found, kg, offset, limit),
            }

        return TimelineOut(**await anyio.to_thread.run_sync(run))

    @server.tool(
        description="An entity's 1-hop neighbourhood: the entities it shares facts with (most connected "
        "first), a page of its facts (optionally of one relation, with one other entity, in one period) and "
        "its facts per relation.",
        annotations=read_only,
    )
    @tool_errors
    async def neighbors(
        entity: Name,
        time: Date = None,
        relation: OptName = None,
        counterpart: OptName = None,
        offset: Offset = 0,
        limit: Limit = 20,
    ) -> NeighborsOut:
        if time:
            parse_time(time)  # a bad date is a clean error before any work
        view = await anyio.to_thread.run_sync(
            lambda: neighbourhood(live, entity, time, relation, counterpart, offset, limit)
        )
        return NeighborsOut(**view)

    if state.settings.allow_append:

        @server.tool(
            description="Append facts to the KG: one per line, tab-separated subject, relation, object, "
            f"start[, end] (at most {MAX_APPEND_LINES} lines); the next question sees them.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
        )
        @tool_errors
        async def append_facts(
            lines: Annotated[str, Field(min_length=1, max_length=60_000, description="Tab-separated facts.")],
        ) -> AppendOut:
            return AppendOut(**await anyio.to_thread.run_sync(lambda: append_lines(state, lines)))

    @server.resource(
        SUMMARY_URI,
        name="kg_summary",
        description="The KG's size (facts, entities, relations), time span and most frequent relations.",
        mime_type="application/json",
    )
    def summary() -> str:
        data = kg_summary(live.kg, None, 20)
        data.pop("path", None)  # a server path is not the client's business
        data.pop("from_cache", None)
        return json.dumps({**data, "appendable": state.settings.allow_append}, ensure_ascii=False)

    return server
