"""The in-memory build of a KG from a plain quadruple text file: the per-line path
(:func:`~tkgqa.kg.builder.parse_delimited`) beside the vectorised one (:mod:`tkgqa.kg.plain_reader`), each
in a process of its own (wall seconds, CPU seconds of all its threads — the work done, which a loaded
machine does not inflate as it does the wall time — peak RSS), and a digest of what each built (names, ids,
columns): both must be equal.

The synthetic file has the shape of ``bench/store_scale.py``'s (``E<s>\\tR<r>\\tE<o>\\tYYYY-MM-DD``, subjects
skewed, 200 relations, days in 1991–2023)::

    nice -n 10 python bench/kg_text_build.py --synthetic 5000000
    nice -n 10 python bench/kg_text_build.py --kg /work/shared/data/multitq/kg/full_partial.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def write_synthetic(n: int, out: Path, seed: int = 42) -> None:
    """``n`` random point facts as quadruple text (written in blocks of 1M lines)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_ent = max(1000, n // 50)
    tmp = out.with_suffix(".part")
    with tmp.open("w", encoding="utf-8") as fh:
        for start in range(0, n, 1_000_000):
            k = min(1_000_000, n - start)
            s = (n_ent * rng.random(k) ** 2).astype(np.int64).tolist()
            r = rng.integers(0, 200, k).tolist()
            o = rng.integers(0, n_ent, k).tolist()
            days = (np.datetime64("1991-01-01") + rng.integers(0, 12000, k)).astype(str).tolist()
            fh.write("".join(f"E{a}\tR{b}\tE{c}\t{d}\n" for a, b, c, d in zip(s, r, o, days, strict=True)))
    tmp.replace(out)


def build_once(path: Path, mode: str) -> dict[str, object]:
    """Build the KG of ``path`` the ``mode`` way ("slow": line by line, "fast": through ``load_kg``)."""
    from tkgqa.kg.builder import FactBuilder, parse_delimited
    from tkgqa.kg.formats import data_lines
    from tkgqa.kg.loaders import load_kg

    t0, cpu0 = time.perf_counter(), time.process_time()
    if mode == "slow":
        b = FactBuilder(str(path), "quadruples", False)
        parse_delimited(b, data_lines(path), (4,))
        kg = b.build(path.stem)
    else:
        kg = load_kg(path, format="quadruples", cache=False)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    ents, rels, columns, _ = kg.to_arrays()
    digest = hashlib.sha256("\n".join(ents).encode() + b"\0" + "\n".join(rels).encode())
    for key in sorted(columns):
        digest.update(key.encode() + columns[key].astype("int64").tobytes())
    report = kg.load_report
    return {
        "mode": mode,
        "facts": len(kg),
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "digest": digest.hexdigest()[:16],
        "report": None if report is None else [report.n_lines, report.n_skipped, report.n_duplicates],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--synthetic", type=int, default=0, help="facts in a synthetic quadruple file")
    ap.add_argument("--kg", type=Path, help="an existing quadruple file instead")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/kg_text_build"))
    ap.add_argument("--modes", default="fast,slow", help="which builds, in this order")
    ap.add_argument("--one", choices=["fast", "slow"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(build_once(args.kg, args.one)))
        return
    path = args.kg
    if path is None:
        if not args.synthetic:
            ap.error("pass --synthetic N or --kg FILE")
        args.workdir.mkdir(parents=True, exist_ok=True)
        path = args.workdir / f"synthetic_{args.synthetic}.txt"
        if not path.exists():
            t0 = time.perf_counter()
            write_synthetic(args.synthetic, path)
            print(f"wrote {path} in {time.perf_counter() - t0:.1f} s", flush=True)
    results = []
    for mode in args.modes.split(","):
        cmd = [sys.executable, __file__, "--kg", str(path), "--one", mode]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    print(f"\n{path} ({path.stat().st_size / 2**20:,.0f} MiB)\n")
    print(
        "| path | facts | wall s | CPU s (all threads) | peak RSS MiB | digest | lines, skipped, duplicates |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        cells = [
            r["mode"],
            f"{r['facts']:,}",
            r["seconds"],
            r.get("cpu_seconds", "–"),
            f"{r['peak_rss_mib']:,}",
            r["digest"],
            r["report"],
        ]
        print("| " + " | ".join(map(str, cells)) + " |")
    if len({r["digest"] for r in results}) > 1:
        sys.exit("the paths built different KGs")


if __name__ == "__main__":
    main()
