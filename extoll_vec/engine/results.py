"""The outputs of a finished batch: the kernels' counters (cycles, per-rank and per-member
arrays) turned into the result variables of dataset.SCHEMA, in their units."""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..dataset import PROTOCOL_SCHEMA, SCHEMA
from ..protocols.registry import all_outputs, protocol

RESULT_VARIABLES = tuple(SCHEMA)   # what results() returns: the dataset schema's variables,
                                   # and the registered protocols' outputs (PROTOCOL_SCHEMA)


def results(batch) -> dict[str, np.ndarray]:
    """Every variable of RESULT_VARIABLES for every member of a run batch (engine.Batch), with
    the batch member as the leading axis."""
    S, par = batch.S, batch.par
    out: dict[str, np.ndarray] = {}
    cyc_ns = np.array([c.network.cycle_ns for c in batch.configs])

    def us(cycles, never=False):
        """Cycles [B, ...] in microseconds; with never, -1 ("never") becomes NaN."""
        t = cycles.astype(np.float64) * cyc_ns.reshape((-1,) + (1,) * (cycles.ndim - 1))
        t = t / 1000.0
        return np.where(cycles >= 0, t, np.nan) if never else t

    B = len(batch.configs)
    if S.rk_tfin.shape[1]:
        exec_c = S.rk_tfin.max(axis=1).astype(np.float64)
    else:
        exec_c = S.now.astype(np.float64)
    out["exec_time_us"] = us(exec_c)
    out["rank_time_us"] = us(S.rk_tfin)
    out["packets_sent"] = S.st_sent.astype(np.int64)
    out["sends_delayed"] = S.st_delayed.astype(np.int64)
    out["mailbox_max_slots"] = S.st_mbmax.astype(np.int64)
    out["stall_us"] = us(S.st_stall)
    out["messages_received"] = S.st_msgs.astype(np.int64)
    out["control_sent"] = S.st_ctrl.astype(np.int64)
    out["flow_control_cpu_us"] = us(S.st_fccpu)
    out["mark_time_us"] = us(S.marks, never=True)
    mc = S.mark_cnt
    out["sends_delayed_at_mark"] = mc[..., D.MC_DELAYED].astype(np.int64)
    out["messages_received_at_mark"] = mc[..., D.MC_MSGS].astype(np.int64)
    out["stall_us_at_mark"] = us(mc[..., D.MC_STALL], never=True)
    out["flow_control_cpu_us_at_mark"] = us(mc[..., D.MC_FCCPU], never=True)
    out["credit_snapshot"] = S.snap.astype(np.int64)
    out["credit_snapshot_in"] = S.snap_in.astype(np.int64)
    sim_c = np.maximum(S.now, 1).astype(np.float64)
    util = S.op_util.reshape(B, -1).max(axis=1) if S.op_util.size else np.zeros(B)
    out["max_link_utilization"] = util / sim_c
    nodes = batch.topology.n_nodes
    synth = par[:, D.P_SYNTH] != 0
    window = np.where(synth, S.syn_cv[:, D.CV_END] - S.syn_cv[:, D.CV_START], 0)
    meas = np.maximum(window, 1).astype(np.float64) * nodes
    nan = np.full(B, np.nan)
    out["accepted_flits_per_node_cycle"] = np.where(synth, S.syn[:, 1] / meas, nan)
    out["offered_flits_per_node_cycle"] = np.where(synth, S.syn[:, 0] / meas, nan)
    lat = np.where(S.syn[:, 3] > 0, S.syn[:, 2] / np.maximum(S.syn[:, 3], 1), np.nan)
    out["packet_latency_cycles_mean"] = np.where(synth, lat, nan)
    out["measured_cycles"] = np.where(synth, window, -1).astype(np.int64)
    out["converged"] = np.where(synth & (par[:, D.P_SAMPLE] > 0),
                                S.syn_cv[:, D.CV_CONVERGED], -1).astype(np.int64)
    out["simulated_cycles"] = S.now.astype(np.int64)
    out["packets_delivered"] = S.delivered.astype(np.int64)
    out["events_processed"] = S.events.astype(np.int64)
    # the protocols' own outputs: filled for the members running the protocol that declares them
    dims = {"node": batch.topology.n_nodes, "rank": S.rk_pc.shape[1], "peer": S.rk_pc.shape[1]}
    for name, o in all_outputs().items():
        var = PROTOCOL_SCHEMA[name]
        a = np.full((B,) + tuple(dims[d] for d in var.dims[1:]), var.fill, var.dtype)
        for b, cfg in enumerate(batch.configs):
            if name in protocol(cfg.protocol.name).outputs:
                a[b] = o.extract(batch, b)
        out[name] = a
    return out
