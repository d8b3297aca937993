"""Cold compile time of each protocol family's kernels, beside the run time of the same build.

    python benchmarks/bench_compile.py [--family NAME ...] [--no-run] [--record]

Each family's build is compiled in a fresh process into a fresh cache directory (what a new
user, a new CI runner or a worker host without the cache pays), by `extoll-vec compile`'s code
(extoll_vec/warmup.py). Printed per build: seconds, peak memory, and the compiled functions
that took longest, each by its own time (Numba's compile events, the time of the functions it
compiled on the way subtracted). Then `bench_engine.py --quick` runs on the EXTOLL build just
compiled (warm), so that compile time and run time are seen together. One process at a time:
run nothing else meanwhile, or compare builds side by side instead.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import add_option, save

HERE = Path(__file__).resolve().parent
COLUMNS = ["build", "compile s", "peak MB", "functions", "slowest (own s)"]


def child(family: str) -> None:
    """In the fresh process: compile `family`, print one JSON line."""
    from numba.core import event

    from extoll_vec import warmup

    class Own(event.Listener):
        """Each compile event's own time: its duration less the nested compiles'."""

        def __init__(self):
            self.stack, self.own = [], {}

        def on_start(self, ev):
            self.stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            t0, nested = self.stack.pop()
            dt = time.perf_counter() - t0
            if self.stack:
                self.stack[-1][1] += dt
            name = ev.data["dispatcher"].py_func.__qualname__
            self.own[name] = self.own.get(name, 0.0) + dt - nested

    own = Own()
    t0 = time.perf_counter()
    with event.install_listener("numba:compile", own):
        warmup.compile_family(family)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    top = sorted(own.own.items(), key=lambda kv: -kv[1])
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "functions": len(top),
                      "top": top[:5]}))


def compile_cold(family: str, cache: Path) -> dict:
    env = {**os.environ, "EXTOLL_VEC_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, __file__, "--child", family], env=env, text=True,
                         capture_output=True, check=True, cwd=HERE)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", default=[], metavar="NAME",
                    help="a family to compile (repeatable; default: every family)")
    ap.add_argument("--no-run", action="store_true", help="skip bench_engine.py --quick")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    add_option(ap)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    from extoll_vec import warmup
    wanted = args.family or list(warmup.families())
    with tempfile.TemporaryDirectory(prefix="extoll-vec-caches-") as root:
        rows = run(args, wanted, Path(root))
    save(args, "bench_compile", COLUMNS, rows)


def run(args, wanted: list[str], root: Path) -> list[list]:
    rows, total = [], 0.0
    for fam in wanted:
        r = compile_cold(fam, root / fam)
        total += r["seconds"]
        slow = ", ".join(f"{n} {s:.1f}" for n, s in r["top"][:3])
        rows.append([fam, round(r["seconds"], 1), round(r["peak_mb"]), r["functions"], slow])
        print(f"{fam:<12} {r['seconds']:7.1f} s  {r['peak_mb']:6.0f} MB  "
              f"{r['functions']:4d} functions  slowest: {slow}", flush=True)
    if len(wanted) > 1:
        rows.append(["all", round(total, 1), "", "", ""])
        print(f"{'all':<12} {total:7.1f} s", flush=True)
    if not args.no_run:
        if "extoll" not in wanted:
            compile_cold("extoll", root / "extoll")
        print("bench_engine.py --quick on the EXTOLL build just compiled:", flush=True)
        env = {**os.environ, "EXTOLL_VEC_CACHE_DIR": str(root / "extoll")}
        out = subprocess.run([sys.executable, str(HERE / "bench_engine.py"), "--quick"],
                             env=env, text=True, capture_output=True, check=True).stdout
        print(out, end="", flush=True)
        for line in out.splitlines():
            if line.startswith("alltoall-256"):
                run_s = float(line.split(" run ")[1].split()[0])
                rows.append(["alltoall-256 run (bench_engine --quick)", run_s, "", "", ""])
    return rows


if __name__ == "__main__":
    main()
