"""Engine throughput: wall seconds, simulated cycles per second and packet-hops per
second for the alltoall-1024 reference run and for uniform random traffic on the 4x4x4 mesh.

    python benchmarks/bench_engine.py [--quick] [--record]

Runs on one core (one process, one batch member). The first run in a fresh checkout compiles the
kernels (minutes); the figures below exclude compilation by warming up on a tiny run first.
"""
from __future__ import annotations

import argparse
import time

from record import add_option, save

from extoll_vec.engine import Batch
from extoll_vec.examples import get_example

COLUMNS = ["run", "setup s", "run s", "simulated cycles", "cycles/s", "packet-hops/s",
           "packets", "events/s"]


def build_and_run(cfg):
    """(batch, setup s, run s): one member built, then run to completion, wall-clock timed."""
    t0 = time.perf_counter()
    batch = Batch([cfg])
    t1 = time.perf_counter()
    batch.run()
    return batch, t1 - t0, time.perf_counter() - t1


def measure(name, cfg):
    batch, setup, wall = build_and_run(cfg)
    S = batch.S
    cycles = int(S.now[0])
    res = batch.results()
    hops, events = int(S.hops[0]), int(S.events[0])
    row = [name, round(setup, 2), round(wall, 2), cycles, float(f"{cycles / wall:.3g}"),
           float(f"{hops / wall:.3g}"), int(S.delivered[0]), float(f"{events / wall:.3g}")]
    print(f"{name:<16} setup {setup:6.2f} s  run {wall:7.2f} s  "
          f"simulated {cycles:>11,} cycles = {res['exec_time_us'][0] if batch.configs[0].n_ranks else cycles * cfg.network.cycle_ns / 1000:10.1f} us  "
          f"{cycles / wall:10.3g} cycles/s  {int(S.hops[0]) / wall:10.3g} packet-hops/s  "
          f"{int(S.delivered[0]):>11,} packets  {int(S.events[0]) / wall:9.3g} events/s", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="alltoall-256 instead of alltoall-1024")
    add_option(ap)
    args = ap.parse_args()
    Batch([get_example("tiny")]).run()   # load or compile the kernels outside the timings
    a2a = get_example("alltoall-256" if args.quick else "alltoall-1024")
    rows = [measure("alltoall-256" if args.quick else "alltoall-1024", a2a)]
    uni = get_example("uniform").replace(**{"workload.measure_cycles": 200_000})
    rows.append(measure("uniform 0.2", uni))
    rows.append(measure("uniform 0.5", uni.replace(**{"workload.injection_rate": 0.5})))
    save(args, "bench_engine", COLUMNS, rows)


if __name__ == "__main__":
    main()
