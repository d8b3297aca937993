"""Dragonfly routings side by side (issue 22): accepted throughput of table (minimal), Valiant,
UGAL-L and PAR under uniform, random permutation and group shift traffic at offered load 1.0,
with the wall time and simulated cycles per second of each run (one process, one member).

    python benchmarks/bench_routing.py [--p 6 --a 12 --h 6] [--warmup 1000 --measure 2000]

Seed 001's Booksim setup: 256-flit VC buffers, 16-flit packets, local links 2 and global links
10 cycles, PAR/UGAL bias 2 and threshold 30 flits.
"""
from __future__ import annotations

import argparse
import time

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.examples import get_example

ROUTINGS = ("table", "valiant", "ugal", "par")
PATTERNS = ("uniform", "permutation", "shift")


def config(args, routing, pattern, seed=0):
    return from_dict({
        "topology": {"kind": "dragonfly", "p": args.p, "a": args.a, "h": args.h},
        "network": {"routing": routing, "vcs": 4, "buffer_flits": args.buffer,
                    "nic_ejection_flits": args.buffer},
        "workload": {"kind": pattern, "injection_rate": args.load, "packet_flits": 16,
                     "warmup_cycles": args.warmup, "measure_cycles": args.measure,
                     "drain_cycles": 0},
        "seed": seed})


def measure(cfg):
    t0 = time.perf_counter()
    batch = Batch([cfg])
    t1 = time.perf_counter()
    c1 = time.process_time()
    batch.run()
    t2 = time.perf_counter()
    cpu = time.process_time() - c1      # the CPU this process got (the machine is shared)
    res = batch.results()
    cycles = int(batch.S.now[0])
    return (float(res["accepted_flits_per_node_cycle"][0]),
            float(res["packet_latency_cycles_mean"][0]), t1 - t0, t2 - t1, cpu, cycles,
            int(batch.S.events[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=6)
    ap.add_argument("--a", type=int, default=12)
    ap.add_argument("--h", type=int, default=6)
    ap.add_argument("--load", type=float, default=1.0)
    ap.add_argument("--buffer", type=int, default=256)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--measure", type=int, default=2000)
    ap.add_argument("--routings", default=",".join(ROUTINGS))
    ap.add_argument("--patterns", default=",".join(PATTERNS))
    args = ap.parse_args()
    Batch([get_example("tiny")]).run()   # load or compile the kernels outside the timings
    routings, patterns = args.routings.split(","), args.patterns.split(",")
    table = {}
    for pattern in patterns:
        for routing in routings:
            acc, lat, setup, wall, cpu, cycles, events = measure(config(args, routing, pattern))
            table[pattern, routing] = acc
            print(f"{pattern:<12} {routing:<8} accepted {acc:6.3f} flits/node/cycle  latency "
                  f"{lat:8.1f} cycles  setup {setup:6.1f} s  run {wall:6.1f} s (CPU {cpu:6.1f} s)"
                  f"  {cycles / wall:6.0f} cycles/s ({cycles / cpu:6.0f} per CPU s)  "
                  f"{events / cpu:8.3g} events per CPU s", flush=True)
    print("\naccepted throughput, flits per node per cycle (offered "
          f"{args.load}), dragonfly p={args.p} a={args.a} h={args.h}")
    print(f"{'':<12}" + "".join(f"{r:>9}" for r in routings))
    for pattern in patterns:
        print(f"{pattern:<12}" + "".join(f"{table[pattern, r]:9.3f}" for r in routings))


if __name__ == "__main__":
    main()
