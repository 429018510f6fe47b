"""The duplicates budget of ``make lint`` (issue #30): the pairs of places in ``src/`` that share six or more
lines, as the ``duplicates`` command counts them, may not exceed :data:`CEILING`.

Lower :data:`CEILING` when a change folds repetitions away; never raise it to let new ones in (fold them
instead: one helper in the layer below its users). Where the ``duplicates`` command is not installed (a CI
machine, a fresh clone) the check is skipped with a line saying so, exit status 0.

Run: ``python tests/duplicates_budget.py`` from the repository root.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

#: The most pairs ``duplicates`` may list over ``src/`` (the count reached by the last clean-up). 48 after
#: the folds of 2026-11-29: four classes that only stored their parameters became dataclasses (LPKG's reader,
#: executor and ICL planner, ARI's environment), the prompt data moved to package resources (LPKG's official
#: header, ARI's exemplars), one admission rule for the service's queues, the request guard configured from
#: ``ServiceSettings`` once. 47 since the built-in methods' ``@METHODS.register`` decorators went (each
#: method is registered once, by its package's descriptor). Part 7 folded three more (a config's deviations
#: are its methods, no forwarding module functions; LPKG's plan steps share one base) and its flags module
#: added two of one shape (serve and mcp declare the same flags). Part 8 folded repeats shorter than six
#: lines, which this count does not see (a time argument, a path type, the ASGI types, the client limits,
#: ARI's methodology variant); part 9 more of them (a query's time window, the DuckDB fact columns and
#: clustered copies, eval's Ray flags, the test-split rule, a catalogued file under the data root). What
#: remains is listed with its reasons in bench/RESULTS.md ("#30 part 5", "part 7").
CEILING = 47

SRC = Path(__file__).resolve().parents[1] / "src"
_COUNT = re.compile(r"^(\d+) pairs? of places\b")
_NONE = re.compile(r"^no duplicates\b")


def count_pairs(output: str) -> int:
    """The number of pairs the report of ``duplicates`` announces on its first line (``N pairs of places
    …``, or ``no duplicates …``: 0). A report whose reading was cut short (an ``incomplete:`` line) or that
    does not start with a count is a :class:`ValueError`: a partial count would pass a budget it breaks."""
    lines = output.strip().splitlines()
    incomplete = [line for line in lines if line.startswith("incomplete:")]
    if incomplete:
        raise ValueError(f"duplicates did not read the whole tree: {incomplete[0]}")
    first = lines[0] if lines else ""
    if _NONE.match(first):
        return 0
    found = _COUNT.match(first)
    if found is None:
        raise ValueError(f"not a duplicates report: {first!r}")
    return int(found.group(1))


def main() -> int:
    command = shutil.which("duplicates")
    if command is None:
        print("duplicates budget: skipped (the `duplicates` command is not installed here)")
        return 0
    run = subprocess.run(
        [command, "--repo", str(SRC), "--most", "200", "--seconds", "300"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        pairs = count_pairs(run.stdout)
    except ValueError as exc:
        print(f"duplicates budget: {exc}", file=sys.stderr)
        return 1
    if pairs > CEILING:
        print(run.stdout, end="")
        print(
            f"duplicates budget: {pairs} pairs in src/, over the ceiling of {CEILING}: fold the new "
            f"repetitions into one helper (see `duplicates --change` for what this change wrote again)",
            file=sys.stderr,
        )
        return 1
    print(f"duplicates budget: {pairs} pairs in src/ (ceiling {CEILING})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
