"""Every bad input of tests/badinput.py through the command line: counts per family.

    python benchmarks/fuzz_bad_input.py [--family NAME ...] [--show N] [--record]

Each case runs `extoll-vec` in-process in a folder with copies of valid inputs (a config, a
spec, a run store and sweep stores built once by real simulations of the 16-rank example) and
must exit with 2, print at most three lines and no traceback on stderr, finish within
tests/badinput.TIME_LIMIT_S, and leave every file that was in the folder byte-identical. The
suite runs a sample of the same cases (tests/test_bad_input_fuzz.py); this runs them all
(about 1,000-1,500, a few minutes) and lists every case that fails a check.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from badinput import FAMILIES, all_cases, build_fixtures, run_case  # noqa: E402
from record import add_option, save  # noqa: E402

CHECKS = ("accepted", "traceback", "hang", "lines", "changed", "exit")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", nargs="+", choices=list(FAMILIES), help="only these families")
    ap.add_argument("--show", type=int, default=20, metavar="N",
                    help="list at most N failing cases (default 20)")
    add_option(ap)
    args = ap.parse_args()
    cases = [c for c in all_cases() if not args.family or c.family in args.family]
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        t0 = time.perf_counter()
        fixtures = build_fixtures(Path(tmp) / "fixtures")
        print(f"fixtures built in {time.perf_counter() - t0:.1f} s; {len(cases)} cases",
              flush=True)
        counts: dict[str, Counter] = {}
        failures = []
        t0 = time.perf_counter()
        slowest = (0.0, None)
        for c in cases:
            o = run_case(c, fixtures, Path(tmp) / "work")
            cnt = counts.setdefault(c.family, Counter())
            cnt["cases"] += 1
            probs = o.problems
            for p in probs:
                cnt[next(k for k in CHECKS if p.startswith(k) or k in p)] += 1
            cnt["ok"] += not probs
            if probs:
                failures.append((c, probs, o.stderr))
            slowest = max(slowest, (o.seconds, c.label), key=lambda x: x[0])
            done = sum(n["cases"] for n in counts.values())
            if done % 100 == 0:
                print(f"  {done} cases, {len(failures)} failing, "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
        wall = time.perf_counter() - t0
    cols = ["family", "cases", "ok"] + list(CHECKS)
    rows = [[f] + [counts[f][k] for k in cols[1:]] for f in counts]
    rows.append(["all"] + [sum(counts[f][k] for f in counts) for k in cols[1:]])
    print(f"{'':<14}" + "".join(f"{k:>10}" for k in cols[1:]))
    for r in rows:
        print(f"{r[0]:<14}" + "".join(f"{v:>10}" for v in r[1:]))
    print(f"{wall:.0f} s in all; slowest case {slowest[0]:.1f} s ({slowest[1]})")
    for c, probs, err in failures[:args.show]:
        first = err.strip().splitlines()[-1][:160] if err.strip() else ""
        print(f"FAIL [{c.family}] {c.label[:70]}: {', '.join(probs)} | {first}")
    save(args, "fuzz_bad_input", cols, rows)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
