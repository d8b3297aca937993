"""EXTOLL targets of the static protocol: `extoll_static_overhead` (Figures 4-7),
`extoll_table2` (Table 2 with Eq. 5), `extoll_piggyback` (Figure 9) and `extoll_components`
(Figures 16-17, static and dynamic).

Overhead is relative to the reference point (protocol none) of the same workload in the same
store (extoll_common.overheads).

Besides the overhead, Table 2 is read off the delayed sends, as the paper's own argument does
("the break-even points in Figures 5 and 7", section 5.3): where no send waits for credits
(break_even_slots), next to what the protocol's arithmetic predicts for the run's number of
messages per pair (es.stall_free; predicted_stall_free per point of the static table). Eq. 5
is that prediction's limit for many messages; a run of one timed alltoall after a warm-up
samples only the counts two messages reach, so its break-even can be well below Eq. 5.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from ...protocols.extoll import static as es
from ...protocols.catalogue import CREDIT_PROTOCOLS
from . import paper_values as pv
from .common import (FC_POINTS, Points, case_labels, completed, configs, delayed_pct,
                            figure, measured, overheads, rank_sum, require, run_delayed_pct,
                            slots_per_process, write_outputs)
from ..registry import Table, target

STATIC_COLUMNS = ["case", "credit_slots", "slots_per_process", "overhead_pct", "delayed_pct",
                  "reference_us", "time_us", "predicted_stall_free", "run_delayed_pct",
                  "overhead_se_pct", "replicates"]
TABLE2_COLUMNS = ["credit_slots", "stabilizing_slots", "eq5_slots", "drop_slots",
                  "eq37_drop_slots", "paper_slots", "case", "delayed_drop_slots",
                  "break_even_slots", "predicted_break_even_slots", "dense_break_even_slots",
                  "flat_from_eq5"]
PIGGY_COLUMNS = ["slots_per_process", "overhead_pct", "overhead_pct_piggyback",
                 "credit_packets", "credit_packets_piggyback", "credit_packet_reduction_pct",
                 "piggybacked_packets"]
COMPONENT_COLUMNS = ["case", "protocol", "slots_per_process", "overhead_pct",
                     "computational_pct", "stall_pct", "control_packets"]


def _messages(cfg) -> tuple[int, int, int] | None:
    """(messages per pair, extra packets between them, packets per message) of an alltoall
    run, for es.stall_free; None for other workloads. The warm-up alltoalls are followed by a
    dissemination barrier whose one-packet messages reach some peers (extra = 1)."""
    w = cfg.workload
    if w.kind != "alltoall":
        return None
    return (w.warmup + w.iterations, 1 if w.warmup else 0,
            es.velo_packets(w.message_bytes, cfg.mpi.header_bytes, cfg.mpi.velo_payload))


def predicted_stall_free(cfg) -> bool | None:
    """Whether no alltoall send should wait for credits (es.stall_free), None if not an
    alltoall or the buffer is not a whole number of slots per process."""
    m = _messages(cfg)
    s = slots_per_process(cfg)
    if m is None or s != int(s):
        return None
    return es.stall_free(int(s), cfg.protocol.credit_slots, m[0], m[1], m[2])


def static_rows(ds) -> list[list]:
    labels = case_labels(ds)
    rows = []
    for p in overheads(ds):
        rows.append([labels[p.index], p.cfg.protocol.credit_slots, slots_per_process(p.cfg),
                     p.overhead_pct, p.mean(lambda i: delayed_pct(ds, i)), p.ref_us, p.time_us,
                     predicted_stall_free(p.cfg), p.mean(lambda i: run_delayed_pct(ds, i)),
                     p.overhead_se_pct, p.replicates])
    order = {c: k for k, c in enumerate(dict.fromkeys(labels))}
    rows.sort(key=lambda r: (order[r[0]], r[1], r[2]))
    return rows


@target("extoll_static_overhead", "EXTOLL Figures 4-7: static overhead and delayed sends vs "
        "slots per process, credit slots 1-5, multi-pingpong 1/14 hops, alltoall 256/1024",
        sweep=True, needs=Points(("static",)))
def extoll_static_overhead(ds, out_dir=None) -> Table:
    ds = completed(ds)
    rows = static_rows(ds)
    cases = list(dict.fromkeys(r[0] for r in rows))
    notes = []
    for case in cases:
        big = max((r for r in rows if r[0] == case), key=lambda r: r[2])
        notes.append(f"{case}: at {big[2]} slots per process overhead {big[3]:.1f} % "
                     f"(credit slots {big[1]})")
    notes.append("delayed_pct: sends that waited for credits, % of the messages, in the timed "
                 "part (warm-up excluded); run_delayed_pct: over the whole run, warm-up "
                 "included, as es.stall_free counts (predicted_stall_free)")
    table = Table(f"extoll_static_overhead: {len(rows)} points, static protocol",
                  STATIC_COLUMNS, rows, notes)
    if out_dir is not None:
        fig, axes = figure(len(cases), 2, width=4.2, height=3.4)
        for j, case in enumerate(cases):
            for c in sorted({r[1] for r in rows if r[0] == case}):
                pts = [r for r in rows if r[0] == case and r[1] == c]
                # replicates: +- 2 standard errors (Table 2's flatness criterion)
                axes[0][j].errorbar([r[2] for r in pts], [r[3] for r in pts],
                                    yerr=[0.0 if math.isnan(r[9]) else 2 * r[9] for r in pts],
                                    marker=".", capsize=2, elinewidth=0.6,
                                    label=f"{c} credit slot{'s' if c > 1 else ''}")
                axes[1][j].plot([r[2] for r in pts], [r[4] for r in pts], marker=".")
            axes[0][j].set_title(case)
            axes[0][j].set_ylabel("overhead (%), +- 2 SE")
            axes[1][j].set_ylabel("delayed sends (%)")
            axes[1][j].set_xlabel("receive buffer (slots per process)")
        axes[0][0].legend(fontsize=7)
        write_outputs(table, fig, out_dir, "extoll_static_overhead")
    return table


def _break_even(pts: list[tuple[float, bool]]) -> float:
    """Smallest buffer of a curve [(slots, stall-free), ...] sorted by slots from which every
    larger buffer of the curve is stall-free (nan: not even the largest)."""
    k = len(pts)
    while k > 0 and pts[k - 1][1]:
        k -= 1
    return float(pts[k][0]) if k < len(pts) else float("nan")


def _largest_fall(pts: list[list]) -> float:
    """The buffer right after the largest fall between two consecutive buffers of a curve."""
    if len(pts) < 2:
        return float("nan")
    falls = [a[1] - b[1] for a, b in zip(pts, pts[1:])]
    return float(pts[int(np.argmax(falls)) + 1][0])


def _stabilizing(pts: list[list]) -> tuple[float, float]:
    """(stabilizing slots, drop slots) of one curve [(slots, overhead), ...] sorted by slots.

    Drop: the upper end of the largest fall between two consecutive buffer sizes.
    Stabilizing: the smallest buffer from which the overhead stays within max(1 point, 10 % of
    the curve's range) of its value at the largest buffer (the paper reads Table 2 off
    Figure 6(b) by eye; this is that reading made explicit)."""
    s = np.array([p[0] for p in pts], float)
    o = np.array([p[1] for p in pts], float)
    drop = _largest_fall(pts)
    tol = max(1.0, 0.1 * (o.max() - o.min()))
    return _break_even(list(zip(s, np.abs(o - o[-1]) <= tol))), drop


def _flat_from(curve: list[list], start: float) -> bool | None:
    """Whether a curve's overhead is flat from buffer `start` on: every point within two
    standard errors (combined) of the largest buffer's (Table 2: 'minimum size of receive
    buffer that makes the overhead stable'). None with one run per point (no standard error to
    judge by) or no point from `start` on."""
    pts = [r for r in curve if r[2] >= start]
    if not pts or any(math.isnan(r[9]) for r in pts):
        return None
    last = pts[-1]
    return all(abs(r[3] - last[3]) <= 2 * math.hypot(r[9], last[9]) for r in pts)


@target("extoll_table2", "EXTOLL Table 2: receive buffer at which the static overhead of the "
        "largest alltoall stabilizes, per credit slots, beside Eq. 5",
        sweep=True, needs=Points(("static",), ("alltoall",)))
def extoll_table2(ds, out_dir=None) -> Table:
    ds = completed(ds)
    rows_all = static_rows(ds)
    alltoall = [r for r in rows_all if r[0].startswith("alltoall")]
    require(ds, bool(alltoall), "extoll_table2", "alltoall " + FC_POINTS)
    case = max({r[0] for r in alltoall}, key=lambda c: int(c.split("-")[-1]))
    messages, extra, packets = _messages(configs(ds)[case_labels(ds).index(case)])
    rows = []
    for c in sorted({r[1] for r in alltoall if r[0] == case}):
        curve = sorted(r for r in alltoall if r[0] == case and r[1] == c)
        stab, drop = _stabilizing([[r[2], r[3]] for r in curve])
        paper = pv.TABLE2.get(c)
        rows.append([c, stab, es.stabilizing_slots(c), drop, es.overhead_drop_slots(c),
                     paper[0] if paper else None, case,
                     _largest_fall([[r[2], r[8]] for r in curve]),
                     _break_even([(r[2], r[8] == 0) for r in curve]),
                     _break_even([(r[2], bool(r[7])) for r in curve]),
                     es.break_even_slots(c, messages, extra, packets),
                     _flat_from(curve, es.stabilizing_slots(c))])
    notes = [f"curves of {case}; stabilizing: smallest buffer from which the overhead stays "
             "within max(1 point, 10 % of the curve's range) of its value at the largest buffer",
             "eq5_slots: ((37 * (c + 1)) div c) + c; eq37_drop_slots: 37 + c (section 5.3); "
             f"paper: {pv.TABLE2_WHERE} (1 credit slot: 'Unknown; >> 64 slots')",
             "delayed_drop_slots: the largest fall of the % of delayed sends (the warm-up "
             "alltoall, which starts with the whole quota, stops waiting at 37 + c)",
             f"break_even_slots: smallest buffer from which no send waits at any larger buffer "
             f"of the sweep; predicted_break_even_slots: the same reading of es.stall_free "
             f"({messages} messages of {packets} packets per pair, {extra} barrier packet "
             f"between them: credits return only at thresholds); dense_break_even_slots: "
             f"es.break_even_slots over every buffer size. Eq. 5 is the limit of many "
             f"messages per pair (the count below the threshold takes every value)",
             "flat_from_eq5: every overhead from the Eq. 5 buffer on within two standard "
             "errors of the largest buffer's (empty: one run per point)"]
    table = Table(f"extoll_table2: stabilizing receive buffer, {case}", TABLE2_COLUMNS, rows,
                  notes)
    if out_dir is not None:
        fig, ((drop_ax, even_ax),) = figure(2, width=4.8, height=4.4)
        c = [r[0] for r in rows]
        paper = [r[5] if r[5] is not None else np.nan for r in rows]
        drop_ax.plot(c, [r[7] for r in rows], "o-", label="simulated: delayed sends fall")
        drop_ax.plot(c, [r[3] for r in rows], "^:", label="simulated: overhead falls")
        drop_ax.plot(c, [r[4] for r in rows], "v--", label="37 + credit slots (5.3)")
        drop_ax.set_title(f"sharp drop ({case})")
        even_ax.plot(c, [r[8] for r in rows], "o-", label="simulated: no send waits")
        even_ax.plot(c, [r[9] for r in rows], "+", markersize=12,
                     label="predicted on the sweep's buffers")
        even_ax.plot(c, [r[10] for r in rows], "x:", label=f"predicted on every buffer "
                                                         f"({messages} messages per pair)")
        even_ax.plot(c, [r[2] for r in rows], "s--", label="Eq. 5")
        even_ax.plot(c, paper, "D", markersize=10, markerfacecolor="none",
                     label="paper Table 2")
        even_ax.plot(c, [r[1] for r in rows], "^:", label="simulated: overhead stabilizes")
        even_ax.set_title(f"Table 2: break-even ({case})")
        for ax in (drop_ax, even_ax):
            ax.set_xticks(c)
            ax.set_xlabel("credit slots")
            ax.set_ylabel("receive buffer (slots per process)")
            ax.legend(fontsize=7)
        write_outputs(table, fig, out_dir, "extoll_table2")
    return table


def _credit_packets(ds, i: int) -> float:
    return rank_sum(ds.control_sent.sel(ctrl="credit"), i)


@target("extoll_piggyback", "EXTOLL Figure 9: alltoall with 2044-byte messages, static "
        "overhead and credit packets with and without piggybacking", sweep=True,
        needs=Points(("static",), ("alltoall",)))
def extoll_piggyback(ds, out_dir=None) -> Table:
    ds = completed(ds)
    by = defaultdict(dict)
    for p in overheads(ds):
        by[slots_per_process(p.cfg)][p.cfg.protocol.piggyback] = p
    rows = []
    for s in sorted(by):
        if set(by[s]) != {False, True}:
            continue
        off, on = by[s][False], by[s][True]
        c0, c1 = _credit_packets(ds, off.index), _credit_packets(ds, on.index)
        rows.append([s, off.overhead_pct, on.overhead_pct, int(c0), int(c1),
                     100.0 * (1 - c1 / c0) if c0 else float("nan"),
                     int(rank_sum(ds.control_sent.sel(ctrl="piggyback"), on.index))])
    require(ds, bool(rows), "extoll_piggyback", FC_POINTS + ", with and without piggybacking")
    table = Table(f"extoll_piggyback: {len(rows)} buffer sizes", PIGGY_COLUMNS, rows,
                  ["credit_packet_reduction_pct: explicit credit packets saved by piggybacking"])
    if out_dir is not None:
        fig, ((a, b),) = figure(2)
        s = [r[0] for r in rows]
        a.plot(s, [r[1] for r in rows], "o-", label="without piggybacking")
        a.plot(s, [r[2] for r in rows], "s-", label="with piggybacking")
        a.set_ylabel("overhead (%)")
        a.legend()
        b.plot(s, [r[5] for r in rows], "o-")
        b.set_ylabel("credit packets saved (%)")
        for ax in (a, b):
            ax.set_xlabel("receive buffer (slots per process)")
        write_outputs(table, fig, out_dir, "extoll_piggyback")
    return table


@target("extoll_components", "EXTOLL Figures 16-17: stall and computational parts of the "
        "overhead, static and dynamic, alltoall and multi-pingpong", sweep=True,
        needs=Points(CREDIT_PROTOCOLS))
def extoll_components(ds, out_dir=None) -> Table:
    ds = completed(ds)
    labels = case_labels(ds)
    rows = []
    for p in overheads(ds):
        i = p.index
        # the measured part only: the warm-ups' credit operations are not in the reference time
        active = measured(ds, "messages_received", i) > 0
        cpu = measured(ds, "flow_control_cpu_us", i)[active]
        it = p.cfg.workload.iterations * (2 if p.cfg.workload.kind == "multi_pingpong" else 1)
        comp = 100.0 * float(np.nanmean(cpu)) / (p.ref_us * it) if cpu.size else 0.0
        rows.append([labels[i], p.cfg.protocol.name, slots_per_process(p.cfg), p.overhead_pct,
                     comp, p.overhead_pct - comp,
                     int(rank_sum(ds.packets_sent.sel(kind="control"), i))])
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    notes = ["computational_pct: CPU time of flow control (credit operations, writing and "
             "retrieving control packets) in the measured part (warm-ups excluded), mean over the "
             "ranks that receive in it, % of the reference time; stall_pct: the rest of the "
             "overhead (waiting for credits, extra traffic)"]
    table = Table(f"extoll_components: {len(rows)} points", COMPONENT_COLUMNS, rows, notes)
    if out_dir is not None:
        cases = list(dict.fromkeys(r[0] for r in rows))
        fig, axes = figure(len(cases), len(CREDIT_PROTOCOLS), width=4.5, height=3.4)
        for j, case in enumerate(cases):
            for k, proto in enumerate(CREDIT_PROTOCOLS):
                pts = [r for r in rows if r[0] == case and r[1] == proto]
                ax = axes[k][j]
                s = [r[2] for r in pts]
                ax.bar(s, [r[4] for r in pts], width=2.5, label="computational")
                ax.bar(s, [r[5] for r in pts], width=2.5, bottom=[r[4] for r in pts],
                       label="stall and traffic")
                ax.set_title(f"{case}, {proto}")
                ax.set_ylabel("overhead (%)")
                ax.set_xlabel("receive buffer (slots per process)")
        axes[0][0].legend(fontsize=7)
        write_outputs(table, fig, out_dir, "extoll_components")
    return table
