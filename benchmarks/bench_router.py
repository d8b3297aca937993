"""The input-queued router against the VOQ router.

    python benchmarks/bench_router.py [--quick] [--skip-dragonfly] [--record]
    python benchmarks/bench_router.py --skip-mesh --routing par --routers voq:1 --repeats 5

(a) 4x4x4 mesh, 2 VCs, uniform random traffic, offered load swept 0.1 .. 1.0 flits per node
    per cycle: accepted throughput and mean latency of voq, iq (speedup 1) and iq (speedup
    2.4) side by side, the saturation throughput of each (the most accepted over the sweep)
    and its difference to voq (head-of-line blocking).
(b) the 5,256-node Dragonfly of Schneider et al. (p=6, a=12, h=6, 73 groups; minimal routing,
    buffer_flits 256, packet_flits 16, load 1.0) for each router: setup and run wall time,
    simulated cycles per second, the memory estimate (engine/sizing.estimate_parts) and the
    peak resident set of a process that builds and runs it (one subprocess per run, so each
    peak is its own). --old-pools also builds it with the pools sized as before this change
    (every packet one flit) for the comparison.

The kernels are compiled (or loaded from the cache) before anything is timed.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench_routing import mean_se
from record import add_option, save

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.engine.batch import simulate

ROUTERS = (("voq", 1.0), ("iq", 1.0), ("iq", 2.4))


def mesh_cfg(router, speedup, rate, args):
    return from_dict({"topology": {"kind": "mesh", "dims": [4, 4, 4]},
                      "network": {"router": router, "speedup": speedup, "vcs": 2,
                                  "buffer_flits": args.buffer_flits},
                      "workload": {"kind": "uniform", "injection_rate": rate,
                                   "packet_flits": args.packet_flits,
                                   "warmup_cycles": args.warmup, "measure_cycles": args.measure,
                                   "drain_cycles": 0}})


def mesh_sweep(args):
    loads = [round(0.1 * i, 1) for i in range(1, 11)]
    cfgs = [mesh_cfg(r, s, x, args) for x in loads for r, s in ROUTERS]
    t0 = time.perf_counter()
    ds = simulate(cfgs, max_batch=len(cfgs))
    wall = time.perf_counter() - t0
    acc = ds.accepted_flits_per_node_cycle.values.reshape(len(loads), len(ROUTERS))
    lat = ds.packet_latency_cycles_mean.values.reshape(len(loads), len(ROUTERS))
    names = [f"{r} s={s:g}" for r, s in ROUTERS]
    print(f"(a) 4x4x4 mesh, 2 VCs, uniform, {args.packet_flits}-flit packets, "
          f"{args.buffer_flits}-flit VC buffers, {args.measure} measured cycles ({wall:.1f} s)")
    print("offered  " + "  ".join(f"{n:>22}" for n in names))
    print("         " + "  ".join(f"{'accepted':>10} {'latency':>11}" for _ in names))
    rows = []
    for i, x in enumerate(loads):
        print(f"{x:7.1f}  " + "  ".join(f"{acc[i, j]:10.3f} {lat[i, j]:11.1f}"
                                         for j in range(len(ROUTERS))))
        rows.append(["mesh", x] + [round(float(v), 4) for j in range(len(ROUTERS))
                                   for v in (acc[i, j], lat[i, j])])
    sat = acc.max(axis=0)
    print("saturation (most accepted): " + ", ".join(
        f"{n} {v:.3f}" for n, v in zip(names, sat)))
    for j in range(1, len(ROUTERS)):
        print(f"  voq - {names[j]}: {sat[0] - sat[j]:+.3f} flits/node/cycle "
              f"({(sat[0] - sat[j]) / sat[0]:+.1%} of voq)")
    rows.append(["mesh saturation", None] + [round(float(v), 4) for v in sat for _ in (0, 1)])
    return rows


def dragonfly_cfg(router, speedup, args):
    return from_dict({"topology": {"kind": "dragonfly", "p": 6, "a": 12, "h": 6, "groups": 0},
                      "network": {"router": router, "speedup": speedup,
                                  "routing": args.routing,
                                  "vcs": 4 if args.routing == "par" else
                                  3 if args.routing != "table" else 2,
                                  "buffer_flits": 256},
                      "workload": {"kind": "uniform", "injection_rate": 1.0, "packet_flits": 16,
                                   "warmup_cycles": args.df_cycles // 3,
                                   "measure_cycles": args.df_cycles - args.df_cycles // 3,
                                   "drain_cycles": 0}})


def dragonfly_one(args):
    """In a subprocess: build and run one Dragonfly member, print one JSON line."""
    from extoll_vec.engine import sizing
    if args.old_pools:
        def old(configs, R, P, V, N, FQ):   # before: as if every packet were one flit
            buf = max(c.network.buffer_flits for c in configs)
            EQ = max(c.network.nic_ejection_flits for c in configs)
            return R * P * V * buf + N * (FQ + EQ) + 1024
        sizing.pool_packets = old
    cfg = dragonfly_cfg(args.one, args.speedup, args)
    parts, sizes = sizing.estimate_parts([cfg])
    t0 = time.perf_counter()
    batch = Batch([cfg])
    t1, c1 = time.perf_counter(), time.process_time()
    batch.run()
    t2, c2 = time.perf_counter(), time.process_time()
    S = batch.S
    res = batch.results()
    top = sorted(parts.items(), key=lambda kv: -kv[1])[:3]
    print(json.dumps({"setup": t1 - t0, "run": t2 - t1, "cpu": c2 - c1, "cycles": int(S.now[0]),
                      "events": int(S.events[0]), "hops": int(S.hops[0]),
                      "accepted": float(res["accepted_flits_per_node_cycle"][0]),
                      "estimate": sum(parts.values()), "top": top,
                      "NPK": sizes["NPK"], "E": sizes["E"],
                      "maxrss": peak_rss()}))


def peak_rss() -> int:
    """Peak resident set of this process, bytes: VmHWM (getrusage's ru_maxrss survives
    execve, so a subprocess would report its parent's peak if that was higher)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def dragonfly(args):
    routers = [rs for rs in ROUTERS if f"{rs[0]}:{rs[1]:g}" in args.routers.split(",")]
    runs = [(r, s, False) for r, s in routers] + ([("voq", 1.0, True)] if args.old_pools else [])
    print(f"(b) Dragonfly 5,256 nodes, routing {args.routing}, 256-flit VC buffers, 16-flit packets, "
          f"load 1.0, {args.df_cycles} cycles, {args.repeats} run(s) each: mean (+- standard "
          f"error) where repeated")
    rows = []
    for r, s, old in runs:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", r, "--speedup", str(s),
               "--df-cycles", str(args.df_cycles), "--routing", args.routing] + (
                   ["--old-pools"] if old else [])
        ds = []
        for _ in range(args.repeats):
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                print(out.stderr[-2000:])
                raise SystemExit(f"dragonfly {r} failed")
            ds.append(json.loads(out.stdout.strip().splitlines()[-1]))
        d = ds[0]
        name = f"{r} s={s:g}" + (" old pools" if old else "")
        cps, cps_se = mean_se([x["cycles"] / x["run"] for x in ds])
        cpu_cps, cpu_se = mean_se([x["cycles"] / x["cpu"] for x in ds])
        top = ", ".join(f"{k} {v / 2**20:.0f} MiB" for k, v in d["top"])
        print(f"{name:<18} setup {d['setup']:6.1f} s  run {d['run']:7.1f} s (CPU {d['cpu']:.1f} s)"
              f"  {d['cycles']:>6} cycles  {cps:8.0f} +- {cps_se:.0f} cycles/s ({cpu_cps:.0f} +- "
              f"{cpu_se:.0f} per CPU second)  {d['events'] / d['cpu']:9.3g} events/CPU s  "
              f"{d['events'] / d['hops']:.2f} events/hop  accepted {d['accepted']:.3f}  "
              f"estimate {d['estimate'] / 2**30:.2f} GiB "
              f"(NPK {d['NPK']:,}, E {d['E']:,}; {top})  peak RSS "
              f"{max(x['maxrss'] for x in ds) / 2**30:.2f} GiB", flush=True)
        rows.append(["dragonfly " + name, d["cycles"], round(d["setup"], 2), round(d["run"], 2),
                     round(d["cpu"], 2), round(cps), round(cpu_cps), round(d["accepted"], 4),
                     round(d["estimate"] / 2**30, 3),
                     round(max(x["maxrss"] for x in ds) / 2**30, 3), round(cps_se, 1),
                     len(ds)])
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter mesh runs")
    ap.add_argument("--skip-dragonfly", action="store_true")
    ap.add_argument("--skip-mesh", action="store_true")
    ap.add_argument("--routing", default="table", help="the Dragonfly's network.routing (table)")
    ap.add_argument("--old-pools", action="store_true",
                    help="(b) also with the pools sized as before (every packet one flit)")
    ap.add_argument("--packet-flits", type=int, default=16)
    ap.add_argument("--buffer-flits", type=int, default=256)
    ap.add_argument("--df-cycles", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=1,
                    help="(b) runs of each router (a subprocess each): mean and standard error")
    ap.add_argument("--routers", default=",".join(f"{r}:{s:g}" for r, s in ROUTERS),
                    help="(b) which routers, e.g. voq:1 (default: all three)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--speedup", type=float, default=1.0, help=argparse.SUPPRESS)
    add_option(ap)
    args = ap.parse_args(argv)
    if args.one:
        return dragonfly_one(args)
    args.warmup, args.measure = (1000, 4000) if args.quick else (3000, 20000)
    simulate([mesh_cfg("iq", 2.4, 0.1, args).replace(**{"workload.measure_cycles": 10,
                                                        "workload.warmup_cycles": 0})])  # compile
    rows = [] if args.skip_mesh else mesh_sweep(args)
    if not args.skip_dragonfly:
        rows += dragonfly(args)
    # mesh rows: run, offered load, (accepted, latency) per router; dragonfly rows: run,
    # cycles, setup s, run s, CPU s, cycles/s, cycles per CPU s, accepted, estimate GiB, RSS GiB,
    # cycles/s standard error, runs
    save(args, "bench_router", ["run", "load or cycles"] + [f"v{i}" for i in range(10)], rows)


if __name__ == "__main__":
    main()
