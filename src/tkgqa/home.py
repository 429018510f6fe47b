"""Where tkgqa keeps its files (KG cache, LLM cache and run log, embeddings, built models).

``$TKGQA_HOME`` if set, else ``~/.cache/tkgqa``; the variable is read at call time, never at import, so a
test or a service can point it elsewhere at any moment.
"""

from __future__ import annotations

import os
from pathlib import Path


def tkgqa_home() -> Path:
    """``$TKGQA_HOME`` (read now), else ``~/.cache/tkgqa``."""
    env = os.environ.get("TKGQA_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tkgqa"
