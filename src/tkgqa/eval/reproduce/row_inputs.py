"""What an LLM row is given as the paper gave it (ARI its history memory, ICL-LPKG the authors' planning
prompt): what the row's method package declares as its paper inputs (``MethodPackage.paper_inputs``, a
:class:`tkgqa.methods.paper_inputs.PaperInputs`), asked with the row's parsed spec and the dataset's paths —
nothing here is named after a method.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import ConfigError, TKGQAError
from ...methods.package import load_paper_inputs
from ...methods.paper_inputs import InputsRequest, PaperInputs
from .data import dataset_dir
from .spec import Column, PaperRow, split_spec


def _request(
    method: str, dataset: str, root: Path, llm: str | None = None, output: Path | None = None
) -> tuple[PaperInputs, InputsRequest] | None:
    """The paper inputs the package of the row spec ``method`` declares for it, with the request to ask them
    (``None``: it declares none)."""
    name, options = split_spec(method)
    inputs = load_paper_inputs(name)
    if inputs is None:
        return None
    return inputs, InputsRequest(method, options, dataset, dataset_dir(root, dataset), root, llm, output)


def inputs_reason(row: PaperRow, column: Column, root: Path | None) -> str | None:
    """Why the LLM cell ``row``/``column`` cannot be given what the paper gave it (the ``missing`` of its
    method's paper inputs); ``None`` when it can or needs nothing."""
    if row.method is None or root is None:
        return None
    found = _request(row.method, column.dataset, root)
    return found[0].missing(found[1]) if found is not None else None


def prepare_inputs(method: str, dataset: str, root: Path, llm: str | None, output: Path) -> dict[str, object]:
    """The options the paper inputs of the run's method (spec ``method``) add for a run on ``dataset`` with
    ``llm`` (built into ``output`` when they are built); raises the :class:`~tkgqa.errors.TKGQAError` whose
    message is the run's error (any other exception of the hook, a plugin's included, becomes one: it fails
    that run, never the whole reproduce)."""
    found = _request(method, dataset, root, llm, output)
    if found is None:
        return {}
    try:
        return found[0].prepare(found[1])
    except TKGQAError:
        raise
    except Exception as exc:
        name = split_spec(method)[0]
        raise ConfigError(f"the paper inputs of {name!r} failed: {type(exc).__name__}: {exc}") from exc
