"""Rank programs: the op table the host kernel interprets, a builder, and static analysis.

Encoding (see extoll_vec.dtypes for the op codes): ``ops`` is int32 ``[n_rows, 4]`` holding
``(opcode, a, b, c)``; ``start[r]`` is the first row of rank r's program, which runs until the
first OP_END at or after it. ``c`` is always 0. Loops are ``OP_LOOP a=count ... OP_ENDLOOP``,
nested at most MAX_LOOP_DEPTH deep, never containing OP_END.

The builder lays programs out contiguously in rank order, each followed by its own OP_END, but
the analysis functions accept any layout the encoding allows (e.g. ranks sharing rows).

Static analysis never unrolls loops physically: each row gets a multiplicity (the product of the
counts of the loops around it), and outstanding-request peaks are computed by composing small
per-segment summaries, so a 1024-rank alltoall (2 million rows) is analysed in a fraction of a
second.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence

import numpy as np

from ..dtypes import (ANY_SOURCE, MAX_LOOP_DEPTH, MAX_MARKS, N_OPS, OP_COMPUTE, OP_END, OP_ENDLOOP,
                      OP_IMCAST, OP_IRECV, OP_ISEND, OP_LOOP, OP_MARK, OP_MCAST, OP_NAMES, OP_RECV,
                      OP_SEND, OP_SNAPSHOT, OP_WAITALL)
from .registry import Workload

I32_MAX = 2**31 - 1
_MULT_MAX = 2**62  # cap on the product of nested loop counts (int64 counting stays exact)


@dataclass(frozen=True, eq=False)
class Program:
    """Rank programs for one run. eq=False: two Programs compare (and hash) by identity, since
    ndarray fields have no scalar equality; compare ``ops``/``start`` with numpy instead."""
    ops: np.ndarray     # int32 [n_rows, 4]: (opcode, a, b, c)
    start: np.ndarray   # int32 [n_ranks]: first row of each rank's program
    max_irecvs: int     # peak receives posted and not yet waited for, over all ranks (>= 1)
    max_isends: int     # same for sends (>= 1)
    description: str

    @property
    def n_ranks(self) -> int:
        return int(self.start.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.ops.shape[0])

    def rank_rows(self, rank: int) -> np.ndarray:
        """Rows of one rank's program, its OP_END included (a view)."""
        s = int(self.start[rank])
        ends = np.flatnonzero(self.ops[s:, 0] == OP_END)
        if ends.size == 0:
            raise ValueError(f"rank {rank}: program starting at row {s} has no OP_END")
        return self.ops[s:s + int(ends[0]) + 1]

    def disassemble(self, rank: int) -> str:
        """Human-readable listing of one rank's program (for debugging and error reports)."""
        lines, depth = [], 0
        for op, a, b, _c in self.rank_rows(rank).tolist():
            if op == OP_ENDLOOP:
                depth -= 1
            name = OP_NAMES[op] if 0 <= op < N_OPS else f"?{op}"
            if op in (OP_SEND, OP_ISEND):
                arg = f"to {a}, {b} B"
            elif op in (OP_MCAST, OP_IMCAST):
                arg = f"to ranks 0..{a - 1}, {b} B"
            elif op in (OP_RECV, OP_IRECV):
                arg = f"from {'ANY' if a == ANY_SOURCE else a}, {b} B"
            elif op == OP_COMPUTE:
                arg = f"{a} ns"
            elif op in (OP_LOOP, OP_MARK):
                arg = str(a)
            else:
                arg = ""
            lines.append("  " * depth + f"{name} {arg}".rstrip())
            if op == OP_LOOP:
                depth += 1
        return "\n".join(lines)


def empty_program(description: str = "no rank programs (network-only traffic)") -> Program:
    """The program of a run without ranks (synthetic traffic): 0 ranks, ops shape (0, 4)."""
    return Program(np.zeros((0, 4), np.int32), np.zeros(0, np.int32), 1, 1, description)


# ---- construction -------------------------------------------------------------------------------

def _to_int32(arr, what: str) -> np.ndarray:
    """Contiguous int32 copy/view of arr; ValueError instead of silent wrap-around."""
    arr = np.asarray(arr)
    if arr.dtype != np.int32:
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{what}: integer values required, got {arr.dtype}")
        if arr.size and (arr.min() < -2**31 or arr.max() > I32_MAX):
            raise ValueError(f"{what}: value outside the int32 range")
    return np.ascontiguousarray(arr, dtype=np.int32)


def _per_rank_ns(values, n: int, what: str) -> np.ndarray:
    """int32 [n] of values >= 0 (one per rank), else ValueError naming `what`."""
    arr = _to_int32(values, what)
    if arr.shape != (n,) or (n and arr.min() < 0):
        raise ValueError(f"{what}: {n} values >= 0 required, got shape {arr.shape}")
    return arr


def with_start_delays(prog: Program, delays_ns: np.ndarray,
                      timed_ns: np.ndarray | None = None, mark: int = 0) -> Program:
    """prog with every rank's program preceded by OP_COMPUTE of delays_ns[rank] ns (the rank
    starts that late) and, with timed_ns, OP_COMPUTE of timed_ns[rank] ns before the rank's
    first OP_MARK `mark` where that is not its first row (the rank leaves the barrier before
    its timed part that late). Rows are copied rank by rank, so ranks that shared rows get
    their own."""
    n = prog.n_ranks
    delays = _per_rank_ns(delays_ns, n, "start delays")
    start = prog.start.astype(np.int64)
    ends = np.flatnonzero(prog.ops[:, 0] == OP_END)
    end = ends[np.searchsorted(ends, start)]                      # each rank's OP_END row
    # where the second delay goes, as an index into the old rows (-1: none for this rank)
    at = np.full(n, -1, np.int64)
    if timed_ns is not None:
        timed = _per_rank_ns(timed_ns, n, "timed-part delays")
        marks = np.flatnonzero((prog.ops[:, 0] == OP_MARK) & (prog.ops[:, 1] == mark))
        if marks.size:
            k = np.minimum(np.searchsorted(marks, start), marks.size - 1)
            first = marks[k]
            at = np.where((first > start) & (first < end), first, -1)
    extra = 1 + (at >= 0)
    length = end - start + 1                                       # each rank's rows, OP_END too
    new_start = np.cumsum(length + extra) - (length + extra)
    if n and int(new_start[-1] + length[-1] + extra[-1]) > I32_MAX:
        raise ValueError("program with start delays has more rows than int32 can index")
    ops = np.zeros((int((length + extra).sum()), 4), np.int32)
    # old row i of rank r lands at new_start[r] + 1 + (i - start[r]), one further from `at` on
    rank = np.repeat(np.arange(n), length)
    src = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length - start, length)
    dst = new_start[rank] + 1 + (src - start[rank]) + ((at[rank] >= 0) & (src >= at[rank]))
    ops[dst] = prog.ops[src]
    ops[new_start, 0] = OP_COMPUTE
    ops[new_start, 1] = delays
    with_t = np.flatnonzero(at >= 0)
    if with_t.size:
        row = new_start[with_t] + 1 + (at[with_t] - start[with_t])
        ops[row, 0] = OP_COMPUTE
        ops[row, 1] = timed[with_t]
    return Program(ops, new_start.astype(np.int32), prog.max_irecvs, prog.max_isends,
                   prog.description)


def make_program(ops: np.ndarray, start: np.ndarray, description: str = "") -> Program:
    """Validate raw arrays and wrap them in a Program with max_irecvs/max_isends filled in."""
    ops = _to_int32(ops, "ops")
    start = _to_int32(start, "start")
    an = _analyze(ops, start)
    irecvs, isends = _outstanding(an)
    return Program(ops, start, irecvs, isends, description)


def assemble(rank_rows: Sequence[np.ndarray], description: str = "") -> Program:
    """Lay out one row block per rank (without OP_END) contiguously, each followed by OP_END."""
    lengths = np.fromiter((len(r) + 1 for r in rank_rows), dtype=np.int64, count=len(rank_rows))
    ends = np.cumsum(lengths)
    start = ends - lengths
    if ends.size and ends[-1] > I32_MAX:
        raise ValueError(f"program has {int(ends[-1])} rows, more than int32 can index")
    ops = np.zeros((int(ends[-1]) if ends.size else 0, 4), np.int32)  # zero rows are OP_END
    for s, rows in zip(start.tolist(), rank_rows):
        if len(rows):
            ops[s:s + len(rows)] = rows
    return make_program(ops, start, description)


def assemble_blocks(blocks: Sequence[np.ndarray], description: str = "") -> Program:
    """Like assemble for blocks of equal-length programs: each block is int32 [k, L, 4] (k ranks,
    L rows each, without OP_END); ranks are numbered block after block. Fully vectorized."""
    parts, lengths = [], []
    for blk in blocks:
        blk = np.asarray(blk)
        if blk.ndim != 3 or blk.shape[2] != 4:
            raise ValueError(f"blocks must have shape (k, L, 4), got {blk.shape}")
        k, length = blk.shape[0], blk.shape[1]
        full = np.zeros((k, length + 1, 4), np.int32)   # last row of each program: OP_END
        full[:, :length] = blk
        parts.append(full.reshape(-1, 4))
        lengths.append(np.full(k, length + 1, np.int64))
    lens = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    ends = np.cumsum(lens)
    if ends.size and ends[-1] > I32_MAX:
        raise ValueError(f"program has {int(ends[-1])} rows, more than int32 can index")
    ops = np.concatenate(parts) if parts else np.zeros((0, 4), np.int32)
    return make_program(ops, ends - lens, description)


class ProgramBuilder:
    """Appends ops to per-rank programs; ``build()`` adds each rank's OP_END and validates.

    Scalar methods append one row; ``rows()`` appends a prepared int32 [k, 4] block (the
    vectorized path for generators); ``loop()`` is a context manager::

        b = ProgramBuilder(2)
        with b.loop(0, 10):
            b.send(0, 1, 2048).recv(0, 1, 2048)
        with b.loop(1, 10):
            b.recv(1, 0, 2048).send(1, 0, 2048)
        prog = b.build("pingpong")

    Arguments are checked when the program is built (errors name the rank and row).
    """

    def __init__(self, n_ranks: int):
        if n_ranks < 0:
            raise ValueError(f"n_ranks must be >= 0, got {n_ranks}")
        self.n_ranks = int(n_ranks)
        self._blocks: list[list[np.ndarray]] = [[] for _ in range(self.n_ranks)]
        self._rows: list[list[tuple[int, int, int, int]]] = [[] for _ in range(self.n_ranks)]
        self._depth = [0] * self.n_ranks

    def _rank(self, rank: int) -> int:
        r = int(rank)
        if not 0 <= r < self.n_ranks:
            raise ValueError(f"rank {rank} out of range 0..{self.n_ranks - 1}")
        return r

    def op(self, rank: int, opcode: int, a: int = 0, b: int = 0) -> "ProgramBuilder":
        self._rows[self._rank(rank)].append((int(opcode), int(a), int(b), 0))
        return self

    def send(self, rank: int, dst: int, nbytes: int) -> "ProgramBuilder":
        return self.op(rank, OP_SEND, dst, nbytes)

    def isend(self, rank: int, dst: int, nbytes: int) -> "ProgramBuilder":
        return self.op(rank, OP_ISEND, dst, nbytes)

    def recv(self, rank: int, src: int, nbytes: int) -> "ProgramBuilder":
        return self.op(rank, OP_RECV, src, nbytes)

    def irecv(self, rank: int, src: int, nbytes: int) -> "ProgramBuilder":
        return self.op(rank, OP_IRECV, src, nbytes)

    def mcast(self, rank: int, group: int, nbytes: int, blocking: bool = True) -> "ProgramBuilder":
        """rank sends one message of nbytes to every other member of ranks 0..group-1 (each
        posts a receive from rank); the protocol must declare multicast."""
        return self.op(rank, OP_MCAST if blocking else OP_IMCAST, group, nbytes)

    def waitall(self, rank: int) -> "ProgramBuilder":
        return self.op(rank, OP_WAITALL)

    def exchange(self, messages) -> "ProgramBuilder":
        """Messages (source, destination, bytes) in one step, deadlock-free under any flow
        control that eventually returns credits: every rank posts its receives (in message order
        per source), then its sends, then waits for all (every rank, also one without any)."""
        messages = list(messages)
        for s, t, nb in messages:
            self.irecv(t, s, nb)
        for s, t, nb in messages:
            self.isend(s, t, nb)
        for r in range(self.n_ranks):
            self.waitall(r)
        return self

    def compute(self, rank: int, ns: int) -> "ProgramBuilder":
        return self.op(rank, OP_COMPUTE, ns)

    def mark(self, rank: int, index: int) -> "ProgramBuilder":
        return self.op(rank, OP_MARK, index)

    def snapshot(self, rank: int) -> "ProgramBuilder":
        """Record the credits the rank owns towards every peer (its next snapshot)."""
        return self.op(rank, OP_SNAPSHOT)

    @contextmanager
    def loop(self, rank: int, count: int) -> Iterator["ProgramBuilder"]:
        r = self._rank(rank)
        self.op(r, OP_LOOP, count)
        self._depth[r] += 1
        yield self
        self._depth[r] -= 1
        self.op(r, OP_ENDLOOP)

    def rows(self, rank: int, rows: np.ndarray) -> "ProgramBuilder":
        """Append a block of raw rows (int32 [k, 4]) to one rank."""
        r = self._rank(rank)
        arr = np.asarray(rows)
        if arr.ndim != 2 or arr.shape[1] != 4:
            raise ValueError(f"rows for rank {r} must have shape (k, 4), got {arr.shape}")
        self._flush(r)
        self._blocks[r].append(_to_int32(arr, f"rank {r}"))
        return self

    def barrier(self, ranks: Sequence[int] | np.ndarray, nbytes: int = 0) -> "ProgramBuilder":
        """Append a dissemination barrier among `ranks` to each of them."""
        from .collectives import barrier_rows
        ranks = np.asarray(ranks, dtype=np.int64).ravel()
        for r, rows in zip(ranks.tolist(), barrier_rows(ranks, nbytes)):
            self.rows(r, rows)
        return self

    def _flush(self, r: int) -> None:
        if self._rows[r]:
            rows = np.array(self._rows[r], dtype=np.int64)
            self._rows[r] = []
            self._blocks[r].append(_to_int32(rows, f"rank {r}"))

    def rank_block(self, rank: int) -> np.ndarray:
        r = self._rank(rank)
        self._flush(r)
        bl = self._blocks[r]
        if not bl:
            return np.zeros((0, 4), np.int32)
        return bl[0] if len(bl) == 1 else np.concatenate(bl)

    def build(self, description: str = "") -> Program:
        open_loops = [r for r, d in enumerate(self._depth) if d]
        if open_loops:
            raise ValueError(f"rank {open_loops[0]}: loop not closed")
        return assemble([self.rank_block(r) for r in range(self.n_ranks)], description)


# ---- validation and structure -------------------------------------------------------------------

class _Analysis(NamedTuple):
    row: np.ndarray       # int64: ops row of every (rank, program row) entry, rank-major
    rank_of: np.ndarray   # int32: owning rank of each entry
    op: np.ndarray        # int32 columns of ops at those rows
    a: np.ndarray
    mult: np.ndarray      # int64: how often each entry executes (product of enclosing loop counts)


def _fail(rank: int, row: int, op: int, msg: str) -> None:
    name = OP_NAMES[op] if 0 <= op < N_OPS else f"op {op}"
    raise ValueError(f"rank {rank} row {row} ({name}): {msg}")


def _analyze(ops: np.ndarray, start: np.ndarray) -> _Analysis:
    """Check the encoding; return every rank's rows with their multiplicities."""
    if ops.ndim != 2 or ops.shape[1] != 4:
        raise ValueError(f"ops must have shape (n_rows, 4), got {ops.shape}")
    if start.ndim != 1:
        raise ValueError(f"start must be one-dimensional, got shape {start.shape}")
    n_ranks, n_rows = start.shape[0], ops.shape[0]
    if n_ranks == 0:
        e, e32 = np.zeros(0, np.int64), np.zeros(0, np.int32)
        return _Analysis(e, e32, e32, e32, e)
    st = start.astype(np.int64)
    bad = np.flatnonzero((st < 0) | (st >= n_rows))
    if bad.size:
        r = int(bad[0])
        raise ValueError(f"rank {r}: start row {int(st[r])} outside 0..{n_rows - 1}")
    op_all = ops[:, 0]
    end_rows = np.flatnonzero(op_all == OP_END)
    k = np.searchsorted(end_rows, st)
    bad = np.flatnonzero(k == end_rows.size)
    if bad.size:
        r = int(bad[0])
        raise ValueError(f"rank {r}: program starting at row {int(st[r])} has no OP_END")
    end = end_rows[k].astype(np.int64)

    # every (rank, row) entry, rank-major; no gather when programs tile ops in rank order
    lengths = end - st + 1
    offs = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    tiled = total == n_rows and bool(np.all(st == offs))
    rank_of = np.zeros(total, np.int32)
    rank_of[offs[1:]] = 1
    np.cumsum(rank_of, out=rank_of)
    if tiled:
        row = np.arange(n_rows, dtype=np.int64)
        op, a, b, c = ops[:, 0], ops[:, 1], ops[:, 2], ops[:, 3]
    else:
        row = np.arange(total, dtype=np.int64) + (st - offs)[rank_of]
        op, a, b, c = (ops[row, j] for j in range(4))

    def check(bad_mask: np.ndarray, msg) -> None:
        idx = np.flatnonzero(bad_mask)
        if idx.size:
            i = int(idx[0])
            _fail(int(rank_of[i]), int(row[i]), int(op[i]),
                  msg(int(a[i]), int(b[i]), int(c[i])) if callable(msg) else msg)

    check((op < 0) | (op >= N_OPS), "unknown op code")
    check(c != 0, lambda a_, b_, c_: f"column c must be 0, got {c_}")
    is_send = (op == OP_SEND) | (op == OP_ISEND)
    is_recv = (op == OP_RECV) | (op == OP_IRECV)
    is_mcast = (op == OP_MCAST) | (op == OP_IMCAST)
    check(is_mcast & ((a < 2) | (a > n_ranks)),
          lambda a_, b_, c_: f"multicast group of {a_} ranks: allowed 2..{n_ranks} (ranks 0..a-1)")
    check(is_mcast & (rank_of >= a), lambda a_, b_, c_: f"the sender is not in its multicast "
          f"group (ranks 0..{a_ - 1})")
    check(is_mcast & (b < 0), lambda a_, b_, c_: f"message size {b_} bytes < 0")
    peer = is_send | is_recv
    check(is_send & ((a < 0) | (a >= n_ranks)),
          lambda a_, b_, c_: f"destination {a_} outside ranks 0..{n_ranks - 1}")
    check(is_recv & (a != ANY_SOURCE) & ((a < 0) | (a >= n_ranks)),
          lambda a_, b_, c_: f"source {a_} outside ranks 0..{n_ranks - 1} and not ANY_SOURCE")
    check(peer & (a == rank_of), "a rank cannot send to or receive from itself")
    check(peer & (b < 0), lambda a_, b_, c_: f"message size {b_} bytes < 0")
    check((op == OP_COMPUTE) & (a < 0), lambda a_, b_, c_: f"compute time {a_} ns < 0")
    check((op == OP_LOOP) & (a < 1), lambda a_, b_, c_: f"loop count {a_} < 1")
    check((op == OP_MARK) & ((a < 0) | (a >= MAX_MARKS)),
          lambda a_, b_, c_: f"mark index {a_} outside 0..{MAX_MARKS - 1}")
    check(~peer & ~is_mcast & (op != OP_COMPUTE) & (op != OP_LOOP) & (op != OP_MARK) & (a != 0),
          lambda a_, b_, c_: f"column a must be 0, got {a_}")
    check(~peer & ~is_mcast & (b != 0), lambda a_, b_, c_: f"column b must be 0, got {b_}")

    # loop structure and multiplicities, once per distinct program start
    mult_row = np.ones(n_rows, np.int64)
    seg_start, first = np.unique(st, return_index=True)
    seg_end = end[first]
    loop_rows = np.flatnonzero((op_all == OP_LOOP) | (op_all == OP_ENDLOOP))
    lo = np.searchsorted(loop_rows, seg_start)
    hi = np.searchsorted(loop_rows, seg_end)
    for s, e, r, i0, i1 in zip(seg_start.tolist(), seg_end.tolist(), first.tolist(), lo.tolist(),
                               hi.tolist()):
        if i0 == i1:
            continue  # no loops: multiplicity 1 everywhere
        stack: list[int] = []
        cur, prev = 1, s
        for p in loop_rows[i0:i1].tolist():
            mult_row[prev:p + 1] = cur
            prev = p + 1
            if op_all[p] == OP_LOOP:
                stack.append(cur)
                if len(stack) > MAX_LOOP_DEPTH:
                    _fail(r, p, OP_LOOP, f"loops nested deeper than MAX_LOOP_DEPTH={MAX_LOOP_DEPTH}")
                cur *= int(ops[p, 1])
                if cur > _MULT_MAX:
                    _fail(r, p, OP_LOOP, "product of nested loop counts exceeds 2**62")
            else:
                if not stack:
                    _fail(r, p, OP_ENDLOOP, "OP_ENDLOOP without a matching OP_LOOP")
                cur = stack.pop()
        mult_row[prev:e + 1] = cur
        if stack:
            _fail(r, e, OP_END, f"{len(stack)} loop(s) not closed before OP_END")
    return _Analysis(row, rank_of, op, a, mult_row if tiled else mult_row[row])


def validate_program(prog: Program) -> None:
    """Raise ValueError if prog breaks the encoding (dtypes, bad op, peer, size, loops)."""
    for name in ("ops", "start"):
        arr = getattr(prog, name)
        if not isinstance(arr, np.ndarray) or arr.dtype != np.int32:
            raise ValueError(f"Program.{name} must be an int32 ndarray, got "
                             f"{getattr(arr, 'dtype', type(arr).__name__)}")
    _analyze(np.asarray(prog.ops), np.asarray(prog.start))
    for name in ("max_irecvs", "max_isends"):
        if int(getattr(prog, name)) < 1:
            raise ValueError(f"{name} must be >= 1, got {getattr(prog, name)}")


# ---- outstanding requests ------------------------------------------------------------------------
# A summary describes how a piece of program changes the number of pending requests p:
# (reset, a, c1, c2): out(p) = (0 if reset else p) + a;  peak(p) = max(p + c1, c2).
# Summaries compose associatively, and a loop of n > 1 iterations of B is B∘B when B resets
# (every later iteration starts from the same state) and a straight sum otherwise.

_ID = (False, 0, 0, 0)


def _compose(s: tuple, t: tuple) -> tuple:
    s_reset, s_a, s_c1, s_c2 = s
    t_reset, t_a, t_c1, t_c2 = t
    if s_reset:
        c1, c2 = s_c1, max(s_c2, t_c2, s_a + t_c1)
    else:
        c1, c2 = max(s_c1, s_a + t_c1), max(s_c2, t_c2)
    if t_reset:
        return (True, t_a, c1, c2)
    return (s_reset, s_a + t_a, c1, c2)


def _power(b: tuple, n: int) -> tuple:
    if n == 1:
        return b
    if b[0]:
        return _compose(b, b)
    return (False, n * b[1], (n - 1) * b[1] + b[2], b[3])


def _peak(op: np.ndarray, a: np.ndarray, post_op: int, block_op: int) -> int:
    """Largest number of pending requests over all programs in the entry columns op/a."""
    rel = np.flatnonzero((op == post_op) | (op == block_op) | (op == OP_WAITALL)
                         | (op == OP_LOOP) | (op == OP_ENDLOOP) | (op == OP_END))
    if rel.size == 0:
        return 0
    code = op[rel]
    brk = np.ones(rel.size, bool)           # run-length compress equal neighbours ...
    brk[1:] = code[1:] != code[:-1]
    brk |= (code == OP_LOOP) | (code == OP_ENDLOOP) | (code == OP_END)  # ... not structure
    heads = np.flatnonzero(brk)
    runs = np.diff(np.append(heads, rel.size)).tolist()
    codes = code[heads].tolist()
    counts = a[rel[heads]].tolist()
    best = 0
    stack: list[tuple[tuple, int]] = []
    acc = _ID
    for c, n, cnt in zip(codes, runs, counts):
        if c == post_op:
            acc = _compose(acc, (False, n, n, 0))
        elif c == block_op:
            acc = _compose(acc, (False, 0, 1, 0))
        elif c == OP_WAITALL:
            acc = _compose(acc, (True, 0, 0, 0))
        elif c == OP_LOOP:
            stack.append((acc, cnt))
            acc = _ID
        elif c == OP_ENDLOOP:
            outer, count = stack.pop()
            acc = _compose(outer, _power(acc, count))
        else:  # OP_END: one program done
            best = max(best, acc[2], acc[3])
            acc = _ID
    return best


def _outstanding(an: _Analysis) -> tuple[int, int]:
    # a multicast is one send descriptor at its sender, whatever the group
    op = np.where(an.op == OP_IMCAST, OP_ISEND, np.where(an.op == OP_MCAST, OP_SEND, an.op))
    return (max(1, _peak(an.op, an.a, OP_IRECV, OP_RECV)),
            max(1, _peak(op, an.a, OP_ISEND, OP_SEND)))


def _sends(an: _Analysis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entry index, sender, destination) of every message the entries send, a multicast
    expanded into one message to every other member of its group."""
    s = np.flatnonzero((an.op == OP_SEND) | (an.op == OP_ISEND))
    m = np.flatnonzero((an.op == OP_MCAST) | (an.op == OP_IMCAST))
    rank = an.rank_of.astype(np.int64)
    if m.size == 0:
        return s, rank[s], an.a[s].astype(np.int64)
    size = an.a[m].astype(np.int64) - 1                  # messages per multicast
    rep = np.repeat(m, size)
    k = np.arange(rep.size) - np.repeat(np.cumsum(size) - size, size)   # 0..size-1
    dst = k + (k >= rank[rep])                            # every member but the sender
    return (np.concatenate([s, rep]), np.concatenate([rank[s], rank[rep]]),
            np.concatenate([an.a[s].astype(np.int64), dst]))


def max_outstanding(prog: Program) -> tuple[int, int]:
    """(max_irecvs, max_isends): the most receives (sends) any rank has posted and not yet
    completed at one time, loops taken into account. A blocking OP_RECV/OP_SEND counts 1 on top
    of the pending non-blocking ones; OP_WAITALL clears both. Both values are at least 1."""
    return _outstanding(_analyze(np.asarray(prog.ops), np.asarray(prog.start)))


# ---- message balance -------------------------------------------------------------------------------

def _pair_counts(an: _Analysis, n: int):
    op, a = an.op, an.a.astype(np.int64)
    snd, s_from, s_to = _sends(an)
    rcv = (op == OP_RECV) | (op == OP_IRECV)
    anyr = rcv & (a == ANY_SOURCE)
    rcv &= ~anyr
    anyc = np.zeros(n, np.int64)
    np.add.at(anyc, an.rank_of[anyr], an.mult[anyr])
    rank_of = an.rank_of.astype(np.int64)
    keys = np.concatenate([s_from * n + s_to, a[rcv] * n + rank_of[rcv]])
    if keys.size == 0:
        e = np.zeros(0, np.int64)
        return e, e, e, e, anyc
    ws = np.concatenate([an.mult[snd], np.zeros(int(rcv.sum()), np.int64)])
    wr = np.concatenate([np.zeros(snd.size, np.int64), an.mult[rcv]])
    order = np.argsort(keys, kind="stable")
    keys, ws, wr = keys[order], ws[order], wr[order]
    heads = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    k = keys[heads]
    return k // n, k % n, np.add.reduceat(ws, heads), np.add.reduceat(wr, heads), anyc


def message_counts(prog: Program) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Loop-unrolled message counts: (pair_src, pair_dst, sent, received, any_source).

    For every (sender, receiver) pair that occurs in a send or a specific-source receive (sparse,
    sorted by sender then receiver): how many messages the sender sends the receiver and how many
    receives the receiver posts naming that sender. any_source is int64 [n_ranks], the
    ANY_SOURCE receives each rank posts."""
    ops = np.asarray(prog.ops)
    return _pair_counts(_analyze(ops, np.asarray(prog.start)), prog.n_ranks)


def sends(prog: Program) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every send row of prog (OP_SEND, OP_ISEND; a multicast row once per other member of
    its group) with how often it runs, loops unrolled: (rank, destination, bytes,
    executions), int64 arrays of one entry per message row."""
    an = _analyze(np.asarray(prog.ops), np.asarray(prog.start))
    s, rank, dst = _sends(an)
    return (rank, dst, np.asarray(prog.ops)[an.row[s], 2].astype(np.int64),
            an.mult[s].astype(np.int64))


def snapshot_counts(prog: Program) -> np.ndarray:
    """int64 [n_ranks]: OP_SNAPSHOT executions of each rank, loops unrolled."""
    an = _analyze(np.asarray(prog.ops), np.asarray(prog.start))
    sel = an.op == OP_SNAPSHOT
    return np.bincount(an.rank_of[sel], weights=an.mult[sel],
                       minlength=prog.n_ranks).astype(np.int64)


def check_balanced(prog: Program) -> None:
    """Raise ValueError unless, loops unrolled, every rank sends each peer exactly as many messages
    as that peer posts receives naming it. A receiver with ANY_SOURCE receives must post no more
    specific receives from any sender than that sender sends it, and its ANY_SOURCE receives
    must make up the rest of the messages sent to it. (Counts only: a balanced program whose
    ANY_SOURCE receives steal messages meant for specific ones can still deadlock.)"""
    src, dst, sent, recv, anyc = message_counts(prog)
    has_any = anyc[dst] > 0
    bad = np.flatnonzero(np.where(has_any, recv > sent, recv != sent))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"unbalanced: rank {int(src[i])} sends {int(sent[i])} message(s) to rank "
                         f"{int(dst[i])}, which posts {int(recv[i])} receive(s) from it")
    n = prog.n_ranks
    unclaimed = np.zeros(n, np.int64)
    np.add.at(unclaimed, dst, sent - recv)
    bad = np.flatnonzero(unclaimed != anyc)
    if bad.size:
        d = int(bad[0])
        raise ValueError(f"unbalanced: rank {d} posts {int(anyc[d])} ANY_SOURCE receive(s) but "
                         f"{int(unclaimed[d])} message(s) sent to it are not matched by a "
                         f"specific receive")


# ---- registered kind (registry.py): programs written by hand ----------------------------------
def check_group_size(w, pre, check) -> None:
    """The multicast group, ranks 0..group_size-1 (0: every rank)."""
    check(w.group_size == 0 or 2 <= w.group_size <= w.ranks, f"{pre}.group_size",
          f"0 (every rank) or 2..{w.ranks} (the ranks)", w.group_size)


WORKLOADS = (
    Workload("program", hand_written=True, check=check_group_size, rows=lambda cfg: 0,
             figures=lambda cfg: (0, 0, 0)),
)
