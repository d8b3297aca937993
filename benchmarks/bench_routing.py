"""Dragonfly routings side by side: accepted throughput of table (minimal), Valiant,
UGAL-L and PAR under uniform, random permutation and group shift traffic at offered load 1.0,
with the wall time and simulated cycles per second of each run (one process, one member).

    python benchmarks/bench_routing.py [--p 6 --a 12 --h 6] [--warmup 1000 --measure 2000]
                                       [--seeds 3] [--perms 20] [--record]

Schneider et al.'s Booksim setup: 256-flit VC buffers, 16-flit packets, local links 2 and global
links 10 cycles, PAR/UGAL bias 2 and threshold 30 flits.
"""
from __future__ import annotations

import argparse
import math
import time

from record import add_option, save

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.errors import SimulationError
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


def mean_se(xs):
    """Mean and standard error of the mean (NaN with one value)."""
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


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
    ap.add_argument("--seeds", type=int, default=1,
                    help="seeds per figure: mean and standard error over them (1)")
    ap.add_argument("--perms", type=int, default=0,
                    help="then run this many random permutations per routing at the offered "
                         "load and count those that finish without an error (0: none)")
    add_option(ap)
    args = ap.parse_args()
    Batch([get_example("tiny")]).run()   # load or compile the kernels outside the timings
    routings, patterns = args.routings.split(","), args.patterns.split(",")
    table, rows = {}, []
    for pattern in patterns:
        for routing in routings:
            runs = [measure(config(args, routing, pattern, seed)) for seed in range(args.seeds)]
            acc, se = mean_se([r[0] for r in runs])
            lat = mean_se([r[1] for r in runs])[0]
            wall, cpu = sum(r[3] for r in runs), sum(r[4] for r in runs)
            cycles, events = sum(r[5] for r in runs), sum(r[6] for r in runs)
            table[pattern, routing] = (acc, se)
            print(f"{pattern:<12} {routing:<8} accepted {acc:6.3f} +- {se:5.3f} flits/node/cycle"
                  f"  latency {lat:8.1f} cycles  run {wall:6.1f} s (CPU {cpu:6.1f} s)"
                  f"  {cycles / wall:6.0f} cycles/s ({cycles / cpu:6.0f} per CPU s)  "
                  f"{events / cpu:8.3g} events per CPU s", flush=True)
            rows.append([pattern, routing, round(acc, 4), round(se, 4), round(lat, 1),
                         round(cycles / wall), round(cycles / cpu)])
    print(f"\naccepted throughput, flits per node per cycle (offered {args.load}; mean over "
          f"{args.seeds} seeds), dragonfly p={args.p} a={args.a} h={args.h}")
    print(f"{'':<12}" + "".join(f"{r:>9}" for r in routings))
    for pattern in patterns:
        print(f"{pattern:<12}" + "".join(f"{table[pattern, r][0]:9.3f}" for r in routings))
    for routing in routings if args.perms else ():
        ok = 0
        for seed in range(args.perms):
            try:
                measure(config(args, routing, "permutation", 1000 + seed))
                ok += 1
            except SimulationError as e:
                print(f"permutation seed {1000 + seed} {routing}: {e}", flush=True)
        print(f"{routing:<8} {ok}/{args.perms} random permutations at load {args.load} finished "
              "without deadlock or error", flush=True)
        rows.append([f"{args.perms} permutations", routing, ok, None, None, None, None])
    save(args, "bench_routing", ["pattern", "routing", "accepted", "se", "latency cycles",
                                 "cycles/s", "cycles/CPU s"], rows)


if __name__ == "__main__":
    main()
