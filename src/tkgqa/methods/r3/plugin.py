"""What the R3 package registers (strings only; see :mod:`tkgqa.methods.package`): the method, the
baselines of R3's tables and the ``r3.*`` parse tasks."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="r3",
    methods={
        "r3": "tkgqa.methods.r3.method:R3Method",
        "kaping": "tkgqa.methods.r3.baselines:KAPING",
        "cot0": "tkgqa.methods.r3.baselines:CoT0",
        "cot2": "tkgqa.methods.r3.baselines:CoT2",
    },
    parse_tasks="tkgqa.methods.r3.parse_tasks:TASKS",
    paper="tkgqa.methods.r3:paper.json",
)
