"""RDRP at large c under 8x slow receivers: what the replicate store of variant rdrp_8x_reps
(lab/variants.yaml) says beyond the throughput. Per setting, mean over the permutations: the
normalized throughput, the mean packet latency, the busiest link's utilization, and for RDRP
the injections held for lack of a credit per node, split into the senders whose partner is a
slow receiver and all other nodes (the victims: their partners are fast). A c whose
outstanding packets exceed what the slow receiver's NIC and last router hold
((nic_ejection_flits + buffer_flits) / packet_flits per sender) parks the rest in the network,
where the fast pairs' packets queue behind them.

    python lab/scripts/rdrp_outstanding.py STORE.zarr
"""
import sys
from collections import defaultdict

import numpy as np
import xarray as xr

from extoll_vec.analysis.extoll.common import completed, configs
from extoll_vec.analysis.portals.targets import setting
from extoll_vec.workloads.patterns import slow_nodes, synthetic_destinations

ds = completed(xr.open_zarr(sys.argv[1]))
acc = ds["accepted_flits_per_node_cycle"].values
lat = ds["packet_latency_cycles_mean"].values
util = ds["max_link_utilization"].values
held = ds["rdrp_held"].values if "rdrp_held" in ds else None
cycles = ds["simulated_cycles"].values
rows = defaultdict(list)
for i, cfg in enumerate(configs(ds)):
    n = cfg.n_nodes
    slow = slow_nodes(n, cfg.slow_node_count, cfg.seed)
    dest = synthetic_destinations("pairwise", n, cfg.seed, cfg.shift_nodes)
    to_slow = np.isin(dest[:n], slow)
    h_slow = h_fast = np.nan
    if cfg.protocol.name == "rdrp":
        h = held[i, :n] / cycles[i] * 1000     # held injections per node per 1000 cycles
        h_slow, h_fast = h[to_slow].mean(), h[~to_slow & ~np.isin(np.arange(n), slow)].mean()
    rows[setting(cfg)].append((acc[i] / cfg.workload.injection_rate, lat[i], util[i], h_slow,
                               h_fast))
print(f"{'setting':<12} {'perms':>5} {'throughput':>16} {'latency cyc':>12} {'max link':>9} "
      f"{'held/1k cyc: to slow':>21} {'others':>8}")
for name, v in rows.items():
    a = np.array(v, dtype=float)
    m = a.mean(axis=0)
    se = a[:, 0].std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else np.nan
    print(f"{name:<12} {len(a):>5} {m[0]:>9.3f} +- {se:.3f} {m[1]:>12.0f} {m[2]:>9.3f} "
          f"{m[3]:>21.1f} {m[4]:>8.1f}")
