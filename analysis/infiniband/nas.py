"""Liu and Panda's NAS Parallel Benchmarks study (section 6.3) as three targets of one sweep
(``sweeps/infiniband/nas.yaml``: the seven class A skeletons under ib_hardware, ib_static and
ib_dynamic with 100 and 1 pre-posted buffers per connection, replicates by seed):

- ``ib_nas_ecm`` (Table 1): explicit credit messages and all messages per process under the
  static scheme with 100 buffers. "Messages" are those sent into pre-posted buffers (eager
  data, rendezvous requests, replies and finish messages, ECMs: output ib_messages), per
  process, averaged over the ranks.
- ``ib_nas_buffers`` (Table 2): the most buffers the dynamic scheme posted for one connection
  (the largest over the ranks), starting from 1.
- ``ib_nas_prepost`` (Figures 9 and 10): the run time with 100 buffers per scheme, and its
  increase from 100 buffers to 1 ("performance degradation"), with the RNR NAKs counted.

Times are the benchmark's timed part (its marks: from the first rank's start to the last
rank's end); overheads and drops are means over replicates with their standard errors.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from ..extoll.common import (completed, completed_configs, configs, figure, ratio_se_pct,
                             write_outputs)
from .micro import LABEL, SCHEMES
from ..registry import Needs, Table, target
from ..stats import se_of_mean

ORDER = ("IS", "FT", "LU", "CG", "MG", "BT", "SP")
# Table 1, "Explicit Credit Messages for User-Level Static Scheme" (section 6.3):
# ECMs and all messages per process, as printed
TABLE1 = {"IS": (0, 383), "FT": (0, 193), "LU": (9002, 48805), "CG": (0, 4202),
          "MG": (1, 1595), "BT": (0, 28913), "SP": (0, 14531)}
# The SP and BT rows read as swapped: SP (400 time steps) sends twice what BT (200) does, 24
# rendezvous messages per step each, and each skeleton is within 0.1 % of the other's row
# (docs/reproduction/nas_skeletons.md, "Message counts"): compared with the other's row.
TABLE1_ROW = {"SP": "BT", "BT": "SP"}
# Table 2, "Maximum Number of Posted Buffers for User-Level Dynamic Scheme" (section 6.3)
TABLE2 = {"IS": 4, "FT": 4, "LU": 63, "CG": 3, "MG": 6, "BT": 7, "SP": 7}
MANY, FEW = 100, 1    # the pre-post values of Figures 9 and 10


@dataclasses.dataclass(frozen=True)
class NasPoints(Needs):
    """Completed nas points under the IB schemes, with `prepost` buffers (None: any)."""
    scheme: str | None = None
    prepost: int | None = None

    @property
    def what(self) -> str:
        return "completed NAS skeleton points of the IB schemes (the ib_nas sweep)"

    def missing(self, ds) -> str | None:
        cfgs = completed_configs(ds)
        if not any(c.workload.kind == "nas" and c.protocol.name in SCHEMES
                   and self.scheme in (None, c.protocol.name)
                   and self.prepost in (None, c.protocol.prepost) for c in cfgs):
            under = f" under {self.scheme}" if self.scheme else ""
            pre = f" with {self.prepost} buffers" if self.prepost else ""
            return f"no completed nas point{under}{pre}"
        return None


@dataclasses.dataclass
class Runs:
    """The replicates (seeds) of one (benchmark, scheme, prepost)."""
    time_us: list[float] = dataclasses.field(default_factory=list)
    ecm: list[float] = dataclasses.field(default_factory=list)        # per process
    messages: list[float] = dataclasses.field(default_factory=list)   # per process
    fewest: list[int] = dataclasses.field(default_factory=list)       # the least busy rank's
    most: list[int] = dataclasses.field(default_factory=list)         # the busiest rank's
    max_posted: list[int] = dataclasses.field(default_factory=list)
    naks: list[int] = dataclasses.field(default_factory=list)         # all ranks
    rank_messages: list = dataclasses.field(default_factory=list)     # per rank, per replicate
    rank_ecm: list = dataclasses.field(default_factory=list)

    def mean(self, name: str) -> float:
        return float(np.mean(getattr(self, name)))

    def se(self, name: str) -> float:
        return se_of_mean(getattr(self, name))


def span_us(ds, i: int) -> float:
    """The timed part of point i: from the first rank's start mark to the last rank's end."""
    m = ds.mark_time_us.values[i]
    ok = ~np.isnan(m[:, 0])
    return float(np.nanmax(m[ok, 1]) - np.nanmin(m[ok, 0]))


def collect(ds) -> dict[tuple[str, str, int], Runs]:
    """(benchmark, scheme, prepost) -> its replicates, from the completed points of ds."""
    ds = completed(ds)
    out: dict[tuple, Runs] = defaultdict(Runs)
    for i, c in enumerate(configs(ds)):
        if c.workload.kind != "nas" or c.protocol.name not in SCHEMES:
            continue
        r = out[(c.workload.nas, c.protocol.name, c.protocol.prepost)]
        n = c.n_ranks
        r.time_us.append(span_us(ds, i))
        # per-rank outputs: the store's rank axis fits its largest point (padding beyond n)
        e = ds["ib_ecm_sent"].values[i, :n]
        r.ecm.append(float(e.sum()) / n)
        r.rank_ecm.append(e.astype(float))
        m = ds["ib_messages"].values[i, :n]
        r.rank_messages.append(m.astype(float))
        r.messages.append(float(m.sum()) / n)
        r.fewest.append(int(m.min()))
        r.most.append(int(m.max()))
        r.max_posted.append(int(ds["ib_max_posted"].values[i, :n].max()))
        r.naks.append(int(ds["ib_rnr_naks"].values[i, :n].sum()))
    return dict(out)


def _benchmarks(runs) -> list[str]:
    have = {k[0] for k in runs}
    return [b for b in ORDER if b in have]


def _pct(a: float, b: float) -> float:
    return 100.0 * (a / b - 1.0)


def _per_process(runs, static) -> list[str]:
    """Table 1 read per process, where a skeleton's ranks are unequal (by more than 5 %): the
    ranks whose ECMs (where the paper counts at least 100; else their messages), mean over the
    replicates, lie within 1 % of the paper's, with their messages with and without the ECMs."""
    out = []
    for bm, row in static.items():
        r = runs[(bm, "ib_static", MANY)]
        msgs = np.mean(r.rank_messages, axis=0)
        ecm = np.mean(r.rank_ecm, axis=0)
        pm, pe = row[10], row[9]
        if msgs.max() <= 1.05 * msgs.min():
            continue   # the ranks send alike: the average is the per-process reading
        near = np.flatnonzero(np.abs(ecm / pe - 1.0) <= 0.01 if pe >= 100
                              else np.abs(msgs / pm - 1.0) <= 0.01)
        if near.size == 0 or near.size == len(msgs):
            continue
        m, e = msgs[near].mean(), ecm[near].mean()
        out.append(f"{bm} per process: ranks {', '.join(map(str, near))} send {m:,.0f} "
                   f"messages, {m - e:,.0f} without their {e:,.0f} ECMs (Table 1: {pm:,.0f} "
                   f"messages, {pe:,.0f} ECMs; all ranks {msgs.min():,.0f}-{msgs.max():,.0f})")
    return out


@target("ib_nas_ecm", "Liu and Panda, Table 1: explicit credit messages and all messages per "
        "process of the NAS skeletons under the static scheme (100 buffers), beside the "
        "other schemes", needs=NasPoints("ib_static", MANY), sweep="ib_nas")
def ib_nas_ecm(ds, out_dir=None) -> Table:
    runs = collect(ds)
    rows, notes = [], []
    for bm in _benchmarks(runs):
        for s in SCHEMES:
            r = runs.get((bm, s, MANY))
            if r is None:
                continue
            row = TABLE1_ROW.get(bm, bm)
            pe, pm = TABLE1[row] if s == "ib_static" else (float("nan"), float("nan"))
            rows.append([bm, s, MANY, len(r.time_us), r.mean("ecm"), r.mean("messages"),
                         r.mean("fewest"), r.mean("most"), row if s == "ib_static" else "", pe,
                         pm, _pct(r.mean("messages"), pm) if s == "ib_static" else float("nan")])
    static = {row[0]: row for row in rows if row[1] == "ib_static"}
    if static:
        off = {bm: row[11] for bm, row in static.items()}
        ok = [bm for bm, d in off.items() if abs(d) <= 10]
        notes.append("total messages per process within 10 % of Table 1: "
                     f"{', '.join(ok) or 'none'} of {', '.join(off)} ("
                     + ", ".join(f"{bm} {d:+.1f} %" for bm, d in off.items()) + ")")
        inside = [bm for bm, row in static.items() if row[6] * 0.99 <= row[10] <= row[7] * 1.01]
        notes.append("Table 1's count lies within the ranks' range (least to busiest, 1 %) for: "
                     f"{', '.join(inside) or 'none'}")
        if "LU" in static:
            lu = static["LU"]
            others = {bm: row[4] for bm, row in static.items() if bm != "LU"}
            notes.append(f"LU: {lu[4]:.0f} ECMs per process, {100 * lu[4] / lu[5]:.1f} % of its "
                         f"messages (paper: 9002, 18 %); the others at most "
                         f"{max(others.values(), default=0):.1f} (paper: at most 1)")
        notes += _per_process(runs, static)
        notes.append("SP and BT are compared with each other's row of Table 1 (TABLE1_ROW: the "
                     "printed rows read as swapped)")
    table = Table(f"ib_nas_ecm: {len(rows)} rows",
                  ["benchmark", "scheme", "prepost", "replicates", "ecm_per_process",
                   "messages_per_process", "messages_least_rank", "messages_busiest_rank",
                   "paper_row", "paper_ecm", "paper_messages", "messages_vs_paper_pct"],
                  rows, notes)
    if out_dir is not None:
        fig, axes = figure(2, width=5.0, height=3.8)
        bms = list(static)
        x = np.arange(len(bms))
        for ax, col, pcol, what in ((axes[0][0], 5, 10, "messages per process"),
                                    (axes[0][1], 4, 9, "ECMs per process")):
            ax.bar(x - 0.2, [static[b][col] for b in bms], 0.4, label="extoll-vec")
            ax.bar(x + 0.2, [static[b][pcol] for b in bms], 0.4, label="paper (Table 1)")
            ax.set_xticks(x, bms)
            ax.set_yscale("symlog", linthresh=10)
            ax.set_ylabel(what)
            ax.set_title(f"Table 1: {what}, static, pre-post {MANY}", fontsize=9)
            ax.legend(fontsize=7)
        write_outputs(table, fig, out_dir, "ib_nas_ecm")
    return table


@target("ib_nas_buffers", "Liu and Panda, Table 2: the most buffers the dynamic scheme posts for "
        "one connection in each NAS skeleton, starting from 1", needs=NasPoints("ib_dynamic"),
        sweep="ib_nas")
def ib_nas_buffers(ds, out_dir=None) -> Table:
    runs = collect(ds)
    rows = []
    for bm in _benchmarks(runs):
        pre = sorted(p for (b, s, p) in runs if b == bm and s == "ib_dynamic")
        if not pre:
            continue
        r = runs[(bm, "ib_dynamic", pre[0])]
        rows.append([bm, pre[0], len(r.max_posted), max(r.max_posted), r.mean("max_posted"),
                     TABLE2[bm]])
    notes = []
    got = {row[0]: row[3] for row in rows}
    if "LU" in got:
        rest = {b: v for b, v in got.items() if b != "LU"}
        notes.append(f"LU needs {got['LU']} buffers on its busiest connection (paper: 63); "
                     f"the others at most {max(rest.values(), default=0)} (paper: at most 7: "
                     + ", ".join(f"{b} {v}" for b, v in rest.items()) + ")")
    table = Table(f"ib_nas_buffers: {len(rows)} benchmarks",
                  ["benchmark", "prepost", "replicates", "max_posted", "max_posted_mean",
                   "paper_max_posted"], rows, notes)
    if out_dir is not None:
        fig, axes = figure(1, width=5.5, height=3.8)
        ax = axes[0][0]
        x = np.arange(len(rows))
        ax.bar(x - 0.2, [r[3] for r in rows], 0.4, label="extoll-vec")
        ax.bar(x + 0.2, [r[5] for r in rows], 0.4, label="paper (Table 2)")
        ax.set_xticks(x, [r[0] for r in rows])
        ax.set_ylabel("most buffers posted per connection")
        ax.set_title("Table 2: dynamic scheme, from 1 buffer", fontsize=9)
        ax.legend(fontsize=7)
        write_outputs(table, fig, out_dir, "ib_nas_buffers")
    return table


def _drop(many: Runs, few: Runs) -> tuple[float, float]:
    """Time increase from `many` to `few` buffers in % and its standard error (ratio of two
    independent means, first order)."""
    return (_pct(few.mean("time_us"), many.mean("time_us")),
            ratio_se_pct(few.time_us, many.time_us))


def _prepost_notes(by: dict) -> list[str]:
    notes = []
    t100 = {(b, s): v[0] for (b, s), v in by.items()}
    if all(("LU", s) in t100 for s in SCHEMES):
        hw = t100[("LU", "ib_hardware")]
        notes.append("LU with 100 buffers: the user-level schemes take "
                     + ", ".join(f"{_pct(t100[('LU', s)], hw):+.1f} %" for s in SCHEMES[1:])
                     + " over hardware (paper: about +5-6 %, their ECMs)")
    others = [(b, s, _pct(t100[(b, s)], t100[(b, "ib_hardware")]))
              for (b, s) in t100 if b != "LU" and s != "ib_hardware" and (b, "ib_hardware") in t100]
    if others:
        b, s, w = max(others, key=lambda x: abs(x[2]))
        notes.append(f"the other skeletons with 100 buffers: the schemes within {abs(w):.1f} % "
                     f"of hardware (largest: {b} {LABEL[s]}; paper: within 2-3 %)")
    drops = {(b, s): v[2] for (b, s), v in by.items() if not np.isnan(v[2])}
    for s in SCHEMES:
        d = {b: v for (b, ss), v in drops.items() if ss == s}
        if d:
            top = sorted(d, key=d.get, reverse=True)[:2]
            notes.append(f"{LABEL[s]}, 100 -> 1 buffers: largest drops "
                         + ", ".join(f"{b} {d[b]:+.1f} %" for b in top)
                         + f"; at most {max(d.values()):+.1f} %")
    notes.append("paper: hardware drops most on LU and MG (RNR retries); static about 13 % on "
                 "LU and 6 % on CG; dynamic under 2 % everywhere; IS, FT, SP, BT at most 2 % "
                 "under every scheme")
    return notes


@target("ib_nas_prepost", "Liu and Panda, Figures 9-10: NAS skeleton run times with 100 pre-posted "
        "buffers per scheme, and their increase from 100 buffers to 1", needs=NasPoints(),
        sweep="ib_nas")
def ib_nas_prepost(ds, out_dir=None) -> Table:
    runs = collect(ds)
    rows, by = [], {}
    for bm in _benchmarks(runs):
        for s in SCHEMES:
            many, few = runs.get((bm, s, MANY)), runs.get((bm, s, FEW))
            if many is None:
                continue
            d, dse = _drop(many, few) if few is not None else (float("nan"), float("nan"))
            nan = float("nan")
            rows.append([bm, s, len(many.time_us), many.mean("time_us") / 1e6,
                         many.se("time_us") / 1e6,
                         few.mean("time_us") / 1e6 if few else nan, d, dse,
                         few.mean("naks") if few else nan, many.mean("ecm")])
            by[(bm, s)] = (many.mean("time_us"), few, d)
    table = Table(f"ib_nas_prepost: {len(rows)} rows",
                  ["benchmark", "scheme", "replicates", "time_100_s", "time_100_se_s",
                   "time_1_s", "drop_pct", "drop_se_pct", "rnr_naks_1", "ecm_per_process_100"],
                  rows, _prepost_notes(by))
    if out_dir is not None:
        fig, axes = figure(2, width=5.0, height=3.8)
        bms = _benchmarks(runs)
        x = np.arange(len(bms))
        for k, s in enumerate(SCHEMES):
            rel = [100 * by[(b, s)][0] / by[(b, "ib_hardware")][0] if (b, s) in by
                   and (b, "ib_hardware") in by else np.nan for b in bms]
            axes[0][0].bar(x + (k - 1) * 0.27, rel, 0.27, label=LABEL[s])
            drop = [by[(b, s)][2] if (b, s) in by else np.nan for b in bms]
            axes[0][1].bar(x + (k - 1) * 0.27, drop, 0.27, label=LABEL[s])
        axes[0][0].set_ylabel("time, % of hardware's")
        axes[0][0].set_ylim(90, None)
        axes[0][0].set_title(f"Figure 9: pre-post {MANY}", fontsize=9)
        axes[0][1].set_ylabel("time increase (%)")
        axes[0][1].set_title(f"Figure 10: pre-post {MANY} -> {FEW}", fontsize=9)
        for ax in (axes[0][0], axes[0][1]):
            ax.set_xticks(x, bms)
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3, axis="y")
        write_outputs(table, fig, out_dir, "ib_nas_prepost")
    return table
