"""What the TimeR4 package registers (strings only; see :mod:`tkgqa.methods.package`): the method,
``tkgqa timer4 …``, the ``timer4.*`` parse tasks, the paper table and ``tkgqa analyze coverage --method
timer4``."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="timer4",
    methods={"timer4": "tkgqa.methods.timer4.method:TimeR4Method"},
    extras={"timer4": "retrieval"},
    commands="tkgqa.methods.timer4.commands:timer4_app",
    parse_tasks="tkgqa.methods.timer4.parse_tasks:TASKS",
    paper="tkgqa.methods.timer4:paper.json",
    analyses={"timer4": "tkgqa.methods.timer4.coverage:ANALYSIS"},
)
