"""Cached-load time of a KG the size of the full MultiTQ KG (461k facts), which ../shared does not hold.

Builds a synthetic KG file in a temporary folder: the shared MultiTQ partial KG (227k facts) plus a copy
of it whose entity names get a ``#2`` suffix (so the vocabulary doubles too, as in the real, larger KG),
for ``--copies`` copies in all. Then loads it cold (parse + index + write the npz cache) and cached, in
fresh child processes, and prints both times and the resident memory of the cached load.

    .venv/bin/python bench/kg_load_scale.py [--kg PATH] [--copies 2]

The last line is ``cached_load_s=<float>`` (goal: < 1 s for ~461k facts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_KG = REPO.parent / "shared" / "data" / "multitq" / "kg" / "full_partial.txt"

CHILD = """
import json, os, sys, time
from pathlib import Path
from tkgqa.kg.loaders import load_kg
t0 = time.perf_counter()
kg = load_kg(sys.argv[1])
s = time.perf_counter() - t0
rss = int(Path('/proc/self/statm').read_text().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20
print(json.dumps({"s": s, "facts": len(kg), "entities": len(kg.entities), "from_cache":
                  kg.load_report.from_cache, "rss_mib": rss}))
"""


def load_in_child(path: Path, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], check=True, capture_output=True, text=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kg", type=Path, default=DEFAULT_KG)
    ap.add_argument("--copies", type=int, default=2)
    args = ap.parse_args()
    if not args.kg.exists():
        print(f"KG file not found: {args.kg} (pass --kg)", file=sys.stderr)
        return 2
    lines = args.kg.read_text(encoding="utf-8").splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "scaled_kg.txt"
        with big.open("w", encoding="utf-8") as fh:
            for k in range(args.copies):
                suffix = "" if k == 0 else f"#{k + 1}"
                for line in lines:
                    s, r, o, t = line.split("\t")
                    fh.write(f"{s}{suffix}\t{r}\t{o}{suffix}\t{t}\n")
        env = {**os.environ, "TKGQA_HOME": str(Path(tmp) / "home")}
        cold = load_in_child(big, env)
        cached = load_in_child(big, env)
    print(f"synthetic KG: {cached['facts']:,} facts, {cached['entities']:,} entities ({args.copies} copies)")
    print(f"cold load (parse + index + cache write): {cold['s']:.2f} s")
    print(
        f"cached load: {cached['s']:.3f} s (from cache: {cached['from_cache']}), "
        f"RSS {cached['rss_mib']:.0f} MiB"
    )
    print(f"cached_load_s={cached['s']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
