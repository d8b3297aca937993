"""Bhoedjang et al.'s evaluation (section 5) as targets, LFC on the 64-node Myrinet testbed
(examples.myrinet_testbed, costs fitted by analysis/lfc/calibration.py), the benchmarks of
workloads/multicast.py over ranks 0..P-1:

- ``lfc_multicast`` (Figure 4): latency of a multicast to the last receiver and the root's
  blast throughput against the message size, binomial trees, 4 to 61 processors, recovery off.
- ``lfc_recovery_overhead`` (Figure 5): the 61-processor blast on the deadlock-free binomial
  trees without (BP) and with (DR) deadlock recovery, 512 B / 1 KB / 2 KB packets with the NI
  buffer memory per sender fixed (16 / 8 / 4 buffers), and the false alarms' statistics.
- ``lfc_trees`` (Figure 6, Table 1): binomial, binary and chain trees with recovery, single
  sender and all-to-all, and Table 1's recoveries and deadlock-channel packets per multicast
  in the 64 KB all-to-all.
- ``lfc_vs_fmmc`` (Figures 7-8): LFC with 256-byte packets, binary trees and recovery against
  FM/MC (protocols/lfc/fmmc.py), single sender and all-to-all, 8 to 61 processors.

Statistics per multicast are per multicast packet a root injects (gap G18: "1.3 (out of 60)
packets per multicast" on 61 processors is per packet); recoveries count every NI's, false
alarms included. Throughputs in MB/s of 10**6 bytes (G31).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from ..extoll.common import completed, completed_configs, configs, figure, write_outputs
from ..registry import Needs, Table, target

# Section 5.1 (Figure 4): multicast latency (us) and peak blast throughput (MB/s), 4 and 61 nodes
PAPER = {"latency_4": 22.0, "latency_61": 59.0, "peak_4": 42.9, "peak_61": 13.3,
         "fmmc_peak_61": 7.7}   # section 5.3
TABLE1 = {"binary": (0.362, 2.7), "binomial": (0.853, 3.5), "chain": (1.000, 59.9)}  # Table 1
FIG5_RECOVERIES, FIG5_DL_PACKETS = 0.25, 1.3   # section 5.2 (Figure 5): 1 KB packets, per multicast
TREES = ("binomial", "binary", "chain")
KINDS = ("mcast_latency", "mcast_blast", "mcast_alltoall")


@dataclasses.dataclass(frozen=True)
class LfcPoints(Needs):
    """Completed LFC points of the multicast benchmarks."""

    @property
    def what(self) -> str:
        return "completed LFC multicast benchmark points (an lfc_* sweep)"

    def missing(self, ds) -> str | None:
        cfgs = completed_configs(ds)
        if not any(c.protocol.name == "lfc" and c.workload.kind in KINDS for c in cfgs):
            return "no completed LFC multicast benchmark point"
        return None


def _packets(c) -> int:
    """Packets of one message (an empty one is one packet)."""
    return max(1, -(-c.workload.message_bytes // c.mpi.velo_payload))


def measure(ds, i: int, c) -> dict:
    """The benchmark's figure of point i: latency (us), or throughput (MB/s: the root's for a
    blast, per sender for an all-to-all), and the recovery statistics per multicast packet."""
    w, P = c.workload, c.workload.group_size
    m = ds.mark_time_us.values[i]
    out = {"kind": w.kind, "group": P, "message_bytes": w.message_bytes,
           "protocol": c.protocol.name,
           "tree": c.protocol.lfc_tree, "recovery": bool(c.protocol.lfc_recovery),
           "packet_bytes": c.mpi.velo_payload, "credits": c.protocol.lfc_credits}
    if w.kind == "mcast_latency":
        out["value"] = float(np.nanmax(m[1:P, 1]) - m[0, 0])
        roots = 1
    elif w.kind == "mcast_blast":
        out["value"] = w.iterations * w.message_bytes / float(m[0, 1] - m[0, 0])
        roots = 1
    else:
        out["value"] = w.iterations * w.message_bytes / float(
            np.nanmax(m[:P, 1]) - np.nanmin(m[:P, 0]))
        roots = P
    warm = 0 if w.kind == "mcast_alltoall" else w.warmup   # the all-to-all has none
    mcasts = roots * (w.iterations + warm) * _packets(c)
    rec = int(ds["lfc_recoveries"].values[i].sum()) if "lfc_recoveries" in ds else 0
    dl = int(ds["lfc_dl_packets"].values[i].sum()) if "lfc_dl_packets" in ds else 0
    out["recoveries_per_mcast"] = rec / mcasts
    out["dl_packets_per_mcast"] = dl / mcasts
    # Table 1's "fraction of the number of multicasts": those that took part in a recovery
    took = int(ds["lfc_recovery_mcasts"].values[i].sum()) if "lfc_recovery_mcasts" in ds else 0
    out["recovery_fraction"] = took / mcasts
    swaps = ds["fmmc_swaps"].values[i] if "fmmc_swaps" in ds else None
    out["swaps_per_mcast"] = (float(np.nansum(swaps)) / mcasts
                              if swaps is not None and c.protocol.name == "fmmc" else 0.0)
    return out


def _points(ds, protocols=("lfc",)) -> list[dict]:
    ds = completed(ds)
    return [measure(ds, i, c) for i, c in enumerate(configs(ds))
            if c.protocol.name in protocols and c.workload.kind in KINDS]


def _err(model: float, paper: float) -> float:
    return 100.0 * (model / paper - 1)


# ---- Figure 4 ---------------------------------------------------------------------------------
@target("lfc_multicast", "Bhoedjang et al., Figure 4: LFC multicast latency to the last receiver "
        "and blast throughput against the message size, binomial trees, 4-61 processors",
        needs=LfcPoints(), sweep=True)
def lfc_multicast(ds, out_dir=None) -> Table:
    pts = [p for p in _points(ds) if p["kind"] in KINDS[:2]]
    rows = [[p["kind"].removeprefix("mcast_"), p["group"], p["message_bytes"], p["value"]]
            for p in sorted(pts, key=lambda p: (p["kind"], p["group"], p["message_bytes"]))]
    lat = {(p["group"], p["message_bytes"]): p["value"] for p in pts
           if p["kind"] == "mcast_latency"}
    thr = defaultdict(dict)
    for p in pts:
        if p["kind"] == "mcast_blast":
            thr[p["group"]][p["message_bytes"]] = p["value"]
    notes = []
    for P, key in ((4, "latency_4"), (61, "latency_61")):
        if (P, 0) in lat:
            notes.append(f"latency of an empty multicast, {P} processors: {lat[(P, 0)]:.2f} us "
                         f"(paper {PAPER[key]:g} us, {_err(lat[(P, 0)], PAPER[key]):+.1f} %)")
    for P, key in ((4, "peak_4"), (61, "peak_61")):
        if thr.get(P):
            best = max(thr[P], key=thr[P].get)
            notes.append(f"peak throughput, {P} processors: {thr[P][best]:.2f} MB/s at "
                         f"{best} B (paper {PAPER[key]:g} MB/s, "
                         f"{_err(thr[P][best], PAPER[key]):+.1f} %)")
    if thr.get(4) and 262144 in thr[4] and len(thr[4]) > 1:
        drop = thr[4][262144] < 0.97 * max(thr[4].values())
        notes.append("4 processors at 256 KB: " + ("below" if drop else "at") + " the peak "
                     "(paper: a decline from the receivers' L2 cache misses, which the model "
                     "does not have: gap G32)")
    table = Table(f"lfc_multicast: {len(rows)} points",
                  ["benchmark", "processors", "message_bytes", "latency_us_or_mb_s"], rows,
                  notes)
    if out_dir is not None:
        fig, axes = figure(2, width=5.0, height=4.0)
        for ax, kind, ylab in ((axes[0][0], "mcast_latency", "latency (us)"),
                               (axes[0][1], "mcast_blast", "throughput (MB/s)")):
            for P in sorted({p["group"] for p in pts}):
                xy = sorted((p["message_bytes"], p["value"]) for p in pts
                            if p["kind"] == kind and p["group"] == P)
                if xy:
                    ax.plot([max(x, 1) for x, _ in xy], [y for _, y in xy], marker="o",
                            label=f"{P} processors")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes; 0 plotted at 1)")
            ax.set_ylabel(ylab)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        axes[0][0].set_title("Figure 4 (top): multicast latency")
        axes[0][1].set_title("Figure 4 (bottom): blast throughput")
        write_outputs(table, fig, out_dir, "lfc_multicast")
    return table


# ---- Figure 5 ---------------------------------------------------------------------------------
@target("lfc_recovery_overhead", "Bhoedjang et al., Figure 5: 61-processor blast throughput "
        "without (BP) and with (DR) deadlock recovery on binomial trees, 512 B-2 KB packets, and "
        "the false alarms per multicast", needs=LfcPoints(), sweep=True)
def lfc_recovery_overhead(ds, out_dir=None) -> Table:
    pts = [p for p in _points(ds) if p["kind"] == "mcast_blast"]
    key = lambda p: (p["packet_bytes"], p["message_bytes"])   # noqa: E731
    by = {(key(p), p["recovery"]): p for p in pts}
    rows = []
    for (k, rec), p in sorted(by.items()):
        rows.append([p["packet_bytes"], p["credits"], "DR" if rec else "BP", p["message_bytes"],
                     p["value"], p["recoveries_per_mcast"], p["dl_packets_per_mcast"]])
    notes = []
    for pkt in sorted({p["packet_bytes"] for p in pts}):
        gaps = [100 * (by[(k, True)]["value"] / by[(k, False)]["value"] - 1)
                for k in sorted({key(p) for p in pts}) if k[0] == pkt
                and (k, True) in by and (k, False) in by]
        dr = [p for p in pts if p["packet_bytes"] == pkt and p["recovery"]]
        if gaps:
            notes.append(f"{pkt} B packets: DR - BP {min(gaps):+.1f} to {max(gaps):+.1f} % "
                         "(paper: a modest impact)")
        if dr:
            r = [p["recoveries_per_mcast"] for p in dr]
            d = [p["dl_packets_per_mcast"] for p in dr]
            paper = (f" (paper, 1 KB: almost {FIG5_RECOVERIES:.0%} and {FIG5_DL_PACKETS})"
                     if pkt == 1024 else "")
            notes.append(f"{pkt} B packets, DR: recoveries per multicast {min(r):.3f}-"
                         f"{max(r):.3f}, deadlock-channel packets per multicast "
                         f"{min(d):.3f}-{max(d):.3f} over the message sizes{paper}")
    notes.append("per multicast: per multicast packet the root injects (gap G18); binomial "
                 "trees cannot deadlock, so every recovery is a false alarm")
    table = Table(f"lfc_recovery_overhead: {len(rows)} points",
                  ["packet_bytes", "credits", "protocol", "message_bytes", "mb_s",
                   "recoveries_per_mcast", "dl_packets_per_mcast"], rows, notes)
    if out_dir is not None:
        fig, axes = figure(2, width=5.0, height=4.0)
        for pkt in sorted({p["packet_bytes"] for p in pts}):
            for rec, ls in ((False, "-"), (True, "--")):
                xy = sorted((p["message_bytes"], p["value"], p["recoveries_per_mcast"])
                            for p in pts if p["packet_bytes"] == pkt and p["recovery"] == rec)
                lab = f"{'DR' if rec else 'BP'} {pkt} B"
                axes[0][0].plot([x for x, _, _ in xy], [y for _, y, _ in xy], ls, marker="o",
                                label=lab)
                if rec:
                    axes[0][1].plot([x for x, _, _ in xy], [r for _, _, r in xy], marker="o",
                                    label=lab)
        axes[0][0].set_ylabel("throughput (MB/s)")
        axes[0][1].set_ylabel("recoveries per multicast packet")
        axes[0][0].set_title("Figure 5: 61 processors, binomial")
        axes[0][1].set_title("false alarms (every NI's recoveries)")
        for ax in axes[0]:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        write_outputs(table, fig, out_dir, "lfc_recovery_overhead")
    return table


# ---- Figure 6 and Table 1 ------------------------------------------------------------------------
def _tree_notes(blast: dict, a2a: dict, t1: dict) -> list[str]:
    notes = []
    for name, curve, want in (("single sender", blast, "chain best, binary and binomial "
                               "close"), ("all-to-all", a2a, "chain worst, binomial above "
                                          "binary")):
        sizes = sorted(set.intersection(*(set(curve[t]) for t in TREES))) if all(
            curve.get(t) for t in TREES) else []
        if sizes:
            big = sizes[-1]
            order = sorted(TREES, key=lambda t: -curve[t][big])
            notes.append(f"{name} at {big} B: " + " > ".join(
                f"{t} {curve[t][big]:.2f}" for t in order) + f" MB/s (paper: {want})")
    if all(t in t1 for t in TREES):
        # (what, model column of t1, paper column of TABLE1): the paper's first column is "the
        # frequency of deadlock recovery (as a fraction of the number of multicasts)"; the
        # recoveries of every NI per multicast are shown beside it against the same figure
        for col, j, k in (("multicasts with a recovery (fraction)", 2, 0),
                          ("recoveries per multicast (every NI's)", 0, 0),
                          ("deadlock-channel packets per multicast", 1, 1)):
            order = sorted(TREES, key=lambda t: t1[t][j])
            notes.append(f"Table 1 {col}, ascending: {', '.join(order)} (paper: "
                         "binary, binomial, chain); " + ", ".join(
                             f"{t} {t1[t][j]:.3f} vs {TABLE1[t][k]} "
                             f"(x{t1[t][j] / TABLE1[t][k]:.2f})" for t in TREES))
    return notes


@target("lfc_trees", "Bhoedjang et al., Figure 6 and Table 1: binomial, binary and chain trees "
        "with deadlock recovery, 61 processors, single-sender and all-to-all throughput, "
        "recoveries and deadlock-channel packets per multicast", needs=LfcPoints(), sweep=True)
def lfc_trees(ds, out_dir=None) -> Table:
    pts = [p for p in _points(ds) if p["kind"] in KINDS[1:]]
    curves = {k: defaultdict(dict) for k in KINDS[1:]}
    for p in pts:
        curves[p["kind"]][p["tree"]][p["message_bytes"]] = p["value"]
    rows = [[p["kind"].removeprefix("mcast_"), p["tree"], p["message_bytes"], p["value"],
             p["recovery_fraction"], p["recoveries_per_mcast"], p["dl_packets_per_mcast"]]
            for p in sorted(pts, key=lambda p: (p["kind"], p["tree"], p["message_bytes"]))]
    a2a = [p for p in pts if p["kind"] == "mcast_alltoall"]
    t1_size = 65536 if any(p["message_bytes"] == 65536 for p in a2a) else max(
        (p["message_bytes"] for p in a2a), default=0)
    t1 = {p["tree"]: (p["recoveries_per_mcast"], p["dl_packets_per_mcast"],
                      p["recovery_fraction"]) for p in a2a if p["message_bytes"] == t1_size}
    notes = _tree_notes(curves["mcast_blast"], curves["mcast_alltoall"], t1)
    if t1 and t1_size != 65536:
        notes.append(f"Table 1 read at {t1_size} B (the paper's is 64 KB)")
    table = Table(f"lfc_trees: {len(rows)} points",
                  ["benchmark", "tree", "message_bytes", "mb_s", "recovery_fraction",
                   "recoveries_per_mcast", "dl_packets_per_mcast"], rows, notes)
    if out_dir is not None:
        fig, axes = figure(2, width=5.0, height=4.0)
        for ax, kind, title in ((axes[0][0], "mcast_blast", "Figure 6 (left): single sender"),
                                (axes[0][1], "mcast_alltoall", "Figure 6 (right): all-to-all, "
                                 "per sender")):
            for t in TREES:
                xy = sorted(curves[kind][t].items())
                if xy:
                    ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=t)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("throughput (MB/s)")
            ax.set_title(title)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        write_outputs(table, fig, out_dir, "lfc_trees")
    return table


# ---- Figures 7-8 ---------------------------------------------------------------------------------
# Section 5.3 (Figures 7-8): who is ahead at large messages, per processor count
FIG78 = {8: "FM/MC ahead", 16: "about equal", 32: "LFC ahead", 61: "LFC ahead"}


def _ahead(lfc: float, fm: float) -> str:
    """Who is ahead; "about equal" within 5 % (the paper gives no figure for it)."""
    r = lfc / fm
    return "about equal" if 1 / 1.05 <= r <= 1.05 else ("LFC ahead" if r > 1 else "FM/MC ahead")


@target("lfc_vs_fmmc", "Bhoedjang et al., Figures 7-8: LFC (256-byte packets, binary trees, "
        "deadlock recovery) against FM/MC, single-sender and all-to-all throughput on 8-61 "
        "processors",
        needs=LfcPoints(), sweep=True)
def lfc_vs_fmmc(ds, out_dir=None) -> Table:
    pts = [p for p in _points(ds, ("lfc", "fmmc")) if p["kind"] in KINDS[1:]]
    curve = defaultdict(dict)   # (kind, protocol, P) -> {bytes: MB/s}
    for p in pts:
        curve[(p["kind"], p["protocol"], p["group"])][p["message_bytes"]] = p["value"]
    rows = [[p["kind"].removeprefix("mcast_"), p["protocol"], p["group"], p["message_bytes"],
             p["value"], p["swaps_per_mcast"]]
            for p in sorted(pts, key=lambda p: (p["kind"], p["protocol"], p["group"],
                                                p["message_bytes"]))]
    notes = []
    fm61 = curve.get(("mcast_blast", "fmmc", 61))
    if fm61:
        best = max(fm61, key=fm61.get)
        notes.append(f"FM/MC peak throughput, 61 processors: {fm61[best]:.2f} MB/s at {best} B "
                     f"(paper {PAPER['fmmc_peak_61']:g} MB/s, "
                     f"{_err(fm61[best], PAPER['fmmc_peak_61']):+.1f} %)")
    for kind, fig in (("mcast_blast", "Figure 7"), ("mcast_alltoall", "Figure 8")):
        for P in sorted({p["group"] for p in pts}):
            a, b = curve.get((kind, "lfc", P)), curve.get((kind, "fmmc", P))
            both = sorted(set(a or ()) & set(b or ()))
            if both:
                big = both[-1]
                want = FIG78.get(P, "LFC ahead" if P > 32 else "?")
                notes.append(f"{fig}, {P} processors at {big} B: LFC {a[big]:.2f}, FM/MC "
                             f"{b[big]:.2f} MB/s: {_ahead(a[big], b[big])} (paper: {want})")
    table = Table(f"lfc_vs_fmmc: {len(rows)} points",
                  ["benchmark", "protocol", "processors", "message_bytes", "mb_s",
                   "swaps_per_mcast"], rows, notes)
    if out_dir is not None:
        fig, axes = figure(2, width=5.0, height=4.0)
        for ax, kind, title in ((axes[0][0], "mcast_blast", "Figure 7: single sender"),
                                (axes[0][1], "mcast_alltoall", "Figure 8: all-to-all, per "
                                 "sender")):
            for k, P in enumerate(sorted({p["group"] for p in pts})):
                for proto, ls in (("lfc", "-"), ("fmmc", "--")):
                    xy = sorted(curve.get((kind, proto, P), {}).items())
                    if xy:
                        ax.plot([x for x, _ in xy], [y for _, y in xy], ls, marker="o",
                                color=f"C{k}", label=f"{'LFC' if proto == 'lfc' else 'FM/MC'}"
                                                     f" {P}")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("throughput (MB/s)")
            ax.set_title(title)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
        write_outputs(table, fig, out_dir, "lfc_vs_fmmc")
    return table
