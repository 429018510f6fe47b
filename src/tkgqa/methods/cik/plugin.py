"""What the CIK-LLM package registers (strings only; see :mod:`tkgqa.methods.package`): the method, the
``cik.*`` parse tasks, the paper table and ``tkgqa analyze coverage --method cik``."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="cik",
    methods={"cik": "tkgqa.methods.cik.method:CIKMethod"},
    parse_tasks="tkgqa.methods.cik.parse_tasks:TASKS",
    paper="tkgqa.methods.cik:paper.json",
    analyses={"cik": "tkgqa.methods.cik.analysis:ANALYSIS"},
)
