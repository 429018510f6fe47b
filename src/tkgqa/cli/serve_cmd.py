"""``tkgqa serve``: the HTTP API and web UI (needs the ``[service]`` extra: FastAPI and uvicorn)."""

from __future__ import annotations

import typer
from rich.console import Console

from . import app

console = Console(stderr=True)


@app.command()
def serve(
    kg: str | None = typer.Option(None, "--kg", help="KG file (default: the bundled demo KG)."),
    method: str = typer.Option(
        "symbolic", "--method", help="Default method (symbolic, ari:policy=symbolic, …)."
    ),
    llm: str | None = typer.Option(None, "--llm", help="Default LLM spec, e.g. fake or openai:gpt-4o-mini."),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 exposes it)."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level (debug, info, warning…)."),
) -> None:
    """Serve the question-answering API and a web UI (open http://HOST:PORT/ in a browser)."""
    from ..service import require_service
    from ..service.resolve import redact

    require_service(server=True)
    import uvicorn

    from ..service.app import create_app

    application = create_app(kg=kg, default_method=method, llm=llm)
    kg_name = getattr(application.state.tkgqa.kg, "name", kg)
    console.print(
        f"[bold]tkgqa serve[/bold]: KG {kg_name}, method {redact(method)}"
        + (f", LLM {redact(llm)}" if llm else "")
        + f" → http://{host}:{port}/",
        highlight=False,
    )
    uvicorn.run(application, host=host, port=port, log_level=log_level.lower())
