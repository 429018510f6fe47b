"""What the baselines package registers (strings only; see :mod:`tkgqa.methods.package`)."""

from ..package import MethodPackage

PLUGIN = MethodPackage(
    name="baselines",
    methods={
        "llm_only": "tkgqa.methods.baselines.llm_only:LLMOnly",
        "kg_rag": "tkgqa.methods.baselines.rag:KGRAG",
    },
    extras={"kg_rag": "retrieval"},
)
