"""Target `extoll_buffer_bounds`: the receive buffer each protocol needs by Eq. 4, for machine
sizes and patterns the testbed never had (closed forms, no simulation, no store).

For n processes, 16 per node with LiMIC, 2 credit slots and 2 KB messages (the paper's
settings), and k concurrent alltoall groups of n/k consecutive ranks (the Spanish version's
1x1024 ... 8x128, scaled), each row gives:
- the bound in slots per process below which some sender cannot hold a whole message in the
  steady flow (static: Table 2's Eq. 4, the same in every pattern; dynamic: the data region
  shared among a receiver's active senders, protocols/extoll/dynamic.py);
- the memory per receiver at that bound: Eq. 8 with these slots in place of 64 and 16.

The bound is necessary, not sufficient: at 1024 ranks the delayed sends stop at the first
measured size above it (8/16/32/64 slots per process), and one slot above it in a probe of
4x256 (docs/reproduction/extoll_conference.md). The dynamic protocol only gets there after
adaptation: a sender starts with its static slots (section 6.3).
"""
from __future__ import annotations

from typing import Any

from ...protocols.extoll import dynamic as ed
from ...protocols.extoll import static as es
from .common import write_outputs
from ..registry import NO_STORE, Table, target

PROCESSES = (256, 1024, 4096, 16384, 65536, 262144)    # Table 3's machine sizes
GROUPS = (1, 2, 4, 8, 16)
RANKS_PER_NODE = 16
CREDIT_SLOTS = 2
COLUMNS = ["processes", "groups", "group_size", "active_senders", "static_slots",
           "dynamic_slots", "static_mb", "dynamic_mb", "memory_ratio"]


def bound_rows(processes=PROCESSES, groups=GROUPS, ranks_per_node: int = RANKS_PER_NODE,
               credit_slots: int = CREDIT_SLOTS,
               packets_per_message: int = es.PACKETS_PER_2KB_MESSAGE) -> list[list[Any]]:
    """One row per (processes, groups) whose groups hold whole nodes and more than one."""
    static = es.stabilizing_slots(credit_slots, packets_per_message, exact=True)
    rows = []
    for n in processes:
        for k in groups:
            g = n // k
            if n % k or g % ranks_per_node or g <= ranks_per_node:
                continue
            active = ed.alltoall_active_senders(k, g, ranks_per_node)
            dyn = ed.stabilizing_slots(n, active, credit_slots, packets_per_message)
            s_mb, d_mb = es.static_memory_mb(n, static), es.dynamic_memory_mb(n, dyn)
            rows.append([n, k, g, active, static, dyn, s_mb, d_mb, s_mb / d_mb])
    return rows


@target("extoll_buffer_bounds", "EXTOLL beyond the testbed: receive buffer (slots per process) "
        "and memory per receiver (MB) each protocol needs by Eq. 4, for 256 to 256K processes "
        "in 1 to 16 concurrent alltoall groups (no store needed)", needs=NO_STORE)
def extoll_buffer_bounds(ds=None, out_dir=None) -> Table:
    rows = bound_rows()
    notes = [
        f"{RANKS_PER_NODE} ranks per node (same-node peers use LiMIC, no credits), "
        f"{CREDIT_SLOTS} credit slots, {es.PACKETS_PER_2KB_MESSAGE}-packet (2 KB) messages; "
        "groups: k concurrent alltoalls of n/k consecutive ranks",
        "static_slots: Eq. 4 exact + credit slots (Table 2), every pattern; dynamic_slots: "
        "the smallest buffer whose data region, less the idle senders' static slots, gives "
        "every active sender Eq. 4's quota (protocols/extoll/dynamic.py)",
        "static_mb, dynamic_mb: Eq. 8 per receiver (MB = 2**20 bytes) with these slots; "
        "memory_ratio = static_mb / dynamic_mb",
        "a lower bound: below it some sender cannot hold a whole message in the steady flow; "
        "at or above it the stealing may still share unevenly, and the overhead depends on the "
        "network as well (docs/reproduction/extoll_conference.md)",
    ]
    table = Table(f"extoll_buffer_bounds: {len(rows)} machine sizes x patterns", list(COLUMNS),
                  rows, notes)
    if out_dir is not None:
        write_outputs(table, _figure(rows), out_dir, "extoll_buffer_bounds")
    return table



def _figure(rows):
    from .common import figure
    fig, axes = figure(2, width=4.6, height=3.4)
    left, right = axes[0]
    for n in sorted({r[0] for r in rows}):
        pts = [(r[1], r[5]) for r in rows if r[0] == n]
        left.plot(*zip(*pts), marker="o", markersize=3, label=f"dynamic, {n} processes")
    left.axhline(rows[0][4], color="gray", linestyle="--", label="static (every pattern)")
    left.set_xscale("log", base=2)
    left.set_xlabel("concurrent alltoall groups")
    left.set_ylabel("slots per process (Eq. 4 bound)")
    left.legend(fontsize=6)
    for k in sorted({r[1] for r in rows}):
        pts = [(r[0], r[7]) for r in rows if r[1] == k]
        right.plot(*zip(*pts), marker="o", markersize=3, label=f"dynamic, {k} group(s)")
    pts = sorted({(r[0], r[6]) for r in rows})
    right.plot(*zip(*pts), color="gray", linestyle="--", label="static")
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("processes")
    right.set_ylabel("memory per receiver (MB)")
    right.legend(fontsize=6)
    return fig
