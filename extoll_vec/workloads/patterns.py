"""Workload generators (EXTOLL paper, sections 5.3 and 7.2) and synthetic traffic destinations."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..dtypes import OP_ENDLOOP, OP_LOOP, OP_MARK
from .collectives import alltoall_rows, barrier_rows
from .common import MARK_DONE, MARK_START, int_arg, pingpong_body, timed_loops
from .program import Program, ProgramBuilder, assemble_blocks
from .registry import Workload


def multi_pingpong(n_ranks: int, ranks_per_node: int, src_node: int, dst_node: int, pairs: int,
                   message_bytes: int, iterations: int, warmup: int = 0) -> Program:
    """IMB Multi-PingPong between two nodes (paper section 5.3, Figures 4-5).

    For i < pairs, rank src_node*rpn + i runs `iterations` times: blocking send of message_bytes
    to rank dst_node*rpn + i, then blocking receive of its reply; its partner receives, then
    sends. Active ranks write MARK_START before and MARK_DONE after their loop; every other
    rank's program is just OP_END. With warmup > 0 each pair first exchanges `warmup` untimed
    round trips.
    """
    rpn = int_arg("ranks_per_node", ranks_per_node, 1)
    n_ranks = int_arg("n_ranks", n_ranks, 1)
    n_nodes = n_ranks // rpn
    if n_nodes * rpn != n_ranks:
        raise ValueError(f"n_ranks ({n_ranks}) must be a multiple of ranks_per_node ({rpn})")
    src_node = int_arg("src_node", src_node, 0, n_nodes - 1)
    dst_node = int_arg("dst_node", dst_node, 0, n_nodes - 1)
    if src_node == dst_node:
        raise ValueError(f"src_node and dst_node must differ, both are {src_node}")
    pairs = int_arg("pairs", pairs, 1, rpn)
    message_bytes = int_arg("message_bytes", message_bytes, 0)
    iterations = int_arg("iterations", iterations, 1)
    warmup = int_arg("warmup", warmup, 0)

    b = ProgramBuilder(n_ranks)
    for i in range(pairs):
        s, d = src_node * rpn + i, dst_node * rpn + i
        for me, peer, first_send in ((s, d, True), (d, s, False)):
            timed_loops(b, me, warmup, iterations,
                        pingpong_body(b, me, peer, first_send, message_bytes))
    return b.build(f"multi_pingpong: {pairs} pair(s) node {src_node} <-> node {dst_node}, "
                   f"{message_bytes} B x {iterations}")


def alltoall_groups(n_ranks: int, groups: int, group_size: int, message_bytes: int,
                    iterations: int, warmup: int = 0) -> Program:
    """Concurrent non-optimized alltoalls (paper 5.3, Figure 10; 1x1024, 2x512, 4x256, 8x128).

    group_size 0 means n_ranks // groups; group g holds ranks [g*group_size, (g+1)*group_size).
    A member with index i in its group runs

        MARK_START; LOOP iterations { SEND to i+1, ..., i-1; RECV from i+1, ..., i-1 } (mod size);
        MARK_DONE; barrier

    and a rank outside every group runs MARK_START; MARK_DONE; barrier. The barrier is one
    dissemination barrier among all n_ranks ranks, so everybody leaves together. With warmup
    > 0 every member first runs the alltoall `warmup` times and everybody meets in a barrier,
    before MARK_START.

    The LiMIC test (paper 7.2) is groups=1, group_size=g on a machine with 16 ranks per node:
    the members are ranks 0..g-1 on nodes 0..g/16-1 (rank r sits on node r // ranks_per_node),
    so 16 of the g group ranks (itself included) are on each member's node: 50, 25, 12.5 and
    6.25 % for g = 32, 64, 128, 256; with mpi.limic those 15 peers are reached through LiMIC.
    """
    n_ranks = int_arg("n_ranks", n_ranks, 1)
    groups = int_arg("groups", groups, 1)
    gs = int_arg("group_size", group_size, 0) or n_ranks // groups
    if gs < 2 or gs * groups > n_ranks:
        raise ValueError(f"need group_size >= 2 and groups x group_size <= n_ranks ({n_ranks}); "
                         f"got {groups} x {gs}")
    message_bytes = int_arg("message_bytes", message_bytes, 0)
    iterations = int_arg("iterations", iterations, 1)
    warmup = int_arg("warmup", warmup, 0)
    members = groups * gs

    bar = barrier_rows(np.arange(n_ranks))                       # [n_ranks, 3*rounds, 4]
    m = gs - 1
    a2a = alltoall_rows(groups, gs, message_bytes)

    def looped(count: int) -> np.ndarray:
        out = np.zeros((members, 2 * m + 2, 4), np.int32)
        out[:, 0, 0:2] = (OP_LOOP, count)
        out[:, 1:1 + 2 * m] = a2a
        out[:, -1, 0] = OP_ENDLOOP
        return out

    mark = lambda k, idx: np.tile(np.array([[OP_MARK, idx, 0, 0]], np.int32), (k, 1, 1))  # noqa
    member_parts = ([looped(warmup), bar[:members]] if warmup else []) + [
        mark(members, MARK_START), looped(iterations), mark(members, MARK_DONE), bar[:members]]
    member_rows = np.concatenate(member_parts, axis=1)
    idle = n_ranks - members
    idle_rows = np.concatenate(([bar[members:]] if warmup else []) + [
        mark(idle, MARK_START), mark(idle, MARK_DONE), bar[members:]], axis=1)
    return assemble_blocks([member_rows, idle_rows],
                    f"alltoall: {groups} group(s) x {gs} of {n_ranks} ranks, "
                    f"{message_bytes} B x {iterations}, others in a barrier")


def synthetic_destinations(kind: str, n_nodes: int, seed: int, shift: int = 0) -> np.ndarray:
    """Destination node of each source node for network-only traffic, int32 [n_nodes].

    permutation: a uniformly random derangement (no node sends to itself), drawn by rejection
    from numpy.random.Generator(PCG64(seed)), so the same seed gives the same permutation.
    uniform: -1 everywhere (the kernel draws a destination per packet).
    shift: node + shift (mod n_nodes); with shift = one dragonfly group every group sends all
    its traffic to the next group (the adversarial pattern of Kim et al. 2008, section 4.2).
    pairwise: a uniformly random perfect matching, drawn from the same stream (a shuffle of the
    nodes, paired in order): A sends all its traffic to B and B to A (Schneider et al., section 4.1,
    whose FECN/BECN and RDRP return marks and credits on the reverse traffic).
    """
    n = int(n_nodes)
    if kind == "uniform":
        return np.full(n, -1, np.int32)
    if kind == "shift":
        if shift % n == 0:
            raise ValueError(f"a shift of {shift} sends every one of the {n} nodes to itself")
        return ((np.arange(n, dtype=np.int64) + shift) % n).astype(np.int32)
    if kind == "pairwise":
        if n % 2:
            raise ValueError(f"pairwise traffic needs an even number of nodes, got {n}")
        p = np.random.Generator(np.random.PCG64(seed)).permutation(n)
        dest = np.empty(n, np.int32)
        dest[p[0::2]] = p[1::2]
        dest[p[1::2]] = p[0::2]
        return dest
    if kind != "permutation":
        raise ValueError("synthetic traffic kind must be 'permutation', 'uniform', 'shift' or "
                         f"'pairwise', got {kind!r}")
    if n < 2:
        raise ValueError(f"a permutation without fixed points needs >= 2 nodes, got {n}")
    rng = np.random.Generator(np.random.PCG64(seed))
    idx = np.arange(n)
    while True:  # P(derangement) -> 1/e: about 2.7 draws on average
        p = rng.permutation(n)
        if not np.any(p == idx):
            return p.astype(np.int32)


def pairwise_exchange(n_ranks: int, ranks_per_node: int, seed: int, message_bytes: int,
                      iterations: int, warmup: int = 0) -> Program:
    """Schneider et al.'s pairwise traffic (section 4.1) at MPI level: the nodes paired by the
    random perfect matching of network-only `pairwise` traffic (synthetic_destinations, same
    seed), rank i of node A with rank i of its partner B; every rank, `iterations` times, ISENDs
    message_bytes to its partner, RECVs as much from it and waits for both (IMB PingPing on
    every pair at once), so that A sends all its traffic to B and B to A, as in the paper."""
    rpn = int_arg("ranks_per_node", ranks_per_node, 1)
    n_ranks = int_arg("n_ranks", n_ranks, 2)
    nbytes = int_arg("message_bytes", message_bytes, 0)
    iterations = int_arg("iterations", iterations, 1)
    warmup = int_arg("warmup", warmup, 0)
    partner = synthetic_destinations("pairwise", n_ranks // rpn, seed)
    b = ProgramBuilder(n_ranks)
    for me in range(n_ranks):
        peer = int(partner[me // rpn]) * rpn + me % rpn

        def body(me=me, peer=peer):
            b.isend(me, peer, nbytes).recv(me, peer, nbytes).waitall(me)
        timed_loops(b, me, warmup, iterations, body)
    return b.build(f"mpi_pairwise: {n_ranks // rpn // 2} node pairs (seed {seed}), "
                   f"{nbytes} B x {iterations} each way")


def slow_nodes(n_nodes: int, count: int, seed: int) -> np.ndarray:
    """The slow receivers: `count` distinct nodes, sorted, drawn by `seed` from a stream of their
    own (SeedSequence([seed, 0x5105])), so the traffic pattern and the slow nodes of one seed are
    independent draws and the same seed gives the same nodes."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), 0x5105])))
    return np.sort(rng.choice(int(n_nodes), size=int(count), replace=False)).astype(np.int32)


# ---- registered kinds (registry.py) -----------------------------------------------------------
def _pingpong_program(cfg) -> Program:
    from ..topology import build, node_pair_at_hops   # builds the machine: only when it runs
    w = cfg.workload
    src, dst = node_pair_at_hops(build(cfg.topology), w.hops)
    prog = multi_pingpong(w.ranks, cfg.mpi.ranks_per_node, int(src), int(dst), w.pairs,
                          w.message_bytes, w.iterations, w.warmup)
    return dataclasses.replace(prog, description=f"{prog.description} ({w.hops} hop(s))")


def _pingpong_pairs(cfg, check) -> None:
    w = cfg.workload
    check(w.pairs <= cfg.mpi.ranks_per_node, "workload.pairs",
          f"<= ranks per node ({cfg.mpi.ranks_per_node})", w.pairs)


def _group_size(w) -> int:
    return w.group_size or w.ranks // max(w.groups, 1)


def _check_groups(w, pre, check) -> None:
    gs = _group_size(w)
    check(gs >= 2 and gs * w.groups <= w.ranks, f"{pre}.group_size",
          f"groups x group_size <= ranks ({w.ranks}) and group_size >= 2", gs)


def _alltoall_rows(cfg) -> int:
    w, gs = cfg.workload, _group_size(cfg.workload)
    return max(w.ranks, w.groups * gs * 2 * max(gs - 1, 0))


def _alltoall_figures(cfg) -> tuple[int, int, int]:
    w, gs = cfg.workload, _group_size(cfg.workload)
    return (max(gs - 1, 0) * (w.iterations + w.warmup), w.groups * gs * max(gs - 1, 0),
            max(gs - 1, 0))


def _alltoall_detail(cfg) -> str:
    w = cfg.workload
    return f", {w.groups} groups of {_group_size(w)}" if w.groups > 1 or w.group_size else ""


def _table(kind: str):
    return lambda n, cfg: synthetic_destinations(kind, n, cfg.seed, cfg.shift_nodes)


def _shift_not_identity(cfg, check) -> None:
    n = cfg.topology.n_nodes
    check(cfg.shift_nodes % n != 0, "workload.shift",
          f"a shift that is not a multiple of the {n} nodes (0: default)", cfg.workload.shift)


def _even_nodes(cfg, check) -> None:
    n = cfg.topology.n_nodes
    check(n % 2 == 0, "workload.kind",
          f"a kind other than {cfg.workload.kind} on an odd number of nodes ({n})",
          cfg.workload.kind)


WORKLOADS = (
    Workload("multi_pingpong", program=_pingpong_program, check_run=_pingpong_pairs,
             detail=lambda cfg: f", {cfg.workload.pairs} pairs {cfg.workload.hops} hops"),
    Workload("alltoall", program=lambda cfg: alltoall_groups(
                 cfg.workload.ranks, cfg.workload.groups, cfg.workload.group_size,
                 cfg.workload.message_bytes, cfg.workload.iterations, cfg.workload.warmup),
             check=_check_groups, rows=_alltoall_rows, figures=_alltoall_figures,
             detail=_alltoall_detail),
    Workload("mpi_pairwise", program=lambda cfg: pairwise_exchange(
                 cfg.workload.ranks, cfg.mpi.ranks_per_node, cfg.seed,
                 cfg.workload.message_bytes, cfg.workload.iterations, cfg.workload.warmup),
             check_run=_even_nodes),
    Workload("permutation", destinations=_table("permutation")),
    Workload("uniform", destinations=_table("uniform"), random_per_packet=True),
    Workload("shift", destinations=_table("shift"), check_run=_shift_not_identity),
    Workload("pairwise", destinations=_table("pairwise"), check_run=_even_nodes),
)
