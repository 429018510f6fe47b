"""What the ``hybrid`` package registers (strings only; see :mod:`tkgqa.methods.package`)."""

from ..package import MethodPackage

PLUGIN = MethodPackage(name="hybrid", methods={"hybrid": "tkgqa.methods.hybrid.method:HybridMethod"})
