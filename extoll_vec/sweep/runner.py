"""Run the missing points of a sweep on a Dask cluster into its store.

run_sweep() prepares the store (create, or resume: only points not yet completed run), plans
batches, loads the kernels on one worker first (on a cold Numba cache that worker compiles them
once; the others then load the cache), submits one task per batch and writes every finished
batch into the store from the client, in completion order.

Faults: a worker that dies mid-task is replaced by its nanny and Dask re-runs the batch
elsewhere. A batch in which a point fails (SimulationError, e.g. a deadlock) is split: the
failing point is reported, the others run again without it. Ctrl-C cancels the outstanding
batches; the store keeps every batch written so far, and rerunning computes only the rest.
"""
from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TextIO

import numpy as np

from ..errors import ExtollVecError
from .plan import DEFAULT_BATCH_MEMORY, DEFAULT_MAX_BATCH, plan_batches
from .progress import Progress
from .spec import Sweep
from .store import StoreWriter, prepare_store
from .tasks import run_points, warm_kernels


@dataclass
class SweepResult:
    total: int                       # points of the sweep
    already: int                     # points completed before this run
    computed: int = 0                # points this run computed and stored
    batches: int = 0                 # batches submitted (splits after failures included)
    failed: list[tuple[int, str]] = field(default_factory=list)   # (point, message)
    seconds: float = 0.0
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        return self.already + self.computed == self.total


def _strip_point(msg: str) -> str:
    return re.sub(r"^point \d+: ", "", " ".join(str(msg).split()))


def run_sweep(sweep: Sweep, store, client, *, overwrite: bool = False,
              max_batch: int = DEFAULT_MAX_BATCH, memory: int = DEFAULT_BATCH_MEMORY,
              quiet: bool = False, stream: TextIO | None = None, workers: int | None = None,
              echo: Callable[[str], None] | None = None,
              on_batch: Callable[[tuple[int, ...], SweepResult], None] | None = None
              ) -> SweepResult:
    """Compute the points of `sweep` missing from `store` on the distributed `client`.

    `workers` is the worker count to plan batches for (default: the workers connected now;
    give it for clusters whose workers are still starting, e.g. SLURM jobs in the queue).
    on_batch(points, result) is called after each batch is stored (tests use it to interrupt
    or kill workers at a known moment)."""
    from distributed import as_completed

    t0 = time.perf_counter()
    echo = echo or (lambda s: None)
    done = prepare_store(store, sweep, overwrite)
    result = SweepResult(total=sweep.n_points, already=int(done.sum()))
    todo = np.flatnonzero(~done).tolist()
    if not todo:
        echo(f"{store}: all {sweep.n_points} points already computed")
        return result
    workers = workers or max(len(client.nthreads()), 1)
    twins = equal_points(sweep, todo)
    plan = plan_batches(sweep.configs, sorted(twins), workers, max_batch, memory)
    same = len(todo) - len(twins)
    echo(f"computing {len(todo)} of {sweep.n_points} points ({result.already} already in the "
         f"store{f'; {same} equal to others, computed once' if same else ''}) in {len(plan)} "
         f"batches on {workers} worker(s)")
    writer = StoreWriter(store)
    progress = Progress(sweep.n_points, result.already, quiet=quiet, stream=stream)
    token = secrets.token_hex(3)
    futures: dict[Any, tuple[int, ...]] = {}

    def submit(points: tuple[int, ...], priority: int) -> Any:
        result.batches += 1
        fut = client.submit(run_points, [sweep.configs[i] for i in points], pure=False,
                            key=f"sweep-{sweep.name}-{token}-{result.batches}",
                            priority=priority)
        futures[fut] = points
        return fut

    try:
        warm = client.submit(warm_kernels, pure=False, key=f"warm-{token}")
        try:
            warm.result(timeout=15)
        except TimeoutError:
            echo("compiling the kernels on one worker (a cold Numba cache: a few minutes, "
                 "once; the other workers then load the cache)...")
            echo(f"compiled the kernels in {warm.result():.0f} s")
        progress.update(force=True)
        ac = as_completed([submit(b.points, -b.index) for b in plan])
        for fut in _completed(ac, progress):
            if fut.status in ("lost", "pending"):
                # it had finished on a worker that died before we fetched the result: the
                # scheduler computes it again, wait for it once more
                ac.add(fut)
                continue
            points = futures.pop(fut)
            if fut.status == "finished":
                rows = [j for j, p in enumerate(points) for _ in (p, *twins[p])]
                every = [q for p in points for q in (p, *twins[p])]
                writer.write(every, {k: np.asarray(v)[rows] for k, v in fut.result().items()})
                result.computed += len(every)
                progress.update(len(every))
                if on_batch is not None:
                    on_batch(points, result)
                continue
            if fut.status == "cancelled":
                raise RuntimeError(f"batch {fut.key} was cancelled by someone else")
            for new in _after_failure(points, fut.exception(), result, progress, twins):
                ac.add(submit(new, 0))
    except KeyboardInterrupt:
        result.interrupted = True
        client.cancel(list(futures))
        raise
    finally:
        progress.close()
        result.seconds = time.perf_counter() - t0
    return result


def _completed(ac, progress: Progress, poll: float = 0.2):
    """The futures of `ac` as they finish (futures added meanwhile included), ticking
    `progress` while none is ready: a batch of 1024-rank points runs for minutes, and a log
    (a pipe, a CI job) should still get its line every 30 s to show the sweep is alive."""
    while not ac.is_empty():
        if ac.has_ready():
            yield from ac.next_batch(block=False)
        else:
            progress.update()
            time.sleep(poll)


def equal_points(sweep: Sweep, todo) -> dict[int, list[int]]:
    """The points to simulate, each with the other points of `todo` that simulate identically
    (equal RunConfig.effective(): e.g. the reference protocol none repeated along an axis of
    credit slots), which get copies of its results."""
    first: dict[str, int] = {}
    twins: dict[int, list[int]] = {}
    for p in todo:
        key = sweep.configs[p].effective().to_json()
        if key in first:
            twins[first[key]].append(p)
        else:
            first[key] = p
            twins[p] = []
    return twins


def _after_failure(points: tuple[int, ...], exc: BaseException, result: SweepResult,
                   progress: Progress, twins: dict[int, list[int]]) -> list[tuple[int, ...]]:
    """Record what failed (a point and its twins) and return the batches to run again."""
    from distributed import KilledWorker

    def fail(p: int, msg: str) -> None:
        for q in (p, *twins[p]):
            result.failed.append((q, msg))
        progress.update(failed=1 + len(twins[p]))

    if isinstance(exc, KilledWorker):
        for p in points:
            fail(p, "its batch killed a worker repeatedly (out of memory?)")
        return []
    if not isinstance(exc, ExtollVecError):
        raise exc  # a bug, not a property of the point: stop the sweep
    bad = getattr(exc, "point", None)
    if len(points) == 1:
        fail(points[0], _strip_point(str(exc)))
        return []
    if bad is not None and 0 <= bad < len(points):
        fail(points[bad], _strip_point(str(exc)))
        rest = points[:bad] + points[bad + 1:]
        return [rest] if rest else []
    return [(p,) for p in points]  # which point failed is unknown: run them one by one
