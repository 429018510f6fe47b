"""What the CIK-LLM package registers (strings only; see :mod:`tkgqa.methods.package`): the method and the
``cik.*`` parse tasks."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="cik",
    methods={"cik": "tkgqa.methods.cik.method:CIKMethod"},
    parse_tasks="tkgqa.methods.cik.parse_tasks:TASKS",
    paper="tkgqa.methods.cik:paper.json",
)
