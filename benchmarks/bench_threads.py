"""Member threads: a 2-member batch on 1 and on 2 threads, and a small sweep on
one worker with 2 threads against 2 single-threaded workers.

    python benchmarks/bench_threads.py                      # 2 x alltoall-1024; 4 x alltoall-256
    python benchmarks/bench_threads.py --example alltoall-256 --sweep-points 2   # quick
    python benchmarks/bench_threads.py --skip-sweep --record

Batch: two members of the example, host.match_ns apart by a nanosecond (different points of
equal work), built once per thread count; Batch.run is timed (not the build), and the two
runs' results are compared bit for bit; the process's CPU seconds beside the wall time show
whether the two threads ran at once (CPU about twice the wall time) or shared a busy core. Sweep: --sweep-points points of --sweep-example (the
same variation) through run_sweep on a LocalCluster of (workers x threads) 1x1, 1x2 and 2x1,
kernels loaded on every worker before timing; the stores are compared bit for bit. The
speedup needs two idle cores: the load average before and after is printed (and recorded).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from record import add_option, save
from sweep_scaling import same_store


def members(example: str, n: int):
    from extoll_vec.examples import get_example
    c = get_example(example)
    return [c.replace(**{"host.match_ns": c.host.match_ns + i}) for i in range(n)]


def batch_runs(example: str, threads: list[int]) -> list[tuple[int, float]]:
    import numpy as np

    from extoll_vec.engine import Batch
    rows, first = [], None
    for k in threads:
        batch = Batch(members(example, 2))
        t0, c0 = time.perf_counter(), time.process_time()
        batch.run(threads=k)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        res = batch.results()
        if first is None:
            first = res
        elif any(not np.array_equal(res[n], first[n], equal_nan=res[n].dtype.kind == "f")
                 for n in res):
            raise SystemExit(f"{k} threads: results differ from {threads[0]} thread(s)")
        rows.append((k, wall, cpu))
        print(f"  batch of 2 x {example} on {k} thread(s): {wall:7.2f} s ({cpu:.2f} s CPU)",
              flush=True)
    return rows


def sweep_runs(example: str, points: int, layouts, tmp: Path):
    from extoll_vec.sweep import build_sweep
    from extoll_vec.sweep.cluster import connect, load_cluster_spec
    from extoll_vec.sweep.runner import run_sweep
    from extoll_vec.sweep.tasks import warm_kernels
    m = members(example, 1)[0].host.match_ns
    sweep = build_sweep({"name": "threads", "base": {"example": example},
                         "axes": {"host.match_ns": [m + i for i in range(points)]}})
    rows = []
    for workers, threads in layouts:
        out = tmp / f"w{workers}t{threads}.zarr"
        with connect(load_cluster_spec(workers=workers, threads=threads), quiet=True) as client:
            client.wait_for_workers(workers)
            client.run(warm_kernels)                     # every worker, not timed
            t0 = time.perf_counter()
            res = run_sweep(sweep, out, client, quiet=True, workers=workers, threads=threads)
            wall = time.perf_counter() - t0
        assert res.complete and not res.failed, res
        rows.append((workers, threads, wall, res.batches, out))
        print(f"  sweep of {points} x {example}, {workers} worker(s) x {threads} thread(s): "
              f"{wall:7.2f} s ({res.batches} batches)", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--example", default="alltoall-1024", help="the batch's members")
    ap.add_argument("--sweep-example", default="alltoall-256")
    ap.add_argument("--sweep-points", type=int, default=4)
    ap.add_argument("--skip-sweep", action="store_true")
    add_option(ap)
    args = ap.parse_args(argv)

    load0 = os.getloadavg()[0]
    print(f"load average before: {load0:.2f} ({os.cpu_count()} cores)", flush=True)
    from extoll_vec.engine import run_batch
    run_batch(members("tiny", 2), threads=2)           # kernels loaded, not timed
    table = []
    batch = batch_runs(args.example, [1, 2])
    base = batch[0][1]
    for k, wall, cpu in batch:
        table.append([f"batch 2 x {args.example}", f"1 x {k}", round(wall, 2),
                      round(base / wall, 2), round(cpu, 2), "yes"])
    if not args.skip_sweep:
        tmp = Path(tempfile.mkdtemp(prefix="bench-threads-"))
        try:
            rows = sweep_runs(args.sweep_example, args.sweep_points, [(1, 1), (1, 2), (2, 1)],
                              tmp)
            same = all(same_store(rows[0][4], r[4]) for r in rows[1:])
            for workers, threads, wall, batches, _ in rows:
                table.append([f"sweep {args.sweep_points} x {args.sweep_example} "
                              f"({batches} batches)", f"{workers} x {threads}", round(wall, 2),
                              round(rows[0][2] / wall, 2), "", "yes" if same else "NO"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    load1 = os.getloadavg()[0]
    print(f"\nload average before {load0:.2f}, after {load1:.2f}")
    print(f"{'run':<38} {'workers x threads':>17} {'seconds':>8} {'speedup':>8} "
          f"{'CPU s':>7} identical")
    for row in table:
        print(f"{row[0]:<38} {row[1]:>17} {row[2]:8.2f} {row[3]:8.2f} {row[4]:>7} {row[5]}")
    save(args, "bench_threads", ["run", "workers x threads", "seconds", "speedup",
                                 "CPU seconds (this process)", "bit-identical"],
         table + [[f"load average before {load0:.2f}, after {load1:.2f}", "", "", "", "", ""]],
         argv)
    return 0 if all(r[5] == "yes" for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
