"""Batching: which points one kernel call advances together, and what a batch costs.

Points with equal engine.batch_key (equal array shapes, one build of the kernels) may share a
batch. plan_batches() splits each such group into batches whose estimated state memory stays
under a budget, small enough that every worker gets several batches (load balance), and no
larger than max_batch.
Batches are ordered largest estimated work first, so the long ones start early.

The memory estimate mirrors the array sizes engine.Batch allocates (state.FIELDS); it is an
estimate for planning, checked against the real allocation in the tests.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..config import RunConfig
from ..workloads.registry import workload

DEFAULT_MAX_BATCH = 8
DEFAULT_BATCH_MEMORY = 2 << 30          # bytes of simulation state per batch
BATCHES_PER_WORKER = 4                  # aim for at least this many batches per worker
# Rough speed of one worker, used only for the --dry-run time estimate: packets delivered per
# second, the order of magnitude of benchmarks/bench_engine.py on a current core.
PACKETS_PER_SECOND = 1_000_000


@dataclass(frozen=True)
class Estimate:
    """Planning figures of one point."""
    state_bytes: int     # simulation state (engine.Batch arrays) for this point alone
    packets: int         # packets the point sends (approximate; control packets not counted)


@dataclass(frozen=True)
class PlannedBatch:
    index: int
    points: tuple[int, ...]      # sweep point numbers, ascending
    state_bytes: int
    packets: int

    @property
    def seconds(self) -> float:
        """Rough single-worker wall time."""
        return self.packets / PACKETS_PER_SECOND


@functools.lru_cache(maxsize=256)
def _topology(topo_cfg):
    from ..topology import build
    return build(topo_cfg)


@functools.lru_cache(maxsize=2)
def _program(cfg_key):
    """The rank program of a point (it depends on these sections only); the last two kept,
    since check_points and the figures below read the same one in turn."""
    from ..workloads import build_program
    return build_program(RunConfig(topology=cfg_key[0], network=cfg_key[1], mpi=cfg_key[2],
                                   workload=cfg_key[3]))


def program_of(cfg: RunConfig):
    """cfg's rank program (cached), or None for hand-written programs and network-only
    traffic."""
    if not cfg.n_ranks or workload(cfg.workload.kind).hand_written:
        return None
    return _program((cfg.topology, cfg.network, cfg.mpi, cfg.workload))


def topology_of(cfg: RunConfig):
    """cfg's built topology (cached)."""
    return _topology(cfg.topology)


@functools.lru_cache(maxsize=256)
def _program_figures(cfg_key) -> tuple[int, ...]:
    """(messages sent, max inbound messages per rank, max isends, max irecvs, pairs, peers of
    the busiest rank); the last two of the pair table of a protocol without Protocol.every_pair
    and a program without snapshots (engine/pairs.py)."""
    from ..engine.pairs import pair_table, pair_table_size
    from ..workloads import message_counts
    cfg = RunConfig(topology=cfg_key[0], network=cfg_key[1], mpi=cfg_key[2], workload=cfg_key[3])
    prog = _program(cfg_key)
    if prog.n_ranks == 0:
        return 0, 0, 1, 1, 0, 0
    _src, dst, sent, _recv, _anyc = message_counts(prog)
    inbound = np.bincount(dst, weights=sent, minlength=prog.n_ranks) if len(dst) else np.zeros(1)
    return (int(sent.sum()), int(inbound.max()), int(prog.max_isends), int(prog.max_irecvs),
            *pair_table_size(pair_table(cfg, prog)[0]))


def _packets_per_message(cfg: RunConfig) -> tuple[int, int]:
    """(packets on the wire, eager packets into the mailbox) for one message."""
    nbytes = cfg.workload.message_bytes
    if nbytes <= cfg.mpi.eager_threshold:
        p = cfg.mpi.packets(nbytes)
        return p, p
    return 1 + -(-nbytes // cfg.network.rma_packet_bytes) + 1, 1   # request, data, done


def _sizes(cfg: RunConfig) -> dict[str, int]:
    """The engine's size table for a batch of one point (engine.state_sizes), from the
    program's figures without simulating (eager packets estimated from the message size)."""
    from ..engine import ProgramFigures, state_sizes
    from ..protocols.registry import protocol
    from ..workloads import snapshot_count
    pairs = peers = None        # the dense pair table (hand-written programs: not known here)
    if cfg.n_ranks and not workload(cfg.workload.kind).hand_written:
        _msgs, inbound, max_is, max_ir, pairs, peers = _program_figures(
            (cfg.topology, cfg.network, cfg.mpi, cfg.workload))
    else:
        inbound, max_is, max_ir = 0, 1, 1
        if not cfg.n_ranks:
            pairs = peers = 0
    from ..engine.sizing import ring_slots
    snaps = snapshot_count(cfg)
    pk_in = _packets_per_message(cfg)[1] * inbound
    if snaps:
        pairs = peers = None
    elif protocol(cfg.protocol.name).every_pair and pairs is not None and cfg.n_ranks:
        # the idle senders' spare entries (engine/pairs.py), at most one per other rank
        nr = cfg.n_ranks
        spare = min(nr - 1, int(protocol(cfg.protocol.name).spare_entries(cfg, pk_in)))
        pairs, peers = min(pairs + nr * spare, nr * nr), min(peers + spare, nr)
    fig = ProgramFigures(max_is, max_ir, inbound, pk_in, snaps, pairs, peers, ring_slots(pk_in))
    return state_sizes([cfg], _topology(cfg.topology), [fig])


def _state_bytes(sizes: dict[str, int]) -> int:
    from ..state import FIELDS
    total = 0
    for dtype, dims, _fill in FIELDS.values():
        total += np.dtype(dtype).itemsize * math.prod(sizes[d] if isinstance(d, str) else d
                                                      for d in dims)
    return total


@functools.lru_cache(maxsize=4096)
def _estimate(cfg: RunConfig) -> Estimate:
    w = cfg.workload
    if w.synthetic:
        n = cfg.topology.n_nodes
        packets = int(w.injection_rate * n * (w.warmup_cycles + w.measure_cycles) / w.packet_flits)
    elif workload(w.kind).hand_written:
        packets = 0
    else:
        msgs = _program_figures((cfg.topology, cfg.network, cfg.mpi, cfg.workload))[0]
        packets = msgs * _packets_per_message(cfg)[0]
    return Estimate(_state_bytes(_sizes(cfg)), packets)


def estimate(cfg: RunConfig) -> Estimate:
    """Planning figures of one point (cached on the parts of the config that matter)."""
    return _estimate(RunConfig(topology=cfg.topology, network=cfg.network, mpi=cfg.mpi,
                               protocol=cfg.protocol, workload=cfg.workload))


def batch_size(n_todo: int, workers: int, per_point_bytes: int, max_batch: int = DEFAULT_MAX_BATCH,
               memory: int = DEFAULT_BATCH_MEMORY, threads: int = 1) -> int:
    """Points per batch: at most max_batch, within the memory budget, and small enough for
    BATCHES_PER_WORKER batches per worker, but at least `threads` (a worker that advances
    that many members of a batch at once, runner.member_threads, needs them to keep busy)."""
    by_memory = max(1, memory // max(per_point_bytes, 1))
    by_balance = max(threads, math.ceil(n_todo / (max(workers, 1) * BATCHES_PER_WORKER)))
    return max(1, min(max_batch, by_memory, by_balance))


def plan_batches(configs: Sequence[RunConfig], todo: Sequence[int], workers: int,
                 max_batch: int = DEFAULT_MAX_BATCH,
                 memory: int = DEFAULT_BATCH_MEMORY, threads: int = 1) -> list[PlannedBatch]:
    """Batches covering the points `todo` (indices into configs), largest work first;
    `threads`: members each batch advances at once (batch_size)."""
    from ..engine import batch_key
    groups: dict[tuple, list[int]] = {}
    for i in sorted(set(todo)):
        groups.setdefault(batch_key(configs[i]), []).append(i)
    est = {i: estimate(configs[i]) for i in todo}
    out: list[tuple[int, tuple[int, ...], int, int]] = []
    for pts in groups.values():
        per_point = max(est[i].state_bytes for i in pts)
        size = batch_size(len(todo), workers, per_point, max_batch, memory, threads)
        k = math.ceil(len(pts) / size)            # near-equal batches: sizes differ by <= 1
        for j in range(k):
            part = tuple(pts[j * len(pts) // k:(j + 1) * len(pts) // k])
            # a batch sizes its arrays for its largest member (engine.Batch takes maxima)
            out.append((sum(est[i].packets for i in part), part,
                        len(part) * max(est[i].state_bytes for i in part), 0))
    out.sort(key=lambda t: (-t[0], t[1]))
    return [PlannedBatch(n, part, nbytes, packets)
            for n, (packets, part, nbytes, _) in enumerate(out)]
