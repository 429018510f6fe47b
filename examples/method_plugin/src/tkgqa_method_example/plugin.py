"""What this distribution adds to tkgqa, in one descriptor (strings only: nothing is imported here).

``pyproject.toml`` points the ``tkgqa.method_packages`` entry point at :data:`PLUGIN`; tkgqa's own methods
register through the same descriptor (``tkgqa/methods/<name>/plugin.py``). A package may also declare
``parse_tasks="module:TASKS"`` (a sequence of ``tkgqa.llm.parse_tasks.ParseTask``) for ``tkgqa llm parse``
and ``paper="package:paper.json"`` (its paper's published tables, shipped as package data, in the format of
``tkgqa/methods/ari/paper.json``) for ``tkgqa reproduce NAME``.
"""

from tkgqa.methods.package import MethodPackage

PLUGIN = MethodPackage(
    name="example",
    # method name (`--method example_timeline`) → "module:Class", imported when first used
    methods={"example_timeline": "tkgqa_method_example.method:Timeline"},
    # a typer.Typer with a name: `tkgqa example-timeline …`, imported when the command line is built
    commands="tkgqa_method_example.commands:app",
)
