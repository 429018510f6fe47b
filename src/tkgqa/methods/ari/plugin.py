"""What the ARI package registers (strings only; see :mod:`tkgqa.methods.package`): the method, the paper's
KB-interaction baselines, ``tkgqa ari …``, the ``ari.action`` parse task and the history memory its paper rows
are given."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="ari",
    methods={
        "ari": "tkgqa.methods.ari.method:ARIMethod",
        "react_kb": "tkgqa.methods.ari.kb_baselines:ReActKB",
        "cot_kb": "tkgqa.methods.ari.kb_baselines:CoTKB",
    },
    commands="tkgqa.methods.ari.commands:ari_app",
    parse_tasks="tkgqa.methods.ari.parse_tasks:TASKS",
    paper="tkgqa.methods.ari:paper.json",
    paper_inputs={"ari": "tkgqa.methods.ari.paper_inputs:PAPER_INPUTS"},
)
