"""From a RunConfig to its rank programs: the dispatch on workload.kind to the generators, the
configured start skew, and what is known of the programs without building them. The only
module that imports the generators; they import none of it."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..config import RunConfig
from ..errors import ConfigError
from .ib_micro import bandwidth_program, latency_program
from .imb import imb_program
from .multicast import mcast_alltoall, mcast_blast, mcast_latency
from .multiphase import multiphase
from .nas import nas_program
from .patterns import alltoall_groups, multi_pingpong
from .common import MARK_START
from .program import Program, empty_program, with_start_delays


def start_delays_ns(n_ranks: int, skew_ns: int, seed: int, stream: int = 1) -> np.ndarray:
    """When each rank starts (workload.start_skew_ns), int64 [n_ranks] ns, uniform in
    0..skew_ns, from numpy.random.Generator(PCG64([seed, stream])): a stream of its own (stream
    0, PCG64(seed), draws the synthetic permutations), fixed by the seed alone, so a point
    starts alike in any batch, on any worker."""
    rng = np.random.Generator(np.random.PCG64([int(seed), int(stream)]))
    return rng.integers(0, int(skew_ns), size=int(n_ranks), endpoint=True)


def timed_delays_ns(n_ranks: int, skew_ns: int, seed: int) -> np.ndarray:
    """When each rank leaves the barrier before its timed part (MARK_START), late by as much
    as start_delays_ns draws, from stream 2: independent of the start delays."""
    return start_delays_ns(n_ranks, skew_ns, seed, stream=2)


def skewed(prog: Program, cfg: RunConfig) -> Program:
    """prog with cfg's start skew applied (workload.start_skew_ns; 0: prog itself): each rank
    starts late, and again leaves the barrier before its timed part late (where a warm-up puts
    one before MARK_START): the barrier would otherwise erase the first skew, and replicates
    after a warm-up would all time the same run."""
    skew = cfg.workload.start_skew_ns
    if skew == 0 or prog.n_ranks == 0:
        return prog
    n = prog.n_ranks
    return with_start_delays(prog, start_delays_ns(n, skew, cfg.seed),
                             timed_delays_ns(n, skew, cfg.seed), MARK_START)


def snapshot_count(cfg: RunConfig) -> int:
    """Credit snapshots (OP_SNAPSHOT) the busiest rank of cfg's program takes: one before every
    alltoall of a multiphase run (rank 0, section 7.3), none elsewhere. Known without building
    the program, so a sweep store can be sized up front."""
    w = cfg.workload
    return len(w.phase_ranks) * w.iterations if w.kind == "multiphase" else 0


def build_program(cfg: RunConfig) -> Program:
    """The rank programs of a validated run configuration (dispatch on workload.kind)."""
    w = cfg.workload
    if w.synthetic:
        return empty_program(f"{w.kind}: network-only traffic, no rank programs")
    if w.kind == "multi_pingpong":
        from ..topology import build, node_pair_at_hops
        src, dst = node_pair_at_hops(build(cfg.topology), w.hops)
        prog = multi_pingpong(w.ranks, cfg.mpi.ranks_per_node, int(src), int(dst), w.pairs,
                              w.message_bytes, w.iterations, w.warmup)
        return dataclasses.replace(prog, description=f"{prog.description} ({w.hops} hop(s))")
    if w.kind == "alltoall":
        return alltoall_groups(w.ranks, w.groups, w.group_size, w.message_bytes, w.iterations,
                               w.warmup)
    if w.kind == "multiphase":
        return multiphase(w.ranks, w.phase_ranks, w.message_bytes, w.iterations)
    if w.kind == "imb":
        return imb_program(w.ranks, w.benchmark, w.message_bytes, w.iterations, w.warmup)
    if w.kind == "latency":
        return latency_program(w.ranks, w.message_bytes, w.iterations, w.warmup)
    if w.kind == "bandwidth":
        return bandwidth_program(w.ranks, w.message_bytes, w.window, w.iterations, w.blocking,
                                 w.warmup)
    if w.kind == "mcast_latency":
        return mcast_latency(w.ranks, w.group_size, w.message_bytes, w.warmup)
    if w.kind == "mcast_blast":
        return mcast_blast(w.ranks, w.group_size, w.message_bytes, w.iterations, w.warmup)
    if w.kind == "mcast_alltoall":
        return mcast_alltoall(w.ranks, w.group_size, w.message_bytes, w.iterations)
    if w.kind == "nas":
        return nas_program(w.nas, w.ranks, w.nas_iterations or None, w.compute_scale)
    raise ConfigError("workload.kind", f"{w.kind!r} programs are written in Python "
                      "(ProgramBuilder) and passed to the engine; build_program cannot make one "
                      "from the configuration")
