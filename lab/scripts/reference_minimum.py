"""Is the run without flow control the fastest? (A check of the model's fidelity.)

    python lab/scripts/reference_minimum.py            # alltoall-256 (4x4 mesh), about a minute
    python lab/scripts/reference_minimum.py --full     # alltoall-1024 (4x4x4), about 15 minutes
    python lab/scripts/reference_minimum.py --variant fifo16   # under a model variant
    python lab/scripts/reference_minimum.py --set network.buffer_flits=20   # a changed model

The EXTOLL paper measures every overhead against "a minimum reference execution time when no
flow control is used" (section 5.3): flow control may only cost. This prints, for the alltoall
of 2 KB messages (untimed warm-up alltoall, then one timed, as the reproduction targets do),
the time under the reference (protocol none) and under static and dynamic flow control (2
credit slots, 64 and 16 slots per process), and two probes of why a credit-limited run can be
faster than the reference in this model:

- `nic_fifo_packets=100000`: a NIC injection FIFO of 100,000 packets instead of the default
  256, so that a CPU blocks less often in a PIO write or a slot release (where it cannot run
  the MPI progress engine; host.posted_writes). The part of the gap it closes is the CPU
  overlap a credit stall gives where the FIFO is full (docs/calibration.md).
- `progress_packets=0`: no mailbox retrieval at MPI calls, only while a rank waits in MPI.

Also printed: the busiest link's utilization; a credit-limited run that loads its busiest link
more than the reference did, yet finishes first, ran with less congestion (fewer packets
blocked in router buffers), not with more bandwidth. `--variant NAME` runs every case under a
model variant (examples.MODEL_VARIANTS); a probe the variant already makes (a FIFO that never
fills) is left out. Simulated times are deterministic: the figures do not depend on the
machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse

from extoll_vec.analysis.extoll.common import measured_us
from extoll_vec.cli import apply_sets
from extoll_vec.engine import simulate
from extoll_vec.errors import ConfigError
from extoll_vec.examples import get_example, variant_overrides
from record import add_option, save


NEVER_FULL = 100_000   # NIC FIFO packets (the name is historical: alltoalls fill it too)


def cases(n: int) -> list[tuple[str, dict]]:
    def fc(name: str, slots: int, **more) -> dict:
        return {"protocol.name": name, "protocol.credit_slots": 2,
                "protocol.mailbox_slots": slots * n, **more}
    fifo = {"network.nic_fifo_packets": NEVER_FULL}
    prog0 = {"host.progress_packets": 0}
    return [("none", {}), ("static 64", fc("static", 64)), ("static 16", fc("static", 16)),
            ("dynamic 64", fc("dynamic", 64)), ("dynamic 16", fc("dynamic", 16)),
            ("none, fifo never full", fifo), ("static 16, fifo never full", fc("static", 16, **fifo)),
            ("none, progress 0", prog0), ("static 16, progress 0", fc("static", 16, **prog0))]


def add_example_options(ap: argparse.ArgumentParser) -> None:
    """--full, --variant and --set, read by example_config (also nic_fifo_depth.py)."""
    ap.add_argument("--full", action="store_true", help="alltoall-1024 instead of alltoall-256")
    ap.add_argument("--variant", default="", metavar="NAME",
                    help="run every case under this model variant (examples.MODEL_VARIANTS)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                    help="change the model for every case, after --variant (repeatable)")


def example_config(ap: argparse.ArgumentParser, args, **more):
    """alltoall-256 (or -1024 with --full), one untimed alltoall before the timed one, under
    --variant, --set and then `more` (dotted overrides); a bad variant or value exits through
    ap."""
    try:
        over = variant_overrides(args.variant) if args.variant else {}
        cfg = get_example("alltoall-1024" if args.full else "alltoall-256").replace(
            **{"workload.warmup": 1, **over})
        return apply_sets(cfg, args.set).replace(**more)
    except ConfigError as exc:
        ap.error(str(exc))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_example_options(ap)
    add_option(ap)
    args = ap.parse_args()
    base = example_config(ap, args)
    print(f"{'alltoall-1024' if args.full else 'alltoall-256'}, 2 KB, one timed alltoall after "
          f"a warm-up one, model {args.variant or 'calibrated defaults'}"
          f"{', ' + ', '.join(args.set) if args.set else ''}", flush=True)
    print(f"{'case':<28}{'time us':>12}{'vs none':>10}{'busiest link':>14}", flush=True)
    ref = {}
    rows = []
    for name, over in cases(base.n_ranks):
        if "fifo" in name and base.network.nic_fifo_packets >= NEVER_FULL:
            continue     # the variant has this FIFO already
        cfg = base.replace(**over) if over else base
        ds = simulate([cfg])
        t = measured_us(ds, 0, cfg)
        key = "fifo" if "fifo" in name else "prog" if "progress" in name else ""
        ref.setdefault(key, t)      # each probe is compared with its own reference
        print(f"{name:<28}{t:>12,.1f}{100 * (t / ref[key] - 1):>+9.1f}%"
              f"{float(ds.max_link_utilization.values[0]):>14.3f}", flush=True)
        rows.append([name, round(t, 1), round(100 * (t / ref[key] - 1), 1),
                     round(float(ds.max_link_utilization.values[0]), 3)])
    save(args, "reference_minimum", ["case", "time us", "vs its reference %", "busiest link"],
         rows)


if __name__ == "__main__":
    main()
