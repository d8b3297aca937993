"""Sweep scaling: the same 32-point sweep on a LocalCluster of 1 and of 2 workers.

    python benchmarks/sweep_scaling.py                 # 32 alltoall-256 points, 1 and 2 workers
    python benchmarks/sweep_scaling.py --workers 1 2 4 --points 64
    python benchmarks/sweep_scaling.py --message-bytes 512    # a lighter point (about 3x less)

Each point is the alltoall-256 example (256 ranks, 4x4 mesh, 2048 B), with host.match_ns varied
by a nanosecond per point around its default, so the points differ (equal points would be
simulated once) but carry the same work. Before timing, every worker loads the kernels (the
Numba cache; a cold cache compiles once, about a minute, not timed). The time is
run_sweep() end to end: store creation, batching, tasks, region writes. The stores of all runs
are compared bit for bit. Needs a warm Numba cache to be quick; run it on an otherwise idle
machine (the acceptance figure is a speedup >= 1.8 on 2 workers of a 2-core machine).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path


def spec(points: int, message_bytes: int) -> dict:
    from extoll_vec.config import HostConfig
    m = HostConfig().match_ns
    return {"name": "scaling",
            "base": {"example": "alltoall-256", "workload": {"message_bytes": message_bytes}},
            "axes": {"host.match_ns": {"range": {"start": m, "stop": m + points - 1,
                                                 "step": 1.0}}}}


def same_store(a: Path, b: Path) -> bool:
    from extoll_vec.sweep import open_sweep
    da, db = open_sweep(a).load(), open_sweep(b).load()
    for name in da.variables:
        va, vb = da[name].values, db[name].values
        if va.dtype.kind in "fiub":
            if va.tobytes() != vb.tobytes():
                return False
        elif [str(x) for x in va.ravel()] != [str(x) for x in vb.ravel()]:
            return False
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=32)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--message-bytes", type=int, default=2048)
    ap.add_argument("--batch-size", type=int, default=None,
                    help="points per batch (default: the sweep's policy for each worker count)")
    from record import add_option, save
    add_option(ap)
    args = ap.parse_args(argv)

    from extoll_vec.sweep import build_sweep
    from extoll_vec.sweep.cluster import connect, load_cluster_spec
    from extoll_vec.sweep.plan import DEFAULT_MAX_BATCH, plan_batches
    from extoll_vec.sweep.runner import run_sweep
    from extoll_vec.sweep.tasks import warm_kernels

    sweep = build_sweep(spec(args.points, args.message_bytes))
    print(f"{sweep.n_points} points of alltoall-256 ({args.message_bytes} B messages), "
          f"workers {args.workers}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="sweep-scaling-"))
    rows = []
    try:
        for n in args.workers:
            out = tmp / f"w{n}.zarr"
            with connect(load_cluster_spec(workers=n), quiet=True) as client:
                client.wait_for_workers(n)
                t0 = time.perf_counter()
                warm = client.run(warm_kernels)          # every worker, not timed
                t_warm = time.perf_counter() - t0
                size = args.batch_size or DEFAULT_MAX_BATCH
                batches = len(plan_batches(sweep.configs, range(sweep.n_points), n, size))
                t0 = time.perf_counter()
                res = run_sweep(sweep, out, client, quiet=True, max_batch=size)
                wall = time.perf_counter() - t0
            assert res.complete and not res.failed, res
            rows.append((n, wall, batches, t_warm, max(warm.values())))
            print(f"  {n} worker(s): {wall:7.2f} s  ({sweep.n_points / wall:.2f} points/s, "
                  f"{batches} batches; kernels loaded in {max(warm.values()):.1f} s, untimed)",
                  flush=True)
        base = rows[0][1]
        print("\nworkers  seconds  points/s  speedup")
        for n, wall, *_ in rows:
            print(f"{n:>7}  {wall:7.2f}  {sweep.n_points / wall:8.2f}  {base / wall:7.2f}")
        stores = [tmp / f"w{n}.zarr" for n in args.workers]
        identical = all(same_store(stores[0], s) for s in stores[1:])
        print(f"stores bit-identical across worker counts: {'yes' if identical else 'NO'}")
        save(args, "sweep_scaling", ["workers", "seconds", "points/s", "speedup", "batches",
                                     "bit-identical"],
             [[n, round(wall, 2), round(sweep.n_points / wall, 2), round(base / wall, 2), b,
               "yes" if identical else "NO"] for n, wall, b, *_ in rows], argv)
        return 0 if identical else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
