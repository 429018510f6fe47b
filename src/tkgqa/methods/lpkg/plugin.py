"""What the LPKG package registers (strings only; see :mod:`tkgqa.methods.package`): the method,
``tkgqa lpkg …`` and the ``lpkg.plan`` parse task."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="lpkg",
    methods={"lpkg": "tkgqa.methods.lpkg.method:LPKGMethod"},
    commands="tkgqa.methods.lpkg.commands:lpkg_app",
    parse_tasks="tkgqa.methods.lpkg.parse_tasks:TASKS",
    paper="tkgqa.methods.lpkg:paper.json",
)
