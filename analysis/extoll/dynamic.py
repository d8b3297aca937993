"""EXTOLL targets of the dynamic protocol: `extoll_patterns` (the journal's Figures 10 and 15),
`extoll_conference_patterns` (the conference version's concurrent groups; one sweep with
extoll_patterns), `extoll_limic` (Figure 18) and `extoll_credit_evolution` (Figure 19).
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from ...config import RunConfig
from ...protocols.extoll import dynamic as ed
from ...protocols.extoll import static as es
from ...protocols.catalogue import CREDIT_PROTOCOLS
from .common import (Points, below_reference, case_labels, completed, configs,
                            delayed_pct, figure, overheads, require, slots_per_process,
                            write_outputs)
from ..registry import Table, target

PATTERN_COLUMNS = ["pattern", "protocol", "slots_per_process", "overhead_pct", "delayed_pct",
                   "reference_us", "replicates", "overhead_se_pct",
                   "eq4_slots"]
SE_COL = PATTERN_COLUMNS.index("overhead_se_pct")
DEL_COL = PATTERN_COLUMNS.index("delayed_pct")
EQ4_COL = PATTERN_COLUMNS.index("eq4_slots")
LIMIC_COLUMNS = ["group_size", "same_node_pct", "protocol", "slots_per_process", "overhead_pct"]
EVOLUTION_COLUMNS = ["view", "alltoall", "phase", "phase_ranks", "group", "min_credits",
                     "median_credits", "max_credits"]
FIVE_PCT = 5.0


def slots_for(rows: list[list], limit: float, key, slots_col: int, over_col: int) -> dict:
    """Per key: the smallest buffer from which the overhead stays <= limit (None: never)."""
    curves = defaultdict(list)
    for r in rows:
        curves[key(r)].append((r[slots_col], r[over_col]))
    out = {}
    for k, pts in curves.items():
        pts.sort()
        need = None
        for s, o in reversed(pts):
            if o > limit:
                break
            need = s
        out[k] = need
    return out


def active_senders(cfg: RunConfig) -> int:
    """The most senders one receiver of the config's alltoall pattern gets VELO data packets
    from (protocols/extoll_dynamic.alltoall_active_senders)."""
    w = cfg.workload
    return ed.alltoall_active_senders(w.groups, w.group_size or w.ranks // w.groups,
                                      cfg.mpi.ranks_per_node, cfg.mpi.limic)


def eq4_slots(cfg: RunConfig) -> float:
    """Slots per process below which some sender of the pattern cannot hold a whole message in
    the steady flow (Eq. 4 on its credit quota): static, the same for every pattern (Table 2
    exact); dynamic, with the data region shared among the active senders only
    (protocols/extoll/dynamic.py). NaN for what it does not cover: rendezvous messages, no
    VELO sender."""
    p, w = cfg.protocol, cfg.workload
    if w.kind != "alltoall" or w.message_bytes > cfg.mpi.eager_threshold:
        return float("nan")
    k = cfg.mpi.packets(w.message_bytes)
    if p.name == "static":
        return es.stabilizing_slots(p.credit_slots, k, exact=True)
    active = active_senders(cfg)
    return ed.stabilizing_slots(cfg.n_ranks, active, p.credit_slots, k) if active else float("nan")


def gap(rows: list[list], pattern: str) -> str:
    """Dynamic minus static overhead at the buffer sizes both ran (Figure 15's 1x1024: the
    dynamic protocol close to the static one when every sender is active), as a range."""
    over = {(r[1], r[2]): r[3] for r in rows if r[0] == pattern}
    d = [over[("dynamic", s)] - over[("static", s)] for p, s in over
         if p == "dynamic" and ("static", s) in over]
    if not d:
        return "dynamic - static: no common buffer size"
    return f"dynamic - static {min(d):+.1f} to {max(d):+.1f} points"


def concurrent(cfg: RunConfig) -> bool:
    """Several alltoall groups at once (the conference paper's 2x512, 4x256, 8x128), not the
    journal's one group with the other ranks waiting in a barrier (Figures 10 and 15)."""
    return cfg.workload.groups > 1


@target("extoll_patterns", "EXTOLL Figures 10 and 15: static vs dynamic overhead for all "
        "1024 ranks in an alltoall, or 512/256/128 while the others wait in a barrier, vs "
        "slots per process", sweep=True, needs=Points(CREDIT_PROTOCOLS, ("alltoall",)))
def extoll_patterns(ds, out_dir=None) -> Table:
    return _patterns(ds, out_dir, "extoll_patterns", lambda c: not concurrent(c),
                     "a point of one alltoall group (1x1024, or a group + barrier)")


@target("extoll_conference_patterns", "EXTOLL conference paper: static vs dynamic overhead "
        "for concurrent alltoall groups (2x512, 4x256, 8x128) vs slots per process",
        sweep="extoll_patterns", needs=Points(CREDIT_PROTOCOLS, ("alltoall",)))
def extoll_conference_patterns(ds, out_dir=None) -> Table:
    return _patterns(ds, out_dir, "extoll_conference_patterns", concurrent,
                     "a point of concurrent alltoall groups (workload.groups > 1)")


def _patterns(ds, out_dir, name: str, keep, what: str) -> Table:
    """The patterns table of the points `keep` accepts (the two targets share one sweep)."""
    ds = completed(ds)
    labels = case_labels(ds)
    rows = sorted(([labels[p.index], p.cfg.protocol.name, slots_per_process(p.cfg),
                    p.overhead_pct, p.mean(lambda i: delayed_pct(ds, i)), p.ref_us, p.reps,
                    p.overhead_se_pct,
                    eq4_slots(p.cfg)]
                   for p in overheads(ds) if keep(p.cfg)),
                  key=lambda r: (labels.index(r[0]), r[1], r[2]))
    require(ds, bool(rows), name, what)
    need = slots_for(rows, FIVE_PCT, lambda r: (r[0], r[1]), 2, 3)
    calm = slots_for(rows, FIVE_PCT, lambda r: (r[0], r[1]), 2, DEL_COL)

    def reach(pattern, proto, table):
        n = table.get((pattern, proto))
        sizes = [r[2] for r in rows if r[0] == pattern and r[1] == proto]
        return str(n) if n is not None else f"not by {max(sizes)}" if sizes else "no runs"

    notes = []
    for pattern in dict.fromkeys(r[0] for r in rows):
        st, dy = need.get((pattern, "static")), need.get((pattern, "dynamic"))
        ratio = f", ratio {st / dy:.2f}" if st and dy else ""
        se = [r[SE_COL] for r in rows if r[0] == pattern and not math.isnan(r[SE_COL])]
        spread = (f"; standard errors {min(se):.1f} to {max(se):.1f} %" if se else
                  "; one run per point: no standard error")
        bound = {r[1]: r[EQ4_COL] for r in rows if r[0] == pattern}
        eq4 = ", ".join(f"{k} {v:g}" for k, v in sorted(bound.items(), reverse=True)
                        if not math.isnan(v))
        notes.append(f"{pattern}: overhead <= {FIVE_PCT:g} % from {reach(pattern, 'static', need)} "
                     f"slots per process (static), {reach(pattern, 'dynamic', need)} (dynamic)"
                     f"{ratio}{spread}; delayed sends <= {FIVE_PCT:g} % (timed part) from "
                     f"{reach(pattern, 'static', calm)} (static), "
                     f"{reach(pattern, 'dynamic', calm)} (dynamic)"
                     + (f"; Eq. 4 bound: {eq4}" if eq4 else "")
                     + f"; {gap(rows, pattern)}"
                     + ("; " + below_reference([(f"{r[1]} {r[2]:g}", r[3], r[SE_COL], r[6])
                                                for r in rows if r[0] == pattern]) if se else ""))
    notes.append("delayed_pct: sends that waited for credits, % of the messages, in the timed "
                 "part (warm-ups excluded); overhead_se_pct: standard error of overhead_pct from the replicates' spread "
                 "(NaN: one run per point); eq4_slots: below it some sender of the pattern "
                 "cannot hold a whole message in the steady flow (Eq. 4 on its quota; dynamic: "
                 "the data region shared among the active senders once the idle ones are down "
                 "to their static slots, protocols/extoll/dynamic.py); a necessary condition "
                 "for no delayed sends, not a sufficient one")
    table = Table(f"{name}: {len(rows)} points", PATTERN_COLUMNS, rows, notes)
    if out_dir is not None:
        pats = list(dict.fromkeys(r[0] for r in rows))
        fig = _curves(rows, 0, pats, lambda g: g, se_col=SE_COL, bound_col=EQ4_COL)
        write_outputs(table, fig, out_dir, name)
    return table


def _curves(rows, group_col: int, groups: list, title, slots_col=2, over_col=3, proto_col=1,
            se_col=None, bound_col=None):
    """One panel per group: overhead vs slots per process, static and dynamic; with se_col,
    error bars of one standard error where the replicates give one; with bound_col, a dotted
    vertical line at each protocol's bound, in its colour."""
    ncols = min(len(groups), 4)
    fig, axes = figure(ncols, -(-len(groups) // ncols), width=4.0, height=3.2)
    flat = [ax for row in axes for ax in row]
    for ax, g in zip(flat, groups):
        for proto, style in (("static", "o-"), ("dynamic", "s-")):
            pts = sorted((r[slots_col], r[over_col],
                          float("nan") if se_col is None else r[se_col])
                         for r in rows if r[group_col] == g and r[proto_col] == proto)
            x, y, se = ([p[i] for p in pts] for i in range(3))
            line = ax.errorbar(x, y, yerr=None if all(math.isnan(e) for e in se) else se,
                               fmt=style, label=proto, markersize=3, capsize=2)
            bounds = {r[bound_col] for r in rows if bound_col is not None and
                      r[group_col] == g and r[proto_col] == proto and not math.isnan(r[bound_col])}
            for b in bounds:
                ax.axvline(b, color=line[0].get_color(), linestyle=":", linewidth=0.8)
        ax.axhline(FIVE_PCT, color="gray", linewidth=0.6)
        ax.set_title(title(g))
        ax.set_xlabel("slots per process")
        ax.set_ylabel("overhead (%)")
    for ax in flat[len(groups):]:
        ax.set_visible(False)
    flat[0].legend(fontsize=7)
    return fig


@target("extoll_limic", "EXTOLL Figure 18: alltoall among 32-256 of the ranks (50-6.25 % of "
        "the destinations through LiMIC), static vs dynamic overhead", sweep=True,
        needs=Points(CREDIT_PROTOCOLS, ("alltoall",)))
def extoll_limic(ds, out_dir=None) -> Table:
    ds = completed(ds)
    rows = []
    for p in overheads(ds):
        g = p.cfg.workload.group_size or p.cfg.workload.ranks
        rows.append([g, 100.0 * p.cfg.mpi.ranks_per_node / g, p.cfg.protocol.name,
                     slots_per_process(p.cfg), p.overhead_pct])
    rows.sort(key=lambda r: (r[0], r[2], r[3]))
    need = slots_for(rows, FIVE_PCT, lambda r: (r[0], r[2]), 3, 4)
    notes = [f"group of {g} ({100 * 16 / g:g} % same node): overhead <= {FIVE_PCT:g} % from "
             f"{need.get((g, 'static'))} slots (static), {need.get((g, 'dynamic'))} (dynamic)"
             for g in dict.fromkeys(r[0] for r in rows)]
    table = Table(f"extoll_limic: {len(rows)} points", LIMIC_COLUMNS, rows, notes)
    if out_dir is not None:
        groups = list(dict.fromkeys(r[0] for r in rows))
        same = {r[0]: r[1] for r in rows}
        fig = _curves(rows, 0, groups, lambda g: f"{g} ranks ({same[g]:g} % LiMIC)",
                      slots_col=3, over_col=4, proto_col=2)
        write_outputs(table, fig, out_dir, "extoll_limic")
    return table


def evolution_groups(n: int) -> list[tuple[str, int, int]]:
    """Rank 0's peers in the paper's groups (0-255], [256-511], [512-1023], scaled to n."""
    q, h = n // 4, n // 2
    return [(f"(0-{q - 1}]", 1, q), (f"[{q}-{h - 1}]", q, h), (f"[{h}-{n - 1}]", h, n)]


# The two directions of Figure 19. "out" is the paper's: the credits rank 0 owns towards each
# group. A receiver moves credits only at its own monitoring points (Eq. 6), so "in", the
# credits each group owns towards rank 0, is where rank 0's steals from idle senders show.
EVOLUTION_VIEWS = (("out", "credit_snapshot", "credits rank 0 owns towards the group"),
                   ("in", "credit_snapshot_in", "credits the group owns towards rank 0"))


@target("extoll_credit_evolution", "EXTOLL Figure 19: credits rank 0 owns towards three groups "
        "of ranks (and they towards it) before every alltoall of the multi-phase application "
        "(dynamic)", sweep=True,
        needs=Points(CREDIT_PROTOCOLS, ("multiphase",), reference=False))
def extoll_credit_evolution(ds, out_dir=None) -> Table:
    ds = completed(ds)
    require(ds, ds.sizes.get("point", 0) > 0 and ds.sizes.get("snapshot", 0) > 0,
            "extoll_credit_evolution", "a completed multi-phase point with credit snapshots")
    cfg = configs(ds)[0]
    n, it = cfg.n_ranks, cfg.workload.iterations
    phases = cfg.workload.phase_ranks
    rows = []
    for view, var, _ in EVOLUTION_VIEWS:
        snap = ds[var].values[0]                          # [snapshot, peer]
        for k in range(min(snap.shape[0], len(phases) * it)):
            phase = k // it
            for name, lo, hi in evolution_groups(n):
                v = snap[k, lo:hi]
                rows.append([view, k, phase, phases[phase], name, int(v.min()),
                             float(np.median(v)), int(v.max())])
    notes = [f"{cfg.protocol.name} protocol, {cfg.protocol.mailbox_slots // n} slots per "
             f"process, {cfg.protocol.credit_slots} credit slots (static slots), {it} alltoalls "
             "per phase (the paper: 100)"]
    for view, _, label in EVOLUTION_VIEWS:
        for phase, size in enumerate(phases):
            last = [r for r in rows
                    if r[0] == view and r[2] == phase and r[1] == (phase + 1) * it - 1]
            notes.append(f"{view} ({label}), phase {phase} (ranks 0-{size - 1}): median before "
                         "its last alltoall " + ", ".join(f"{r[4]} {r[6]:g}" for r in last))
    table = Table(f"extoll_credit_evolution: {len(rows) // 6} snapshots of rank 0, both views",
                  EVOLUTION_COLUMNS, rows, notes)
    if out_dir is not None:
        fig, axes = figure(nrows=2, width=9.0, height=3.8)
        for (view, _, label), (ax,) in zip(EVOLUTION_VIEWS, axes):
            for name, _lo, _hi in evolution_groups(n):
                pts = [r for r in rows if r[0] == view and r[4] == name]
                x = np.array([r[1] for r in pts])
                med = np.array([r[6] for r in pts])
                ax.errorbar(x, med, yerr=[med - [r[5] for r in pts], [r[7] for r in pts] - med],
                            fmt="o-", markersize=3, capsize=2, label=f"ranks {name}")
            for phase in range(1, len(phases)):
                ax.axvline(phase * it - 0.5, color="gray", linewidth=0.6)
            ax.set_xlabel("alltoall")
            ax.set_ylabel("credits")
            ax.set_title(f"{label} (median, min-max)")
            ax.legend(fontsize=8)
        write_outputs(table, fig, out_dir, "extoll_credit_evolution")
    return table
