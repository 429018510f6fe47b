"""``tkgqa llm complete|log|prices`` and ``tkgqa llm cache info|clear``: the LLM layer from the shell.

Everything reads and writes ``$TKGQA_HOME/llm.sqlite`` (``--db`` picks another file): the response cache
and the run log of every call (method, question, model, tokens, latency, cached). API keys are never
printed nor stored; they only come from the environment (``OPENAI_API_KEY``).

Costs are estimates in USD from a table of USD per 1M tokens (input, output), matched by the longest
model-name prefix. The default table (``tkgqa llm prices``)::

    gpt-4o-mini   0.15 / 0.60      gpt-4.1-nano  0.10 / 0.40      gpt-4.1       2.00 / 8.00
    gpt-4o        2.50 / 10.00     gpt-4.1-mini  0.40 / 1.60      gpt-3.5-turbo 0.50 / 1.50

``--prices FILE`` (JSON ``{"model-prefix": [input, output]}``) adds to or overrides it. The rule is
:func:`tkgqa.llm.pricing.usage_cost`, the one behind ``report.json`` too: cached calls and local backends
(llamacpp, fake) cost 0, a call is priced by the model asked for; remote models missing from the table are
listed as unpriced. ``tkgqa llm log --qid q17`` shows what the model saw for one question: each call's
messages and the response.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..credentials import redact
from ..errors import ConfigError
from ..llm.cache import LLMCache, llm_context
from ..llm.pricing import PRICES_PER_MTOK, load_price_table, usage_cost
from ..llm.summary import GroupUsage, LogSummary, row_cost, summarize_log
from . import app
from .terminal import TerminalConsole, echo, echo_json

console = TerminalConsole()
llm_app = typer.Typer(
    help="Query an LLM backend; inspect the run log and the response cache.", no_args_is_help=True
)
cache_app = typer.Typer(help="The response cache ($TKGQA_HOME/llm.sqlite).", no_args_is_help=True)
app.add_typer(llm_app, name="llm")
llm_app.add_typer(cache_app, name="cache")

#: Method tag of the calls made by ``tkgqa llm complete`` (``tkgqa llm log --method cli``).
CLI_METHOD = "cli"
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

DB_HELP = "SQLite file (default: $TKGQA_HOME/llm.sqlite)."


def _existing_db(db: Path | None) -> Path | None:
    """``--db`` as given must exist: a mistyped path is an error, not a new empty database."""
    if db is not None and not db.expanduser().is_file():
        raise typer.BadParameter(f"{str(db)!r} is not a file; the default is $TKGQA_HOME/llm.sqlite")
    return db


DBFlag = Annotated[Path | None, typer.Option("--db", help=DB_HELP, callback=_existing_db)]


def parse_since(text: str, now: float | None = None) -> float:
    """``"2h"``/``"30m"``/``"7d"``/``"1w"`` (ago) or an ISO date/time (local time unless it has a zone)
    → Unix time."""
    match = _RELATIVE.match(text)
    if match:
        amount, unit = float(match.group(1)), match.group(2).lower()
        return (time.time() if now is None else now) - amount * _UNIT_S[unit]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise ConfigError(
            f"--since: cannot read {text!r}; use a duration ago (30m, 2h, 7d, 1w) or an ISO date/time "
            "(2024-05-01, 2024-05-01T14:30)"
        ) from None


def price_table(prices: Path | None) -> dict[str, tuple[float, float]]:
    """The default table, updated with the entries of ``prices`` (a JSON file) when given."""
    table = dict(PRICES_PER_MTOK)
    if prices is not None:
        table.update(load_price_table(prices))
    return table


def _when(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts).isoformat(timespec="seconds") if ts is not None else None


# --- complete -------------------------------------------------------------------------------------------
@llm_app.command("complete")
def complete_cmd(
    prompt: str = typer.Argument(..., help="The user message ('-' reads it from stdin)."),
    llm: str = typer.Option(..., "--llm", help="LLM spec: openai:gpt-4o-mini, llamacpp:smollm2, fake…"),
    system: str | None = typer.Option(None, "--system", help="A system message."),
    max_tokens: int = typer.Option(256, "--max-tokens", min=1, help="Completion token limit."),
    temperature: float = typer.Option(0.0, "--temperature", min=0.0, help="0 = deterministic, cached."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Serve temperature-0 requests from cache."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Send one prompt to an LLM; print its text and usage (tokens, latency, cached or not)."""
    from ..llm import Message, make_request, resolve_llm

    text = sys.stdin.read() if prompt == "-" else prompt
    if not text.strip():
        raise ConfigError("the prompt is empty")
    messages = ([Message.system(system)] if system else []) + [Message.user(text)]
    backend = resolve_llm(llm, cache=cache)
    with llm_context(method=CLI_METHOD):
        resp = backend.complete(make_request(messages, max_tokens=max_tokens, temperature=temperature))
    usage = resp.usage
    cost = usage_cost(usage, backend.model_id, backend=backend.name)
    if as_json:
        out = {
            "text": resp.text,
            "backend": backend.name,
            "model": resp.model or backend.model_id,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "latency_s": resp.latency_s,
            "cached": resp.cached,
            "cost_usd": cost,
        }
        echo_json(out)
        return
    echo(resp.text)
    console.print(
        f"[dim]{escape(backend.name)}:{escape(resp.model or backend.model_id)} · "
        f"prompt {usage.prompt_tokens} tokens · "
        f"completion {usage.completion_tokens} tokens · {resp.latency_s:.2f} s · "
        f"{'cached' if resp.cached else 'not cached'} · ~${cost:.6f}[/dim]",
        highlight=False,
        soft_wrap=True,
    )


# --- log ------------------------------------------------------------------------------------------------
def _group_table(title: str, column: str, groups: list[GroupUsage]) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column(column, overflow="fold")
    for name in ("calls", "cached", "errors", "in tok", "out tok", "sec", "cost $"):
        table.add_column(name, justify="right", no_wrap=True)
    for g in groups:
        table.add_row(
            escape(g.key or "—"),
            str(g.calls),
            str(g.cached_calls),
            str(g.errors),
            str(g.prompt_tokens),
            str(g.completion_tokens),
            f"{g.latency_s:.2f}",
            f"{g.cost_usd:.4f}",
        )
    return table


def print_log_summary(summary: LogSummary, title: str) -> None:
    t = summary.total
    if t.calls == 0 and t.parse_failures == 0:
        console.print(f"no LLM calls logged ({title})", highlight=False)
        return
    mean = t.latency_s / t.calls if t.calls else 0.0
    console.print(
        f"[bold]{t.calls}[/bold] calls ({t.cached_calls} cached, {t.errors} errors, "
        f"{t.parse_failures} parse failures) · {t.prompt_tokens} prompt + {t.completion_tokens} completion "
        f"tokens · {t.latency_s:.1f} s ({mean:.2f} s/call) · ~[bold]${t.cost_usd:.4f}[/bold]  "
        f"[dim]{escape(title)}[/dim]",
        highlight=False,
        soft_wrap=True,
    )
    console.print(_group_table("per model", "model", summary.by_model))
    console.print(_group_table("per method", "method", summary.by_method))
    if summary.unpriced_models:
        console.print(
            f"[yellow]no price for[/yellow] {escape(', '.join(summary.unpriced_models))} "
            "(counted as $0; add them with --prices FILE)",
            highlight=False,
        )


@llm_app.command("log")
def log_cmd(
    method: str | None = typer.Option(None, "--method", help="Only calls tagged with this method."),
    since: str | None = typer.Option(None, "--since", help="Only calls since: 2h, 7d, 2024-05-01…"),
    qid: str | None = typer.Option(
        None, "--qid", help="Show the calls of this question id: the messages sent and each response."
    ),
    prices: Path | None = typer.Option(
        None, "--prices", help='JSON {"model-prefix": \\[input, output]} USD/1M tokens, over the defaults.'
    ),
    db: DBFlag = None,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Sum up the run log: calls, cached calls, tokens, latency and estimated cost per model and method.

    With --qid, list that question's calls instead: what the model saw (the messages) and what it said."""
    table = price_table(prices)
    since_ts = parse_since(since) if since is not None else None
    if qid is not None:
        question_calls(LLMCache(db), qid, method=method, since=since_ts, prices=table, as_json=as_json)
        return
    summary = summarize_log(db, method=method, since=since_ts, prices=table)
    if as_json:
        data: dict[str, Any] = summary.model_dump(mode="json")
        data.update(method=method, since=_when(since_ts), prices=_prices_json(table))
        echo_json(data)
        return
    scope = [f"method {method}"] if method else []
    scope += [f"since {_when(since_ts)}"] if since_ts is not None else []
    print_log_summary(summary, ", ".join(scope) or "all calls")


#: Columns of a call row shown by ``tkgqa llm log --qid`` (besides its request and response).
_CALL_FIELDS = ("id", "kind", "method", "question_id", "backend", "model", "request_model", "cached",
                "prompt_tokens", "completion_tokens", "latency_s", "error", "request_key")  # fmt: skip


def question_calls(
    store: LLMCache,
    qid: str,
    *,
    method: str | None,
    since: float | None,
    prices: Mapping[str, tuple[float, float]],
    as_json: bool,
) -> None:
    """Print the calls logged for question ``qid``: each with its stored request and its response."""
    calls: list[dict[str, Any]] = []
    for row in store.calls(method=method, since=since, question_id=qid):
        call = {k: row.get(k) for k in _CALL_FIELDS}
        call.update(
            ts=_when(row["ts"]),
            cached=bool(row["cached"]),
            cost_usd=row_cost(row, prices),
            request=store.request(row["request_key"]) if row.get("request_key") else None,
            response=row.get("response"),
        )
        calls.append(redact(call))  # a key a model echoed, a URL with a key: masked as everywhere
    if as_json:
        echo_json({"question_id": qid, "method": method, "calls": calls})
        return
    if not calls:
        console.print(f"no LLM calls logged for question {escape(qid)}", highlight=False)
        return
    for call in calls:
        _print_call(call)
    n = sum(c["kind"] == "call" for c in calls)
    cost = sum(c["cost_usd"] for c in calls)
    console.print(f"{n} calls for question {escape(qid)} · ~${cost:.6f}", highlight=False)


def _print_call(call: Mapping[str, Any]) -> None:
    head = (
        f"[bold]#{call['id']}[/bold] {call['ts']} · {escape(str(call['method'] or '—'))} · "
        f"{escape(str(call['backend']))}:{escape(str(call['model']))}"
    )
    if call["kind"] != "call":
        console.print(f"{head} · [yellow]{escape(call['kind'])}[/yellow]", highlight=False, soft_wrap=True)
        return
    head += (
        f" · {call['prompt_tokens']}+{call['completion_tokens']} tokens · "
        f"{'cached' if call['cached'] else 'not cached'} · ~${call['cost_usd']:.6f}"
    )
    console.print(head, highlight=False, soft_wrap=True)
    stored = call["request"]
    if stored is None:
        console.print("  [dim](request not recorded: logged before the run log stored requests)[/dim]")
    else:
        request = stored["request"]
        for message in request.get("messages", []):
            console.print(f"  [cyan]{message['role']}:[/cyan]", highlight=False)
            console.print(_indent(message["content"]), markup=False, highlight=False, soft_wrap=True)
        settings = {k: request[k] for k in ("choices", "json_schema", "grammar", "extra") if request.get(k)}
        if settings:
            console.print(f"  [dim]{escape(json.dumps(settings, ensure_ascii=False))}[/dim]", soft_wrap=True)
    if call["error"]:
        console.print(f"  [red]error:[/red] {escape(call['error'])}", highlight=False, soft_wrap=True)
    if call["response"] is not None:
        console.print("  [green]response:[/green]", highlight=False)
        console.print(_indent(call["response"]), markup=False, highlight=False, soft_wrap=True)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in (text.splitlines() or [""]))


def _prices_json(table: Mapping[str, tuple[float, float]]) -> dict[str, dict[str, float]]:
    return {model: {"input": p[0], "output": p[1]} for model, p in sorted(table.items())}


@llm_app.command("prices")
def prices_cmd(
    prices: Path | None = typer.Option(None, "--prices", help="JSON price file to merge over the defaults."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Show the price table used for cost estimates (USD per 1M tokens)."""
    table = price_table(prices)
    if as_json:
        typer.echo(json.dumps(_prices_json(table)))
        return
    out = Table("model prefix", "input $/1M", "output $/1M", title="prices", title_justify="left")
    for model, (pin, pout) in sorted(table.items()):
        out.add_row(model, f"{pin:.2f}", f"{pout:.2f}")
    console.print(out)
    console.print("[dim]local backends (llamacpp, fake) and cached calls cost 0[/dim]")


# --- cache ----------------------------------------------------------------------------------------------
@cache_app.command("info")
def cache_info(
    db: DBFlag = None,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Where the cache is, its size, schema version, and how many responses, stored requests and logged
    calls it holds."""
    info = LLMCache(db).info()
    info["first_call"], info["last_call"] = _when(info["first_call"]), _when(info["last_call"])
    if as_json:
        typer.echo(json.dumps(info))
        return
    table = Table("", "value", title="LLM cache", title_justify="left")
    keys = ("path", "exists", "size_bytes", "schema_version", "responses", "requests", "calls")
    for key in (*keys, "first_call", "last_call"):
        table.add_row(key, str(info[key]))
    console.print(table)


@cache_app.command("clear")
def cache_clear(
    log: bool = typer.Option(False, "--log", help="Also delete the run log (tkgqa llm log)."),
    db: DBFlag = None,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Delete the cached responses (and, with --log, the run log)."""
    store = LLMCache(db)
    removed = store.clear(responses=True, log=log)
    if as_json:
        typer.echo(json.dumps({"path": str(store.path), **removed}))
        return
    what = f"{removed['responses']} cached responses"
    if log:
        what += f" and {removed['calls']} logged calls"
    console.print(f"deleted {what} from {store.path}", highlight=False)


# --- export (a cassette of a run, for --llm replay:FILE) ------------------------------------------------
@llm_app.command("export")
def export_cmd(
    run: Path = typer.Argument(..., help="A run folder written by `tkgqa eval`."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Cassette file to write (default: print it on stdout)."
    ),
    db: DBFlag = None,
    force: bool = typer.Option(False, "--force", help="Replace an --output file that is not a cassette."),
) -> None:
    """Write a run's LLM calls as a cassette (a header line, then one line per call: id, stage, messages,
    response), which `--llm replay:FILE` answers from, offline. Credentials, and key-shaped text in the
    replies, prompts and URLs, are never written (masked as ***)."""
    from ..eval.record import export_run

    lines, n = export_run(run, output, db=db, force=force)
    if output is None:
        sys.stdout.write("".join(lines))
    else:
        note = f"wrote {n} recorded calls to {escape(str(output))}"
        TerminalConsole(stderr=True).print(note, highlight=False)
