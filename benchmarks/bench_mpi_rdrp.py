"""MPI-level receiver-driven rendezvous on the Dragonfly with slow receivers:
IMB Alltoall and PingPong, EXTOLL MPI's single GET against Schneider et al.'s chunked rendezvous
(mpi.rendezvous chunked: first chunk with the request, at most c chunk gets outstanding per
receive), without and with slow receivers.

    python benchmarks/bench_mpi_rdrp.py [--bytes 65536] [--factor 8] [--gets 1,4,30]
                                        [--chunk 4096] [--record]

The machine: example dragonfly-72 (Schneider et al.'s routers, buffers and links at 72 nodes) with
one rank per node, minimal routing (rank programs need in-order pairs) and 2 VCs. Slow
receivers: one node (1.4 %) sinking --factor times slower than the link, drawn by the seed;
for PingPong the seed is the first whose slow node is rank 1's (the receiver of the ping), so
that the pair measures a slow receiver. Times: IMB's figures (mean over --iterations after one
warm-up): PingPong half a round trip, Alltoall one call; the bandwidth column is bytes per
microsecond a rank moves (PingPong: message / time).
"""
from __future__ import annotations

import argparse
import time

from record import add_option, save


def config(args, bench, slow, rendezvous, gets=30, seed=0):
    from extoll_vec.examples import get_example
    over = {"network.routing": "table", "network.vcs": 2, "mpi.ranks_per_node": 1,
            "workload.kind": "imb", "workload.benchmark": bench,
            "workload.message_bytes": args.bytes, "workload.iterations": args.iterations,
            "workload.warmup": 1, "workload.ranks": 72,
            "network.slow_nodes": 1 if slow else 0, "network.slow_factor": args.factor,
            "seed": seed}
    if rendezvous == "chunked":
        over.update({"mpi.rendezvous": "chunked", "mpi.chunk_bytes": args.chunk,
                     "mpi.outstanding_gets": gets})
    cfg = get_example("dragonfly-72").replace(**over)
    return cfg


def pingpong_seed(args) -> int:
    """The first seed whose slow node is rank 1's node (node 1: one rank per node)."""
    from extoll_vec.workloads.patterns import slow_nodes
    return next(s for s in range(10_000) if 1 in slow_nodes(72, 1, s))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bytes", type=int, default=65536)
    ap.add_argument("--factor", type=float, default=8.0)
    ap.add_argument("--gets", default="1,4,30", help="outstanding gets c of the chunked runs")
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--iterations", type=int, default=4)
    add_option(ap)
    args = ap.parse_args(argv)
    from extoll_vec.analysis.extoll.common import measured_us
    from extoll_vec.engine.batch import simulate
    from extoll_vec.examples import get_example
    simulate([get_example("tiny")])   # compile or load the kernels outside the timings
    rows = []
    pp_seed = pingpong_seed(args)
    for bench in ("PingPong", "Alltoall"):
        seed = pp_seed if bench == "PingPong" else 0
        cases = [("get", 0)] + [("chunked", int(c)) for c in args.gets.split(",")]
        for slow in (False, True):
            cfgs = [config(args, bench, slow, mode, c or 30, seed) for mode, c in cases]
            t0 = time.perf_counter()
            ds = simulate(cfgs)
            wall = time.perf_counter() - t0
            for i, (mode, c) in enumerate(cases):
                us = measured_us(ds, i, cfgs[i])
                bw = args.bytes / us if bench == "PingPong" else args.bytes * 71 / us
                label = "single GET" if mode == "get" else f"chunked c={c}"
                print(f"{bench:<9} {'1 slow x%g' % args.factor if slow else 'no slow':<10} "
                      f"{label:<14} {us:10.1f} us  {bw:8.1f} B/us", flush=True)
                rows.append([bench, "1 slow" if slow else "none", label, round(us, 2),
                             round(bw, 1)])
            print(f"  ({len(cfgs)} runs in {wall:.1f} s)", flush=True)
    save(args, "bench_mpi_rdrp", ["benchmark", "slow receivers", "rendezvous", "time us",
                                  "bytes/us per rank"], rows)


if __name__ == "__main__":
    main()
