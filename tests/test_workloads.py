"""Rank programs: encoding, generators and static analysis (fast, no kernels)."""
import ast
import time
from pathlib import Path

import numpy as np
import pytest

from extoll_vec.config import MpiConfig, RunConfig, TopologyConfig, WorkloadConfig
from extoll_vec.dtypes import (ANY_SOURCE, MAX_LOOP_DEPTH, OP_END, OP_ENDLOOP, OP_ISEND, OP_LOOP,
                               OP_MARK, OP_RECV, OP_SEND, OP_WAITALL)
from extoll_vec.errors import ConfigError
from extoll_vec.workloads import (MARK_DONE, MARK_START, Program, ProgramBuilder, alltoall_groups,
                                  barrier_rows, build_program, check_balanced, make_program,
                                  max_outstanding, message_counts, multi_pingpong,
                                  synthetic_destinations, validate_program)


def without_row(prog: Program, row: int) -> Program:
    """The same program with one row deleted (starts after it shift up)."""
    ops = np.delete(prog.ops, row, axis=0)
    start = prog.start - (prog.start > row)
    return Program(ops, start.astype(np.int32), prog.max_irecvs, prog.max_isends, "broken")


def rank_ops(prog: Program, rank: int) -> np.ndarray:
    return prog.rank_rows(rank)[:, 0]


# ---- encoding -------------------------------------------------------------------------------------

def test_encoding_dtypes_and_ends():
    prog = alltoall_groups(16, 2, 8, 2048, 2)
    assert prog.ops.dtype == np.int32 and prog.ops.shape[1] == 4
    assert prog.start.dtype == np.int32 and prog.start.shape == (16,)
    assert (prog.ops[:, 3] == 0).all()
    for r in range(16):
        rows = prog.rank_rows(r)
        assert rows[-1, 0] == OP_END and (rows[:-1, 0] != OP_END).all()
    validate_program(prog)


def test_synthetic_kinds_give_empty_program():
    for kind in ("permutation", "uniform"):
        cfg = RunConfig(topology=TopologyConfig(kind="mesh", dims=(4, 4)),
                        workload=WorkloadConfig(kind=kind, ranks=16))
        prog = build_program(cfg)
        assert prog.n_ranks == 0 and prog.ops.shape == (0, 4) and prog.start.shape == (0,)
        assert prog.max_irecvs >= 1 and prog.max_isends >= 1
        check_balanced(prog)


def test_builder_rejects_bad_programs():
    b = ProgramBuilder(2)
    b.send(0, 0, 8)
    with pytest.raises(ValueError, match="itself"):
        b.build()
    b = ProgramBuilder(2)
    b.send(0, 2, 8)
    with pytest.raises(ValueError, match="destination 2"):
        b.build()
    b = ProgramBuilder(1)
    b.op(0, OP_LOOP, 1)
    with pytest.raises(ValueError, match="not closed"):
        b.build()
    b = ProgramBuilder(1)
    for _ in range(MAX_LOOP_DEPTH + 1):
        b.op(0, OP_LOOP, 2)
    for _ in range(MAX_LOOP_DEPTH + 1):
        b.op(0, OP_ENDLOOP)
    with pytest.raises(ValueError, match="MAX_LOOP_DEPTH"):
        b.build()
    b = ProgramBuilder(1)
    b.op(0, OP_ENDLOOP)
    with pytest.raises(ValueError, match="without a matching"):
        b.build()
    b = ProgramBuilder(1)
    b.mark(0, 99)
    with pytest.raises(ValueError, match="mark index"):
        b.build()
    b = ProgramBuilder(2)
    b.send(0, 1, 2**31)
    with pytest.raises(ValueError, match="int32"):
        b.build()
    with pytest.raises(ValueError, match="no OP_END"):
        make_program(np.array([[OP_MARK, 0, 0, 0]], np.int32), np.array([0], np.int32))


def test_shared_rows_layout_is_analysed():
    # ranks 1 and 2 share one OP_END row: allowed by the encoding
    ops = np.array([[OP_END, 0, 0, 0]], np.int32)
    prog = make_program(ops, np.array([0, 0, 0], np.int32))
    check_balanced(prog)
    assert max_outstanding(prog) == (1, 1)


# ---- multi-pingpong ---------------------------------------------------------------------------------

def test_multi_pingpong_structure_and_balance():
    prog = multi_pingpong(64, 4, 1, 3, 3, 2048, 5)
    check_balanced(prog)
    assert max_outstanding(prog) == (1, 1)
    assert (prog.max_irecvs, prog.max_isends) == (1, 1)
    for i in range(3):
        s, d = 4 + i, 12 + i
        assert rank_ops(prog, s).tolist() == [OP_MARK, OP_LOOP, OP_SEND, OP_RECV, OP_ENDLOOP,
                                              OP_MARK, OP_END]
        assert rank_ops(prog, d).tolist() == [OP_MARK, OP_LOOP, OP_RECV, OP_SEND, OP_ENDLOOP,
                                              OP_MARK, OP_END]
        assert prog.rank_rows(s)[1, 1] == 5 and prog.rank_rows(s)[2, 1:3].tolist() == [d, 2048]
        assert prog.rank_rows(d)[2, 1:3].tolist() == [s, 2048]
    active = {4, 5, 6, 12, 13, 14}
    for r in set(range(64)) - active:
        assert rank_ops(prog, r).tolist() == [OP_END]
    src, dst, sent, recv, anyc = message_counts(prog)
    assert sorted(zip(src.tolist(), dst.tolist())) == sorted(
        [(4 + i, 12 + i) for i in range(3)] + [(12 + i, 4 + i) for i in range(3)])
    assert (sent == 5).all() and (recv == 5).all() and not anyc.any()


def test_mpi_pairwise_pairs_the_nodes_as_network_pairwise_traffic():
    """Schneider et al.'s pairwise traffic at MPI level: rank i of node A streams to rank i of
    A's partner node, the partner of network-only pairwise traffic of the same seed, and back;
    every pair balanced, the pairing a function of the seed alone."""
    from extoll_vec.workloads.patterns import pairwise_exchange
    prog = pairwise_exchange(32, 4, 7, 2048, 3, warmup=1)
    check_balanced(prog)
    partner = synthetic_destinations("pairwise", 8, 7)
    src, dst, sent, recv, anyc = message_counts(prog)
    assert sorted(zip(src.tolist(), dst.tolist())) == sorted(
        (r, int(partner[r // 4]) * 4 + r % 4) for r in range(32))
    assert (sent == 4).all() and (recv == 4).all() and not anyc.any()
    assert rank_ops(prog, 0).tolist() == [OP_LOOP, OP_ISEND, OP_RECV, OP_WAITALL, OP_ENDLOOP,
                                          OP_MARK, OP_LOOP, OP_ISEND, OP_RECV, OP_WAITALL,
                                          OP_ENDLOOP, OP_MARK, OP_END]
    assert (pairwise_exchange(32, 4, 7, 2048, 3).ops[:, 1:3].tolist()
            != pairwise_exchange(32, 4, 8, 2048, 3).ops[:, 1:3].tolist())
    with pytest.raises(ConfigError, match="other than mpi_pairwise on an odd number of nodes"):
        RunConfig(topology=TopologyConfig(kind="mesh", dims=(3, 1)),
                  mpi=MpiConfig(ranks_per_node=1),
                  workload=WorkloadConfig(kind="mpi_pairwise", ranks=3))


@pytest.mark.parametrize("hops", [1, 7, 14])
def test_multi_pingpong_hop_distance_on_8x8_mesh(hops):
    cfg = RunConfig(topology=TopologyConfig(kind="mesh", dims=(8, 8)),
                    mpi=MpiConfig(ranks_per_node=16),
                    workload=WorkloadConfig(kind="multi_pingpong", ranks=1024, pairs=16,
                                            hops=hops, iterations=2))
    prog = build_program(cfg)
    check_balanced(prog)
    active = [r for r in range(1024) if len(prog.rank_rows(r)) > 1]
    assert len(active) == 32
    nodes = sorted({r // 16 for r in active})
    assert len(nodes) == 2
    from extoll_vec.topology import build
    topo = build(cfg.topology)
    c = topo.coords[topo.node_router[nodes]]
    assert int(np.abs(c[0] - c[1]).sum()) == hops  # Manhattan distance = mesh router hops
    # pairs are rank i of one node with rank i of the other
    for i in range(16):
        assert nodes[0] * 16 + i in active and nodes[1] * 16 + i in active


def test_multi_pingpong_impossible_distance():
    cfg = RunConfig(topology=TopologyConfig(kind="mesh", dims=(8, 8)),
                    mpi=MpiConfig(ranks_per_node=16),
                    workload=WorkloadConfig(kind="multi_pingpong", ranks=1024, hops=15))
    with pytest.raises(ConfigError):
        build_program(cfg)


# ---- alltoall groups ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n,groups,size", [(16, 1, 16), (16, 2, 8), (16, 4, 4), (16, 1, 8),
                                           (16, 3, 5), (12, 1, 0)])
@pytest.mark.parametrize("iterations", [1, 3])
def test_alltoall_groups_balanced(n, groups, size, iterations):
    prog = alltoall_groups(n, groups, size, 2048, iterations)
    check_balanced(prog)
    assert max_outstanding(prog) == (1, 1)
    gs = size or n // groups
    members = groups * gs
    src, dst, sent, recv, anyc = message_counts(prog)
    data = {}  # (s, d) -> loop-unrolled data messages, derived from the generator's rule
    for s in range(members):
        g, i = divmod(s, gs)
        for k in range(1, gs):
            data[(s, g * gs + (i + k) % gs)] = iterations
    got = dict(zip(zip(src.tolist(), dst.tolist()), sent.tolist()))
    for pair, count in data.items():
        assert got[pair] >= count  # plus possibly one barrier message
    # barrier: each rank sends exactly ceil(log2 n) barrier messages
    total_sent = np.bincount(src, weights=sent, minlength=n)
    rounds = (n - 1).bit_length()
    expect = np.full(n, rounds)
    expect[:members] += (gs - 1) * iterations
    assert total_sent.tolist() == expect.tolist()


def test_alltoall_program_shape():
    prog = alltoall_groups(16, 2, 4, 2048, 7)   # members 0..7, ranks 8..15 only in the barrier
    m0 = prog.rank_rows(5)   # group 1, index 1
    assert m0[0].tolist() == [OP_MARK, MARK_START, 0, 0]
    assert m0[1].tolist() == [OP_LOOP, 7, 0, 0]
    assert m0[2:5, 0].tolist() == [OP_SEND] * 3 and m0[2:5, 1].tolist() == [6, 7, 4]
    assert (m0[2:8, 2] == 2048).all()
    assert m0[5:8, 0].tolist() == [OP_RECV] * 3 and m0[5:8, 1].tolist() == [6, 7, 4]
    assert m0[8].tolist() == [OP_ENDLOOP, 0, 0, 0]
    assert m0[9].tolist() == [OP_MARK, MARK_DONE, 0, 0]
    np.testing.assert_array_equal(m0[10:-1], barrier_rows(np.arange(16))[5])
    idle = prog.rank_rows(12)
    assert idle[:2].tolist() == [[OP_MARK, MARK_START, 0, 0], [OP_MARK, MARK_DONE, 0, 0]]
    np.testing.assert_array_equal(idle[2:-1], barrier_rows(np.arange(16))[12])
    assert (prog.ops[:, 0] == OP_LOOP).sum() == 8


def test_barrier_rows():
    for n in (1, 2, 3, 5, 8, 13):
        ranks = np.arange(n) * 3 + 1
        rows = barrier_rows(ranks)
        rounds = (n - 1).bit_length()
        assert rows.shape == (n, 3 * rounds, 4)
        if rounds:
            assert rows[:, 0::3, 0].flatten().tolist() == [OP_ISEND] * (n * rounds)
            assert rows[:, 1::3, 0].flatten().tolist() == [OP_RECV] * (n * rounds)
            assert rows[:, 2::3, 0].flatten().tolist() == [OP_WAITALL] * (n * rounds)
            assert (rows[:, :, 2] == 0).all()
            i = 4 % n
            for k in range(rounds):   # round k: isend to i + 2**k, recv from i - 2**k
                assert rows[i, 3 * k, 1] == ranks[(i + 2**k) % n]
                assert rows[i, 3 * k + 1, 1] == ranks[(i - 2**k) % n]
        b = ProgramBuilder(3 * n + 1)
        b.barrier(ranks)
        prog = b.build()
        check_balanced(prog)
        assert max_outstanding(prog) == (1, 1)


def test_alltoall_1024_builds_fast():
    # warm up at the same size: the first build of a size also pays the first touch of its
    # fresh memory (numpy's allocations take most of it on a slow virtual machine: several
    # times the build itself), which measures the machine, not the builder
    alltoall_groups(1024, 1, 0, 2048, 10)
    t0 = time.perf_counter()
    prog = alltoall_groups(1024, 1, 0, 2048, 10)
    dt = time.perf_counter() - t0
    assert prog.ops.shape[0] >= 1024 * 2046
    assert dt < 2.0, f"alltoall over 1024 ranks took {dt:.2f} s to build"


def test_alltoall_1024_balanced():
    check_balanced(alltoall_groups(1024, 8, 128, 2048, 2))


def test_alltoall_via_config():
    cfg = RunConfig(topology=TopologyConfig(kind="mesh", dims=(2, 2)),
                    mpi=MpiConfig(ranks_per_node=4),
                    workload=WorkloadConfig(kind="alltoall", ranks=16, groups=2, group_size=4,
                                            iterations=2))
    prog = build_program(cfg)
    np.testing.assert_array_equal(prog.ops, alltoall_groups(16, 2, 4, 2048, 2).ops)


# ---- static analysis ------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: multi_pingpong(32, 4, 0, 5, 4, 2048, 3),
    lambda: alltoall_groups(16, 1, 16, 2048, 2),
    lambda: alltoall_groups(16, 1, 8, 2048, 1),
    lambda: alltoall_groups(16, 4, 4, 64, 3),
])
def test_removing_one_receive_unbalances(make):
    prog = make()
    check_balanced(prog)
    recv_rows = np.flatnonzero(prog.ops[:, 0] == OP_RECV)
    for row in (recv_rows[0], recv_rows[len(recv_rows) // 2], recv_rows[-1]):
        with pytest.raises(ValueError, match="unbalanced"):
            check_balanced(without_row(prog, int(row)))


def test_nested_loops_balanced_and_counted():
    b = ProgramBuilder(3)
    with b.loop(0, 3):
        with b.loop(0, 2):
            b.isend(0, 1, 100)
            b.isend(0, 2, 100)
        b.waitall(0)
    with b.loop(1, 6):
        b.recv(1, 0, 100)
    with b.loop(2, 2):
        with b.loop(2, 3):
            b.irecv(2, ANY_SOURCE, 100)
    b.waitall(2)
    prog = b.build("nested")
    check_balanced(prog)
    src, dst, sent, recv, anyc = message_counts(prog)
    assert list(zip(src.tolist(), dst.tolist(), sent.tolist(), recv.tolist())) == [
        (0, 1, 6, 6), (0, 2, 6, 0)]
    assert anyc.tolist() == [0, 0, 6]
    # rank 0: 4 isends pending before each waitall; rank 2: 6 irecvs pending
    assert max_outstanding(prog) == (6, 4)
    assert (prog.max_irecvs, prog.max_isends) == (6, 4)

    b = ProgramBuilder(2)
    with b.loop(0, 3):
        with b.loop(0, 2):
            b.send(0, 1, 8)
    with b.loop(1, 5):
        b.recv(1, 0, 8)
    with pytest.raises(ValueError, match="rank 0 sends 6 message.*posts 5"):
        check_balanced(b.build())


def test_any_source_unbalanced():
    b = ProgramBuilder(3)
    b.send(0, 2, 8).send(1, 2, 8)
    b.recv(2, ANY_SOURCE, 8)
    with pytest.raises(ValueError, match="ANY_SOURCE"):
        check_balanced(b.build())
    b = ProgramBuilder(3)
    b.send(0, 2, 8)
    b.recv(2, ANY_SOURCE, 8).recv(2, 1, 8)
    with pytest.raises(ValueError, match="rank 1 sends 0"):
        check_balanced(b.build())


def test_max_outstanding_values():
    b = ProgramBuilder(2)
    b.irecv(0, 1, 8).irecv(0, 1, 8).irecv(0, 1, 8).recv(0, 1, 8).waitall(0)  # 3 + blocking 1
    b.isend(1, 0, 8).isend(1, 0, 8).send(1, 0, 8).send(1, 0, 8).waitall(1)   # 2 + 1
    assert max_outstanding(b.build()) == (4, 3)

    # no waitall inside the loop: requests pile up over the iterations
    b = ProgramBuilder(2)
    with b.loop(0, 5):
        b.irecv(0, 1, 8).isend(0, 1, 8).isend(0, 1, 8)
    b.waitall(0)
    with b.loop(1, 5):
        b.irecv(1, 0, 8).irecv(1, 0, 8).isend(1, 0, 8)
    b.waitall(1)
    prog = b.build()
    check_balanced(prog)
    assert max_outstanding(prog) == (10, 10)

    # waitall inside the loop: later iterations start from what the previous one left pending
    b = ProgramBuilder(2)
    b.irecv(0, 1, 8)
    with b.loop(0, 4):
        b.irecv(0, 1, 8).irecv(0, 1, 8).waitall(0).irecv(0, 1, 8)
    b.recv(0, 1, 8)
    b.waitall(0)
    with b.loop(1, 14):
        b.send(1, 0, 8)
    prog = b.build()
    check_balanced(prog)
    # first iteration 1+2=3; later ones 1 (left over) + 2 = 3; at the end 1 + blocking 1 = 2
    assert max_outstanding(prog) == (3, 1)

    b = ProgramBuilder(2)
    b.irecv(0, 1, 8).irecv(0, 1, 8)
    with b.loop(0, 3):
        b.recv(0, 1, 8)
    b.waitall(0)
    b.send(1, 0, 8).send(1, 0, 8).send(1, 0, 8).send(1, 0, 8).send(1, 0, 8)
    assert max_outstanding(b.build()) == (3, 1)


def test_max_outstanding_brute_force_matches():
    """Compare with a literal unrolled simulation on random nested programs of one rank."""
    rng = np.random.default_rng(7)

    def random_body(depth):
        body = []
        for _ in range(rng.integers(1, 5)):
            x = rng.integers(0, 6 if depth < 3 else 4)
            if x == 0:
                body.append(("irecv",))
            elif x == 1:
                body.append(("recv",))
            elif x == 2:
                body.append(("waitall",))
            elif x == 3:
                body.append(("isend",))
            else:
                body.append(("loop", int(rng.integers(1, 4)), random_body(depth + 1)))
        return body

    def emit(b, body):
        for item in body:
            if item[0] == "irecv":
                b.irecv(0, 1, 0)
            elif item[0] == "recv":
                b.recv(0, 1, 0)
            elif item[0] == "waitall":
                b.waitall(0)
            elif item[0] == "isend":
                b.isend(0, 1, 0)
            else:
                with b.loop(0, item[1]):
                    emit(b, item[2])

    def simulate(body, state):
        for item in body:
            if item[0] == "irecv":
                state["r"] += 1
            elif item[0] == "isend":
                state["s"] += 1
            elif item[0] == "recv":
                state["pr"] = max(state["pr"], state["r"] + 1)
            elif item[0] == "waitall":
                state["r"] = state["s"] = 0
            else:
                for _ in range(item[1]):
                    simulate(item[2], state)
            state["pr"] = max(state["pr"], state["r"])
            state["ps"] = max(state["ps"], state["s"])

    for _ in range(60):
        body = random_body(0)
        b = ProgramBuilder(2)
        emit(b, body)
        st = {"r": 0, "s": 0, "pr": 0, "ps": 0}
        simulate(body, st)
        assert max_outstanding(b.build()) == (max(1, st["pr"]), max(1, st["ps"]))


# ---- synthetic destinations ------------------------------------------------------------------------

def test_permutation_is_deterministic_derangement():
    for n in (2, 3, 64, 1000):
        d = synthetic_destinations("permutation", n, 42)
        assert d.dtype == np.int32 and d.shape == (n,)
        assert sorted(d.tolist()) == list(range(n))
        assert not (d == np.arange(n)).any()
        np.testing.assert_array_equal(d, synthetic_destinations("permutation", n, 42))
    assert not np.array_equal(synthetic_destinations("permutation", 1000, 1),
                              synthetic_destinations("permutation", 1000, 2))


def test_uniform_destinations():
    d = synthetic_destinations("uniform", 64, 3)
    assert d.dtype == np.int32 and (d == -1).all() and d.shape == (64,)
    with pytest.raises(ValueError):
        synthetic_destinations("tornado", 64, 3)


# ---- module structure ----------------------------------------------------------------------------

def workload_imports(pkg_dir: Path) -> dict[str, set[tuple[str, str]]]:
    """For every module of the package: (module, name) of each import of a sibling module, at
    any depth of the file (a function-level import closes a circle as well)."""
    edges: dict[str, set[tuple[str, str]]] = {}
    for path in sorted(pkg_dir.glob("*.py")):
        mod = path.stem
        edges[mod] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level != 1:
                continue
            for alias in node.names:
                if node.module is None:        # from . import sibling
                    edges[mod].add((alias.name, ""))
                else:                          # from .sibling import name
                    edges[mod].add((node.module.split(".")[0], alias.name))
    return edges


def import_cycles(edges: dict[str, set[tuple[str, str]]]) -> list[list[str]]:
    graph = {m: {t for t, _ in targets if t in edges and t != "__init__"}
             for m, targets in edges.items() if m != "__init__"}
    cycles, state = [], {}

    def visit(m, stack):
        state[m] = "open"
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return cycles


WORKLOADS_DIR = Path(__file__).resolve().parents[1] / "extoll_vec" / "workloads"


def test_workload_modules_import_no_circle_and_no_private_names():
    edges = workload_imports(WORKLOADS_DIR)
    assert {"build", "common", "patterns", "multiphase", "imb"} <= set(edges)
    assert import_cycles(edges) == []
    private = sorted(f"{m} imports {name} from .{t}" for m, targets in edges.items()
                     for t, name in targets if name.startswith("_"))
    assert private == []


def test_import_cycle_check_finds_a_circle(tmp_path):
    """Negative control: the registry importing a generator back (the generators import the
    registry for their records; it imports them by name, lazily) is caught."""
    for path in WORKLOADS_DIR.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text())
    registry = tmp_path / "registry.py"
    registry.write_text(registry.read_text() + "\n\ndef _f():\n    from .multiphase import multiphase\n")
    assert any({"registry", "multiphase"} <= set(c)
               for c in import_cycles(workload_imports(tmp_path)))
