"""tkgqa's own method packages: the ``"module:attr"`` of each package's descriptor (its ``plugin.py``).

Each built-in package registers through its :class:`~tkgqa.methods.package.MethodPackage`, the same
descriptor a third-party distribution points its ``tkgqa.method_packages`` entry point at; this list is
all tkgqa adds. :mod:`tkgqa.methods` reads them when it is imported, so ``METHODS.names()`` is complete
in a fresh interpreter while no method module is imported until a method is resolved.
"""

from __future__ import annotations

BUILTIN_PACKAGES: tuple[str, ...] = (
    "tkgqa.methods.symbolic.plugin:PLUGIN",
    "tkgqa.methods.ari.plugin:PLUGIN",
    "tkgqa.methods.baselines.plugin:PLUGIN",
    "tkgqa.methods.timer4.plugin:PLUGIN",
    "tkgqa.methods.cik.plugin:PLUGIN",
    "tkgqa.methods.hybrid.plugin:PLUGIN",
    "tkgqa.methods.lpkg.plugin:PLUGIN",
    "tkgqa.methods.r3.plugin:PLUGIN",
)
