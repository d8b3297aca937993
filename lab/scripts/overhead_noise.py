"""How much of an overhead figure is noise? (Reading the EXTOLL reproductions.)

    python lab/scripts/overhead_noise.py            # alltoall-256 (4x4 mesh), about 30 s
    python lab/scripts/overhead_noise.py --full     # alltoall-1024 (4x4x4), about 8 minutes
    python lab/scripts/overhead_noise.py --skew 2000   # replicates instead: seeds 0..7, ranks
                                                      # starting up to 2 us apart
    python lab/scripts/overhead_noise.py --protocol dynamic --slots 16   # a flow-control run

Every overhead of the EXTOLL targets is one simulated run against one reference run. The
1024-rank alltoall reference is congestion bound (its busiest link 40 % busy, 3-4x the link
bound; see reference_minimum.py), and a congested network answers any change of timing with
a different order of packets at the routers. This measures that sensitivity directly: the
reference (protocol none) rerun with the MPI matching cost moved by 1, 2, ..., 7 network cycles
(host costs are counted in whole cycles of 27.27 ns; one cycle is 5 % of the 518 ns matching
cost and adds 0.1 % to a rank's CPU time in the alltoall: nothing a real measurement could
resolve, and nothing that changes the work). The spread of those times is the noise floor
of a single-run overhead: differences between two configurations smaller than it say nothing
about flow control. An overhead compares two such runs, so its noise combines the reference's
spread with that of the flow-control run (`--protocol static|dynamic --slots N`: 2 credit
slots, N slots per process, piggybacking off, as bench_flow_control.py runs them). Measured
with IMB's two statistics: t_max (first rank's start to the last rank's end, what the targets
report) and t_avg (each rank's own start-to-end time, averaged over ranks). Simulated times
are deterministic: the figures do not depend on the machine's load.

With --skew NS the reruns are replicates as the targets average them: seeds 0, 1, ... with
workload.start_skew_ns = NS (each rank starts up to NS late, drawn from the seed). Their
spread is the noise of one replicate; divided by sqrt(n) it is the standard error of the mean
of n replicates, what a sweep with `repeat: {count: n}` reports.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse

import numpy as np

from extoll_vec.analysis.extoll.common import measured_us
from extoll_vec.engine import simulate
from extoll_vec.examples import get_example
from extoll_vec.protocols.catalogue import CREDIT_PROTOCOLS
from record import add_option, save


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="alltoall-1024 instead of alltoall-256")
    ap.add_argument("--steps", type=int, default=7, help="perturbed reruns (1 cycle apart)")
    ap.add_argument("--skew", type=int, default=0,
                    help="replicates by seed with this start skew (ns) instead of cost steps")
    ap.add_argument("--protocol", choices=("none",) + CREDIT_PROTOCOLS, default="none",
                    help="the run to perturb (default: the reference)")
    ap.add_argument("--slots", type=int, default=16,
                    help="mailbox slots per process of a flow-control run")
    add_option(ap)
    args = ap.parse_args()
    base = get_example("alltoall-1024" if args.full else "alltoall-256")
    base = base.replace(**{"workload.warmup": 1})      # as the targets time it
    label = "protocol none"
    if args.protocol != "none":
        base = base.replace(**{"protocol.name": args.protocol, "protocol.credit_slots": 2,
                               "protocol.mailbox_slots": args.slots * base.n_ranks})
        label = f"protocol {args.protocol}, {args.slots} slots per process, 2 credit slots"
    m0 = base.host.match_ns
    cyc = base.network.cycle_ns
    if args.skew:
        cfgs = [base.replace(**{"workload.start_skew_ns": args.skew, "seed": d})
                for d in range(args.steps + 1)]
        what = f"seed d, start skew {args.skew} ns"
    else:
        cfgs = [base.replace(**{"host.match_ns": round(m0 + d * cyc, 6)})
                for d in range(args.steps + 1)]
        what = f"match_ns {m0} + d cycles"
    ds = simulate(cfgs)
    t_max = np.array([measured_us(ds, i, c) for i, c in enumerate(cfgs)])   # the targets' figure
    marks = ds.mark_time_us.values                     # [point, rank, mark]
    t_avg = np.nanmean(marks[:, :, 1] - marks[:, :, 0], axis=1)
    print(f"{base.workload.kind} {base.n_ranks} ranks, {label}; {what}")
    print(f"{'d':>5}{'t_max us':>12}{'vs d=0':>9}{'t_avg us':>12}{'vs d=0':>9}")
    for d in range(len(cfgs)):
        print(f"{d:>5}{t_max[d]:>12,.0f}{100 * (t_max[d] / t_max[0] - 1):>+8.1f}%"
              f"{t_avg[d]:>12,.0f}{100 * (t_avg[d] / t_avg[0] - 1):>+8.1f}%")
    rows = []
    for name, t in (("t_max", t_max), ("t_avg", t_avg)):
        rel = 100 * (t / t.mean() - 1)
        sd = rel.std(ddof=1)
        rows.append([f"{base.workload.kind}-{base.n_ranks}", label, name, len(t),
                     round(float(t.mean()), 1), round(float(rel.min()), 1),
                     round(float(rel.max()), 1), round(float(sd), 2)])
        print(f"{name}: spread {rel.min():+.1f} .. {rel.max():+.1f} % of the mean, "
              f"standard deviation {sd:.1f} % (of a mean of 4 / 8 runs: {sd / 2:.1f} / "
              f"{sd / 8 ** 0.5:.1f} %)")
    save(args, "overhead_noise", ["run", "case", "time", "runs", "mean us", "min %", "max %",
                                  "sd %"], rows)


if __name__ == "__main__":
    main()
