"""Kernels per protocol family (kernels/specialize.py): run time of one example per family on
the family's own build and on the shared build for all protocols.

    python benchmarks/bench_families.py [--rounds N] [--record]

Each run is a fresh process (EXTOLL_VEC_KERNELS is read per process), the two builds
alternating, after one untimed run of each that loads (or, on a cold cache, compiles) them.
Prints per case and build the mean run time with its standard error and the range.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from record import add_option, save

COLUMNS = ["case", "protocol", "build", "runs", "mean s", "se s", "min s", "max s"]
# one example per family, each about a second or more on one core
CASES = {
    "alltoall-256": ("alltoall-256", {}),
    "ib-nas": ("ib-nas", {}),
    "lfc-alltoall": ("lfc-alltoall", {"workload.iterations": 512}),
    # the example's FM/MC side (its docstring: these three overrides run FM/MC on it)
    "lfc-vs-fmmc": ("lfc-vs-fmmc", {"protocol.name": "fmmc", "protocol.mailbox_slots": 522,
                                    "mpi.header_bytes": 4, "workload.iterations": 512,
                                    "workload.message_bytes": 65536}),
}


def child(case: str) -> None:
    """One timed run (this process), after an untimed one (the first call loads the machine
    code): prints {"s": wall seconds, "protocol": name}."""
    from extoll_vec.engine import Batch
    from extoll_vec.examples import get_example
    name, over = CASES[case]
    cfg = get_example(name).replace(**over)
    Batch([cfg]).run()
    batch = Batch([cfg])
    t0 = time.perf_counter()
    batch.run()
    print(json.dumps({"s": time.perf_counter() - t0, "protocol": cfg.protocol.name}))


def run(case: str, build: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True,
                         text=True, check=True, env={**os.environ, "EXTOLL_VEC_KERNELS": build})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    add_option(ap)
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    rows = []
    for case in CASES:
        times: dict[str, list[float]] = {"shared": [], "family": []}
        proto = ""
        for build in times:
            run(case, build)                          # load or compile, untimed
        for _ in range(args.rounds):
            for build in times:
                got = run(case, build)
                times[build].append(got["s"])
                proto = got["protocol"]
        for build, ts in times.items():
            se = statistics.stdev(ts) / len(ts) ** 0.5 if len(ts) > 1 else float("nan")
            row = [case, proto, build, len(ts), round(statistics.mean(ts), 3), round(se, 3),
                   round(min(ts), 3), round(max(ts), 3)]
            rows.append(row)
            print(f"{case:<14} {proto:<10} {build:<7} {len(ts)} runs  mean {row[4]:.3f} s "
                  f"+- {row[5]:.3f}  range {row[6]:.3f}-{row[7]:.3f} s", flush=True)
    save(args, "bench_families", COLUMNS, rows)


if __name__ == "__main__":
    main()
