"""Where tkgqa keeps its files (KG cache, LLM cache and run log, embeddings, built models, fetched data).

``$TKGQA_HOME`` if set, else ``~/.cache/tkgqa``; the variable is read at call time, never at import, so a
test or a service can point it elsewhere at any moment. A home that exists but is not a folder is a
:class:`~tkgqa.errors.ConfigError`.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError


def tkgqa_home() -> Path:
    """``$TKGQA_HOME`` (read now), else ``~/.cache/tkgqa``; ConfigError when that is a file."""
    env = os.environ.get("TKGQA_HOME")
    try:
        home = Path(env).expanduser() if env else Path.home() / ".cache" / "tkgqa"
    except RuntimeError:  # "~user" of an unknown user, or no home directory at all
        raise ConfigError(
            f"cannot find the home folder for TKGQA_HOME={env!r}; set TKGQA_HOME to an absolute folder"
        ) from None
    if home.exists() and not home.is_dir():
        where = f"TKGQA_HOME={str(home)!r}" if env else f"{str(home)!r} (the default TKGQA_HOME)"
        raise ConfigError(f"{where} is a file, not a folder; point TKGQA_HOME at a folder")
    return home


#: The environment variable naming the data root (a folder laid out like the one ``tkgqa data fetch`` fills).
DATA_ENV = "TKGQA_DATA"
#: The older name of :data:`DATA_ENV`, read with the same meaning when ``TKGQA_DATA`` is unset.
LEGACY_DATA_ENV = "TKGQA_SHARED_DATA"


def data_root() -> Path:
    """Where benchmarks and recordings are found by name: ``$TKGQA_DATA`` (or its older name
    ``$TKGQA_SHARED_DATA``), else ``$TKGQA_HOME/data`` — read now. ``tkgqa data fetch`` writes there; each
    catalogue entry is a folder under it (``multitq/``, ``llm_recordings/r3_authors_prompts/``…)."""
    env = os.environ.get(DATA_ENV) or os.environ.get(LEGACY_DATA_ENV)
    if env:
        try:
            return Path(env).expanduser()
        except RuntimeError:
            raise ConfigError(f"cannot expand {DATA_ENV}={env!r}; set it to an absolute folder") from None
    return tkgqa_home() / "data"
