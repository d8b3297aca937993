"""Memory at scale (state that grows with the traffic, 16K ranks).

    python benchmarks/bench_memory.py [--quick] [--only a|b|c|NAME] [--record]

Each run in its own subprocess, with its peak resident set (VmHWM), its wall time and the
memory-check estimate of the peak (engine/sizing.estimate_parts with the program's figures, the
one engine.Batch, `run` and `sweep --dry-run` refuse with), and the estimate over the peak
(it must bound the peak: at least 1, at most 1.25):
(a) alltoall-4096: 256 nodes, 8x8x4 mesh, 16 ranks per node, 2048 B, dynamic flow control at
    16 slots per process (65,536 mailbox slots), credit_slots 2. Targets: <= 5 min, <= 4 GB.
(b) 16,384 ranks: 1,024 nodes on a 16x8x8 mesh, 16 ranks per node, dynamic at 16 slots per
    process: IMB Barrier and Allreduce (2048 B, --iterations each, warm-up 1). Target <= 10 GB;
    printed: bytes per rank and per pair of the pair table.
(c) the 5,256-node Dragonfly network-only point of bench_router.py (b) (voq, minimal routing,
    load 1.0, 3,000 cycles). Target <= 1.5 GB.
--quick: (a) 1024 ranks on 4x4x4, (b) 1024 ranks on 4x4x4, (c) 300 cycles. A run the memory
check refuses prints its one-line refusal instead of figures.
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


def configs(args) -> dict:
    from extoll_vec.config import from_dict
    q = args.quick
    a_dims, a_ranks = ([4, 4, 4], 1024) if q else ([8, 8, 4], 4096)
    b_dims, b_ranks = ([4, 4, 4], 1024) if q else ([16, 8, 8], 16384)

    def mpi(dims, ranks, workload, protocol="dynamic"):
        return from_dict({"topology": {"kind": "mesh", "dims": dims},
                          "mpi": {"ranks_per_node": 16},
                          "protocol": {"name": protocol, "mailbox_slots": 16 * ranks,
                                       "credit_slots": 2},
                          "workload": {"ranks": ranks, "message_bytes": 2048, **workload}})
    imb = {"kind": "imb", "warmup": 1, "iterations": args.iterations}
    out = {f"a alltoall-{a_ranks}": mpi(a_dims, a_ranks, {"kind": "alltoall"}),
           f"b Barrier-{b_ranks}": mpi(b_dims, b_ranks, {**imb, "benchmark": "Barrier"}),
           f"b Allreduce-{b_ranks}": mpi(b_dims, b_ranks, {**imb, "benchmark": "Allreduce"})}
    import bench_router
    ns = argparse.Namespace(routing="table", df_cycles=300 if q else 3000)
    out["c dragonfly-5256"] = bench_router.dragonfly_cfg("voq", 1.0, ns)
    return out


def one(args) -> None:
    """In a subprocess: check, build and run one configuration, print one JSON line."""
    from bench_engine import build_and_run
    from extoll_vec.engine.sizing import check_memory, estimate_parts
    from extoll_vec.errors import ConfigError
    cfg = configs(args)[args.one]
    parts, _sizes = estimate_parts([cfg])
    try:
        check_memory([cfg])
    except ConfigError as exc:
        print(json.dumps({"refused": str(exc), "estimate": sum(parts.values())}))
        return
    b, setup, run = build_and_run(cfg)
    S = b.S
    nr = S.rk_pc.shape[1]
    pairs = int(S.pair_ptr[0, -1]) if nr else 0
    state = sum(a.nbytes for a in S)
    per_pair = sum(a.nbytes for name, a in zip(S._fields, S) if name in ("fc", "ux_head",
                                                                           "ux_tail", "pair_peer"))
    print(json.dumps({"setup": setup, "run": run, "cycles": int(S.now[0]),
                      "estimate": b.memory_estimate, "state": state, "ranks": nr,
                      "pairs": pairs, "pair_bytes": per_pair, "rss": peak_rss()}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke check)")
    ap.add_argument("--only", metavar="PART", help="one part only: a, b or c, or the start of "
                    "a run's name (e.g. 'b Allreduce')")
    ap.add_argument("--iterations", type=int, default=2, help="IMB repetitions in (b)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    add_option(ap)
    args = ap.parse_args(argv)
    if args.one:
        return one(args)
    from extoll_vec import engine  # noqa: F401 - compile or load the kernels before timing
    rows = []
    for name in configs(args):
        if args.only and not name.startswith(args.only):
            continue
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name,
               "--iterations", str(args.iterations)] + (["--quick"] if args.quick else [])
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            print(f"{name}: failed\n{out.stderr[-2000:]}", flush=True)
            rows.append([name, "failed", None, None, None, None, None])
            continue
        d = json.loads(out.stdout.strip().splitlines()[-1])
        est = d["estimate"] / 2**30
        if "refused" in d:
            print(f"{name:<22} refused before allocation: {d['refused']}", flush=True)
            rows.append([name, "refused", round(est, 3), None, None, None, None])
            continue
        gib = d["rss"] / 2**30
        extra = ""
        if d["ranks"]:
            extra = (f"  {d['state'] / d['ranks'] / 2**10:.1f} KiB state per rank, "
                     f"{d['pairs']:,} pairs ({d['pair_bytes'] / max(d['pairs'], 1):.0f} B per "
                     f"pair)")
        print(f"{name:<22} wall {wall:7.1f} s (setup {d['setup']:.1f}, run {d['run']:.1f})  "
              f"{d['cycles']:>10} cycles  estimate {est:.2f} GiB  peak RSS {gib:.2f} GiB "
              f"(estimate / peak {est / gib:.2f}){extra}", flush=True)
        rows.append([name, round(wall, 1), round(est, 3), round(gib, 3), round(est / gib, 3),
                     d["ranks"], d["pairs"]])
    save(args, "bench_memory", ["run", "wall_s", "estimate_gib", "peak_rss_gib",
                                "estimate_over_peak", "ranks", "pairs"], rows)


if __name__ == "__main__":
    main()
