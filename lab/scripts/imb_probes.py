"""What makes an IMB benchmark's flow-control overhead? (EXTOLL journal, Figure 27.)

    python lab/scripts/imb_probes.py                            # Reduce and Bcast, about a minute
    python lab/scripts/imb_probes.py --bench Sendrecv --slots 16 --slots 64 --iterations 200

The replicated IMB sweep (docs/reproduction/extoll.md, extoll_imb) leaves Reduce and Bcast at
+10 to +19 % under both protocols at 32 and 64 slots per process, where no send waits for
credits, and they hold the Figure 27 averages above 3 %. This runs IMB benchmarks at the
paper's scale (1024 ranks on the 4x4x4 mesh, 2 KB, one untimed repetition and a barrier first,
ranks leaving it up to 2 us apart, seed 0) under the reference and under static and dynamic
flow control (2 credit slots, piggybacking on, as the sweep), with probes that each remove
one candidate cause, every probe against the reference of the same model:

- `credit_ns=0`: the credit operations cost no CPU time (section 5.3's counter updates per
  packet written and per packet retrieved; host.credit_ns, 15 ns by default: the paper gives
  no cost and its reference runs have no flow control to fit one to);
- `no piggyback`: every credit goes back in a credit packet of its own (section 5.4 off);
- `fifo never full`: a 100,000-packet requester FIFO, so no CPU blocks writing a data or a
  credit packet.

Printed per case: the time per repetition and its overhead against its reference, per rank
and repetition (timed part) the flow-control CPU time and the sends delayed for credits, and
the credit packets written (whole run). Simulated times are deterministic: the figures do
not depend on the machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse

from extoll_vec.analysis.extoll.common import measured, measured_us, rank_sum
from extoll_vec.config import IMB_BENCHMARKS
from extoll_vec.engine import simulate
from extoll_vec.examples import get_example
from record import add_option, save
from reference_minimum import NEVER_FULL

PROBES = [("", "", {}), ("credit_ns=0", "", {"host.credit_ns": 0.0}),
          ("no piggyback", "", {"protocol.piggyback": False}),
          ("fifo never full", "fifo", {"network.nic_fifo_packets": NEVER_FULL})]


def cases(slots: list[int], n: int) -> list[tuple[str, str, dict]]:
    """(name, reference key, overrides): each case is compared with the `none` case of its
    key, which comes first."""
    out = [("none", "", {}), ("none, fifo never full", "fifo",
                              {"network.nic_fifo_packets": NEVER_FULL})]
    for probe, key, more in PROBES:
        for proto in ("static", "dynamic"):
            for s in slots:
                fc = {"protocol.name": proto, "protocol.mailbox_slots": s * n,
                      "protocol.piggyback": True}
                out.append((f"{proto} {s}" + (f", {probe}" if probe else ""), key,
                            {**fc, **more}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", action="append", default=[], choices=IMB_BENCHMARKS,
                    help="IMB benchmark (repeatable; default Reduce and Bcast)")
    ap.add_argument("--slots", action="append", type=int, default=[],
                    help="slots per process (repeatable; default 32 and 64)")
    ap.add_argument("--iterations", type=int, default=100, help="timed repetitions (100)")
    ap.add_argument("--seed", type=int, default=0)
    add_option(ap)
    args = ap.parse_args()
    benches = args.bench or ["Reduce", "Bcast"]
    slots = args.slots or [32, 64]
    if min(slots) < 1 or args.iterations < 1:
        ap.error("--slots and --iterations: allowed: >= 1")
    cols = ["benchmark", "case", "us per repetition", "vs its reference %",
            "fc cpu us per rank and repetition", "delayed per repetition", "credit packets"]
    print(f"IMB at 1024 ranks, 2 KB, {args.iterations} timed repetitions, seed {args.seed}, "
          "2 credit slots", flush=True)
    print(f"{'benchmark':<10}{'case':<30}{'us/rep':>10}{'overhead':>10}{'fc cpu us':>11}"
          f"{'delayed':>9}{'credit pkts':>13}", flush=True)
    rows = []
    for bench in benches:
        base = get_example("alltoall-1024").replace(**{
            "workload.kind": "imb", "workload.benchmark": bench, "workload.warmup": 1,
            "workload.iterations": args.iterations, "workload.start_skew_ns": 2000,
            "protocol.credit_slots": 2, "seed": args.seed})
        listed = cases(slots, base.n_ranks)
        cfgs = [base.replace(**over) if over else base for _, _, over in listed]
        ds = simulate(cfgs)
        ref: dict[str, float] = {}
        for i, ((name, key, _), cfg) in enumerate(zip(listed, cfgs)):
            t = measured_us(ds, i, cfg)
            ref.setdefault(key, t)
            it = args.iterations
            row = [bench, name, round(t, 2), round(100 * (t / ref[key] - 1), 1),
                   round(float(measured(ds, "flow_control_cpu_us", i).mean()) / it, 3),
                   round(float(measured(ds, "sends_delayed", i).sum()) / it, 1),
                   int(rank_sum(ds.control_sent.sel(ctrl="credit"), i))]
            print(f"{row[0]:<10}{row[1]:<30}{row[2]:>10,.2f}{row[3]:>+9.1f}%{row[4]:>11.3f}"
                  f"{row[5]:>9}{row[6]:>13,}", flush=True)
            rows.append(row)
    save(args, "imb_probes", cols, rows)


if __name__ == "__main__":
    main()
