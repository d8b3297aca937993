"""Liu and Panda's schemes beside EXTOLL's credits on the same workloads and network (to
compare buffer memory per process at equal overhead): target ``ib_families``.

The sweep (``sweeps/infiniband/families.yaml``) runs NAS skeletons and an alltoall on the IB
testbed's network under both families, each on its own MPI layer: the IB schemes with 2 KB
pre-posted buffers per connection and the testbed's host costs, EXTOLL's protocols with a mailbox of
64-byte VELO slots and the EXTOLL fit's host costs (a flow_control axis zipping the protocol, its
buffers, the packet size, the rendezvous and the host). Each family's overhead is against its own
reference: ib_hardware with 100 buffers (none are dropped), EXTOLL's `none` (a mailbox that never
fills). Buffer memory per process: IB, the buffers a rank has posted at the end over its n - 1
connections (output ib_posted) x 2 KB; EXTOLL, its mailbox slots x 64 bytes."""
from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from ..extoll.common import completed, completed_configs, configs, figure, write_outputs
from .nas import span_us
from ..registry import Needs, Table, target
from ..stats import se_of_mean

IB = ("ib_hardware", "ib_static", "ib_dynamic")
SLOT_BYTES = 64         # a VELO mailbox slot (EXTOLL section 3)


def _family(c) -> str:
    return "IB" if c.protocol.name in IB else "EXTOLL"


def _is_reference(c) -> bool:
    return c.protocol.name == "none" or (c.protocol.name == "ib_hardware"
                                         and c.protocol.prepost >= 100)


def _workload(c) -> str:
    w = c.workload
    if w.kind == "nas":
        return f"NAS {w.nas}"
    name = f"IMB {w.benchmark}" if w.kind == "imb" else w.kind
    return f"{name} {w.ranks} x {w.message_bytes} B"


def _setting(c) -> str:
    p = c.protocol
    if p.name in IB:
        return f"{p.name} {p.prepost}/connection"
    if p.name == "none":
        return "none"
    return f"{p.name} {p.mailbox_slots // c.n_ranks} slots/process"


def _buffer_kib(ds, i: int, c) -> float:
    n = c.n_ranks
    if c.protocol.name in IB:
        return float(ds["ib_posted"].values[i, :n].mean()) * c.mpi.velo_payload / 1024
    if c.protocol.name == "none":
        return float("nan")
    return c.protocol.mailbox_slots * SLOT_BYTES / 1024


@dataclasses.dataclass(frozen=True)
class FamilyReferences(Needs):
    """Completed reference points of both families: EXTOLL's none and ib_hardware with 100
    buffers or more."""

    @property
    def what(self) -> str:
        return "completed reference points of both families (none, ib_hardware with >= 100 " \
               "buffers: the ib_families sweep)"

    def missing(self, ds) -> str | None:
        cfgs = completed_configs(ds)
        have = {_family(c) for c in cfgs if _is_reference(c)}
        lack = [f for f in ("EXTOLL", "IB") if f not in have]
        return f"no completed reference point of {' or '.join(lack)}" if lack else None


@target("ib_families", "Liu and Panda's IB schemes beside EXTOLL's credits: buffer memory per "
        "process and overhead against each family's reference, NAS skeletons and an alltoall on "
        "the IB testbed's network", needs=FamilyReferences(), sweep=True)
def ib_families(ds, out_dir=None) -> Table:
    ds = completed(ds)
    runs: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    meta = {}
    for i, c in enumerate(configs(ds)):
        key = (_workload(c), _family(c), _setting(c))
        runs[key].append((span_us(ds, i), _buffer_kib(ds, i, c)))
        meta[key] = c
    refs = {(w, f): float(np.mean([t for t, _ in v])) for (w, f, s), v in runs.items()
            if _is_reference(meta[(w, f, s)])}
    rows = []
    for (w, f, s), v in runs.items():
        t = np.array([x for x, _ in v])
        ref = refs.get((w, f), float("nan"))
        se = se_of_mean(t) / ref * 100
        rows.append([w, f, s, len(t), float(np.mean([b for _, b in v])), float(t.mean()),
                     100 * (float(t.mean()) / ref - 1), se])
    notes = []
    for w in dict.fromkeys(r[0] for r in rows):
        best = {}
        for r in rows:          # per family: the least memory within 2 % of its reference
            if r[0] == w and not np.isnan(r[4]) and r[6] < 2:
                if r[1] not in best or r[4] < best[r[1]][4]:
                    best[r[1]] = r
        notes.append(f"{w}: the least buffer memory within 2 % of its family's reference: "
                     + ("; ".join(f"{f} {r[2]} ({r[4]:.1f} KiB per process, {r[6]:+.1f} %)"
                                  for f, r in sorted(best.items())) or "none"))
    table = Table(f"ib_families: {len(rows)} rows",
                  ["workload", "family", "setting", "replicates", "buffer_kib_per_process",
                   "time_us", "overhead_pct", "overhead_se_pct"], rows, notes)
    if out_dir is not None:
        fig, axes = figure(1, width=6.0, height=4.2)
        ax = axes[0][0]
        for (w, f), marker in zip(sorted({(r[0], r[1]) for r in rows}), "osD^v<>p*h"):
            pts = [(r[4], r[6]) for r in rows if (r[0], r[1]) == (w, f) and not np.isnan(r[4])]
            if pts:
                ax.plot(*zip(*sorted(pts)), marker=marker, linestyle="none", label=f"{w}, {f}")
        ax.set_xscale("log")
        ax.set_xlabel("buffer memory per process (KiB)")
        ax.set_ylabel("overhead vs the family's reference (%)")
        ax.set_title("IB pre-posted buffers vs EXTOLL mailbox credits", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
        write_outputs(table, fig, out_dir, "ib_families")
    return table
