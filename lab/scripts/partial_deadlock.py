"""Partial deadlock on Booksim-style Dragonflies (docs/routing.md): stock BookSim2's
ugal_dragonflynew (`ugal_booksim`) and the layered routings, pairwise permutations at load 1.0,
convergence off (every run to the end of its measured window or until the check stops it).
One row per (machine, routing): permutations run, how many the partial-deadlock check stopped,
the earliest cycle it stopped one and since when its buffers had not changed, and the mean
accepted throughput of the runs that completed. Writes the CSV that docs/routing.md shows.

    python lab/scripts/partial_deadlock.py [--seeds N] [--out CSV] [--machines 2,8,4 6,12,6]
"""
import argparse
import csv
import re
import time

import numpy as np

from extoll_vec.engine import run_batch
from extoll_vec.errors import SimulationError
from extoll_vec.examples import get_example

ap = argparse.ArgumentParser()
ap.add_argument("--seeds", type=int, default=20)
ap.add_argument("--booksim-seeds", type=int, default=5)
ap.add_argument("--measure", type=int, default=20000)
ap.add_argument("--machines", nargs="+", default=["2,8,4", "4,8,4", "6,12,6"])
ap.add_argument("--layered-on", nargs="+", default=["4,8,4"])
ap.add_argument("--out", default="docs/data/paper_scale/partial_deadlock/partial_deadlock.csv")
a = ap.parse_args()


def config(pah, routing, seed):
    p, aa, h = map(int, pah.split(","))
    over = {"topology.p": p, "topology.a": aa, "topology.h": h, "network.routing": routing,
            "network.vcs": 4 if routing == "par" else 3, "seed": seed,
            "workload.measure_cycles": a.measure, "workload.converge_tolerance": 1e-9}
    over["network.deadlock_check"] = False     # every routing: the run's check looks only then
    return get_example("dragonfly-72").replace(**over)


rows = []
plan = [(m, "ugal_booksim", a.booksim_seeds) for m in a.machines]
plan += [(m, r, a.seeds) for m in a.layered_on for r in ("valiant", "ugal", "par")]
for pah, routing, seeds in plan:
    stops, acc, first, since, t0 = [], [], None, None, time.perf_counter()
    for s in range(seeds):
        cfg = config(pah, routing, s)
        try:
            acc.append(float(run_batch([cfg])["accepted_flits_per_node_cycle"][0]))
        except SimulationError as e:
            msg = str(e)
            if "partial deadlock:" not in msg:
                raise
            at = int(re.search(r" at cycle (\d+)", msg).group(1))
            st = int(re.search(r"since cycle (\d+)", msg).group(1))
            stops.append(s)
            if first is None or at < first:
                first, since = at, st
    nodes = cfg.topology.n_nodes
    row = {"nodes": nodes, "p_a_h": pah.replace(",", "/"), "routing": routing,
           "permutations": seeds, "partial_deadlocks": len(stops),
           "first_stop_cycle": first if first is not None else "",
           "still_since_cycle": since if since is not None else "",
           "accepted_completed": round(float(np.mean(acc)), 4) if acc else "",
           "wall_s": round(time.perf_counter() - t0, 1)}
    rows.append(row)
    print(row, flush=True)
with open(a.out, "w", newline="") as f:
    w = csv.DictWriter(f, list(rows[0]))
    w.writeheader()
    w.writerows(rows)
