"""The slow-receiver axes at MPI level as a target, ``portals_mpi_slow``: the rendezvous
(EXTOLL MPI's single GET against Schneider et al.'s chunked one) and EXTOLL's credits (static,
dynamic) on a Dragonfly with a share of slow receivers at 2x and 8x, for IMB PingPong and an
alltoall: the time per operation, mean over replicates (the seeds draw the slow nodes), against
the same setting without slow receivers and against the single GET.

A slow receiver costs a PingPong only where it is rank 0's or rank 1's node (the others are
idle): the column `slow_partner` counts the replicates in which it is, and the mean over
replicates is what a user drawing slow nodes at random sees.
"""
from __future__ import annotations

import math
from collections import defaultdict

from ...workloads.patterns import slow_nodes
from ..extoll.common import Points, completed, configs, figure, measured_us, write_outputs
from ..registry import Table, target
from ..stats import mean_and_se

BENCHES = ("PingPong", "Alltoall")


def _bench(cfg) -> str:
    return cfg.workload.benchmark


def _key(cfg) -> tuple:
    n_slow = cfg.slow_node_count
    # without slow receivers the slow factor changes nothing: one setting
    return (_bench(cfg), cfg.mpi.rendezvous, cfg.protocol.name,
            cfg.network.slow_factor if n_slow else 1.0, n_slow)


def _partner_slow(cfg) -> bool:
    """PingPong's ranks 0 and 1 (one rank per node: nodes 0 and 1) include a slow receiver."""
    rpn = cfg.mpi.ranks_per_node
    slow = set(slow_nodes(cfg.n_nodes, cfg.slow_node_count, cfg.seed).tolist())
    return bool({0 // rpn, 1 // rpn} & slow)


COLUMNS = ["benchmark", "rendezvous", "protocol", "slow_factor", "slow_nodes", "slow_pct",
           "replicates", "time_us", "se_us", "min_us", "max_us", "slow_partner", "vs_no_slow",
           "vs_get"]


@target("portals_mpi_slow", "The slow-receiver axes at MPI level: single GET against the "
        "chunked rendezvous, EXTOLL static and dynamic credits, 0-2 % slow receivers at 2x and "
        "8x on a Dragonfly, IMB PingPong and an alltoall, means over replicates",
        needs=Points(("static", "dynamic"), ("imb",), reference=False), sweep=True)
def portals_mpi_slow(ds, out_dir=None) -> Table:
    ds = completed(ds)
    times: dict[tuple, list[float]] = defaultdict(list)
    partner: dict[tuple, int] = defaultdict(int)
    seen, share = set(), {}
    for i, cfg in enumerate(configs(ds)):
        if cfg.workload.kind != "imb" or cfg.workload.benchmark not in BENCHES:
            continue
        k = _key(cfg)
        if (k, cfg.seed) in seen:
            continue
        seen.add((k, cfg.seed))
        times[k].append(measured_us(ds, i, cfg))
        partner[k] += k[4] > 0 and k[0] == "PingPong" and _partner_slow(cfg)
        share[k] = round(100.0 * k[4] / cfg.n_nodes, 3)
    mean = {k: mean_and_se(v)[0] for k, v in times.items()}
    rows = []
    order = {v: i for i, v in enumerate(BENCHES + ("get", "chunked", "static", "dynamic"))}
    for k in sorted(times, key=lambda k: (order.get(k[0], 9), order.get(k[1], 9),
                                          order.get(k[2], 9), k[3], k[4])):
        b, rdv, proto, f, n = k
        m, se = mean_and_se(times[k])
        base = mean.get((b, rdv, proto, 1.0, 0))
        get = mean.get((b, "get", proto, f, n))
        rows.append([b, rdv, proto, f, n, share[k], len(times[k]), m, se, min(times[k]),
                     max(times[k]), partner[k] if b == "PingPong" else "",
                     m / base if base else math.nan, m / get if get else math.nan])
    notes = []
    for b in dict.fromkeys(k[0] for k in times):
        for proto in dict.fromkeys(k[2] for k in times if k[0] == b):
            worst = max((k for k in times if k[0] == b and k[2] == proto and k[4]),
                        key=lambda k: (k[3], k[4]), default=None)
            if worst is None:
                continue
            _b, _r, _p, f, n = worst
            parts = []
            for rdv in ("get", "chunked"):
                here, base = mean.get((b, rdv, proto, f, n)), mean.get((b, rdv, proto, 1.0, 0))
                if here and base:
                    parts.append(f"{rdv} {base:,.1f} -> {here:,.1f} us ({here / base:.2f}x)")
            notes.append(f"{b}, {proto}: no slow receivers -> {n} at {f:g}x: " + "; ".join(parts))
    table = Table(f"portals_mpi_slow: {len(rows)} settings", COLUMNS, rows, notes)
    if out_dir is not None:
        benches = list(dict.fromkeys(k[0] for k in times))
        fig, axes = figure(max(len(benches), 1), width=4.2, height=3.6)
        for ax, b in zip(axes[0], benches):
            for rdv in ("get", "chunked"):
                for proto in ("static", "dynamic"):
                    for f in sorted({k[3] for k in times if k[4]}):
                        pts = sorted((k[4], k) for k in times
                                     if k[:3] == (b, rdv, proto) and (k[3] == f or not k[4]))
                        if not pts:
                            continue
                        ys = [mean_and_se(times[k]) for _n, k in pts]
                        ax.errorbar([share[k] for _n, k in pts], [m for m, _s in ys],
                                    yerr=[0 if math.isnan(s) else 2 * s for _m, s in ys],
                                    marker="o" if rdv == "get" else "s", capsize=2,
                                    ls="-" if proto == "static" else "--",
                                    label=f"{rdv}, {proto}, {f:g}x")
            ax.set_title(b, fontsize=9)
            ax.set_xlabel("slow receivers (% of nodes)")
            ax.set_ylabel("time per operation (us)")
        axes[0][0].legend(fontsize=6)
        write_outputs(table, fig, out_dir, "portals_mpi_slow")
    return table
