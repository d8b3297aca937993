"""Simulator cost of IMB's Alltoall at 1024 ranks, the sweep point that costs most in the IMB
sweep (sweeps/extoll/imb.yaml): wall seconds, events and events per second of the point
exactly as the sweep runs it (one untimed and one timed repetition, 2 KB, 2 credit slots,
piggybacking, ranks leaving the barriers up to 2 us apart, seed 0).

    python benchmarks/bench_imb_alltoall.py                   # none, static 16, dynamic 16
    python benchmarks/bench_imb_alltoall.py --quick           # at 256 ranks
    python benchmarks/bench_imb_alltoall.py --cases dynamic:16 static:64

Open MPI's basic linear Alltoall posts a send to every peer at once (workloads/imb.py), so a
rank's send queue holds up to 1023 sends, and a rank looks for a sendable one at every turn
(host._sendable; docs/benchmarks.md has the figures before and after it stopped rescanning
the sends already found blocked). One process, one batch
member per run, kernels loaded before timing; run it on an otherwise idle machine and compare
rows of one invocation, or the same row across commits (`--record`, docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np
from record import add_option, save

from extoll_vec.analysis.registry import get_target
from extoll_vec.engine import Batch
from extoll_vec.examples import get_example
from extoll_vec.sweep.spec import load_sweep
from extoll_vec.sweeps import spec_path


def imb_point(example: str, proto: str, slots: int):
    """The config of the IMB sweep's Alltoall point (proto, slots), seed 0, skew 2000 ns."""
    sw = load_sweep(spec_path(get_target("extoll_imb").spec_name()),
                    ["name=bench_imb_alltoall", "workload.start_skew_ns=2000",
                     f"base.example={example}"])
    want = {"bench": "Alltoall", "protocol.name": proto, "slots_per_process": slots}
    for p in range(sw.n_points):
        lab = sw.labels(p)
        if all(lab[k] == v for k, v in want.items()):
            return sw.configs[p]
    raise SystemExit(f"no IMB Alltoall point with protocol {proto} and {slots} slots")


def digest(res: dict) -> str:
    """A hash of every result array: equal digests across commits mean bit-identical runs."""
    h = hashlib.sha256()
    for k in sorted(res):
        h.update(k.encode())
        h.update(np.ascontiguousarray(res[k]).tobytes())
    return h.hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="256 ranks instead of 1024")
    ap.add_argument("--cases", nargs="+", default=["none:8", "static:16", "dynamic:16"],
                    metavar="PROTO:SLOTS", help="protocol:slots per process (none ignores it)")
    add_option(ap)
    args = ap.parse_args()
    Batch([get_example("tiny")]).run()   # load or compile the kernels outside the timings
    example = "alltoall-256" if args.quick else "alltoall-1024"
    print(f"IMB Alltoall, {example}'s machine, 2 KB, warm-up 1, 1 timed repetition", flush=True)
    print(f"{'protocol':<9}{'slots':>6}{'wall s':>9}{'events':>15}{'M events/s':>12}"
          f"{'results':>14}", flush=True)
    table = []
    for case in args.cases:
        proto, _, slots = case.partition(":")
        cfg = imb_point(example, proto, int(slots or 8))
        batch = Batch([cfg])
        t0 = time.perf_counter()
        batch.run()
        wall = time.perf_counter() - t0
        events = int(batch.S.events[0])
        slots_shown = "-" if proto == "none" else int(slots)
        d = digest(batch.results())
        print(f"{proto:<9}{slots_shown:>6}{wall:>9.1f}{events:>15,}{events / wall / 1e6:>12.2f}"
              f"{d:>14}", flush=True)
        table.append([proto, slots_shown, round(wall, 1), events,
                      round(events / wall / 1e6, 2), d])
    save(args, "bench_imb_alltoall", ["protocol", "slots", "wall s", "events", "M events/s",
                                      "results digest"], table)


if __name__ == "__main__":
    main()
