"""``tkgqa example-timeline facts ENTITY``: the facts the method reads for an entity, in time order, and the
one each order answers with. Declared by :mod:`.plugin`; the command line imports this module when it is
built, so it imports only typer at the top and the rest inside the command."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(name="example-timeline", help="The example method's timeline of an entity.")


@app.command("facts")
def facts_cmd(
    entity: str = typer.Argument(..., help="The entity's label, e.g. 'Barack Obama'."),
    kg: Path | None = typer.Option(None, "--kg", help="KG file (default: the bundled demo KG)."),
) -> None:
    """The entity's facts, earliest first; the first is the `paper` answer, the last the `ours` one."""
    from tkgqa.errors import NotFoundError
    from tkgqa.kg.loaders import load_demo_kg, load_kg

    graph = load_kg(kg) if kg is not None else load_demo_kg()
    wanted = entity.strip().lower()
    found = next((e for e in graph.entities if graph.label(e).lower() == wanted), None)
    if found is None:
        raise NotFoundError(f"no entity labelled {entity!r} in the KG; give a label as the KG writes it")
    facts = sorted(graph.facts(subject=found), key=lambda f: f.interval.span)
    for i, fact in enumerate(facts):
        mark = " (paper)" if i == 0 else " (ours)" if i == len(facts) - 1 else ""
        typer.echo(f"{fact.interval} {fact.relation} {graph.label(fact.object)}{mark}")
