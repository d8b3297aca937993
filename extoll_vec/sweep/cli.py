"""`extoll-vec sweep SPEC.yaml [--set KEY=VALUE ...] -o OUT.zarr [--cluster cluster.yaml]
[--workers N] [--dry-run] [--overwrite] [--quiet]`: the command line of sweeps (imports the
heavy parts inside _run). --set varies the spec (spec.apply_sets); a command equal in effect to
another spec file resumes that file's stores (same fingerprint)."""
from __future__ import annotations

import argparse
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
    p.add_argument("--dry-run", action="store_true",
                   help="list the points, batches and estimated work; simulate nothing")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing store at OUT.zarr (even one of another spec)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no chatter")
    p.add_argument("--batch-size", type=int, metavar="N", default=None,
                   help="at most N points per batch (default 8)")
    p.add_argument("--batch-memory", metavar="SIZE", default=None,
                   help="simulation state per batch, e.g. 2GiB (the default)")


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
        except (ValueError, TypeError):
            raise ConfigError("--batch-memory", f"got {args.batch_memory!r}; allowed: a size "
                                                "such as 2GiB or 500MB") from None
    return size, memory


def _secs(x: float) -> str:
    return f"{x:.1f} s" if x < 10 else f"{x:.0f} s"


def _mb(n: float) -> str:
    return f"{n / 2**20:.1f} MiB" if n < 2**30 else f"{n / 2**30:.2f} GiB"


def _dry_run(sweep, cluster, args, size: int, memory: int) -> int:
    import numpy as np

    from .plan import estimate, plan_batches
    from .store import check_same_sweep, read_completed
    done = np.zeros(sweep.n_points, dtype=bool)
    if args.output is not None and not args.overwrite:
        from pathlib import Path
        if Path(args.output).exists():
            check_same_sweep(args.output, sweep)
            done = read_completed(args.output)
    todo = np.flatnonzero(~done).tolist()
    workers = cluster.workers or 1
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
    plan = plan_batches(sweep.configs, unique, workers, size, memory)
    print(f"batches ({len(plan)} for {workers} worker(s), at most {size} points and "
          f"{_mb(memory)} of state each):")
    for b in plan[:DRY_RUN_MAX_LINES]:
        pts = b.points
        shown = f"{pts[0]}-{pts[-1]}" if pts == tuple(range(pts[0], pts[-1] + 1)) else \
            ",".join(map(str, pts))
        print(f"  {b.index:>5} points {shown} ({len(pts)}): state {_mb(b.state_bytes)}, "
              f"~{b.packets:,} packets, ~{_secs(b.seconds)}")
    if len(plan) > DRY_RUN_MAX_LINES:
        print(f"  ... and {len(plan) - DRY_RUN_MAX_LINES} more")
    total = sum(b.seconds for b in plan)
    longest = max((b.seconds for b in plan), default=0.0)
    peak = max((b.state_bytes for b in plan), default=0)
    per_point = max((estimate(sweep.configs[i]).state_bytes for i in todo), default=0)
    same = len(todo) - len(unique)
    twins = f" ({same} equal to others, computed once)" if same else ""
    print(f"work: {len(todo)} of {sweep.n_points} points to compute{twins}, "
          f"~{sum(b.packets for b in plan):,} packets, ~{_secs(total)} on one worker, "
          f"~{_secs(max(total / workers, longest))} on {workers} (rough); state up to "
          f"{_mb(per_point)} per point, {_mb(peak)} per batch")
    print(f"cluster: {cluster.describe()}")
    return 0


def execute(sweep, output, cluster, *, overwrite: bool = False, quiet: bool = False,
            size: int | None = None, memory: int | None = None):
    """Compute the missing points of `sweep` into the store `output` on the cluster described
    by `cluster` (a ClusterSpec); returns the SweepResult. Refuses a store of another sweep
    before starting a cluster; on Ctrl-C says how much is stored; SimulationError if points
    failed (the store keeps the others)."""
    from pathlib import Path

    from .plan import DEFAULT_BATCH_MEMORY, DEFAULT_MAX_BATCH
    from .runner import SweepResult, run_sweep
    from .store import check_same_sweep, read_completed

    def echo(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    res = None
    if Path(output).exists() and not overwrite:
        check_same_sweep(output, sweep)  # refuse before starting a cluster
        done = int(read_completed(output).sum())
        if done == sweep.n_points:
            echo(f"{output}: all {done} points already computed")
            res = SweepResult(total=done, already=done)
    try:
        if res is None:
            from .cluster import connect
            with connect(cluster, quiet=quiet, echo=echo) as client:
                res = run_sweep(sweep, output, client, overwrite=overwrite,
                                max_batch=size or DEFAULT_MAX_BATCH,
                                memory=memory or DEFAULT_BATCH_MEMORY, quiet=quiet, echo=echo,
                                workers=cluster.workers)
    except KeyboardInterrupt:
        try:
            n = int(read_completed(output).sum())
            print(f"extoll-vec: {output} holds {n} of {sweep.n_points} points; rerun the "
                  "same command to compute the rest", file=sys.stderr)
        except Exception:  # noqa: BLE001 - best effort message while interrupted
            pass
        raise
    echo(f"wrote {output}: {res.already + res.computed} of {res.total} points "
         f"({res.computed} computed now in {res.seconds:.1f} s, {res.already} before)")
    if res.failed:
        for p, msg in res.failed[:10]:
            print(f"extoll-vec: point {p} ({sweep.describe(p)}) failed: {msg}", file=sys.stderr)
        p, msg = res.failed[0]
        raise SimulationError(f"{len(res.failed)} of {res.total} points failed (first: point {p}"
                              f", {sweep.describe(p)}: {msg}); the store holds the others")
    return res


def _run(args: argparse.Namespace) -> int:
    from .cluster import load_cluster_spec
    from .spec import load_sweep
    sweep = load_sweep(args.spec, args.sets)
    cluster = load_cluster_spec(args.cluster, args.workers)
    size, memory = _limits(args)
    if args.dry_run:
        return _dry_run(sweep, cluster, args, size, memory)
    if args.output is None:
        raise ConfigError("-o", "required: the sweep's result store, e.g. -o out/sweep.zarr "
                                "(or --dry-run)")
    from ..analysis.registry import compute_from_store
    try:
        execute(sweep, args.output, cluster, overwrite=args.overwrite, quiet=args.quiet,
                size=size, memory=memory)
    except SimulationError:
        print(compute_from_store("summary", args.output).to_text())  # what did complete
        raise
    print(compute_from_store("summary", args.output).to_text())
    return 0


def register_cli(register) -> None:
    register("sweep", "run a sweep spec on a Dask cluster into one zarr store", _configure, _run)
