"""Reading a JSON data file (a dataset's questions, a CR-LT-KGQA file): every way it can be broken is a
:class:`~tkgqa.errors.DataError` naming the file (and the line of a syntax error), nesting deeper than
:data:`~tkgqa.userfiles.MAX_JSON_DEPTH` included; a FIFO or a device is refused, never read
(:func:`~tkgqa.userfiles.open_input`). A missing file is left to the caller (``FileNotFoundError``), which
knows what the file was meant to be."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ConfigError, DataError
from .userfiles import MAX_JSON_DEPTH, json_depth, open_input


def read_json(path: Path) -> Any:
    """Parse a JSON file; DataError with the line of a syntax error."""
    if not path.exists():
        raise FileNotFoundError(str(path))
    try:
        with open_input(path, what="the data file") as fh:
            value = json.loads(fh.read().decode("utf-8"))
        if json_depth(value) > MAX_JSON_DEPTH:
            raise DataError(f"invalid JSON: nested deeper than {MAX_JSON_DEPTH} levels", path=str(path))
        return value
    except ConfigError as exc:
        raise DataError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    except (ValueError, RecursionError) as exc:  # a >4300-digit integer, or nesting too deep
        raise DataError(f"invalid JSON: {str(exc)[:200]}", path=str(path)) from None
