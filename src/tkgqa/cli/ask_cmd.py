"""``tkgqa ask`` and ``tkgqa demo``: answer questions over a KG and show answers, evidence and trace."""

from __future__ import annotations

import time

import typer
from rich.table import Table
from rich.text import Text

from ..api.resolve import answer_payload, build_method, open_kg
from ..api.views import program_tree
from ..credentials import redact
from ..datasets.base import Question
from ..errors import ConfigError
from ..kg.base import KGStore
from ..kg.loaders import load_warnings
from ..llm.openai_backend import apply_llm_settings
from ..methods.base import Answer, Method, StepEvent, resolve_method
from ..outcomes import AbstainReason
from ..query.program.steps import ProgramStep
from ..sanitize import clean_text, terminal_text
from . import app
from .flags import FallbackOptionFlag, LLMFlag, LLMRetriesFlag, LLMTimeoutFlag, MethodOptionFlag, PolicyFlag
from .run_config import cli_method_options
from .terminal import TerminalConsole, echo_json, plain, warn_once

console = TerminalConsole()
err_console = TerminalConsole(stderr=True)


def print_answer(question: str, answer: Answer, kg: KGStore) -> None:
    console.rule(Text(terminal_text(question), style="bold"))
    if answer.abstained or not answer.answers:
        said = answer.reason_text or "the method abstained"
        if answer.reason is not None and answer.reason.kind is AbstainReason.NO_ANSWER:
            said = said.removeprefix("no answer (").removesuffix(")")  # "no answer (t_max)": said once
        console.print(Text("no answer", style="yellow") + plain(f" ({said})"), highlight=False)
        program = program_tree(answer.trace, kg.label)
        if program and program["missing"]:
            console.print(f"missing: {program['missing']}", highlight=False, markup=False)
    else:
        console.print(Text("answer: ", style="bold green") + plain(", ".join(answer.answers)))
    if answer.evidence:
        table = Table("subject", "relation", "object", "time", title="evidence", title_justify="left")
        for fact in answer.evidence[:10]:
            table.add_row(
                plain(kg.label(fact.subject)),
                plain(kg.label(fact.relation)),
                plain(kg.label(fact.object)),
                fact.time_text(),
            )
        if len(answer.evidence) > 10:
            table.caption = f"… {len(answer.evidence) - 10} more"
        console.print(table)
    for step in answer.trace:
        if isinstance(step.unwrapped, ProgramStep):
            console.print(Text("program: ", style="dim") + plain(step.unwrapped.program), highlight=False)
        for line in step.unwrapped.shown_lines():  # R3: axiom, steps with cited facts, verdict
            console.print(line, highlight=False, markup=False)


def answer_showing_steps(runner: Method, question: str, store: KGStore, llm: str | None) -> Answer:
    """``runner``'s answer, saying on stderr what runs while it runs: each step of a multi-step method (ARI's
    actions, R3's checks…) with its elapsed time, and each call to a local LLM with its estimate."""
    from ..methods.base import step_reporter
    from . import SLOW_WORK

    if llm:
        err_console.print(
            Text(f"answering with {runner.name} and LLM {redact(llm)}; its steps show as they run…", "dim")
        )
    begin = time.perf_counter()

    def show(event: StepEvent) -> None:
        took = time.perf_counter() - begin
        err_console.print(Text(f"  [{took:5.1f} s] {event.kind}: {terminal_text(event.label)}", "dim"))

    SLOW_WORK.calls = True
    try:
        with step_reporter(show):
            return runner.answer(Question(qid="cli", text=question), store)
    finally:
        SLOW_WORK.calls = False


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question, in natural language."),
    kg: str | None = typer.Option(
        None,
        "--kg",
        help="KG file, or a dataset name (its KG in the data root: `tkgqa data`); default: the demo KG.",
    ),
    method: str = typer.Option("symbolic", "--method", help="Method name (symbolic, ari, timer4, cik, …)."),
    llm: LLMFlag = None,
    policy: PolicyFlag = None,
    method_option: MethodOptionFlag = None,
    fallback_option: FallbackOptionFlag = None,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    llm_timeout: LLMTimeoutFlag = None,
    llm_retries: LLMRetriesFlag = None,
) -> None:
    """Answer QUESTION over a temporal KG; prints the answer, the evidence facts and the trace.

    When the method's LLM call fails (HTTP error, timeout, bad key) there is no answer: the error is printed
    on stderr and the command exits with status 2 (an abstention is an answer: "no answer", status 0).
    Lines of the KG file that could not be read are skipped and said once on stderr (and in --json's
    "warnings")."""
    apply_llm_settings(llm_timeout, llm_retries)
    question = clean_text(question).strip()  # bytes that were not UTF-8 on the command line (lone surrogates)
    if not question:
        raise ConfigError('the question is empty: give one, e.g. tkgqa ask "Who visited China in 2014?"')
    store = open_kg(kg)
    skipped = load_warnings(store)  # what the KG file had that could not be read: said, once
    for warning in skipped:
        warn_once(warning)
    started = time.perf_counter()
    options = cli_method_options(method_option, fallback_option)
    runner = build_method(method, llm=llm, policy=policy, options=options)
    answer = answer_showing_steps(runner, question, store, llm)
    if as_json:
        latency_ms = (time.perf_counter() - started) * 1000
        payload = answer_payload(
            answer, latency_ms, kg=store, question=question, method=method.strip(), llm=llm or None
        )
        echo_json(payload)  # its "warnings" lists what the KG's load skipped
        return
    print_answer(question, answer, store)


DEMO_QUESTIONS = 6


@app.command()
def demo(
    method: str = typer.Option("symbolic", "--method", help="Method to run on the demo questions."),
    n: int = typer.Option(DEMO_QUESTIONS, "--n", min=1, help="How many demo questions to answer."),
) -> None:
    """Answer a few questions over the bundled demo KG (no data download, no LLM needed)."""
    from ..datasets.demo import load_demo_questions

    runner = resolve_method(method)  # an unknown method fails before anything is printed
    store = open_kg(None)
    first, last = store.time_span()
    console.print(
        f"[bold]tkgqa demo[/bold]: bundled demo KG, {len(store)} facts, "
        f"{len(store.entities)} entities, {first} … {last}; method: {method}"
    )
    questions = load_demo_questions()
    pick = questions[:: max(1, len(questions) // n)][:n]
    hits = 0
    for q in pick:
        answer = runner.answer(q, store)
        print_answer(q.text, answer, store)
        gold = {a.lower() for a in q.answers}
        ok = bool(answer.answers) and answer.answers[0].lower() in gold
        hits += ok
        console.print(f"[dim]gold:[/dim] {', '.join(q.answers)}  {'✓' if ok else '✗'}")
    console.print(f"\n[bold]{hits}/{len(pick)}[/bold] demo questions answered correctly (rank 1).")
