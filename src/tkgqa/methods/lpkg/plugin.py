"""What the LPKG package registers (strings only; see :mod:`tkgqa.methods.package`): the method,
``tkgqa lpkg …``, the ``lpkg.plan`` parse task and the planning prompt ICL-LPKG's paper rows are given."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="lpkg",
    methods={"lpkg": "tkgqa.methods.lpkg.method:LPKGMethod"},
    commands="tkgqa.methods.lpkg.commands:lpkg_app",
    parse_tasks="tkgqa.methods.lpkg.parse_tasks:TASKS",
    paper="tkgqa.methods.lpkg:paper.json",
    paper_inputs={"lpkg": "tkgqa.methods.lpkg.paper_inputs:PAPER_INPUTS"},
)
