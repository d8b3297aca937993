"""Target `summary`: one row per completed point, in sweep-grid order, with the sweep axes as
the leading columns and the main result figures (rank values reduced over each point's ranks):
time_us is the time the papers report (extoll_common.measured_us: one execution of the
workload, or IMB's pingpong figure), overhead_pct its excess over the point of the sweep that
differs only in running without flow control (NaN when the sweep has none)."""
from __future__ import annotations

import numpy as np

from ..workloads.registry import synthetic_names
from .registry import ANY_STORE, Table, target


def _ranks_sum(v) -> np.ndarray:
    """Per point, the sum over its ranks (padding: NaN or -1, ignored)."""
    a = np.asarray(v.values)
    if a.dtype.kind == "f":
        return np.nansum(a, axis=1)
    return np.where(a >= 0, a, 0).sum(axis=1)


def _ranks_max(v) -> np.ndarray:
    a = np.asarray(v.values, dtype=np.float64)
    if a.shape[1] == 0:
        return np.full(a.shape[0], np.nan)
    a = np.where(a >= 0, a, -np.inf).max(axis=1)
    return np.where(np.isfinite(a), a, np.nan)


# what the sends_delayed column counts, under every table that has it
DELAYED_NOTE = ("sends_delayed: sends of the timed part that waited for a credit or a buffer "
                "(the first ones wait for credits the warm-up used, at any buffer size)")


@target("summary", "per point: sweep axes, time and overhead, stall per rank, control packets, "
                   "delayed sends, mailbox maximum, busiest link", needs=ANY_STORE)
def summary(ds) -> Table:
    from ..sweep.store import MASK, sweep_axes
    axes = sweep_axes(ds)
    n_all = ds.sizes["point"]
    if MASK in ds:
        ds = ds.isel(point=np.flatnonzero(ds[MASK].values))
    ds = ds.load()
    key_cols = [a["coord"] for a in axes] or ["protocol_name", "workload_kind"]
    synth = any(str(k) in synthetic_names() for k in ds["workload_kind"].values)
    from .extoll.common import configs, measured, measured_us, overheads
    cfgs = configs(ds)
    time_us = np.array([np.nan if c.workload.synthetic else measured_us(ds, j, c)
                        for j, c in enumerate(cfgs)])
    overhead = np.full(len(cfgs), np.nan)
    for p in overheads(ds):
        overhead[list(p.indices)] = p.overhead_pct   # replicates: the overhead of their means
    # the timed part, as time_us (warm-ups excluded)
    stall = [measured(ds, "stall_us", j)[:c.n_ranks] for j, c in enumerate(cfgs)]
    cols = {
        "time_us": time_us,
        "overhead_pct": overhead,
        "stall_us_per_rank": np.array([s.mean() if len(s) else np.nan for s in stall]),
        "control_packets": _ranks_sum(ds.packets_sent.sel(kind="control")),
        "sends_delayed": np.array([measured(ds, "sends_delayed", j).sum()
                                   for j in range(len(cfgs))]),
        "mailbox_max": _ranks_max(ds.mailbox_max_slots),
        "max_link_util": ds.max_link_utilization,
        "exec_time_us": ds.exec_time_us,
    }
    if synth:
        cols["accepted"] = ds.accepted_flits_per_node_cycle
        cols["latency_cycles"] = ds.packet_latency_cycles_mean
    ints = {"sends_delayed", "mailbox_max", "control_packets"}
    rows = []
    for j in range(ds.sizes["point"]):
        row = [int(ds.point.values[j]) if "point" in ds.coords else j]
        row += [_py(ds[c].values[j]) for c in key_cols]
        for name, v in cols.items():
            x = float(np.asarray(v)[j])
            row.append(int(x) if name in ints and not np.isnan(x) else x)
        rows.append(row)
    name = ds.attrs.get("sweep_name", "run")
    notes = [] if len(rows) == n_all else [f"({len(rows)} of {n_all} points completed)"]
    if not synth:
        notes.append(DELAYED_NOTE)
    return Table(f"summary of {name}: {len(rows)} points", ["point"] + key_cols + list(cols),
                 rows, notes)


def _py(v):
    return v.item() if hasattr(v, "item") else str(v)
