"""Workloads of the paper's sections 7.2-7.4: LiMIC alltoall, multiphase alltoalls, IMB.

Static checks run every program through a small MPI executor (below): loops unrolled, eager
sends (<= 2048 B) buffered, larger blocking/non-blocking sends complete only once the receiver
has posted the matching receive (rendezvous). It asserts that every rank finishes (no deadlock
under MPI semantics) and that, for every ordered pair, the sizes of the messages sent equal the
sizes of the receives posted, in order.
"""
from collections import defaultdict

import numpy as np
import pytest

from extoll_vec.config import MpiConfig, RunConfig, TopologyConfig, WorkloadConfig, from_dict
from extoll_vec.dtypes import (OP_ENDLOOP, OP_IRECV, OP_ISEND, OP_LOOP, OP_MARK, OP_RECV, OP_SEND,
                               OP_SNAPSHOT, OP_WAITALL)
from extoll_vec.errors import ConfigError
from extoll_vec.workloads import (IMB_BENCHMARKS, MARK_DONE, MARK_START, build_program,
                                  check_balanced, imb_program, max_outstanding, message_counts,
                                  multiphase, paper_phases, snapshot_count, snapshot_counts,
                                  validate_program)
from extoll_vec.workloads.imb import imb_algorithm, reduce_scatter_counts
from extoll_vec.workloads.mpi_rooted import bcast_binomial, reduce_binomial
from extoll_vec.workloads.ompi_tuned import (bcast_rule, bcast_split_bintree, bintree_children,
                                             chain_children, in_order_bmtree_children,
                                             reduce_rule)

EAGER = 2048


def unroll(prog, r):
    stack, counts = [[]], []
    for op, a, b, _c in prog.rank_rows(r)[:-1].tolist():
        if op == OP_LOOP:
            stack.append([])
            counts.append(a)
        elif op == OP_ENDLOOP:
            body = stack.pop()
            stack[-1].extend(body * counts.pop())
        else:
            stack[-1].append((op, a, b))
    return stack[0]


def run_mpi(prog, eager=EAGER):
    """Execute under MPI semantics; returns {(src, dst): [message sizes in order]}."""
    n = prog.n_ranks
    progs = [unroll(prog, r) for r in range(n)]
    sent, posted = defaultdict(list), defaultdict(list)
    pc, blocked, pending = [0] * n, [None] * n, [[] for _ in range(n)]

    def complete(req):
        kind, s, d, k = req
        if kind == "s":
            return sent[s, d][k] <= eager or len(posted[s, d]) > k
        return len(sent[s, d]) > k

    progress = True
    while progress:
        progress = False
        for r in range(n):
            while True:
                if blocked[r] is not None:
                    if not complete(blocked[r]):
                        break
                    blocked[r] = None
                if pc[r] == len(progs[r]):
                    break
                op, a, b = progs[r][pc[r]]
                if op in (OP_SEND, OP_ISEND):
                    req = ("s", r, a, len(sent[r, a]))
                    sent[r, a].append(b)
                elif op in (OP_RECV, OP_IRECV):
                    req = ("r", a, r, len(posted[a, r]))
                    posted[a, r].append(b)
                elif op == OP_WAITALL:
                    if not all(complete(q) for q in pending[r]):
                        break
                    pending[r] = []
                if op in (OP_SEND, OP_RECV):
                    blocked[r] = req
                elif op in (OP_ISEND, OP_IRECV):
                    pending[r].append(req)
                pc[r] += 1
                progress = True
    stuck = [r for r in range(n) if pc[r] < len(progs[r]) or blocked[r] or pending[r]]
    assert not stuck, f"deadlock: ranks {stuck[:8]} stuck"
    for key in set(sent) | set(posted):
        assert sent[key] == posted[key], f"pair {key}: sends {sent[key]} != receives {posted[key]}"
    return sent


def nonzero(msgs):
    """Drop the zero-byte (barrier) messages."""
    return {k: [s for s in v if s] for k, v in msgs.items() if any(v)}


def check_static(prog):
    validate_program(prog)
    check_balanced(prog)
    return run_mpi(prog)


# ---- IMB ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [16, 24, 33, 64])
@pytest.mark.parametrize("benchmark", IMB_BENCHMARKS)
def test_imb_programs_are_correct_mpi(benchmark, n):
    prog = imb_program(n, benchmark, 2048, 3)
    check_static(prog)
    for r in range(n):
        marks = [a for op, a, _b in unroll(prog, r) if op == OP_MARK]
        assert marks == [MARK_START, MARK_DONE]


def test_imb_gather_and_scatter_binomial_sizes():
    g = nonzero(run_mpi(imb_program(16, "Gather", 2048, 1)))
    assert {s: v for (s, d), v in g.items() if d == 0} == {1: [2048], 2: [4096], 4: [8192],
                                                         8: [16384]}
    assert sum(sum(v) for v in g.values()) == 2048 * (8 * 1 + 4 * 2 + 2 * 4 + 1 * 8)
    g24 = nonzero(run_mpi(imb_program(24, "Gather", 2048, 1)))
    assert sum(v[0] for (s, d), v in g24.items() if d == 0) == 23 * 2048
    s = imb_program(16, "Scatter", 2048, 1)
    sends = [(a, b) for op, a, b in unroll(s, 0) if op == OP_SEND]
    assert sends == [(8, 16384), (4, 8192), (2, 4096), (1, 2048)]
    sc = nonzero(run_mpi(s))
    assert all(len(v) == 1 for v in sc.values()) and len(sc) == 15


def test_imb_reduce_bcast_allreduce_counts():
    red = nonzero(run_mpi(imb_program(16, "Reduce", 1024, 1)))      # unsegmented below 2 KB
    assert sorted(s for (s, d) in red if d == 0) == [1, 2, 4, 8]
    assert len(red) == 15 and all(v == [1024] for v in red.values())
    red = nonzero(run_mpi(imb_program(16, "Reduce", 2048, 1)))      # two 1 KB segments
    assert sorted(s for (s, d) in red if d == 0) == [1, 2, 4, 8]
    assert len(red) == 15 and all(v == [1024, 1024] for v in red.values())
    bc = nonzero(run_mpi(imb_program(16, "Bcast", 1024, 1)))
    assert sorted(d for (s, d) in bc) == list(range(1, 16))
    assert sorted(d for (s, d) in bc if s == 0) == [1, 2, 4, 8]
    bc = nonzero(run_mpi(imb_program(16, "Bcast", 2048, 1)))        # split binary tree
    assert sorted(d for (s, d) in bc if s == 0) == [1, 2, 15]
    for n, per_rank in ((16, 4), (12, None)):
        ar = nonzero(run_mpi(imb_program(n, "Allreduce", 2048, 1)))
        assert all(set(v) == {2048} for v in ar.values())
        out = np.zeros(n, int)
        for (s, d), v in ar.items():
            out[s] += len(v)
        if per_rank:
            assert (out == per_rank).all()
        else:  # 12 = 8 + 4: ranks 0, 2, 4, 6 send once; 1, 3, 5, 7: 3 steps + 1; the others 3
            assert out.tolist() == [1, 4] * 4 + [3] * 4


def test_imb_reduce_scatter_recursive_halving_sizes():
    assert reduce_scatter_counts(16, 2048) == [128] * 16
    c = reduce_scatter_counts(1024, 2048)
    assert sum(c) == 2048 and c[:512] == [4] * 512 and c[512:] == [0] * 512
    rs = nonzero(run_mpi(imb_program(16, "Reduce_scatter", 2048, 1)))
    assert [(d, v[0]) for (s, d), v in sorted(rs.items()) if s == 0] == [
        (1, 128), (2, 256), (4, 512), (8, 1024)]
    rs12 = nonzero(run_mpi(imb_program(12, "Reduce_scatter", 2400, 1)))
    assert rs12[0, 1] == [2400]          # even rank < 2e hands its whole vector to rank + 1


def test_imb_allgather_algorithms_by_size():
    def sizes_of_rank0(n, bench="Allgather"):
        m = nonzero(run_mpi(imb_program(n, bench, 2048, 1)))
        return sorted(b for (s, d), v in m.items() if s == 0 for b in v)
    assert sizes_of_rank0(16) == [2048, 4096, 8192, 16384]                  # recursive doubling
    assert sizes_of_rank0(16, "Allgatherv") == [2048, 4096, 8192, 16384]     # Bruck, same sizes
    assert "Bruck" in imb_program(16, "Allgatherv", 2048, 1).description
    assert sizes_of_rank0(24) == sorted(2048 * k for k in (1, 2, 4, 8, 8))  # Bruck
    assert sizes_of_rank0(64) == [2048] + [4096] * 31                       # neighbor exchange
    assert sizes_of_rank0(33) == [2048] * 32                                # ring


def test_imb_alltoall_variants():
    a = imb_program(16, "Alltoall", 2048, 2)
    assert max_outstanding(a) == (15, 15)
    m = nonzero(run_mpi(a))
    assert len(m) == 16 * 15 and all(v == [2048, 2048] for v in m.values())
    v = imb_program(16, "Alltoallv", 2048, 2)
    assert max_outstanding(v) == (1, 1)
    assert nonzero(run_mpi(v)) == m


def test_imb_point_to_point_benchmarks():
    for bench in ("PingPong", "PingPing"):
        m = nonzero(run_mpi(imb_program(16, bench, 2048, 5)))
        assert m == {(0, 1): [2048] * 5, (1, 0): [2048] * 5}
    s = nonzero(run_mpi(imb_program(16, "Sendrecv", 2048, 2)))
    assert set(s) == {(r, (r + 1) % 16) for r in range(16)}
    e = nonzero(run_mpi(imb_program(16, "Exchange", 2048, 2)))
    assert set(e) == {(r, (r + d) % 16) for r in range(16) for d in (1, -1)}
    assert nonzero(run_mpi(imb_program(16, "Barrier", 2048, 3))) == {}


def test_imb_root_rotation():
    n = 16
    m = nonzero(run_mpi(imb_program(n, "Gatherv", 2048, n)))   # root i in iteration i
    assert len(m) == n * (n - 1) and all(v == [2048] for v in m.values())
    looped = imb_program(n, "Scatter", 2048, 2 * n + 3)
    assert (looped.ops[:, 0] == OP_LOOP).any() and 2 in looped.ops[looped.ops[:, 0] == OP_LOOP, 1]
    src, dst, sent, recv, _ = message_counts(looped)
    assert (sent == recv).all()
    run_mpi(looped)


# Open MPI's coll/tuned Bcast and Reduce (workloads/ompi_tuned.py)

OMPI_NS = (2, 3, 5, 8, 13, 64, 1024)


def test_open_mpi_fixed_rules():
    assert bcast_rule(1024, 2048) == ("split_bintree", 1024)
    assert bcast_rule(1024, 2047) == bcast_rule(2, 1) == ("binomial", 0)
    assert bcast_rule(4096, 65536) == ("split_bintree", 1024)
    assert bcast_rule(2, 370728) == ("pipeline", 128 * 1024)      # 2 < 1.6134e-6 X + 2.1102
    assert bcast_rule(8, 370728) == ("split_bintree", 8 * 1024)   # fewer than 13 ranks
    assert bcast_rule(16, 370728) == ("pipeline", 8 * 1024)
    assert reduce_rule(1024, 2048) == ("binomial", 1024)        # 1024 > 0.6016 * 2 + 1.3496
    assert reduce_rule(1024, 2044) == ("binomial", 0)
    assert reduce_rule(4, 256) == ("linear", 0)
    assert reduce_rule(4, 16384) == ("binomial", 0)
    assert reduce_rule(40, 65536) == ("binomial", 1024)          # 40 > 39.85
    assert reduce_rule(16, 65536) == ("pipeline", 1024)          # 16 > 12.3
    assert reduce_rule(8, 65536) == ("binary", 32 * 1024)        # 8 > 3.86
    assert reduce_rule(2, 32768) == ("pipeline", 32 * 1024)      # 2 > 1.78
    assert imb_algorithm("Bcast", 1024, 2048)[0] == "split binary tree, 1 KB segments"
    assert imb_algorithm("Reduce", 1024, 2048)[0] == "binomial tree, 1 KB segments"
    assert imb_algorithm("Reduce", 16, 65536)[0] == "pipeline, 1 KB segments"
    assert imb_algorithm("Reduce", 8, 65536)[0] == "binary tree, 32 KB segments"
    assert imb_algorithm("Reduce", 4, 256)[0] == "binomial tree (Open MPI: linear, not modelled)"
    with pytest.raises(ValueError, match="not built"):
        imb_algorithm("Bcast", 16, 370728)
    with pytest.raises(ValueError, match="chain"):
        bcast_split_bintree(16, 1500, 1024)


@pytest.mark.parametrize("n", OMPI_NS)
def test_open_mpi_below_2k_keeps_the_unsegmented_binomial_trees(n):
    for nbytes in (0, 4, 1024, 2044):
        for bench, fn in (("Bcast", bcast_binomial), ("Reduce", reduce_binomial)):
            name, rows = imb_algorithm(bench, n, nbytes)
            assert name.startswith("binomial tree") and all(
                np.array_equal(a, b) for a, b in zip(rows, fn(n, nbytes))), (bench, nbytes)
    if n < 8:                # Open MPI: unsegmented binomial below 20 KB on fewer than 8 ranks
        name, rows = imb_algorithm("Reduce", n, 16384)
        assert name == "binomial tree"
        assert all(np.array_equal(a, b) for a, b in zip(rows, reduce_binomial(n, 16384)))


def _peer_ops(rows):
    """[(op, peer, bytes)] of one rank's rows (no WAITALL)."""
    return [(op, a, b) for op, a, b, _c in rows.tolist() if op != OP_WAITALL]


@pytest.mark.parametrize("nbytes", [2048, 2049, 5000])
@pytest.mark.parametrize("n", OMPI_NS)
def test_open_mpi_split_binary_tree_bcast(n, nbytes):
    prog = imb_program(n, "Bcast", nbytes, 1)
    run_mpi(prog)            # every send matched by a receive of its size, in order; no deadlock
    _name, rows = imb_algorithm("Bcast", n, nbytes)
    counts = [(nbytes + 1) // 2, nbytes // 2]
    segs = [[1024] * (c // 1024) + ([c % 1024] if c % 1024 else []) for c in counts]
    kids = bintree_children(n)
    par = {c: s for s, ks in enumerate(kids) for c in ks}
    assert kids[0] == [1, 2][:n - 1]
    root = _peer_ops(rows[0])
    assert not [x for x in root if x[0] in (OP_RECV, OP_IRECV)]
    tree = [(OP_SEND, c, segs[i][k]) for k in range(len(segs[0]))
            for i, c in enumerate(kids[0]) if k < len(segs[i])]
    assert root == tree + ([(OP_SEND, n - 1, counts[1])] if n % 2 == 0 else [])
    for s in range(1, n):
        lr = (s + 1) % 2
        ops = _peer_ops(rows[s])
        recvs = [(a, b) for op, a, b in ops if op in (OP_RECV, OP_IRECV)]
        assert sum(b for _a, b in recvs) == nbytes
        # its own half from its parent, segment by segment, forwarded to each child ...
        assert recvs[:-1] == [(par[s], b) for b in segs[lr]]
        sends = [(a, b) for op, a, b in ops if op in (OP_SEND, OP_ISEND)]
        fwd = [(c, b) for b in segs[lr] for c in kids[s]]
        assert sends[:len(fwd)] == fwd and all(c % 2 == s % 2 for c in kids[s])
        # ... then the other half from a rank of the other subtree (or the root)
        src, b = recvs[-1]
        assert b == counts[1 - lr]
        if n % 2 == 0 and s == n - 1:
            assert src == 0 and len(sends) == len(fwd)
        else:
            assert src == (s + 1 if lr == 0 else s - 1) and (src + 1) % 2 != lr
            assert sends[len(fwd):] == [(src, counts[lr])]
        assert len(recvs) == len(segs[lr]) + 1


@pytest.mark.parametrize("nbytes", [2048, 8192, 65536])
@pytest.mark.parametrize("n", OMPI_NS)
def test_open_mpi_segmented_reduce(n, nbytes):
    name, rows = imb_algorithm("Reduce", n, nbytes)
    algo, segsize = reduce_rule(n, nbytes)
    if segsize == 0:
        assert name == "binomial tree" and n < 8
        return
    run_mpi(imb_program(n, "Reduce", nbytes, 1))
    kids = {"binomial": in_order_bmtree_children, "binary": bintree_children,
            "pipeline": chain_children}[algo](n)
    seg = [segsize] * (nbytes // segsize) + ([nbytes % segsize] if nbytes % segsize else [])
    assert sum(seg) == nbytes
    if algo == "binomial":
        assert kids[0] == [1 << k for k in range((n - 1).bit_length())]
        assert all(kids[s] == [s + m for m in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
                               if m < (s & -s) and s + m < n] for s in range(1, n))
    par = {c: s for s, ks in enumerate(kids) for c in ks}
    assert sorted(par) == list(range(1, n))
    for s in range(n):
        ops = _peer_ops(rows[s])
        recvs = [(a, b) for op, a, b in ops if op == OP_RECV]
        sends = [(a, b) for op, a, b in ops if op == OP_SEND]
        assert len(ops) == len(recvs) + len(sends)
        # every segment from each child (children in tree order), segment by segment
        assert recvs == [(c, b) for b in seg for c in kids[s]]
        assert sends == ([] if s == 0 else [(par[s], b) for b in seg])
        if kids[s] and s:    # segment k goes up once the last child's segment k is in
            k = len(kids[s])
            assert ops[k][0] == OP_SEND and ops[k + 1][0] == OP_RECV


def test_open_mpi_bcast_and_reduce_simulate():
    """IMB Bcast and Reduce at 2 KB (split binary tree, segmented binomial reduce), 16 ranks,
    without flow control and with static credits: every run completes, every message arrives."""
    from extoll_vec.engine import simulate
    protocols = ({"name": "none"}, {"name": "static", "mailbox_slots": 4 * 16, "credit_slots": 2})
    cfgs = [from_dict({"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},
                       "protocol": proto,
                       "workload": {"kind": "imb", "ranks": 16, "benchmark": bench,
                                    "message_bytes": 2048, "iterations": 3}})
            for bench in ("Bcast", "Reduce") for proto in protocols]
    ds = simulate(cfgs)
    assert (ds.exec_time_us.values > 0).all()
    for i, cfg in enumerate(cfgs):
        prog = build_program(cfg)
        assert "1 KB segments" in prog.description
        _s, dst, sent, _r, _a = message_counts(prog)
        inbound = np.bincount(dst, weights=sent, minlength=16)
        assert ds.messages_received.values[i].tolist() == inbound.astype(int).tolist()


def test_imb_config_and_validation():
    cfg = RunConfig(topology=TopologyConfig(kind="mesh", dims=(4, 4)),
                    mpi=MpiConfig(ranks_per_node=1),
                    workload=WorkloadConfig(kind="imb", ranks=16, benchmark="Gather", iterations=2))
    prog = build_program(cfg)
    assert "Gather" in prog.description and prog.n_ranks == 16
    with pytest.raises(ConfigError) as exc:
        cfg.replace(**{"workload.benchmark": "Gatherx"})
    assert "workload.benchmark" in str(exc.value) and "Reduce_scatter" in str(exc.value)
    with pytest.raises(ValueError, match="unknown IMB benchmark"):
        imb_program(16, "Foo", 2048, 1)


# ---- multiphase ---------------------------------------------------------------------------------

def test_multiphase_structure_marks_and_sizes():
    assert paper_phases(1024) == (1024, 256, 512, 1024, 512, 256, 1024)
    n, it = 16, 2
    prog = multiphase(n, None, 2048, it)
    m = nonzero(check_static(prog))
    phases = paper_phases(n)
    for r in (0, 5, 15):
        sent = sum(len(v) for (s, d), v in m.items() if s == r)
        assert sent == it * sum(p - 1 for p in phases if r < p)
    assert all(set(v) == {2048} for v in m.values())
    # a mark between every two alltoalls: MARK_START, then one after every stage
    ops = unroll(prog, 0)
    marks = [a for op, a, _b in ops if op == OP_MARK]
    assert marks == [MARK_START] + [i for i in (2, 3, 4, 5, 6, 7, MARK_DONE) for _ in range(it)]
    first_sends = [i for i, (op, a, b) in enumerate(ops)
                   if op == OP_SEND and (i == 0 or ops[i - 1][0] != OP_SEND)]
    assert len(first_sends) == it * len(phases)
    # rank 0 records its credits right before every alltoall (Figure 19)
    assert all(ops[i - 1][0] == OP_SNAPSHOT for i in first_sends)
    assert [op for op, _a, _b in ops].count(OP_SNAPSHOT) == it * len(phases)
    counts = snapshot_counts(prog)
    assert counts[0] == it * len(phases) and not counts[1:].any()
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [4, 4]}, "mpi": {"ranks_per_node": 1},
                     "workload": {"kind": "multiphase", "ranks": 16, "iterations": it}})
    assert snapshot_count(cfg) == int(snapshot_counts(build_program(cfg)).max())
    # ranks outside a phase still take part in its barriers
    rank15 = [op for op, a, b in unroll(prog, 15)]
    assert rank15.count(OP_ISEND) == it * len(phases) * 4    # 4 barrier rounds per stage


def test_multiphase_config():
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [4, 4]}, "mpi": {"ranks_per_node": 1},
                     "workload": {"kind": "multiphase", "ranks": 16, "phases": [16, 8, 2]}})
    assert cfg.workload.phase_ranks == (16, 8, 2)
    prog = build_program(cfg)
    run_mpi(prog)
    assert "16, 8, 2" in prog.description
    base = {"topology": {"kind": "mesh", "dims": [4]}, "mpi": {"ranks_per_node": 1},
            "workload": {"kind": "multiphase", "ranks": 4}}
    with pytest.raises(ConfigError, match="workload.ranks"):
        from_dict(base)
    base["workload"]["phases"] = [4, 1]
    with pytest.raises(ConfigError, match="workload.phases"):
        from_dict(base)


# ---- LiMIC alltoall (7.2) -----------------------------------------------------------------------

@pytest.mark.parametrize("g", [32, 64, 128, 256])
def test_limic_alltoall_same_node_fraction(g):
    cfg = RunConfig(topology=TopologyConfig(kind="mesh", dims=(4, 4, 4)),
                    mpi=MpiConfig(ranks_per_node=16),
                    workload=WorkloadConfig(kind="alltoall", ranks=1024, groups=1, group_size=g,
                                            iterations=3))
    prog = build_program(cfg)
    check_balanced(prog)
    src, dst, sent, recv, _ = message_counts(prog)
    data = sent >= 3         # 3 alltoalls; barrier-only pairs exchange one 0-byte message
    for r in (0, g // 2, g - 1):
        peers = dst[data & (src == r)]
        assert len(peers) == g - 1 and set(peers.tolist()) == set(range(g)) - {r}
        same_node = (peers // 16 == r // 16).sum()
        assert (same_node + 1) / g == 16 / g          # 50 %, 25 %, 12.5 %, 6.25 % with itself
    idle = [OP_SEND in prog.rank_rows(r)[:, 0] for r in range(g, 1024)]
    assert not any(idle)


# ---- end to end ---------------------------------------------------------------------------------

TINY = {"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 2}}


def _tiny(**workload):
    return from_dict({**TINY, "workload": {"ranks": 8, "iterations": 2, **workload}})


def test_end_to_end_every_kind():
    from extoll_vec.engine import simulate
    cfgs = [_tiny(kind="imb", benchmark=b) for b in IMB_BENCHMARKS]
    cfgs += [_tiny(kind="multiphase"), _tiny(kind="alltoall", group_size=4)]
    ds = simulate(cfgs)
    assert (ds.exec_time_us.values > 0).all()
    for i, cfg in enumerate(cfgs):
        _s, dst, sent, _r, _a = message_counts(build_program(cfg))
        inbound = np.bincount(dst, weights=sent, minlength=8)
        assert ds.messages_received.values[i].tolist() == inbound.astype(int).tolist()


def test_end_to_end_allgatherv_bruck():
    """Regression: two rendezvous sendrecv steps in a row used to deadlock a router input (a
    packet that arrived while the input was still reading its delayed predecessor asked for an
    arbitration the busy input could not win, and nobody asked again)."""
    from extoll_vec.engine import simulate
    ds = simulate([_tiny(kind="imb", benchmark="Allgatherv")])
    assert float(ds.exec_time_us.values[0]) > 0
