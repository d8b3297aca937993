"""Where the simulator's time goes, by event kind: the alltoall-1024 run of bench_flow_control.py
(reference, static and dynamic flow control), with every event timed by the CPU's time-stamp
counter (Batch.run(profile=...): the same build, timing each event; the timer itself slows the
run, so compare rows, not wall times with bench_flow_control.py).

    python benchmarks/profile_events.py            # alltoall-1024, 64 slots per process
    python benchmarks/profile_events.py --quick    # alltoall-256
    python benchmarks/profile_events.py --slots 16

Per run and event kind: events, events per delivered packet, time-stamp cycles per event and
the share of the timed total. Then, per flow-control run, its extra cycles over the reference,
in % of the reference's total, split into two groups and three causes:
- network: router arbitration and link credits (EV_ARB, EV_CREDIT), NIC injection
  (EV_NIC_TX, EV_NIC_CREDIT) and ejection credits: code that never calls a flow-control hook;
- hosts and mailboxes: packets written into mailboxes (EV_NIC_RX, EV_NIC_DRAIN: the on_arrival
  hook) and the ranks' turns (retrieving: on_retrieved/on_control; writing: may_send/on_sent;
  idle polls; program steps);
- "packets": the reference's events per packet and cycles per event, times the packets the run
  has beyond the reference's (its control packets);
- "per packet": events per packet beyond the reference's, at the reference's cycles per event
  (stalled polls; more arbitrations per packet in a denser network);
- "dearer": events x (cycles per event - the reference's): the same kind of event costing more
  (the flow-control code, cache misses on its tables, more packets in flight).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from bench_flow_control import cases
from extoll_vec import dtypes as dt
from extoll_vec.engine import Batch
from extoll_vec.examples import get_example
from record import add_option, save

KINDS = {dt.EV_ARB: "arbitrate", dt.EV_CREDIT: "link credit", dt.EV_NIC_TX: "NIC inject",
         dt.EV_NIC_CREDIT: "NIC inj. credit", dt.EV_EJ_CREDIT: "eject credit",
         dt.EV_NIC_RX: "NIC receive", dt.EV_NIC_DRAIN: "NIC drain", dt.EV_SAMPLE: "sample end",
         dt.EV_HOST_DMA: "host DMA", dt.EV_NIC_POLL: "NIC poll", dt.EV_PROTO_TIMER: "protocol timer",
         dt.PROF_RANK_RETRIEVE: "rank: retrieve", dt.PROF_RANK_WRITE: "rank: write",
         dt.PROF_RANK_IDLE: "rank: idle", dt.PROF_RANK_OTHER: "rank: program"}
NETWORK = (dt.EV_ARB, dt.EV_CREDIT, dt.EV_NIC_TX, dt.EV_NIC_CREDIT, dt.EV_EJ_CREDIT)
HOSTS = tuple(k for k in KINDS if k not in NETWORK)


def profile(cfg) -> tuple[float, int, np.ndarray]:
    batch = Batch([cfg])
    prof = np.zeros((1, dt.N_PROF, 2), np.int64)
    t0 = time.perf_counter()
    batch.run(profile=prof)
    wall = time.perf_counter() - t0
    assert prof[0, :, 0].sum() == batch.S.events[0]
    return wall, int(batch.S.delivered[0]), prof[0].astype(float)


def _print_run(label: str, wall: float, pkts: int, p: np.ndarray) -> None:
    total = p[:, 1].sum()
    print(f"\n{label}: wall {wall:.1f} s, {p[:, 0].sum():,.0f} events, {pkts:,} packets, "
          f"{total / 1e9:.1f} G time-stamp cycles in events")
    print(f"  {'event':<16}{'events':>14}{'per packet':>12}{'cycles/event':>14}{'share':>8}")
    for k, name in KINDS.items():
        if p[k, 0]:
            print(f"  {name:<16}{p[k, 0]:>14,.0f}{p[k, 0] / pkts:>12.2f}"
                  f"{p[k, 1] / p[k, 0]:>14.1f}{100 * p[k, 1] / total:>7.1f}%")


def _split(p: np.ndarray, ref: np.ndarray, pkts: int, ref_pkts: int, kinds) -> tuple:
    """Extra cycles over the reference: (more packets, more events per packet, dearer events)."""
    more_pk = more_ev = dearer = 0.0
    for k in kinds:
        if ref[k, 0] == 0:
            continue
        c_ref = ref[k, 1] / ref[k, 0]
        scaled = ref[k, 0] * pkts / ref_pkts     # the reference's events at this packet count
        more_pk += (scaled - ref[k, 0]) * c_ref
        more_ev += (p[k, 0] - scaled) * c_ref
        dearer += p[k, 1] - p[k, 0] * c_ref
    return more_pk, more_ev, dearer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="alltoall-256 instead of alltoall-1024")
    ap.add_argument("--slots", type=int, nargs="+", default=[64],
                    help="mailbox slots per process of the flow-control runs")
    add_option(ap)
    args = ap.parse_args()
    Batch([get_example("tiny")]).run(profile=np.zeros((1, dt.N_PROF, 2), np.int64))
    runs = []
    for proto, slots, cfg in cases("alltoall-256" if args.quick else "alltoall-1024",
                                   args.slots):
        label = proto if slots == "-" else f"{proto} {slots}"
        wall, pkts, p = profile(cfg)
        _print_run(label, wall, pkts, p)
        runs.append((label, pkts, p))
    ref_label, ref_pkts, ref = runs[0]
    ref_total = ref[:, 1].sum()
    print(f"\nextra time-stamp cycles over the reference ({ref_label}), % of its total")
    print(f"  {'':<20}{'network':^27}{'hosts and mailboxes':^27}")
    print(f"  {'run':<12}{'total':>8}" + f"{'packets':>9}{'per pkt':>9}{'dearer':>9}" * 2)
    rows = []
    for label, pkts, p in runs[1:]:
        parts = (_split(p, ref, pkts, ref_pkts, NETWORK)
                 + _split(p, ref, pkts, ref_pkts, HOSTS))
        cells = "".join(f"{100 * x / ref_total:>+8.1f}%" for x in parts)
        print(f"  {label:<12}{100 * (p[:, 1].sum() / ref_total - 1):>+7.1f}%{cells}")
        rows.append([label, round(100 * (p[:, 1].sum() / ref_total - 1), 1)]
                    + [round(100 * x / ref_total, 1) for x in parts])
    for label, pkts, p in runs:
        rows.append([label + ": events/packet", round(p[:, 0].sum() / pkts, 2)]
                    + [""] * 6)
    save(args, "profile_events", ["run", "total +%", "network: packets", "per pkt", "dearer",
                                  "hosts: packets", "per pkt", "dearer"], rows)


if __name__ == "__main__":
    main()
