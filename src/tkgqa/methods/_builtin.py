"""The built-in methods: name → ``"module:attr"`` of the implementation (and the extra, if any, that its
optional dependencies come from).

:data:`tkgqa.methods.base.METHODS` registers every entry at import as a lazy reference, so
``METHODS.names()`` is complete in a fresh interpreter while no method module is imported until a method is
resolved. An error inside a method module (a typo, a missing ``tkgqa`` module) is raised when it is
resolved; a missing optional third-party dependency is a ConfigError naming the extra to install.
Third-party methods register through the ``tkgqa.methods`` entry-point group instead (see
:mod:`tkgqa.registry`).
"""

from __future__ import annotations

#: name → (target ``"package.module:attr"``, extra providing its optional dependencies or ``None``)
BUILTIN_METHODS: dict[str, tuple[str, str | None]] = {
    "symbolic": ("tkgqa.methods.symbolic:SymbolicReasoner", None),
    "ari": ("tkgqa.methods.ari:ARIMethod", None),
    "llm_only": ("tkgqa.methods.baselines:LLMOnly", None),
    "kg_rag": ("tkgqa.methods.baselines:KGRAG", "retrieval"),
    "react_kb": ("tkgqa.methods.ari.kb_baselines:ReActKB", None),
    "cot_kb": ("tkgqa.methods.ari.kb_baselines:CoTKB", None),
    "timer4": ("tkgqa.methods.timer4:TimeR4Method", "retrieval"),
    "cik": ("tkgqa.methods.cik:CIKMethod", None),
    "hybrid": ("tkgqa.methods.hybrid:HybridMethod", None),
    "lpkg": ("tkgqa.methods.lpkg:LPKGMethod", None),
    "r3": ("tkgqa.methods.r3:R3Method", None),
    "kaping": ("tkgqa.methods.r3:KAPING", None),
    "cot0": ("tkgqa.methods.r3:CoT0", None),
    "cot2": ("tkgqa.methods.r3:CoT2", None),
}
