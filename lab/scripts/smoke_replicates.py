"""The README's smoke sweep over replicates: is a negative overhead in its table noise?

    python lab/scripts/smoke_replicates.py              # 8 replicates, about a minute
    python lab/scripts/smoke_replicates.py --seeds 16 --skew 2000

The smoke table (sweeps/smoke.yaml: 64 ranks, 4 per node) compares one run with one
reference run. This reruns every point with seeds 0..N-1 and `workload.start_skew_ns` (each
rank starts up to SKEW ns late, drawn from the seed, again where the timed alltoall starts)
and prints each flow-control point's overhead against the reference of the same seed: mean +-
standard error and the replicates. Simulated times: independent of the machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse
from pathlib import Path

import numpy as np

from bench_routing import mean_se
from extoll_vec.analysis.extoll.common import measured_us
from extoll_vec.engine import simulate
from extoll_vec.sweep import load_sweep

SMOKE = Path(__file__).resolve().parents[2] / "sweeps" / "smoke.yaml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--skew", type=int, default=2000, help="workload.start_skew_ns")
    args = ap.parse_args()
    configs = load_sweep(SMOKE).configs
    ref = next(c for c in configs if c.protocol.name == "none")
    cases = [ref] + [c for c in configs if c.protocol.name != "none"]
    over: dict[tuple[str, int], list[float]] = {}
    for seed in range(args.seeds):
        run = [c.replace(**{"seed": seed, "workload.start_skew_ns": args.skew}) for c in cases]
        ds = simulate(run)
        t = [measured_us(ds, i, c) for i, c in enumerate(run)]
        for i, c in enumerate(run[1:], 1):
            key = (c.protocol.name, c.protocol.mailbox_slots // c.n_ranks)
            over.setdefault(key, []).append(100 * (t[i] / t[0] - 1))
    print(f"smoke sweep, seeds 0-{args.seeds - 1}, start skew {args.skew:g} ns: overhead % vs "
          f"the reference of the same seed")
    for (name, slots), v in over.items():
        m, se = mean_se(v)
        print(f"{name:<8}{slots:>4} slots  {m:+6.1f} +- {se:.1f}   {np.round(v, 1).tolist()}")


if __name__ == "__main__":
    main()
