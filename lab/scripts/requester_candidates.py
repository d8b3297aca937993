"""Which requester model makes the reference the minimum? (See docs/calibration.md.)

    python lab/scripts/requester_candidates.py                    # alltoall-256, FIFO 16 and 256
    python lab/scripts/requester_candidates.py --fifo 16,256,1024 --seeds 4
    python lab/scripts/requester_candidates.py --set host.posted_write_order=node
    python lab/scripts/requester_candidates.py --full             # alltoall-1024

The paper measures every overhead against "a minimum reference execution time when no flow
control is used" (EXTOLL section 5.3). For each requester candidate (the NIC's injection FIFO
size `--fifo`, plus any `--set` overrides, e.g. the node-wide ordering of posted writes) this
runs the alltoall of 2 KB (one untimed warm-up alltoall, then one timed, as the targets do)
under the reference and under static and dynamic flow control at 16 and 64 slots per process
(2 credit slots), for seeds 0..n-1 with workload.start_skew_ns (replicates), and prints each
case's overhead against the reference of the same seed: mean and standard error over the
seeds. Also the reference's own mean and standard error (are the replicates independent?).
Simulated times are deterministic: the figures do not depend on the machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse
import time

from bench_routing import mean_se
from record import add_option, save

from extoll_vec.analysis.extoll.common import measured_us
from extoll_vec.cli import apply_sets
from extoll_vec.engine import simulate
from extoll_vec.errors import ConfigError
from extoll_vec.examples import get_example

CASES = (("static 16", "static", 16), ("static 64", "static", 64),
         ("dynamic 16", "dynamic", 16), ("dynamic 64", "dynamic", 64))


def configs(base, seeds: int):
    """[(case, seed, cfg)]: the reference and every case, for every seed."""
    n = base.n_ranks
    out = []
    for s in range(seeds):
        out.append(("none", s, base.replace(seed=s)))
        for name, proto, slots in CASES:
            out.append((name, s, base.replace(**{"seed": s, "protocol.name": proto,
                                                  "protocol.credit_slots": 2,
                                                  "protocol.mailbox_slots": slots * n})))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="alltoall-1024 instead of alltoall-256")
    ap.add_argument("--fifo", default="16,256", help="NIC injection FIFO sizes (packets)")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--skew", type=int, default=2000, help="workload.start_skew_ns")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="more overrides, for every run (a candidate's switch)")
    ap.add_argument("--threads", type=int, default=2)
    add_option(ap)
    args = ap.parse_args()
    example = "alltoall-1024" if args.full else "alltoall-256"
    print(f"{example}, 2 KB, one warm-up alltoall, start skew {args.skew} ns, seeds 0-"
          f"{args.seeds - 1}, 2 credit slots; overhead vs the reference of the same seed, "
          f"mean +- standard error; overrides {args.set or 'none'}", flush=True)
    head = ["FIFO", "reference us", "reference SE %"] + [c[0] for c in CASES]
    print(f"{head[0]:>6}{head[1]:>16}{head[2]:>16}" + "".join(f"{c:>18}" for c in head[3:]),
          flush=True)
    rows = []
    for fifo in (int(f) for f in args.fifo.split(",")):
        try:
            base = apply_sets(get_example(example).replace(**{
                "workload.warmup": 1, "workload.start_skew_ns": args.skew,
                "network.nic_fifo_packets": fifo}), args.set)
        except ConfigError as exc:
            ap.error(str(exc))
        runs = configs(base, args.seeds)
        t0 = time.perf_counter()
        ds = simulate([c for _, _, c in runs], max_batch=8, threads=args.threads)
        wall = time.perf_counter() - t0
        t = {(name, s): measured_us(ds, i, cfg) for i, (name, s, cfg) in enumerate(runs)}
        ref = [t["none", s] for s in range(args.seeds)]
        rm, rse = mean_se(ref)
        cells = []
        for name, _, _ in CASES:
            m, se = mean_se([100 * (t[name, s] / t["none", s] - 1) for s in range(args.seeds)])
            cells.append(f"{m:+.1f} +- {se:.1f}")
        print(f"{fifo:>6}{rm:>16,.1f}{100 * rse / rm:>16.2f}" + "".join(f"{c:>18}" for c in cells)
              + f"   ({wall:.0f} s; reference replicates "
              + ", ".join(f"{x:,.1f}" for x in ref) + ")", flush=True)
        rows.append([fifo, round(rm, 1), round(100 * rse / rm, 2)] + cells)
    save(args, "requester_candidates", head, rows)


if __name__ == "__main__":
    main()
