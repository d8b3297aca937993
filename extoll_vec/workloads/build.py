"""From a RunConfig to its rank programs: the registered kind's generator (registry.py), the
configured start skew, and what is known of the programs without building them."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError
from .common import MARK_START
from .program import Program, empty_program, with_start_delays
from .registry import workload

if TYPE_CHECKING:   # config.py imports the registry: no import of config at run time here
    from ..config import RunConfig


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
    """Credit snapshots (OP_SNAPSHOT) the busiest rank of cfg's program takes (the registered
    kind's `snapshots`: one before every alltoall of a multiphase run, section 7.3; none
    elsewhere). Known without building the program, so a sweep store can be sized up front."""
    return workload(cfg.workload.kind).snapshots(cfg)


def build_program(cfg: RunConfig) -> Program:
    """The rank programs of a validated run configuration (its kind's registered generator)."""
    w, rec = cfg.workload, workload(cfg.workload.kind)
    if rec.synthetic:
        return empty_program(f"{w.kind}: network-only traffic, no rank programs")
    if rec.program is None:
        raise ConfigError("workload.kind", f"{w.kind!r} programs are written in Python "
                          "(ProgramBuilder) and passed to the engine; build_program cannot make "
                          "one from the configuration")
    return rec.program(cfg)
