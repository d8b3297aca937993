"""What does flow control cost when no send waits for credits? (The EXTOLL conference paper's
concurrent groups, recorded earlier as the journal's Figure 15.)

    python lab/scripts/credit_floor.py                       # 8x128, 64 slots, about 5 minutes
    python lab/scripts/credit_floor.py --groups 4 --group-size 256 --protocol dynamic

The 8x128 concurrent groups at 64 slots per process cost 7-8 % over the reference at paper
scale with no send delayed in the timed alltoall (docs/reproduction/extoll.md,
extoll_patterns). This runs that point (alltoall-1024 in concurrent groups, one untimed and
one timed alltoall, ranks leaving the barrier up to 2 us apart, one seed) beside probes that
each remove one candidate cause, every probe against a reference with the same model:

- `credit_ns=0`: the credit operations cost no CPU time (section 5.3's per-packet counter
  updates); what is left is not CPU time;
- `piggyback`: credits ride on data packets where a data packet goes back (section 5.4),
  fewer credit packets written (since piggybacking counts a multi-packet message's tag, a
  2 KB message has no room, as section 5.4 says: this probe now piggybacks only on the
  barrier's one-packet messages);
- `backpressure`: the same finite mailbox without credits (hardware back-pressure only):
  whether the buffer itself is too small;
- `posted_writes=rank`: a credit packet waits behind its own rank's writes only, not the
  node's (host.posted_writes; candidate B of docs/calibration.md, "The requester model");
- `fifo never full`: a 100,000-packet requester FIFO, so no CPU ever blocks writing a data or
  credit packet (the alternative to candidate A's 256-packet FIFO there).

Printed per case: the measured time and its overhead against its reference; per rank (mean,
timed part): the time stalled (credits or a full FIFO), the flow-control CPU time, and the
sends delayed for credits; the credit packets written (whole run) and the busiest link.
Simulated times are deterministic: the figures do not depend on the machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse

from extoll_vec.analysis.extoll.common import measured, measured_us, rank_sum
from extoll_vec.engine import simulate
from record import add_option, save
from reference_minimum import NEVER_FULL, add_example_options, example_config


def cases(protocol: str, slots: int, n: int) -> list[tuple[str, str, dict]]:
    """(name, reference key, overrides): each case is compared with the `none` case of its key."""
    fc = {"protocol.name": protocol, "protocol.mailbox_slots": slots * n}
    fifo = {"network.nic_fifo_packets": NEVER_FULL}
    rank = {"host.posted_writes": "rank"}
    return [("none", "", {}), (f"{protocol} {slots}", "", fc),
            ("  credit_ns=0", "", {**fc, "host.credit_ns": 0.0}),
            ("  piggyback", "", {**fc, "protocol.piggyback": True}),
            ("backpressure", "", {**fc, "protocol.name": "backpressure"}),
            ("none, posted_writes=rank", "rank", rank),
            ("  posted_writes=rank", "rank", {**fc, **rank}),
            ("none, fifo never full", "fifo", fifo),
            ("  fifo never full", "fifo", {**fc, **fifo})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_example_options(ap)
    ap.add_argument("--groups", type=int, default=8, help="concurrent alltoall groups (8)")
    ap.add_argument("--group-size", type=int, default=128, help="ranks per group (128)")
    ap.add_argument("--slots", type=int, default=64, help="slots per process (64)")
    ap.add_argument("--protocol", default="static", choices=("static", "dynamic"))
    ap.add_argument("--seed", type=int, default=0)
    add_option(ap)
    args = ap.parse_args()
    args.full = True     # the concurrent groups are a 1024-rank figure
    base = example_config(ap, args, **{
        "workload.groups": args.groups, "workload.group_size": args.group_size,
        "workload.start_skew_ns": 2000, "protocol.credit_slots": 2, "seed": args.seed})
    print(f"{args.groups}x{args.group_size}, 2 KB, one timed alltoall after a warm-up one, "
          f"seed {args.seed}, {args.protocol} at {args.slots} slots per process, 2 credit slots"
          f"{', ' + ', '.join(args.set) if args.set else ''}", flush=True)
    cols = ["case", "time us", "vs its reference %", "stall us", "fc cpu us", "delayed",
            "credit packets", "busiest link"]
    print(f"{cols[0]:<28}{cols[1]:>11}{'overhead':>10}{cols[3]:>10}{cols[4]:>11}{cols[5]:>9}"
          f"{cols[6]:>16}{cols[7]:>14}", flush=True)
    ref: dict[str, float] = {}
    rows = []
    for name, key, over in cases(args.protocol, args.slots, base.n_ranks):
        cfg = base.replace(**over) if over else base
        ds = simulate([cfg])
        t = measured_us(ds, 0, cfg)
        ref.setdefault(key, t)
        row = [name, round(t, 1), round(100 * (t / ref[key] - 1), 1),
               round(float(measured(ds, "stall_us", 0).mean()), 1),
               round(float(measured(ds, "flow_control_cpu_us", 0).mean()), 1),
               int(measured(ds, "sends_delayed", 0).sum()),
               int(rank_sum(ds.control_sent.sel(ctrl="credit"), 0)),
               round(float(ds.max_link_utilization.values[0]), 3)]
        print(f"{row[0]:<28}{row[1]:>11,.1f}{row[2]:>+9.1f}%{row[3]:>10,.1f}{row[4]:>11,.1f}"
              f"{row[5]:>9}{row[6]:>16,}{row[7]:>14.3f}", flush=True)
        rows.append(row)
    save(args, "credit_floor", cols, rows)


if __name__ == "__main__":
    main()
