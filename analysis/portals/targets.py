"""Schneider et al.'s slow-receiver figures (section 4.1) as targets: normalized throughput
(accepted / offered flits per node per cycle) of pairwise permutation traffic on the Dragonfly.

- ``portals_slow_nodes`` (Figure 1): against the share of slow receivers, 2x and 8x slower,
  mean, standard error and spread (min, max) over random permutations (the seeds of `repeat`).
- ``portals_fecn`` (Figure 4): no congestion control, FECN/BECN at the paper's constants and
  the aggressive set (2x marking, decay every 50 cycles), for 2x, 4x and 8x slow receivers.
- ``portals_rdrp`` (Figure 5): RDRP against its outstanding transfers c at 1 % slow receivers,
  and its gain over the best FECN/BECN set (the paper's "best possible configuration using
  FECN/BECN and a single big transfer") and over the best of that and no congestion control.

Points that differ only in the seed are permutations of one setting (their mean and spread).
A point whose windows did not converge (`converged` 0: the cap of workload.measure_cycles
ended it) counts with its last window, as the paper's runs do at their own end; the tables
say how many converged.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ...config import ProtocolConfig
from ...protocols.portals.fecn import AGGRESSIVE
from ..extoll.common import completed, completed_configs, configs, figure, write_outputs
from ..stats import se_of_mean
from ..registry import Needs, Table, target

FACTORS = (2.0, 4.0, 8.0)
PAPER_BASELINE = 0.59                      # Figure 1, no slow nodes
PAPER_RDRP_GAIN = {2.0: 1.7, 4.0: 3.3, 8.0: 4.3}   # Figure 5 at c = 30 over the best FECN/BECN
PAPER_BEST_C = 30


@dataclasses.dataclass(frozen=True)
class PairwisePoints(Needs):
    """Completed network-only points of pairwise traffic, of at least one of `protocols`."""
    protocols: tuple[str, ...]

    @property
    def what(self) -> str:
        return (f"completed pairwise-traffic points of protocol {' or '.join(self.protocols)} "
                "(a portals_* sweep)")

    def missing(self, ds) -> str | None:
        cfgs = completed_configs(ds)
        if not any(c.workload.kind == "pairwise" for c in cfgs):
            return "no completed pairwise-traffic point"
        if not any(c.protocol.name in self.protocols for c in cfgs):
            return f"no completed point of protocol {' or '.join(self.protocols)}"
        return None


def setting(cfg) -> str:
    """The flow-control setting of a point, in the paper's words."""
    p = cfg.protocol
    if p.name == "none":
        return "baseline"
    if p.name == "fecn":   # the paper's two sets: the defaults and fecn.AGGRESSIVE
        keys = [k.split(".", 1)[1] for k in AGGRESSIVE]
        here = tuple(getattr(p, k) for k in keys)
        if here == tuple(getattr(ProtocolConfig(), k) for k in keys):
            return "fecn"
        if here == tuple(AGGRESSIVE.values()):
            return "fecn_aggressive"
        return f"fecn gain {p.fecn_gain:g} decay {p.becn_decay_cycles}"
    if p.name == "rdrp":
        return f"rdrp c={p.outstanding}"
    return p.name


@dataclasses.dataclass
class Group:
    """The permutations (seeds) of one setting."""
    cfg: Any
    values: list[float]
    converged: int

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def se(self) -> float:
        return se_of_mean(self.values)


def groups(ds) -> dict[tuple, Group]:
    """(setting, slow factor, slow nodes) -> its permutations, in store order."""
    ds = completed(ds)
    out: dict[tuple, Group] = {}
    seen: set[tuple] = set()
    acc = ds["accepted_flits_per_node_cycle"].values
    conv = ds["converged"].values
    for i, cfg in enumerate(configs(ds)):
        if cfg.workload.kind != "pairwise":
            continue
        n_slow = cfg.slow_node_count
        # without slow nodes the slow factor changes nothing: one curve's point, each seed once
        key = (setting(cfg), cfg.network.slow_factor if n_slow else 1.0, n_slow)
        if (key, cfg.seed) in seen:
            continue
        seen.add((key, cfg.seed))
        g = out.setdefault(key, Group(cfg, [], 0))
        g.values.append(float(acc[i]) / cfg.workload.injection_rate)
        g.converged += int(conv[i] == 1)
    return out


def _share_pct(cfg, n_slow: int) -> float:
    return round(100.0 * n_slow / cfg.n_nodes, 4)


def _row(key, g: Group) -> list:
    name, factor, n_slow = key
    return [name, factor, n_slow, _share_pct(g.cfg, n_slow), len(g.values), g.mean, g.se,
            min(g.values), max(g.values), g.converged]


GROUP_COLUMNS = ["setting", "slow_factor", "slow_nodes", "slow_pct", "permutations",
                 "throughput", "se", "min", "max", "converged"]


def _curves(gs: dict, name: str, factor: float) -> list[tuple[int, Group]]:
    return sorted((n, g) for (s, f, n), g in gs.items()
                  if s == name and (f == factor or (n == 0 and f == 1.0)))


def _axes(ax, xlabel: str, title: str, legend: int = 8) -> None:
    """The figures' common frame: normalized throughput 0..1 against xlabel."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("normalized throughput")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=legend)
    ax.set_title(title, fontsize=9)


# ---- Figure 1 ---------------------------------------------------------------------------------
@target("portals_slow_nodes", "Schneider et al., Figure 1: normalized throughput of pairwise "
        "traffic on the Dragonfly against the share of slow receivers (2x, 8x), spread over "
        "permutations", needs=PairwisePoints(("none",)), sweep=True)
def portals_slow_nodes(ds, out_dir=None) -> Table:
    gs = {k: g for k, g in groups(ds).items() if k[0] == "baseline"}
    factors = sorted({f for _s, f, n in gs if n > 0})
    rows = []
    for f in factors:
        for n, g in _curves(gs, "baseline", f):
            rows.append(_row(("baseline", f, n), g))
    base = [g for (_s, _f, n), g in gs.items() if n == 0]
    notes = []
    if base:
        b = base[0]
        notes.append(f"without slow receivers: {b.mean:.3f} (SE {b.se:.3f}, "
                     f"{len(b.values)} permutations); paper {PAPER_BASELINE} "
                     f"({100 * (b.mean / PAPER_BASELINE - 1):+.1f} %)")
        for f in factors:
            for n, g in _curves(gs, "baseline", f):
                if n and g.mean < 0.5 * b.mean:
                    notes.append(f"{f:g}x: below half the baseline from {n} slow nodes "
                                 f"({_share_pct(g.cfg, n)} %) on, every permutation "
                                 f"{'too' if max(g.values) < 0.5 * b.mean else 'not'}")
                    break
            else:
                notes.append(f"{f:g}x: never below half the baseline in this sweep")
    table = Table(f"portals_slow_nodes: {len(rows)} settings", list(GROUP_COLUMNS), rows, notes)
    if out_dir is not None:
        fig, axes = figure(1, width=5.5, height=4.0)
        ax = axes[0][0]
        for f in factors:
            pts = _curves(gs, "baseline", f)
            x = [_share_pct(g.cfg, n) for n, g in pts]
            y = [g.mean for _n, g in pts]
            lo = [g.mean - min(g.values) for _n, g in pts]
            hi = [max(g.values) - g.mean for _n, g in pts]
            ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=3, label=f"{f:g}x slower")
        ax.axhline(PAPER_BASELINE, color="grey", ls=":", label="paper, no slow nodes")
        _axes(ax, "slow receivers (% of nodes)", "Figure 1: mean, min-max over permutations")
        write_outputs(table, fig, out_dir, "portals_slow_nodes")
    return table


# ---- Figure 4 ---------------------------------------------------------------------------------
FECN_SETTINGS = ("baseline", "fecn", "fecn_aggressive")


@target("portals_fecn", "Schneider et al., Figure 4: normalized throughput without congestion "
        "control, with FECN/BECN and with its aggressive set, against the slow receivers (2x, 4x, "
        "8x)", needs=PairwisePoints(("fecn",)), sweep=True)
def portals_fecn(ds, out_dir=None) -> Table:
    gs = groups(ds)
    factors = sorted({f for _s, f, n in gs if n > 0})
    rows = []
    for f in factors:
        base = dict(_curves(gs, "baseline", f))
        for name in FECN_SETTINGS:
            for n, g in _curves(gs, name, f):
                b = base.get(n)
                rows.append(_row((name, f, n), g) + [g.mean / b.mean if b else math.nan])
    notes = []
    zero = {k[0]: g for k, g in gs.items() if k[2] == 0}
    if "baseline" in zero:
        for name in FECN_SETTINGS[1:]:
            if name in zero:
                notes.append(f"no slow receivers: {name} {zero[name].mean:.3f} against "
                             f"{zero['baseline'].mean:.3f} "
                             f"({100 * (zero[name].mean / zero['baseline'].mean - 1):+.1f} %; "
                             "paper: aggressive about -40 %)")
    for f in factors:
        better = [(r[2], r[0]) for r in rows if r[1] == f and r[2] and r[0] != "baseline"
                  and r[-1] > 1.0]
        notes.append(f"{f:g}x: FECN/BECN above the baseline at "
                     + (", ".join(f"{n} slow ({s})" for n, s in better) if better else "none")
                     + (" (paper: only at 2x with few slow receivers)" if f == 2.0 else ""))
    table = Table(f"portals_fecn: {len(rows)} settings", list(GROUP_COLUMNS) + ["vs_baseline"],
                  rows, notes)
    if out_dir is not None:
        fig, axes = figure(max(len(factors), 1), width=3.6, height=3.4)
        for ax, f in zip(axes[0], factors):
            for name in FECN_SETTINGS:
                pts = _curves(gs, name, f)
                ax.errorbar([n for n, _g in pts], [g.mean for _n, g in pts],
                            yerr=[0 if math.isnan(g.se) else 2 * g.se for _n, g in pts],
                            marker="o", capsize=3, label=name)
            ax.set_title(f"{f:g}x slower", fontsize=9)
            ax.set_xlabel("slow receivers")
            ax.set_ylim(0, 1)
        axes[0][0].set_ylabel("normalized throughput")
        axes[0][0].legend(fontsize=8)
        write_outputs(table, fig, out_dir, "portals_fecn")
    return table


# ---- Figure 5 ---------------------------------------------------------------------------------
FECN_ONLY = FECN_SETTINGS[1:]


def _best(here: dict, names) -> tuple[str | None, Group | None]:
    return max(((s, g) for s, g in here.items() if s in names), key=lambda sg: sg[1].mean,
               default=(None, None))


def _ratio(g: Group, best: Group | None) -> float:
    return g.mean / best.mean if best is not None else math.nan


def _gain(g: Group, best: Group | None) -> str:
    return f"{_ratio(g, best):.2f}x" if best is not None else "n/a"


@target("portals_rdrp", "Schneider et al., Figure 5: RDRP's normalized throughput against its "
        "outstanding transfers c at 1 % slow receivers (2x, 4x, 8x), and its gain over the best "
        "FECN/BECN setting and over the best of no control and FECN/BECN",
        needs=PairwisePoints(("rdrp",)), sweep=True)
def portals_rdrp(ds, out_dir=None) -> Table:
    """Two gains per setting: over the best FECN/BECN set alone (the paper's comparison: "the
    best possible configuration using FECN/BECN and a single big transfer") and over the best
    of that and no congestion control, which is what a user would otherwise run."""
    gs = {k: g for k, g in groups(ds).items() if k[2] > 0}
    factors = sorted({f for _s, f, _n in gs})
    rows, notes, curves = [], [], {}
    for f in factors:
        here = {s: g for (s, ff, _n), g in gs.items() if ff == f}
        fecn_name, fecn = _best(here, FECN_ONLY)
        both_name, both = _best(here, FECN_SETTINGS)
        rdrp = sorted((g.cfg.protocol.outstanding, g) for s, g in here.items()
                      if s.startswith("rdrp"))
        curves[f] = (rdrp, fecn_name, fecn)
        for s, g in sorted(here.items(), key=lambda sg: (not sg[0].startswith("rdrp"),
                                                         sg[1].cfg.protocol.outstanding)):
            c = g.cfg.protocol.outstanding if s.startswith("rdrp") else ""
            row = _row((s, f, g.cfg.slow_node_count), g)
            rows.append(row[:1] + [c] + row[1:] + [_ratio(g, fecn), _ratio(g, both)])
        if rdrp and both is not None:
            c_best, g_best = max(rdrp, key=lambda cg: cg[1].mean)
            at30 = dict(rdrp).get(PAPER_BEST_C)
            ref = f"{fecn_name} {fecn.mean:.3f}" if fecn is not None else "none in the sweep"
            notes.append(
                f"{f:g}x: best c {c_best} ({g_best.mean:.3f}; paper {PAPER_BEST_C}); over the "
                f"best FECN/BECN setting ({ref}): {_gain(g_best, fecn)} at the best c"
                + (f", {_gain(at30, fecn)} at c={PAPER_BEST_C}" if at30 else "")
                + f" (paper {PAPER_RDRP_GAIN.get(f, math.nan):g}x); over the best of no control "
                f"and FECN/BECN ({both_name} {both.mean:.3f}): {_gain(g_best, both)}"
                + (f", {_gain(at30, both)} at c={PAPER_BEST_C}" if at30 else ""))
    cols = (["setting", "outstanding"] + GROUP_COLUMNS[1:]
            + ["gain_over_best_fecn", "gain_over_best_of_both"])
    table = Table(f"portals_rdrp: {len(rows)} settings", cols, rows, notes)
    if out_dir is not None:
        fig, axes = figure(1, width=5.5, height=4.0)
        ax = axes[0][0]
        for f in factors:
            rdrp, best_name, best = curves[f]
            line = ax.plot([c for c, _g in rdrp], [g.mean for _c, g in rdrp], marker="o",
                           label=f"RDRP, {f:g}x slower")[0]
            if best is not None:   # the paper's reference: the best FECN/BECN set
                ax.axhline(best.mean, color=line.get_color(), ls=":",
                           label=f"best FECN/BECN ({best_name}), {f:g}x")
        ax.axvline(PAPER_BEST_C, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        _axes(ax, "outstanding transfers c (16-flit gets)", "Figure 5: 1 % slow receivers", 7)
        write_outputs(table, fig, out_dir, "portals_rdrp")
    return table
