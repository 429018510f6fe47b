"""What the TimeR4 package registers (strings only; see :mod:`tkgqa.methods.package`): the method,
``tkgqa timer4 …`` and the ``timer4.*`` parse tasks."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="timer4",
    methods={"timer4": "tkgqa.methods.timer4.method:TimeR4Method"},
    extras={"timer4": "retrieval"},
    commands="tkgqa.methods.timer4.commands:timer4_app",
    parse_tasks="tkgqa.methods.timer4.parse_tasks:TASKS",
    paper="tkgqa.methods.timer4:paper.json",
)
