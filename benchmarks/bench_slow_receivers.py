"""Schneider et al.'s 5,256-node Dragonfly with slow receivers: simulated cycles
per second, events per second and peak memory of one point at saturation, per protocol.

    python benchmarks/bench_slow_receivers.py [--cycles 4000] [--slow-share 0.01]
                                              [--slow-factor 8] [--cases base,fecn,...]
                                              [--windows] [--set KEY=VALUE] [--record]

Example `dragonfly-5256` (PAR, input-queued routers at 2.4x speedup, 256-flit buffers,
pairwise traffic at load 1.0) with a share of slow receivers, each case in its own subprocess
(peak resident set VmHWM, the memory-check estimate, the packet pool NPK), run for --cycles
without convergence (a fixed length, so that the cases are comparable). The target: at least
1,000 simulated cycles per second in at most 2 GB (Booksim2: 12-27 cycles per second).
--windows also prints the accepted throughput of each 1000-cycle window (how fast the
congestion tree of the slow receivers builds up: what sample_cycles and warm-up must cover).
--profile times every event by kind (profile_events.py's table; the same build, slower for
the timing). --perms N then runs every case on N more random permutations (seeds 1000..)
and counts those that end without an error (the kernels' overflow and deadlock flags, the
engine's audits: packets made = taken out + alive, the protocol's credits).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench_router import peak_rss
from record import add_option, save

from extoll_vec.protocols.portals.fecn import AGGRESSIVE

CASES = {
    "base": {"protocol.name": "none"},
    "fecn": {"protocol.name": "fecn"},
    "fecn_aggressive": {"protocol.name": "fecn", **AGGRESSIVE},
    "rdrp30": {"protocol.name": "rdrp", "protocol.outstanding": 30},
}


def config(args, case):
    import yaml
    from extoll_vec.examples import get_example
    sets = {k: yaml.safe_load(v) for k, _, v in (a.partition("=") for a in args.set)}
    return get_example(args.example).replace(**{
        "network.slow_share": args.slow_share, "network.slow_factor": args.slow_factor,
        "workload.sample_cycles": 0, "workload.warmup_cycles": 0,
        "workload.measure_cycles": args.cycles, "seed": args.seed, **sets, **CASES[case]})


def one(args) -> None:
    """In a subprocess: build and run one case, print one JSON line."""
    from extoll_vec.engine import Batch
    from extoll_vec.engine.sizing import estimate_parts
    cfg = config(args, args.one)
    parts, sizes = estimate_parts([cfg])
    t0 = time.perf_counter()
    batch = Batch([cfg])
    t1 = time.perf_counter()
    c1 = time.process_time()
    S, windows, last = batch.S, [], 0
    prof = None
    if args.windows:
        n = cfg.n_nodes
        for t in range(1000, args.cycles + 1, 1000):
            batch.advance_to(t)
            flits = int(S.syn[0, 1])     # data flits accepted since cycle 0 (SY_ACCEPTED)
            windows.append(round((flits - last) / (1000 * n), 4))
            last = flits
    if args.profile:
        import numpy as np
        from extoll_vec import dtypes as dt
        prof = np.zeros((1, dt.N_PROF, 2), np.int64)
    batch.run(profile=prof)
    t2 = time.perf_counter()
    cpu = time.process_time() - c1
    res = batch.results()
    print(json.dumps({"setup": t1 - t0, "run": t2 - t1, "cpu": cpu, "cycles": int(S.now[0]),
                      "events": int(S.events[0]), "npk": sizes["NPK"],
                      "estimate": sum(parts.values()), "rss": peak_rss(), "windows": windows,
                      "profile": None if prof is None else prof[0].tolist(),
                      "delivered": int(S.delivered[0]),
                      "accepted": float(res["accepted_flits_per_node_cycle"][0])}))


def perms(args, rows) -> None:
    """Every case on args.perms random permutations (seeds 1000..): how many end cleanly."""
    from extoll_vec.engine import Batch
    from extoll_vec.errors import SimulationError
    for case in args.cases.split(","):
        ok, t0 = 0, time.perf_counter()
        for k in range(args.perms):
            args.seed = 1000 + k
            try:
                Batch([config(args, case)]).run()
                ok += 1
            except SimulationError as exc:
                print(f"{case} seed {args.seed}: {exc}", flush=True)
        print(f"{case:<16} {ok}/{args.perms} permutations ended without an error "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
        rows.append([f"{case}: {args.perms} permutations", "ok", ok, None, None, None, None,
                     None, None])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--example", default="dragonfly-5256")
    ap.add_argument("--cycles", type=int, default=4000)
    ap.add_argument("--slow-share", type=float, default=0.01)
    ap.add_argument("--slow-factor", type=float, default=8.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--windows", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--perms", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a config override of every case (repeatable)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    add_option(ap)
    args = ap.parse_args(argv)
    if args.one:
        return one(args)
    from extoll_vec.engine import Batch
    from extoll_vec.examples import get_example
    Batch([get_example("tiny")]).run()   # compile or load the kernels outside the timings
    rows = []
    for case in args.cases.split(","):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", case] + [
            a for k, v in (("--example", args.example), ("--cycles", args.cycles),
                           ("--slow-share", args.slow_share),
                           ("--slow-factor", args.slow_factor), ("--seed", args.seed))
            for a in (k, str(v))] + (["--windows"] if args.windows else []) + (
            ["--profile"] if args.profile else []) + [
            a for kv in args.set for a in ("--set", kv)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{case}: failed\n{out.stderr[-2000:]}", flush=True)
            rows.append([case, "failed"] + [None] * 7)
            continue
        d = json.loads(out.stdout.strip().splitlines()[-1])
        cps, eps = d["cycles"] / d["run"], d["events"] / d["run"]
        print(f"{case:<16} setup {d['setup']:5.1f} s  run {d['run']:6.1f} s (CPU {d['cpu']:6.1f})"
              f"  {cps:7.0f} cycles/s  {eps / 1e6:5.2f} M events/s  NPK {d['npk']:,}  "
              f"estimate {d['estimate'] / 2**30:.2f} GiB  peak RSS {d['rss'] / 2**30:.2f} GiB  "
              f"accepted {d['accepted']:.3f}", flush=True)
        if d["windows"]:
            print(f"{'':<16} windows: {' '.join(f'{w:.3f}' for w in d['windows'])}", flush=True)
        if d["profile"]:
            import numpy as np
            from profile_events import _print_run
            _print_run(case, d["run"], d["delivered"], np.array(d["profile"], float))
        rows.append([case, round(d["setup"], 1), round(d["run"], 1), round(cps),
                     round(eps / 1e6, 2), d["npk"], round(d["estimate"] / 2**30, 3),
                     round(d["rss"] / 2**30, 3), round(d["accepted"], 4)])
    if args.perms:
        perms(args, rows)
    save(args, "bench_slow_receivers", ["case", "setup s", "run s", "cycles/s", "M events/s",
                                        "NPK", "estimate GiB", "peak RSS GiB", "accepted"], rows)


if __name__ == "__main__":
    main()
