"""Figure 1's 8x curve (Schneider et al.) read three ways from one run per point: the targets'
convergence windows (5000 cycles of warm-up, 2000-cycle windows until two successive ones
differ by at most 5 %), and BookSim2's cumulative average from the end of its warm-up with its
stopping rule at 1,000- and 10,000-cycle sample periods (analysis/portals/booksim_reading.py).
Each run goes 100,000 cycles (BookSim's max_samples of 10 at 10,000 cycles), its accepted
flits read every 1,000. Writes the CSV that docs/reproduction/portals.md shows.

    python lab/scripts/booksim_reading.py [--shares 0 0.001 ...] [--seed 0] [--out CSV]
"""
import argparse
import csv
import time

import numpy as np

from extoll_vec.analysis.portals.booksim_reading import booksim_reading, window_reading
from extoll_vec.engine import Batch
from extoll_vec.examples import get_example

ap = argparse.ArgumentParser()
ap.add_argument("--shares", type=float, nargs="+", default=[0, 0.001, 0.005, 0.01, 0.02])
ap.add_argument("--factor", type=float, default=8)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--cycles", type=int, default=100_000)
ap.add_argument("--example", default="dragonfly-5256")
ap.add_argument("--out", default="docs/data/paper_scale/booksim_reading/booksim_reading.csv")
a = ap.parse_args()

STEP = 1000
rows = []
for share in a.shares:
    cfg = get_example(a.example).replace(**{
        "network.slow_share": share, "network.slow_factor": a.factor if share else 1.0,
        "seed": a.seed, "workload.sample_cycles": 0, "workload.warmup_cycles": 0,
        "workload.measure_cycles": a.cycles, "limits.stall_check_cycles": 0})
    t0 = time.perf_counter()
    batch = Batch([cfg])
    acc = []
    for t in range(STEP, a.cycles + 1, STEP):
        batch.advance_to(t)
        acc.append(int(batch.S.syn[0, 1]))      # data flits accepted since cycle 0 (SY_ACCEPTED)
    acc = np.array(acc)
    n = cfg.topology.n_nodes
    w = window_reading(acc, STEP, n)
    b1 = booksim_reading(acc, STEP, n, sample_period=1000)
    b10 = booksim_reading(acc, STEP, n, sample_period=10000)
    row = {"slow_share_pct": share * 100, "slow_nodes": cfg.slow_node_count, "seed": a.seed,
           "windows_2000": round(w.throughput, 4), "windows_stop": w.stop_cycle,
           "booksim_1000": round(b1.throughput, 4), "booksim_1000_stop": b1.stop_cycle,
           "booksim_10000": round(b10.throughput, 4), "booksim_10000_stop": b10.stop_cycle,
           "booksim_10000_converged": b10.converged,
           "last_10000": round(float(acc[-1] - acc[-11]) / 10000 / n, 4),
           "wall_s": round(time.perf_counter() - t0, 1)}
    rows.append(row)
    print(row, flush=True)
with open(a.out, "w", newline="") as f:
    wr = csv.DictWriter(f, list(rows[0]))
    wr.writeheader()
    wr.writerows(rows)
