"""Every flow-control family on the same machines: receive-buffer memory per process against
overhead, and the frontier of the two (target ``families_frontier``).

The sweep (``sweeps/families/frontier.yaml``) runs each family at a few buffer settings on two
machines, without and with slow receivers, beside references without flow control (protocol
none: a mailbox that never fills). A setting's overhead is the mean of its replicates' times
over the mean of its reference's, minus one; the reference runs the same machine, workload
and slow receivers on the family's MPI layer (reference_key: packet size, eager threshold,
ranks per node; LFC runs one rank per node, so on the mesh its 64 ranks have a reference of
their own), so that the overhead is the flow control's; reference_vs_extoll_pct gives that
layer against EXTOLL MPI's on the same machine and ranks.

Memory per process, each family counted the way its paper counts it:

- EXTOLL static and dynamic: the mailbox, slots x 64 bytes (a VELO slot, EXTOLL section 3);
- InfiniBand hardware / static / dynamic: the 2 KB buffers a rank has posted over its
  connections at the end of the run (output ib_posted: the dynamic scheme grows them);
- Portals 4's chunked rendezvous (Schneider et al., section 3.2): a bounce buffer for the first
  chunk and the c outstanding gets' chunks, (1 + c) x chunk bytes. The model does not bound
  how many first chunks wait unexpected (the overflow list's size): a lower bound;
- LFC (Bhoedjang et al., section 3.1): the NI's receive buffers, credits per sender x (nodes - 1)
  x the packet, over the ranks on the NI (one).

The frontier, per machine, workload and slow-receiver setting: each family's least memory
whose mean overhead is under 3 % and under 10 % (min_for_3pct, min_for_10pct), and its
Pareto settings (no other setting of the family has at most its memory and its overhead, one
of them smaller).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from ..config import HostConfig, MpiConfig, ProtocolConfig
from .extoll.common import (completed, completed_configs, configs, figure, ratio_se_pct,
                            write_outputs)
from .infiniband.nas import span_us
from .registry import Needs, Table, target

IB = ("ib_hardware", "ib_static", "ib_dynamic")
SLOT_BYTES = 64                   # a VELO mailbox slot (EXTOLL section 3)
LIMITS = (3.0, 10.0)              # overhead bounds of the frontier, %
FAMILIES = ("EXTOLL static", "EXTOLL dynamic", "IB hardware", "IB static", "IB dynamic",
            "Portals chunked", "LFC")
COLUMNS = ["machine", "workload", "slow", "family", "setting", "ranks", "replicates",
           "memory_kib", "overhead_pct", "overhead_se_pct", "reference_vs_extoll_pct", "pareto",
           "min_for_3pct", "min_for_10pct"]


def family(c) -> str | None:
    """The family of a point's configuration; None for the reference (no flow control)."""
    p = c.protocol.name
    if p == "none":
        return "Portals chunked" if c.mpi.rendezvous == "chunked" else None
    return {"static": "EXTOLL static", "dynamic": "EXTOLL dynamic", "ib_hardware": "IB hardware",
            "ib_static": "IB static", "ib_dynamic": "IB dynamic", "lfc": "LFC"}.get(p, p)


def machine(c) -> str:
    t = c.topology
    if t.kind == "dragonfly":
        return f"dragonfly {c.n_nodes}"
    return f"{t.kind} {'x'.join(map(str, t.dims))}"


def workload(c) -> str:
    w = c.workload
    if w.kind == "imb":
        name = f"IMB {w.benchmark}"
    elif w.kind == "nas":
        return f"NAS {w.nas}"
    else:
        name = {"mpi_pairwise": "pairwise"}.get(w.kind, w.kind)
    return f"{name} {w.message_bytes} B"


def slow(c) -> str:
    n = c.slow_node_count
    return f"{n} at {c.network.slow_factor:g}x" if n and c.network.slow_factor > 1 else "none"


def setting(c) -> str:
    p, m = c.protocol, c.mpi
    if family(c) is None:
        return f"no flow control, {m.rendezvous} rendezvous above {m.eager_threshold} B"
    if p.name in ("static", "dynamic"):
        return f"{p.mailbox_slots // c.n_ranks} slots/process"
    if p.name in IB:
        return f"{p.prepost}/connection"
    if p.name == "lfc":
        return f"{p.lfc_credits} credits/sender"
    return f"chunk {m.chunk_bytes} B, c={m.outstanding_gets}"


def memory_kib(ds, i: int, c) -> float:
    """Buffer memory per process of point i (module docstring), KiB."""
    p, m = c.protocol, c.mpi
    if p.name in ("static", "dynamic"):
        b = p.mailbox_slots * SLOT_BYTES
    elif p.name in IB:
        b = float(ds["ib_posted"].values[i, :c.n_ranks].mean()) * m.velo_payload
    elif p.name == "lfc":
        b = p.lfc_credits * (c.n_nodes - 1) * m.velo_payload / m.ranks_per_node
    else:
        b = (1 + m.outstanding_gets) * m.chunk_bytes
    return b / 1024


def reference_key(c) -> str:
    """The configuration of a point's reference: the same machine, workload, slow receivers and
    MPI layer (ranks per node, packet size, eager threshold), no flow control, the first seed.
    The chunked rendezvous's is EXTOLL MPI's: its 2 KB messages eager into a mailbox that never
    fills, what a Portals MPI without the protocol would do with them (section 3.2: messages
    below the threshold go in one put)."""
    mpi = c.mpi
    if mpi.rendezvous == "chunked":
        d = MpiConfig()
        mpi = dataclasses.replace(mpi, rendezvous="get", chunk_bytes=d.chunk_bytes,
                                  outstanding_gets=d.outstanding_gets,
                                  eager_threshold=d.eager_threshold)
    return dataclasses.replace(c, protocol=ProtocolConfig(), mpi=mpi, seed=0).to_json()


def machine_reference_key(c) -> str:
    """The machine's reference with EXTOLL MPI (64-byte slots, one GET) and the same ranks
    per node: what the family's own reference is compared with (its MPI layer's cost)."""
    mpi = MpiConfig(ranks_per_node=c.mpi.ranks_per_node, limic=True)
    return dataclasses.replace(c, protocol=ProtocolConfig(), mpi=mpi, host=HostConfig(),
                               seed=0).to_json()


def pareto(points: list[tuple[float, float]]) -> list[bool]:
    """Which (memory, overhead) points no other point dominates."""
    return [not any(m2 <= m and o2 <= o and (m2 < m or o2 < o) for m2, o2 in points)
            for m, o in points]


@dataclasses.dataclass(frozen=True)
class FamiliesAndReferences(Needs):
    """Completed points of at least one family with a completed reference."""

    @property
    def what(self) -> str:
        return "completed points of a flow-control family and of its reference (protocol " \
               "none, rendezvous get: the families_frontier sweep)"

    def missing(self, ds) -> str | None:
        cfgs = completed_configs(ds)
        refs = {reference_key(c) for c in cfgs if family(c) is None and c.protocol.name == "none"}
        if not refs:
            return "no completed reference point"
        if not any(family(c) in FAMILIES and reference_key(c) in refs for c in cfgs):
            return "no completed point of a family with its reference"
        return None


def rows_of(ds) -> list[list]:
    """One row per family setting (replicates merged) with its reference, frontier marked."""
    ds = completed(ds)
    runs: dict[tuple, list[float]] = defaultdict(list)
    mem: dict[tuple, list[float]] = defaultdict(list)
    refs: dict[str, list[float]] = defaultdict(list)
    meta, seen = {}, set()
    for i, c in enumerate(configs(ds)):
        text = c.to_json()
        if text in seen:        # one configuration is one measurement, however often listed
            continue
        seen.add(text)
        f, t = family(c), span_us(ds, i)
        if f is None:
            if c.protocol.name == "none":
                refs[reference_key(c)].append(t)
            continue
        key = (machine(c), workload(c), slow(c), f, setting(c), reference_key(c))
        runs[key].append(t)
        mem[key].append(memory_kib(ds, i, c))
        meta[key] = c
    rows = []
    for key, t in runs.items():
        ref = refs.get(key[5])
        if not ref:
            continue
        over = 100 * (float(np.mean(t)) / float(np.mean(ref)) - 1)
        base = refs.get(machine_reference_key(meta[key]))
        layer = 100 * (float(np.mean(ref)) / float(np.mean(base)) - 1) if base else float("nan")
        rows.append([*key[:5], meta[key].n_ranks, len(t), float(np.mean(mem[key])), over,
                     ratio_se_pct(t, ref), layer, False, False, False])
    order = {f: k for k, f in enumerate(FAMILIES)}
    rows.sort(key=lambda r: (r[0], r[1], r[2], order.get(r[3], 99), r[7]))
    cells = defaultdict(list)
    for r in rows:
        cells[tuple(r[:4])].append(r)
    for group in cells.values():
        for r, front in zip(group, pareto([(r[7], r[8]) for r in group])):
            r[11] = front
        for col, limit in zip((12, 13), LIMITS):
            ok = [r for r in group if r[8] < limit]
            if ok:
                min(ok, key=lambda r: r[7])[col] = True
    return rows


def missing_notes(ds) -> list[str]:
    """The settings with points not completed (a failed point, e.g. a deadlock the sweep's
    error log describes, or one not run yet): left out of the table, said here."""
    if "completed" not in ds.variables:
        return []
    done = ds["completed"].values
    if done.all():
        return []
    every = configs(ds)
    cells = defaultdict(int)
    for i in np.flatnonzero(~done):
        c = every[int(i)]
        cells[(machine(c), workload(c), slow(c), family(c) or "reference", setting(c))] += 1
    return [f"not completed, left out: {', '.join(k)} ({n} point(s): failed, the sweep's error "
            "log says why, or not run yet)" for k, n in cells.items()]


def frontier_notes(rows: list[list]) -> list[str]:
    """Per machine, workload and slow receivers: the family that needs the least memory for an
    overhead under 3 %, and the families that reach it at none of their settings."""
    notes = []
    cells = defaultdict(list)
    for r in rows:
        cells[(r[0], r[1], r[2])].append(r)
    for (m, w, s), group in cells.items():
        best = [r for r in group if r[12]]
        fams = dict.fromkeys(r[3] for r in group)
        never = [f for f in fams if not any(r[3] == f and r[12] for r in group)]
        text = (f"{min(best, key=lambda r: r[7])[3]} at {min(r[7] for r in best):.3g} KiB"
                if best else "no family")
        notes.append(f"{m}, {w}, slow {s}: least memory for < 3 %: {text}"
                     + (f"; never under 3 %: {', '.join(never)}" if never else ""))
    return notes


@target("families_frontier", "every flow-control family on the same two machines (the EXTOLL "
        "mesh, a Dragonfly): buffer memory per process against overhead, without and with slow "
        "receivers, the least memory for 3 % and 10 % and the Pareto settings",
        needs=FamiliesAndReferences(), sweep=True)
def families_frontier(ds, out_dir=None) -> Table:
    rows = rows_of(ds)
    table = Table(f"families_frontier: {len(rows)} settings", COLUMNS, rows,
                  frontier_notes(rows) + missing_notes(ds))
    if out_dir is not None:
        machines = list(dict.fromkeys(r[0] for r in rows))
        write_outputs(table, plot(rows, machines), out_dir, "families_frontier")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        for m in machines:
            fig = plot(rows, [m])
            FigureCanvasAgg(fig)
            fig.savefig(f"{out_dir}/families_frontier_{m.split()[0]}.png", dpi=110)
    return table


MARKERS = dict(zip(FAMILIES, "osD^v<p"))


def plot(rows: list[list], machines: list[str]):
    """Per machine a row of panels, one per workload: every setting (open: with slow receivers)
    and each family's Pareto curve; the 3 % and 10 % bounds dashed."""
    works = {m: list(dict.fromkeys(r[1] for r in rows if r[0] == m)) for m in machines}
    ncols = max(len(w) for w in works.values())
    fig, axes = figure(ncols, len(machines), width=3.6, height=3.2)
    colors = {f: f"C{k}" for k, f in enumerate(FAMILIES)}
    for a, m in enumerate(machines):
        for b in range(ncols):
            ax = axes[a][b]
            if b >= len(works[m]):
                ax.set_visible(False)
                continue
            w = works[m][b]
            for (f, s), fill in ((fk, fill) for fk in sorted({(r[3], r[2]) for r in rows
                                                              if r[:2] == [m, w]})
                                 for fill in [fk[1] == "none"]):
                pts = sorted((r[7], r[8]) for r in rows if r[:4] == [m, w, s, f])
                front = sorted((r[7], r[8]) for r in rows if r[:4] == [m, w, s, f] and r[11])
                ax.plot(*zip(*pts), marker=MARKERS.get(f, "x"), linestyle="none",
                        color=colors.get(f), markerfacecolor=colors.get(f) if fill else "none",
                        label=f if fill else None)
                ax.plot(*zip(*front), color=colors.get(f), linestyle="-" if fill else ":",
                        linewidth=0.8)
            for limit in LIMITS:
                ax.axhline(limit, color="grey", linestyle="--", linewidth=0.6)
            ax.set_xscale("log")
            ax.set_yscale("symlog", linthresh=10)
            ax.set_title(f"{m}: {w}", fontsize=8)
            ax.set_xlabel("buffer memory per process (KiB)", fontsize=7)
            ax.set_ylabel("overhead vs no flow control (%)", fontsize=7)
            ax.tick_params(labelsize=6)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=5, title="filled: no slow receivers", title_fontsize=5)
    return fig
