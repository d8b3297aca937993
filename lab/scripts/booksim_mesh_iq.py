"""The extoll-vec side of lab/booksim/README.md: the iq router on BookSim2's mesh case (4x4x4
mesh, dimension-order routing, 8-flit VC buffers, 1-flit packets, uniform traffic, no speedup).

    python lab/scripts/booksim_mesh_iq.py                          # load 1.0, seeds 0-4
    python lab/scripts/booksim_mesh_iq.py --router-delay 2 --vcs 1
    python lab/scripts/booksim_mesh_iq.py --seeds 1 --rates 0.5 0.6 0.65 0.7 0.8

1-cycle links; router_delay 4 gives BookSim's default 5 cycles per hop at zero load, 2 its 3
with lookahead routing and speculative allocation. rma_packet_bytes only lets an 8-flit
buffer pass the largest-packet check (synthetic traffic sends no RMA packet). Prints accepted
throughput (flits per node per cycle), offered load and mean latency per run, and the mean
over the seeds per rate.
"""
from __future__ import annotations

import argparse
import statistics

from extoll_vec.config import from_dict
from extoll_vec.engine.batch import simulate


def config(rate, seed, router_delay, vcs, router, warmup, measure):
    return from_dict({"topology": {"kind": "mesh", "dims": [4, 4, 4]},
                      "network": {"router": router, "speedup": 1.0, "vcs": vcs,
                                  "buffer_flits": 8, "rma_packet_bytes": 112,
                                  "link_latency": 1, "router_delay": router_delay},
                      "workload": {"kind": "uniform", "injection_rate": rate,
                                   "packet_flits": 1, "warmup_cycles": warmup,
                                   "measure_cycles": measure, "drain_cycles": 0},
                      "seed": seed})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", type=float, nargs="+", default=[1.0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--router-delay", type=int, default=4)
    ap.add_argument("--vcs", type=int, default=2)
    ap.add_argument("--router", default="iq", choices=("iq", "voq"))
    ap.add_argument("--warmup", type=int, default=3000)
    ap.add_argument("--measure", type=int, default=10000)
    a = ap.parse_args()
    runs = [(r, s) for r in a.rates for s in range(a.seeds)]
    ds = simulate([config(r, s, a.router_delay, a.vcs, a.router, a.warmup, a.measure)
                   for r, s in runs], max_batch=len(runs))
    acc = ds.accepted_flits_per_node_cycle.values
    for i, (r, s) in enumerate(runs):
        print(f"rate {r:g} seed {s}: accepted {acc[i]:.4f} offered "
              f"{float(ds.offered_flits_per_node_cycle[i]):.4f} latency "
              f"{float(ds.packet_latency_cycles_mean[i]):.1f}")
    for r in a.rates:
        v = [acc[i] for i, (x, _) in enumerate(runs) if x == r]
        print(f"rate {r:g}: mean accepted {statistics.mean(v):.4f} over {len(v)} seeds")


if __name__ == "__main__":
    main()
