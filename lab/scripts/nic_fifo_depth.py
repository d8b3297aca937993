"""How deep the NIC injection FIFOs get, and how long ranks block in PIO writes.

    python lab/scripts/nic_fifo_depth.py                         # alltoall-256, 16-packet FIFO
    python lab/scripts/nic_fifo_depth.py --fifo 100000           # the probe of reference_minimum.py
    python lab/scripts/nic_fifo_depth.py --variant fifo16  # a model variant
    python lab/scripts/nic_fifo_depth.py --full ...              # alltoall-1024 (about 2 minutes)

Runs the reference (protocol none) of the example, one untimed alltoall and one timed, as
reference_minimum.py does, and samples every 0.1 ms of simulated time the deepest injection
FIFO of any node and the share of ranks blocked because their node's FIFO is full (a PIO write
with no room: hardware back-pressure). Even a FIFO of 100,000 packets fills in the alltoalls
(docs/calibration.md). Simulated figures: they do not depend on the machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse

from extoll_vec import dtypes as D
from extoll_vec.engine import Batch
from record import add_option, save
from reference_minimum import add_example_options, example_config

SAMPLE_NS = 100_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_example_options(ap)
    ap.add_argument("--fifo", type=int, default=0, metavar="N",
                    help="NIC injection FIFO of N packets (default: the example's or variant's)")
    add_option(ap)
    args = ap.parse_args()
    cfg = example_config(ap, args,
                         **({"network.nic_fifo_packets": args.fifo} if args.fifo else {}))
    name = "alltoall-1024" if args.full else "alltoall-256"
    batch = Batch([cfg])
    S = batch.S
    step = max(1, int(SAMPLE_NS / cfg.network.cycle_ns))
    t, deepest, blocked, samples = 0, 0, 0, 0
    while True:
        t += step
        running = batch.advance_to(t)
        deepest = max(deepest, int(S.nq_cnt[0].max()))
        blocked += int((S.rk_wait[0] == D.W_NIC).sum())
        samples += S.rk_wait.shape[1]
        if running == 0 or S.status[0] != 0:
            break
    print(f"{name}, reference, model {args.variant or 'calibrated defaults'}, NIC FIFO "
          f"{cfg.network.nic_fifo_packets} packets: deepest FIFO {deepest} packets; ranks "
          f"blocked in a PIO write {100 * blocked / samples:.1f} % of the samples; "
          f"{t * cfg.network.cycle_ns / 1e6:.1f} ms simulated")
    save(args, "nic_fifo_depth", ["run", "model", "NIC FIFO packets", "deepest FIFO",
                                  "ranks blocked in PIO %", "simulated ms"],
         [[name, args.variant or "defaults", cfg.network.nic_fifo_packets, deepest,
           round(100 * blocked / samples, 1), round(t * cfg.network.cycle_ns / 1e6, 1)]])


if __name__ == "__main__":
    main()
