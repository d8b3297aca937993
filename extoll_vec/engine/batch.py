"""The run loop: a batch of configs of equal shapes becomes one set of arrays that one kernel
call advances for every member; simulate() splits any list of configs into such batches and
gathers their results into one Dataset, a `point` per config, in order."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

from .. import dtypes as D
from ..config import RunConfig, _check, check_threads
from ..protocols.registry import registered
from ..dataset import PROTOCOL_SCHEMA, build_dataset, pad_points, result_sizes, schema_for
from ..errors import ConfigError, SimulationError
from ..state import allocate
from ..topology import build as build_topology
from ..routing.deadlock import check_deadlock_free
from ..workloads import build_program, skewed, snapshot_counts
from ..workloads.registry import workload
from extoll_vec.kernels import progstats
from extoll_vec.kernels.specialize import sim_for
from . import stall
from .diagnostics import check_invariants, describe_error
from .pairs import pair_table, pair_table_size
from .params import cycles, member_params, node_params, sink_rates, topo_arrays
from .results import RESULT_VARIABLES, results
from .sizing import (AUDIT_BYTES_PER_PAIR, ProgramFigures, allocating, batch_key, check_memory,
                     check_widths, human_bytes, mailbox_capacity,
                     ring_slots, shape_key, state_sizes)

# what advance is given for "no profile" (kernels/sim.py: one compiled loop for both)
NO_PROFILE = np.zeros((0, D.N_PROF, 2), np.int64)
NO_STARTS = np.zeros((0, 0), np.int32)   # advance's starts when it runs (sim.advance)


class Batch:
    """The arrays of one batch: topology (shared), programs and parameters (per member), state."""

    def __init__(self, configs: Sequence[RunConfig], programs: Sequence | None = None,
                 exact: bool = False):
        """exact: the pair tables dense and the mailbox rings at their full capacity, instead
        of sized from the programs (engine/pairs.py, sizing.state_sizes); run() rebuilds the
        batch so when a member ran out of them (ERR_SPARE), with the same results."""
        self._given = (configs, programs)
        self.exact = exact
        keys = {shape_key(c) for c in configs}
        if len(keys) != 1:
            raise ValueError("a batch needs configs of equal shapes (engine.shape_key)")
        check_memory(configs)    # refuse before building or allocating anything
        self.configs = list(configs)
        c0 = configs[0]
        self.topology = build_topology(c0.topology)
        check_topology(self.topology, configs)
        self.T = topo_arrays(self.topology, c0)
        B, NR = len(configs), c0.n_ranks
        # workload.kind "program": the caller hands in hand-written Programs, one per config
        with allocating("the rank programs"):
            programs = (list(programs) if programs is not None
                        else [build_program(c) for c in configs])
            if len(programs) != B:
                raise ValueError("one Program per config")
            programs = [skewed(p, c) for p, c in zip(programs, configs)]
        for cfg, prog in zip(configs, programs):
            check_protocol_program(cfg, prog)
        # the kernels compiled for the members' protocols (kernels/specialize.py)
        self.sim = sim_for(c.protocol.name for c in configs)
        rows = max(max(len(p.ops) for p in programs), 1)
        with allocating("the batch's rank programs", 16 * B * rows):
            self.ops = np.zeros((B, rows, 4), np.int32)
        self.starts = np.zeros((B, max(NR, 1)), np.int32)[:, :NR]
        figs, tables = [], []    # tables: each member's pair table (engine/pairs.py)
        for b, (cfg, prog) in enumerate(zip(configs, programs)):
            ops = prog.ops.copy()
            comp = ops[:, 0] == D.OP_COMPUTE
            ops[comp, 2] = [cycles(ns, cfg.network.cycle_ns) for ns in ops[comp, 1]]
            self.ops[b, :len(ops)] = ops
            if NR:
                self.starts[b] = prog.start
            with allocating(f"the pair table of member {b}"):
                fig, table = member_figures(cfg, prog, exact)
            figs.append(fig)
            tables.append(table)
        self.par = np.stack([member_params(c, mailbox_capacity(c, f))
                             for c, f in zip(configs, figs)])
        topo = self.topology
        sizes = state_sizes(configs, topo, figs)
        check_widths(programs, sizes["SQ"])
        # the memory the run peaks at, now that the programs say how large their tables are
        self.memory_estimate = check_memory(configs, figs=figs,
                                            rows=[len(p.ops) for p in programs])
        synth = c0.workload.synthetic
        self.sizes = sizes
        with allocating(*_state_table(sizes)):
            self.S = allocate(sizes)
        S = self.S
        # initial credits: a router output owns the whole downstream VC buffer; an ejection
        # port owns the NIC ejection buffer; a NIC owns its router's injection buffer (VC 0)
        term = topo.terminal_node >= 0
        for b, cfg in enumerate(configs):
            S.cr[b][~term] = cfg.network.buffer_flits
            S.cr[b, term, 0] = cfg.network.nic_ejection_flits
            S.cr[b, term, 1:] = 0
            S.cr[b][(topo.neighbor < 0) & ~term] = 0
            S.nic_cr[b] = cfg.network.buffer_flits
            if synth:
                S.syn_dest[b] = workload(cfg.workload.kind).destinations(topo.n_nodes, cfg)
            S.npar[b] = node_params(cfg, topo, sizes["KNP"])
            S.ej_sink[b] = sink_rates(cfg, topo.n_nodes)
            ptr, peer, real = tables[b]
            S.pair_ptr[b] = ptr
            S.pair_peer[b, :len(peer)] = peer
            S.pair_real[b] = real
            nr = len(real)
            S.pair_dense[b] = nr > 0 and bool((real == nr).all()) and bool(
                (ptr == np.arange(nr + 1) * nr).all())
        self.sim.advance(S, self.T, self.par, self.ops, self.starts, 0, NO_PROFILE, 0, B)

    def run(self, progress: Callable[[float], None] | None = None,
            profile: np.ndarray | None = None, threads: int = 1) -> None:
        """Advance every member to completion. profile: int64 [B, dtypes.N_PROF, 2] to
        accumulate events and time-stamp cycles per event kind (the same compiled kernel,
        timing each event: slower; benchmarks/profile_events.py), or None. threads: members
        advanced at once (config.check_threads); the results are bit-identical for any count."""
        check_threads(threads, "threads")
        want = (len(self.configs), D.N_PROF, 2)
        if profile is not None and (not isinstance(profile, np.ndarray)
                                    or profile.dtype != np.int64 or profile.shape != want
                                    or not profile.flags.c_contiguous):
            # the kernel writes rows of it unchecked: a short array would be written past; and
            # another layout than the build's would compile the event loop again
            raise ValueError(f"profile: a C-contiguous int64 array of shape {want}, got "
                             f"{getattr(profile, 'dtype', type(profile).__name__)} "
                             f"{getattr(profile, 'shape', '')}")
        chunk = min(c.limits.chunk_cycles for c in self.configs)
        every = stall.interval(self.configs)
        if every:           # the kernel calls end where the partial-deadlock check runs
            chunk = min(chunk, every)
        self.stall = stall.StallCheck(self) if every else None
        B = len(self.configs)
        k = min(threads, B)
        pool = ThreadPoolExecutor(k, thread_name_prefix="extoll-vec-member") if k > 1 else None
        self._private: dict[int, dict[str, np.ndarray]] = {}   # _member_state, this run's
        try:
            t = 0
            while True:
                t += chunk
                running = self._advance(t, profile, pool)
                if self.stall is not None:
                    self.stall.check(t)
                if progress is not None:
                    progress(float((self.S.finished != 0).mean()))
                if not self.exact and (self.S.status & D.ERR_SPARE).any():
                    # a table sized from the program ran out: the same run at full size
                    # (the old state freed first: the memory check counts what is held)
                    self.S = None
                    self._private = {}
                    self.__init__(*self._given, exact=True)
                    self._private = {}
                    self.stall = stall.StallCheck(self) if every else None
                    if profile is not None:
                        profile[:] = 0
                    t = 0
                    continue
                for b in range(B):
                    if self.S.status[b] != 0:
                        raise SimulationError(describe_error(self, b), int(self.S.status[b]), b)
                if running == 0:
                    break
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        pairs = self.sizes["NPAIR"] - 1
        for b in range(B):
            with allocating(f"the conservation check's lookups of the pair table ({pairs:,} "
                            "entries)", AUDIT_BYTES_PER_PAIR * pairs):
                check_invariants(self, b)

    def warm(self) -> None:
        """Load (or, on a cold Numba cache, compile) the kernels a run needs, with or without
        a profile: every member is advanced to cycle 0, which simulates nothing."""
        self._advance(0, None, None)

    def advance_to(self, t_stop: int) -> int:
        """Advance every unfinished member to cycle t_stop (or its end); returns the members
        still running. For a caller that reads the state between chunks (an audit, a probe's
        time series); run() adds the chunking, progress, threads and the invariant checks."""
        return self._advance(t_stop, None, None)

    def _advance(self, t_stop: int, profile, pool) -> int:
        """One chunk: every member to t_stop; returns the members still running. With a pool,
        one kernel call per active member on its own 1-member State (_member_state), handed to
        the threads in member order (the pool's queue balances members of unequal work);
        every call ends before the next chunk, so the errors are checked and raised as the
        serial loop does. Members share no mutable state (advance writes rows b of S and prof
        only), so which thread runs a member, and when, cannot change a bit of it
        (docs/design.md)."""
        S = self.S
        if profile is None:
            profile = NO_PROFILE
        if pool is None:
            return self.sim.advance(S, self.T, self.par, self.ops, NO_STARTS, t_stop, profile, 0,
                                    len(S.now))
        active = [b for b in range(len(S.now)) if S.finished[b] == 0 and S.status[b] == 0]
        calls = [pool.submit(self.sim.advance, self._member_state(b), self.T,
                             self.par[b:b + 1], self.ops[b:b + 1], NO_STARTS, t_stop,
                             profile[b:b + 1] if len(profile) else profile, 0, 1)
                 for b in active]
        running = sum(f.result() for f in calls)
        for b in active:            # the private rows back into S (status, finished, ...)
            for name, row in self._private[b].items():
                getattr(S, name)[b:b + 1] = row
        return running

    # A member's row of a small State field (the per-member counters: now, events, ev_meta,
    # pk_meta, ...) shares a cache line with its neighbours' rows; two threads writing them
    # on every event made each core's copy of the line invalid at every write (false
    # sharing: 40 % more CPU time for a 2-member alltoall-256 on 2 threads than as two
    # 1-member batches). So each member works on its own cache-line-aligned copy of these
    # rows while the batch runs on threads, and views of the large fields' rows.
    _PRIVATE_BELOW = 4096       # bytes of a member's row

    def _member_state(self, b: int):
        if b not in self._private:
            S, line = self.S, 64
            small = [n for n in S._fields
                     if getattr(S, n)[0:1].nbytes < self._PRIVATE_BELOW]
            sizes = [-(-getattr(S, n)[0:1].nbytes // line) * line for n in small]
            buf = np.zeros(sum(sizes) + 3 * line, np.uint8)
            off = line + (-buf.ctypes.data) % line          # aligned, a guard line each side
            rows = {}
            for n, size in zip(small, sizes):
                src = getattr(S, n)[b:b + 1]
                rows[n] = np.ndarray(src.shape, src.dtype, buf, off)
                rows[n][...] = src
                off += size
            self._private[b] = rows
        rows = self._private[b]
        return type(self.S)(*(rows[n] if n in rows else getattr(self.S, n)[b:b + 1]
                              for n in self.S._fields))

    def results(self) -> dict[str, np.ndarray]:
        return results(self)


def run_batch(configs: Sequence[RunConfig], progress=None, programs=None,
              threads: int = 1) -> dict[str, np.ndarray]:
    batch = Batch(configs, programs)
    batch.run(progress, threads=threads)
    return batch.results()


def simulate(configs: Sequence[RunConfig], progress: Callable[[float], None] | None = None,
             max_batch: int = 8, programs: Sequence | None = None, threads: int = 1):
    """Run configs (batched by engine.batch_key: shape and kernel build) and return one Dataset
    with a `point` per config; `threads` members of a batch advance at once (Batch.run)."""
    configs = list(configs)
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(batch_key(c), []).append(i)
    per_point: list[dict] = [None] * len(configs)  # type: ignore[list-item]
    for idx in groups.values():
        for k in range(0, len(idx), max_batch):
            part = idx[k:k + max_batch]
            res = run_batch([configs[i] for i in part], progress,
                            None if programs is None else [programs[i] for i in part],
                            threads)
            for j, i in enumerate(part):
                per_point[i] = {name: res[name][j]
                                for name in RESULT_VARIABLES + tuple(PROTOCOL_SCHEMA)}
    sizes = result_sizes(configs)
    arrays = {name: pad_points([pp[name] for pp in per_point], var,
                               tuple(sizes[d] for d in var.dims[1:]))
              for name, var in schema_for(configs).items()}
    return build_dataset(configs, arrays)


def _state_table(sizes: dict) -> tuple[str, int]:
    """(what, bytes) of the state allocate(sizes) makes, naming its largest table."""
    from ..state import FIELDS
    each = {name: np.dtype(dt).itemsize * int(np.prod([sizes[d] if isinstance(d, str) else d
                                                        for d in dims], dtype=object))
            for name, (dt, dims, _fill) in FIELDS.items()}
    big = max(each, key=each.get)
    return (f"the simulation state (its largest table {big}: {human_bytes(each[big])})",
            sum(each.values()))


def member_figures(cfg: RunConfig, prog, exact: bool = False) -> tuple[ProgramFigures, tuple]:
    """A member's ProgramFigures and pair table (engine/pairs.py) from its program (None for
    network-only traffic): what sizes its state (sizing.state_sizes) and the memory check."""
    NR = cfg.n_ranks
    if not NR:
        return ProgramFigures(0, 0, 0, 0, 0, 0, 0, None), pair_table(cfg, None)
    msgs, pkts = progstats.inbound(prog.ops, prog.start.astype(np.int32), NR,
                                   cfg.mpi.header_bytes, cfg.mpi.velo_payload,
                                   cfg.mpi.eager_threshold)
    snaps = int(snapshot_counts(prog).max())
    table = pair_table(cfg, prog, snaps, pkts, exact)
    return ProgramFigures(prog.max_isends, prog.max_irecvs, int(msgs.max()), int(pkts.max()),
                          snaps, *pair_table_size(table[0]),
                          None if exact else ring_slots(int(pkts.max()))), table


def check_topology(topo, configs: Sequence[RunConfig]) -> None:
    """What the built topology refuses: fewer VCs than its deadlock-free routing needs, a
    routing whose channel dependency graph has a cycle (routing/deadlock.py)."""
    c0 = configs[0]
    if c0.network.vcs < topo.vcs_needed and c0.network.routing_vcs is None:
        raise ConfigError("network.vcs", f"got {c0.network.vcs}; allowed: >= "
                          f"{topo.vcs_needed} (the deadlock-free routing of {topo.kind} "
                          "needs them)")
    for cfg in configs:
        check_deadlock_free(topo, cfg)


def check_point(cfg: RunConfig, topo, program, available: float | None = None) -> None:
    """Everything Batch([cfg]) refuses once it has built cfg's topology and program, without
    allocating its state (the sweep's --dry-run and check_points): the topology's checks, the
    program's (its protocol's, the mailbox entry's widths), and the memory the run peaks at
    (sizing.check_memory with the program's figures; available as there). program:
    build_program(cfg), or None for hand-written programs (given to Batch by the caller)."""
    check_topology(topo, [cfg])
    prog = skewed(program, cfg) if program is not None and cfg.n_ranks else None
    if prog is not None:
        check_protocol_program(cfg, prog)
        check_widths([prog], prog.max_isends + 2)
    if prog is not None or not cfg.n_ranks:
        fig, _table = member_figures(cfg, prog)
        check_memory([cfg], available, figs=[fig], rows=[len(prog.ops) if prog else 0])


def check_protocol_program(cfg: RunConfig, prog) -> None:
    """A program that multicasts (OP_MCAST, OP_IMCAST) needs a protocol that does; and the
    protocol's own requirements of the programs (its record's check_program)."""
    rec = registered()[cfg.protocol.name]
    if rec.check_program is not None:
        rec.check_program(cfg, prog, _check)
    if rec.multicast:
        return
    if np.isin(prog.ops[:, 0], (D.OP_MCAST, D.OP_IMCAST)).any():
        able = [p.name for p in registered().values() if p.multicast]
        raise ConfigError("protocol.name", f"got {cfg.protocol.name}; allowed: a protocol that "
                          f"multicasts ({', '.join(able)}): the workload's programs multicast")
