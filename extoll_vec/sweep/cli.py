"""`extoll-vec sweep SPEC.yaml [--set KEY=VALUE ...] -o OUT.zarr [--cluster cluster.yaml]
[--workers N] [--threads-per-worker K] [--dry-run] [--overwrite] [--quiet] [--max-points N]`:
the command line of sweeps (imports the heavy parts inside _run). --set varies the spec
(spec.apply_sets); a command equal in effect to another spec file resumes that file's stores
(same fingerprint).

--dry-run and a run refuse the same things: the spec (every point's RunConfig, the point limit)
and then check_points, the planning estimate of every point, before a cluster starts. A point
that fails while the sweep runs is reported in one line on stderr; its traceback and config go
to the store's error log (runner.error_log_path: OUT.errors.log beside OUT.zarr)."""
from __future__ import annotations

import argparse
import math
import sys

from ..errors import ConfigError, SimulationError

DRY_RUN_MAX_LINES = 200


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", metavar="SPEC.yaml", help="sweep specification (see sweeps/)")
    add_set_option(p)
    p.add_argument("-o", "--output", metavar="OUT.zarr", help="the sweep's result store; an "
                   "existing store of the same spec is resumed (only missing points run)")
    p.add_argument("--cluster", metavar="CLUSTER.yaml", help="cluster file (default: "
                   "./cluster.yaml if present, else a local cluster, one worker per core)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of a local cluster (or workers requested on SLURM/PBS)")
    p.add_argument("--threads-per-worker", type=int, metavar="K", default=None,
                   help="threads of each worker of a local cluster (default: cluster.yaml's, "
                        "else 1); K > 1: a worker runs one batch at a time and advances K of "
                        "its points at once (bit-identical results; see cluster.yaml)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the points, batches and estimated work; simulate nothing")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing store at OUT.zarr (even one of another spec)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no chatter")
    p.add_argument("--batch-size", type=int, metavar="N", default=None,
                   help="at most N points per batch (default 8)")
    p.add_argument("--batch-memory", metavar="SIZE", default=None,
                   help="simulation state per batch, e.g. 2GiB (the default)")
    add_max_points_option(p)


def add_max_points_option(p: argparse.ArgumentParser) -> None:
    """--max-points N: the most points a sweep may have (also `extoll-vec tables`)."""
    from .spec import DEFAULT_MAX_POINTS
    p.add_argument("--max-points", type=int, metavar="N", default=DEFAULT_MAX_POINTS,
                   help=f"refuse a sweep of more than N points (default {DEFAULT_MAX_POINTS:,}; "
                        "counted from the axes and repeat before anything is built)")


def add_set_option(p: argparse.ArgumentParser) -> None:
    """--set KEY=VALUE (repeatable): an override of the sweep spec (also `extoll-vec tables`)."""
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override an entry of the spec, VALUE as YAML; repeatable, applied in "
                        "order. KEY: name, description, repeat[.count|.seed], axes.AXIS, "
                        "derived.KEY, base.example, base.variant, base.SECTION.FIELD or just "
                        "SECTION.FIELD / seed; null removes the entry. E.g. --set "
                        "'axes.slots_per_process=[8, 16]' --set 'repeat={count: 3, seed: 3}'")


def _limits(args) -> tuple[int, int]:
    from dask.utils import parse_bytes

    from .plan import DEFAULT_BATCH_MEMORY, DEFAULT_MAX_BATCH
    size = DEFAULT_MAX_BATCH if args.batch_size is None else args.batch_size
    if size < 1:
        raise ConfigError("--batch-size", f"got {size}; allowed: an integer >= 1")
    memory = DEFAULT_BATCH_MEMORY
    if args.batch_memory is not None:
        try:
            memory = parse_bytes(args.batch_memory)
        except (ValueError, TypeError, OverflowError):
            memory = 0
        if not 1 <= memory <= 2**63 - 1:
            raise ConfigError("--batch-memory", f"got {args.batch_memory!r}; allowed: a size "
                                                "such as 2GiB or 500MB") from None
    return size, memory


_YEAR = 365.25 * 86400


def _secs(x: float) -> str:
    """A rough duration: ~seconds, with days from a day on; 'over 100 years' beyond (also for
    an estimate too large for a float)."""
    if not x < 100 * _YEAR:      # NaN, inf
        return "over 100 years"
    if x < 10:
        return f"~{x:.1f} s"
    return f"~{x:.0f} s" if x < 86400 else f"~{x:.0f} s ({x / 86400:,.1f} days)"


def _seconds(packets: int) -> float:
    """plan.PlannedBatch.seconds without its OverflowError for an absurd packet count."""
    from .plan import PACKETS_PER_SECOND
    try:
        return packets / PACKETS_PER_SECOND
    except OverflowError:
        return math.inf


def _count(n: int) -> str:
    """A packet count: digits up to 10^15, beyond that as '1.2e+18'."""
    return f"{n:,}" if abs(n) < 10**15 else f"{float(n):.1e}" if abs(n) < 10**300 else \
        "over 1e300"


def _mb(n: float) -> str:
    """Bytes in MiB, GiB, ... EiB (every size an estimate can give, without overflow)."""
    if n < 2**30:
        return f"{n / 2**20:.1f} MiB"
    for exp, unit in ((40, "GiB"), (50, "TiB"), (60, "PiB"), (70, "EiB")):
        if n < 2**exp:
            return f"{n / 2**(exp - 10):.2f} {unit}"
    return "over 1024 EiB"


def _dry_run(sweep, cluster, args, size: int, memory: int) -> int:
    import numpy as np

    from ..engine.sizing import estimate_parts
    from .plan import estimate, plan_batches
    from .store import resume_mask
    done = np.zeros(sweep.n_points, dtype=bool)
    if args.output is not None and not args.overwrite:
        mask = resume_mask(args.output, sweep)
        if mask is not None:
            done = mask
    todo = np.flatnonzero(~done).tolist()
    workers = cluster.workers or 1
    threads = cluster.threads_per_worker or 1
    sets = f" with {len(sweep.sets)} --set" if sweep.sets else ""
    src = f" ({sweep.path}{sets})" if sweep.path else ""
    grid = " x ".join(str(n) for n in sweep.shape) or "1"
    print(f"sweep {sweep.name}{src}: {sweep.n_points} points on a {grid} grid")
    for a in sweep.axes:
        labels = ", ".join(str(x) for x in a.labels)
        keys = (" [variable]" if a.variable else f" [{', '.join(a.keys)}]"
                if len(a.keys) > 1 or a.name != a.keys[0] else "")
        print(f"  axis {a.name}{keys} ({a.size}): {labels}")
    print("points:")
    for i in range(min(sweep.n_points, DRY_RUN_MAX_LINES)):
        mark = "done" if done[i] else "    "
        print(f"  {i:>5} {mark} {sweep.describe(i) or 'the base config'}")
    if sweep.n_points > DRY_RUN_MAX_LINES:
        print(f"  ... and {sweep.n_points - DRY_RUN_MAX_LINES} more")
    # the runner simulates points of equal effective config once: plan and estimate the same way
    from .runner import equal_points
    unique = sorted(equal_points(sweep, todo))
    check_points(sweep, unique, cluster.kind == "local")
    plan = plan_batches(sweep.configs, unique, workers, size, memory, threads)
    each = f", each on {threads} threads" if threads > 1 else ""
    print(f"batches ({len(plan)} for {workers} worker(s), at most {size} points and "
          f"{_mb(memory)} of state each{each}):")
    for b in plan[:DRY_RUN_MAX_LINES]:
        pts = b.points
        shown = f"{pts[0]}-{pts[-1]}" if pts == tuple(range(pts[0], pts[-1] + 1)) else \
            ",".join(map(str, pts))
        least = sum(estimate_parts([sweep.configs[i] for i in pts])[0].values())
        print(f"  {b.index:>5} points {shown} ({len(pts)}): state {_mb(b.state_bytes)} "
              f"(memory check: at least {_mb(least)}, the process included), "
              f"~{_count(b.packets)} packets, {_secs(_seconds(b.packets))}")
    if len(plan) > DRY_RUN_MAX_LINES:
        print(f"  ... and {len(plan) - DRY_RUN_MAX_LINES} more")
    total = sum(_seconds(b.packets) for b in plan)
    longest = max((_seconds(b.packets) for b in plan), default=0.0)
    peak = max((b.state_bytes for b in plan), default=0)
    per_point = max((estimate(sweep.configs[i]).state_bytes for i in todo), default=0)
    same = len(todo) - len(unique)
    twins = f" ({same} equal to others, computed once)" if same else ""
    print(f"work: {len(todo)} of {sweep.n_points} points to compute{twins}, "
          f"~{_count(sum(b.packets for b in plan))} packets, {_secs(total)} on one worker, "
          f"{_secs(max(total / (workers * threads), longest / threads))} on {workers}"
          f"{f' x {threads} threads' if threads > 1 else ''} (rough); state up to "
          f"{_mb(per_point)} per point, {_mb(peak)} per batch")
    print(f"cluster: {cluster.describe()}")
    return 0


def check_points(sweep, points, local: bool = True) -> None:
    """Compute the planning estimate (plan.estimate: the state a point allocates, the packets
    it sends) of every point in `points` before anything runs, as --dry-run and a run both
    plan: a configuration that the workload builder or the size table cannot take is refused
    here in one line naming the point, not as a traceback from the planner (or a worker).
    First engine.sizing.check_memory, without building anything: arrays the kernels' int32
    indices cannot address, and, for a local cluster (local: the workers share this
    machine's memory), a point larger than the memory available here. Remote workers check
    their own memory when they build the batch (engine.Batch). Then engine.batch.check_point
    on the point's built topology and program: what engine.Batch refuses before it allocates
    (a topology's VCs, a routing's dependency cycle, a program its protocol cannot run)."""
    from ..engine.batch import check_point
    from ..engine.sizing import available_memory, check_memory
    from .plan import estimate, program_of, topology_of
    for p in points:
        try:
            cfg = sweep.configs[p]
            # a local worker is a process of its own: it holds nothing of this one's yet
            available = available_memory(own=False) if local else float("inf")
            check_memory([cfg], available)
            check_point(cfg, topology_of(cfg), program_of(cfg), available)
            estimate(cfg)
        except ConfigError as exc:
            raise ConfigError(exc.field, f"{exc.message} (point {p}: "
                                         f"{sweep.describe(p) or 'the base'})") from None
        except (ValueError, ArithmeticError, MemoryError) as exc:
            msg = " ".join(str(exc).split())[:300] or type(exc).__name__
            where = sweep.describe(p) or "the base"
            raise ConfigError(f"point {p}", f"cannot be planned ({where}): {msg}") from None


def execute(sweep, output, cluster, *, overwrite: bool = False, quiet: bool = False,
            size: int | None = None, memory: int | None = None):
    """Compute the missing points of `sweep` into the store `output` on the cluster described
    by `cluster` (a ClusterSpec); returns the SweepResult. Refuses a store of another sweep
    before starting a cluster; on Ctrl-C says how much is stored; SimulationError if points
    failed (the store keeps the others)."""
    from .plan import DEFAULT_BATCH_MEMORY, DEFAULT_MAX_BATCH
    from .runner import SweepResult, run_sweep
    from .store import read_completed, resume_mask

    def echo(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    res = None
    todo = range(sweep.n_points)
    completed = None if overwrite else resume_mask(output, sweep)  # refuse before a cluster
    if completed is not None:
        done = int(completed.sum())
        todo = [i for i in todo if not completed[i]]
        if done == sweep.n_points:
            echo(f"{output}: all {done} points already computed")
            res = SweepResult(total=done, already=done)
    if res is None:
        from .runner import equal_points
        check_points(sweep, sorted(equal_points(sweep, todo)),   # refuse before a cluster too
                     cluster.kind == "local")
    try:
        if res is None:
            from .cluster import connect
            with connect(cluster, quiet=quiet, echo=echo) as client:
                res = run_sweep(sweep, output, client, overwrite=overwrite,
                                max_batch=size or DEFAULT_MAX_BATCH,
                                memory=memory or DEFAULT_BATCH_MEMORY, quiet=quiet, echo=echo,
                                workers=cluster.workers, threads=cluster.threads_per_worker,
                                completed=completed)
    except KeyboardInterrupt:
        try:
            n = int(read_completed(output).sum())
            print(f"extoll-vec: {output} holds {n} of {sweep.n_points} points; rerun the "
                  "same command to compute the rest", file=sys.stderr)
        except Exception:  # noqa: BLE001 - best effort message while interrupted
            pass
        raise
    lost = (f"; {res.rerun} rerun after {res.workers_lost} lost worker"
            f"{'s' if res.workers_lost > 1 else ''}" if res.rerun else "")
    echo(f"wrote {output}: {res.already + res.computed} of {res.total} points "
         f"({res.computed} computed now in {res.seconds:.1f} s, {res.already} before{lost})")
    if res.failed:
        for p, msg in res.failed[:10]:
            print(f"extoll-vec: point {p} ({sweep.describe(p)}) failed: {msg}", file=sys.stderr)
        p, msg = res.failed[0]
        log = f"; details in {res.log}" if res.log else ""
        raise SimulationError(f"{len(res.failed)} of {res.total} points failed (first: point {p}"
                              f", {sweep.describe(p)}: {msg}); the store holds the others{log}")
    return res


def _run(args: argparse.Namespace) -> int:
    from .cluster import load_cluster_spec
    from .spec import load_sweep
    sweep = load_sweep(args.spec, args.sets, max_points=args.max_points)
    cluster = load_cluster_spec(args.cluster, args.workers, args.threads_per_worker)
    size, memory = _limits(args)
    if args.dry_run:
        return _dry_run(sweep, cluster, args, size, memory)
    if args.output is None:
        raise ConfigError("-o", "required: the sweep's result store, e.g. -o out/sweep.zarr "
                                "(or --dry-run)")
    try:
        execute(sweep, args.output, cluster, overwrite=args.overwrite, quiet=args.quiet,
                size=size, memory=memory)
    except SimulationError:
        print(_summary(args.output))  # what did complete
        raise
    print(_summary(args.output))
    return 0


def _summary(path) -> str:
    """The summary table of the store this command has just written (or deep-checked when it
    resumed it: store.check_same_sweep), so its chunks are not decoded once more first."""
    from ..analysis.registry import compute
    from .store import open_sweep
    ds = open_sweep(path)
    try:
        return compute("summary", path, dataset=ds).to_text()
    finally:
        ds.close()


def register_cli(register) -> None:
    register("sweep", "run a sweep spec on a Dask cluster into one zarr store", _configure, _run)
