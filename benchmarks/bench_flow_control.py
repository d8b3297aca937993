"""Cost of the flow-control logic: wall time of the alltoall-1024 run under static and
dynamic credit-based flow control next to the reference run without flow control.

    python benchmarks/bench_flow_control.py            # alltoall-1024, 64 and 16 slots/process
    python benchmarks/bench_flow_control.py --quick    # alltoall-256 instead
    python benchmarks/bench_flow_control.py --slots 64 32 16 8
    python benchmarks/bench_flow_control.py --slots 64 --nic-fifo 100000   # a probe, see below
    python benchmarks/bench_flow_control.py --variant fifo16        # a model variant

One process, one batch member per run, kernels loaded before timing. Three figures per run:
- wall seconds against the reference run (the acceptance figure: at most +30 %);
- wall nanoseconds per delivered packet against the reference's: control packets count as
  packets, but stalls still add polling turns;
- wall nanoseconds per simulator event against the reference's: the cost of the flow-control
  code itself at equal simulated work. What the protocol makes the simulated machine do in
  addition (the dynamic protocol's start: every sender owns only its static slots and the
  receiver's FIFO of thresholds starts with ones (section 6.3), so each pair costs credit_slots
  + 1 credit packets before the first full threshold; stalls; control packets) shows as more
  events per packet: a different, longer simulated run, not slower code.
2 credit slots, piggybacking off, as in the paper's section 5.3 and 7 experiments. The machine
is shared: run it on an otherwise idle machine and compare rows of one invocation only.

`--nic-fifo N` runs every case with a NIC injection FIFO of N packets instead of the calibrated
16 (lab/scripts/reference_minimum.py's probe: with 100000 PIO writes block less often, and the reference
becomes the fastest run in simulated time, as the paper assumes). It shows how far the wall
time follows what the simulated network does rather than the flow-control code.
`--variant NAME` runs every case under a model variant of examples.MODEL_VARIANTS (its own
calibration, docs/calibration.md).
"""
from __future__ import annotations

import argparse
import time

from record import add_option, save

from extoll_vec.engine import Batch
from extoll_vec.errors import ConfigError
from extoll_vec.examples import get_example, variant_overrides
from extoll_vec.protocols.catalogue import CREDIT_PROTOCOLS


def run(cfg):
    batch = Batch([cfg])
    t0 = time.perf_counter()
    batch.run()
    wall = time.perf_counter() - t0
    res = batch.results()
    return wall, int(batch.S.delivered[0]), int(batch.S.events[0]), float(res["exec_time_us"][0])


def cases(name: str, slots_per_process, nic_fifo: int = 0, variant: str = "") -> list[tuple]:
    """(protocol, slots per process, config): the reference, then static and dynamic flow
    control (2 credit slots) at each mailbox size; under a model variant if one is named;
    nic_fifo > 0 replaces the NIC FIFO size."""
    base = get_example(name)
    if variant:
        base = base.replace(**variant_overrides(variant))
    if nic_fifo:
        base = base.replace(**{"network.nic_fifo_packets": nic_fifo})
    n = base.n_ranks
    rows = [("none", "-", base)]
    for slots in slots_per_process:
        for proto in CREDIT_PROTOCOLS:
            rows.append((proto, slots, base.replace(**{
                "protocol.name": proto, "protocol.credit_slots": 2,
                "protocol.mailbox_slots": slots * n})))
    return rows


def _vs(x, ref):
    return f"{100 * (x / ref - 1):>+8.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="alltoall-256 instead of alltoall-1024")
    ap.add_argument("--slots", type=int, nargs="+", default=[64, 16],
                    help="mailbox slots per process of the flow-control runs")
    ap.add_argument("--nic-fifo", type=int, default=0, metavar="N",
                    help="NIC injection FIFO of N packets in every run (default: the example's)")
    ap.add_argument("--variant", default="", metavar="NAME",
                    help="run every case under this model variant (examples.MODEL_VARIANTS)")
    add_option(ap)
    args = ap.parse_args()
    if args.variant:
        try:
            variant_overrides(args.variant)
        except ConfigError as exc:
            ap.error(str(exc))
    Batch([get_example("tiny")]).run()   # load or compile the kernels outside the timings
    name = "alltoall-256" if args.quick else "alltoall-1024"
    rows = cases(name, args.slots, args.nic_fifo, args.variant)
    print(f"{name}: {rows[0][2].n_ranks} ranks, 2 KB messages, 2 credit slots, NIC FIFO "
          f"{rows[0][2].network.nic_fifo_packets} packets, model "
          f"{args.variant or 'calibrated defaults'}", flush=True)
    print(f"{'protocol':<9}{'slots':>6}{'wall s':>9}{'vs ref':>9}{'ns/packet':>11}{'vs ref':>9}"
          f"{'ns/event':>10}{'vs ref':>9}{'packets':>13}{'events/pkt':>12}{'simulated us':>14}",
          flush=True)
    ref = None
    table = []
    for proto, slots, cfg in rows:
        wall, pkts, events, sim_us = run(cfg)
        per_pkt, per_ev = wall / pkts * 1e9, wall / events * 1e9
        if ref is None:
            ref = (wall, per_pkt, per_ev)
        print(f"{proto:<9}{slots:>6}{wall:>9.2f}{_vs(wall, ref[0])}{per_pkt:>11.1f}"
              f"{_vs(per_pkt, ref[1])}{per_ev:>10.1f}{_vs(per_ev, ref[2])}{pkts:>13,}"
              f"{events / pkts:>12.2f}{sim_us:>14,.0f}", flush=True)
        pct = lambda x, r: round(100 * (x / r - 1), 1)  # noqa: E731
        table.append([proto, slots, round(wall, 2), pct(wall, ref[0]), round(per_pkt, 1),
                      pct(per_pkt, ref[1]), round(per_ev, 1), pct(per_ev, ref[2]), pkts,
                      round(events / pkts, 2), round(sim_us)])
    save(args, "bench_flow_control", ["protocol", "slots", "wall s", "wall vs ref %",
                                      "ns/packet", "vs ref %", "ns/event", "vs ref %",
                                      "packets", "events/packet", "simulated us"], table)


if __name__ == "__main__":
    main()
