"""Why does static flow control run IMB Allreduce faster than the reference?

    python lab/scripts/allreduce_desync.py                  # 2x2x2, 4x4x1, crossbar16: about a minute
    python lab/scripts/allreduce_desync.py --dims 4x4x4     # the paper's 1024 ranks, about 15 minutes
    python lab/scripts/allreduce_desync.py --iterations 20 --seed 1

The replicated IMB sweep (docs/reproduction/extoll.md, extoll_imb) has static Allreduce at 8,
16 and 32 slots per process 4-10 % below the reference, against the paper's lower bound. This
runs IMB Allreduce (2 KB, recursive doubling: log2(n) sendrecv steps, 16 ranks per node unless `/R`, one
untimed Allreduce and a barrier before the timed ones, ranks leaving the barrier up to 2 us
apart) and follows every rank through the timed repetitions: the batch advances `--sample`
cycles at a time and the time a rank leaves each sendrecv's WAITALL is taken at the sample
after it (the resolution: `--sample` cycles, under 1 us by default).

Printed per case, for the first five repetitions and for the last ten: the mean time per
repetition (from one median step completion to the next repetition's; so the first five are
repetitions 2-6) and the mean spread of a step (latest minus
earliest rank leaving the same sendrecv). A case whose spread grows over the repetitions is
desynchronizing; if its repetitions slow down as the spread grows, the time the paper reports
(the mean over all repetitions) measures how far the ranks drifted apart, not only the cost
of the protocol. Probes beside the four protocol cases, each against its own reference:
`progress 0` (no mailbox retrieval on entering an MPI call, only while waiting in one:
host.progress_packets) and `fifo never full` (a 100,000-packet requester FIFO, so no CPU
blocks in a PIO write or a slot release: host.posted_writes), both at once, and `no LiMIC`
(same-node messages go through the NIC as VELO packets: mpi.limic). `--dims
crossbarN` runs N nodes on one crossbar (no link shared by two node pairs) instead of a mesh;
`/R` after either, R ranks per node instead of 16 (`--dims crossbar64/1`: one rank per node).
Simulated times are deterministic: the figures do not depend on the machine's load.
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

# record.py and the shared helpers stay in benchmarks/
_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "benchmarks"))

import argparse
import math

import numpy as np

from extoll_vec import dtypes as D
from extoll_vec.engine.batch import Batch
from extoll_vec.examples import get_example
from record import add_option, save
from reference_minimum import NEVER_FULL

FIRST, LAST = 5, 10      # repetitions averaged at the start and at the end


def topology(mesh: str) -> dict:
    """Overrides for `mesh`: "XxYxZ" (a mesh) or "crossbarN" (N nodes on one crossbar), with
    "/R" for R ranks per node instead of the paper's 16; ValueError otherwise, or when the
    ranks are not a power of two."""
    mesh, _, per_node = mesh.partition("/")
    over = {"mpi.ranks_per_node": int(per_node) if per_node else 16}
    if mesh.startswith("crossbar"):
        over.update({"topology.kind": "crossbar", "topology.p": int(mesh[len("crossbar"):])})
        nodes = over["topology.p"]
    else:
        over["topology.dims"] = tuple(int(x) for x in mesh.split("x"))
        nodes = math.prod(over["topology.dims"])
    n = over["mpi.ranks_per_node"] * nodes
    # every rank runs log2(n) sendrecv steps only if n is a power of two (else some ranks fold in)
    if over["mpi.ranks_per_node"] < 1 or n < 2 or n & (n - 1):
        raise ValueError(mesh)
    return {**over, "workload.ranks": n}


def allreduce_config(mesh: str, iterations: int, seed: int, protocol: str, slots: int,
                     **more):
    topo = topology(mesh)
    n = topo["workload.ranks"]
    over = {"workload.kind": "imb", "workload.benchmark": "Allreduce", "workload.warmup": 1,
            "workload.iterations": iterations, "workload.start_skew_ns": 2000,
            **topo, "protocol.credit_slots": 2,
            "protocol.name": protocol, "seed": seed, **more}
    if protocol != "none":
        over.update({"protocol.mailbox_slots": slots * n, "protocol.piggyback": True})
    return get_example("alltoall-1024").replace(**over)


def timed_steps(ops: np.ndarray, start: int) -> tuple[int, int, set[int]]:
    """The timed loop's first and last rows of the rank whose program starts at `start`, and
    its WAITALL rows (one per sendrecv step)."""
    pc = start
    while ops[pc, 0] != D.OP_LOOP:
        pc += 1
    lo = hi = pc + 1
    while ops[hi, 0] != D.OP_ENDLOOP:
        hi += 1
    return lo, hi, {w for w in range(lo, hi) if ops[w, 0] == D.OP_WAITALL}


def step_completions(cfg, sample: int) -> np.ndarray:
    """[ranks, timed steps]: the cycle (at `sample` resolution) each rank left each timed
    sendrecv step."""
    bt = Batch([cfg])
    S, ops, n = bt.S, bt.ops[0], cfg.n_ranks
    loops = [timed_steps(ops, int(bt.starts[0, r])) for r in range(n)]
    done: list[list[int]] = [[] for _ in range(n)]
    last = S.rk_pc[0].copy()
    t = 0
    while True:
        t += sample
        running = bt._advance(t, None, None)
        if S.status[0] != 0:
            raise SystemExit(f"the run failed at cycle {int(S.now[0])} (status {S.status[0]})")
        pc = S.rk_pc[0]
        for r in np.nonzero(pc != last)[0]:
            a, b = int(last[r]), int(pc[r])
            lo, hi, waits = loops[r]
            if not lo - 1 <= a <= hi:
                continue
            rows = range(a, b) if b >= a else [*range(a, hi + 1), *range(lo, b)]
            done[r] += [t] * sum(1 for w in rows if w in waits)
        last = pc.copy()
        if running == 0:
            break
    steps = min(len(d) for d in done)
    return np.array([d[:steps] for d in done], np.int64)


def summary(cfg, sample: int) -> list[float]:
    """us per repetition and step spread in us, first FIRST and last LAST repetitions; the
    mean per repetition over all."""
    at = step_completions(cfg, sample) * cfg.network.cycle_ns / 1000.0
    per_rep = int(math.log2(cfg.n_ranks))
    reps = at.shape[1] // per_rep
    ends = np.median(at, axis=0)[per_rep - 1::per_rep][:reps]
    rep_us = np.diff(ends)
    spread = (at.max(0) - at.min(0))[:reps * per_rep].reshape(reps, per_rep).mean(1)
    return [rep_us[:FIRST].mean(), rep_us[-LAST:].mean(), spread[:FIRST].mean(),
            spread[-LAST:].mean(), rep_us.mean()]


PROGRESS_0 = {"host.progress_packets": 0}
FIFO_NEVER_FULL = {"network.nic_fifo_packets": NEVER_FULL}
PROBES = [("progress 0", PROGRESS_0), ("fifo never full", FIFO_NEVER_FULL),
          ("both probes", {**PROGRESS_0, **FIFO_NEVER_FULL}), ("no LiMIC", {"mpi.limic": False})]
# (protocol, slots per process, overrides, probe): the four protocol cases, then each probe
# on the reference and on static 16
CASES = ([("none", 0, {}, ""), ("static", 16, {}, ""), ("static", 64, {}, ""),
          ("dynamic", 16, {}, "")]
         + [(proto, slots, more, probe) for probe, more in PROBES
            for proto, slots in (("none", 0), ("static", 16))])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", action="append", default=[], metavar="XxYxZ",
                    help="mesh of nodes XxYxZ or crossbarN, /R for R ranks per node (16) "
                         "(repeatable; default 2x2x2, 4x4x1 and crossbar16)")
    ap.add_argument("--iterations", type=int, default=50,
                    help="timed repetitions (the replicated sweep's 50)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=20, metavar="CYCLES",
                    help="cycles between two looks at the ranks (the timing resolution)")
    add_option(ap)
    args = ap.parse_args()
    if args.iterations < FIRST + LAST:
        ap.error(f"--iterations: got {args.iterations}; allowed: >= {FIRST + LAST}")
    meshes = args.dims or ["2x2x2", "4x4x1", "crossbar16"]
    head = (f"{'mesh':<14}{'case':<28}{'us/rep first':>13}{'last':>8}{'spread first':>14}"
            f"{'last':>8}{'us/rep all':>12}{'vs ref':>9}")
    print(f"IMB Allreduce 2 KB, {args.iterations} timed repetitions, seed {args.seed}; first "
          f"{FIRST} and last {LAST} repetitions; spread: latest minus earliest rank leaving a "
          "step (us)", flush=True)
    print(head, flush=True)
    rows = []
    for mesh in meshes:
        try:
            topology(mesh)
        except ValueError:
            ap.error(f"--dims: got {mesh!r}; allowed: XxYxZ (e.g. 4x4x4) or crossbarN, "
                     "either optionally /R (R ranks per node), a power of two ranks in all")
        ref: dict[str, float] = {}
        for proto, slots, more, probe in CASES:
            cfg = allreduce_config(mesh, args.iterations, args.seed, proto, slots, **more)
            s = summary(cfg, args.sample)
            ref.setdefault(probe, s[-1])
            name = (f"{proto} {slots}" if slots else proto) + (f", {probe}" if probe else "")
            vs = 100 * (s[-1] / ref[probe] - 1)
            print(f"{mesh:<14}{name:<28}{s[0]:>13.1f}{s[1]:>8.1f}{s[2]:>14.1f}{s[3]:>8.1f}"
                  f"{s[4]:>12.1f}{vs:>+8.1f}%", flush=True)
            rows.append([mesh, name, *(round(x, 1) for x in s), round(vs, 1)])
    save(args, "allreduce_desync", ["mesh", "case", "us/rep first", "us/rep last",
                                    "spread first us", "spread last us", "us/rep all",
                                    "vs its reference %"], rows)


if __name__ == "__main__":
    main()
