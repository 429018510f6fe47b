"""What the ``symbolic`` package registers (strings only; see :mod:`tkgqa.methods.package`)."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="symbolic",
    methods={"symbolic": "tkgqa.methods.symbolic.method:SymbolicReasoner"},
)
