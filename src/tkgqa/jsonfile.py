"""Reading a JSON data file (a dataset's questions, a CR-LT-KGQA file): every way it can be broken is a
:class:`~tkgqa.errors.DataError` naming the file (and the line of a syntax error). A missing file is left to
the caller (``FileNotFoundError``), which knows what the file was meant to be."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import DataError


def read_json(path: Path) -> Any:
    """Parse a JSON file; DataError with the line of a syntax error."""
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    except (ValueError, RecursionError) as exc:  # a >4300-digit integer, or nesting too deep
        raise DataError(f"invalid JSON: {str(exc)[:200]}", path=str(path)) from None
