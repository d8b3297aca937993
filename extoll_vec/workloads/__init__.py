"""Rank programs: what every MPI rank does, as an op table the host kernel interprets.

    build_program(cfg)                     Program for a RunConfig (dispatch on workload.kind)
    multi_pingpong(...), alltoall_groups(...)   the paper's generators (5.3, 7.2)
    multiphase(...)                        multi-phase alltoalls (7.3)
    imb_program(n, benchmark, bytes, it)   Intel MPI Benchmarks (7.4; algorithms in mpi_coll)
    latency_program(...), bandwidth_program(...)   Liu and Panda's micro-benchmarks (6.2)
    nas_program(name, n, iterations)       Liu and Panda's NAS class A skeletons (6.3)
    barrier_rows(ranks), alltoall_rows(...)   row blocks to splice into programs
    synthetic_destinations(kind, n, seed)  per-node destinations for network-only traffic
    skewed(prog, cfg)                      prog with the config's start skew (each rank starts late)
    ProgramBuilder                         write programs by hand (send/recv/loop/...)
    check_balanced(prog), max_outstanding(prog), validate_program(prog)   static analysis

Modules: program.py (encoding, builder, analysis), collectives.py (row blocks), common.py
(marks, argument check), the generators patterns.py, multiphase.py, imb.py (with mpi_coll.py,
mpi_rooted.py), ib_micro.py, nas.py (nas_kernels.py, nas_apps.py, with mpich.py), and
build.py, the dispatch from a RunConfig, the one module that imports them.
"""
from .build import build_program, skewed, snapshot_count, start_delays_ns
from .collectives import alltoall_rows, barrier_rounds, barrier_rows
from .common import MARK_DONE, MARK_START
from .ib_micro import bandwidth_program, latency_program
from .imb import IMB_BENCHMARKS, imb_program
from .multiphase import multiphase, paper_phases, phase_mark
from .nas import messages_per_rank, nas_program
from .patterns import alltoall_groups, multi_pingpong, synthetic_destinations
from .program import (Program, ProgramBuilder, assemble, assemble_blocks, check_balanced, empty_program,
                      make_program, max_outstanding, message_counts, snapshot_counts,
                      validate_program, with_start_delays)

__all__ = [
    "IMB_BENCHMARKS", "MARK_DONE", "MARK_START", "Program", "ProgramBuilder", "alltoall_groups",
    "bandwidth_program", "latency_program",
    "alltoall_rows", "assemble", "assemble_blocks",
    "barrier_rounds", "barrier_rows", "build_program", "check_balanced", "empty_program",
    "imb_program", "make_program", "max_outstanding", "message_counts", "multi_pingpong",
    "messages_per_rank", "multiphase", "nas_program", "paper_phases", "phase_mark", "skewed", "snapshot_count", "snapshot_counts",
    "start_delays_ns", "synthetic_destinations", "validate_program", "with_start_delays",
]
