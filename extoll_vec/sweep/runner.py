"""Run the missing points of a sweep on a Dask cluster into its store.

run_sweep() prepares the store (create, or resume: only points not yet completed run), plans
batches, loads the kernels the points run (a build per protocol family) on one worker first
(on a cold Numba cache that worker compiles them once; the others then load the cache),
submits one task per batch and writes every finished batch into the store from the client,
in completion order.

Faults: a worker that dies mid-task is replaced by its nanny and Dask re-runs the batch
elsewhere. The scheduler's remove-worker events (topic "all") name the batches that were on the
worker (running, or waiting in its queue): their points are counted as rerun (SweepResult.rerun)
and the progress line says so ("3 rerun after 1 lost worker"). Each point is still written once:
the client stores a batch when its future first finishes, whichever worker ran it. A batch in which a point fails (SimulationError, e.g. a deadlock) is split: the
failing point is reported, the others run again without it. The worker returns such a failure
as a value (tasks.BatchFailure), so Dask prints no "Compute Failed" dump: the point's message
is one line (SweepResult.failed), and its traceback and config go to the error log beside the
store (error_log_path: OUT.errors.log for OUT.zarr, appended to). Ctrl-C cancels the
outstanding batches; the store keeps every batch written so far, and rerunning computes only
the rest.
"""
from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

import numpy as np

from ..errors import ExtollVecError
from .cluster import BATCH_RESOURCE
from .plan import DEFAULT_BATCH_MEMORY, DEFAULT_MAX_BATCH, estimate, plan_batches
from .progress import Progress
from .spec import Sweep
from .store import StoreWriter, prepare_store
from .tasks import BatchFailure, run_points, warm_kernels


@dataclass
class SweepResult:
    total: int                       # points of the sweep
    already: int                     # points completed before this run
    computed: int = 0                # points this run computed and stored
    batches: int = 0                 # batches submitted (splits after failures included)
    failed: list[tuple[int, str]] = field(default_factory=list)   # (point, message)
    seconds: float = 0.0
    interrupted: bool = False
    log: str | None = None           # the error log, if a failure was written to it
    rerun: int = 0                   # points whose batch was on a worker that was lost
    workers_lost: int = 0            # workers lost while they held batches of this sweep

    @property
    def complete(self) -> bool:
        return self.already + self.computed == self.total


def _strip_point(msg: str) -> str:
    return re.sub(r"^point \d+: ", "", " ".join(str(msg).split()))


def error_log_path(store) -> Path:
    """Where a sweep writes the tracebacks and configs of its failing points: beside the store,
    OUT.errors.log for OUT.zarr (STORE.errors.log for a store named otherwise). A store at a
    URL (object storage cannot append) gets its log in the working directory, named the same."""
    from ..storage import location
    loc = location(store)
    p = Path(loc.name) if loc.remote else loc.path
    stem = p.name[:-len(".zarr")] if p.name.endswith(".zarr") and p.name != ".zarr" else p.name
    return p.with_name(stem + ".errors.log")


class _ErrorLog:
    """Appends one entry per failing point to error_log_path(store): the message, the points
    with the same config, the config (YAML: `extoll-vec run` takes it as it is) and the
    worker's traceback. Writing it never stops the sweep: a log that cannot be written is
    skipped (the one-line messages remain)."""

    def __init__(self, sweep: Sweep, store, result: SweepResult):
        self.sweep, self.store, self.result = sweep, store, result
        self.path = error_log_path(store)
        self.started = False

    def write(self, point: int, twins: list[int], message: str, detail: str) -> None:
        import yaml
        sw = self.sweep
        lines = []
        if not self.started:
            src = f" ({sw.path}{f' with {len(sw.sets)} --set' if sw.sets else ''})" \
                if sw.path else ""
            lines += [f"==== {time.strftime('%Y-%m-%d %H:%M:%S')} sweep {sw.name}{src} into "
                      f"{self.store}", ""]
        config = yaml.safe_dump(json.loads(sw.configs[point].to_json()), sort_keys=False)
        same = f" (also points {', '.join(map(str, twins))}: the same config)" if twins else ""
        lines += [f"---- point {point} ({sw.describe(point) or 'the base config'}) failed{same}:",
                  message, "", "config (extoll-vec run FILE with this as FILE reproduces it):",
                  config.rstrip(), "", detail.rstrip(), "", ""]
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write("\n".join(lines))
        except OSError:
            return
        self.started = True
        self.result.log = str(self.path)


_LOGGED = re.compile(r"^---- point (\d+) \(.*\) failed"
                     r"(?: \(also points ([\d, ]+): the same config\))?:$")


def read_error_log(store) -> dict[int, str]:
    """The points that _ErrorLog recorded as failed beside `store`, each with its one-line
    message (the latest entry of a point that failed in several runs); empty without a log.
    Whether such a point is still missing is the store's completed mask to say: a rerun of a
    later version may have computed it."""
    failed: dict[int, str] = {}
    try:
        lines = error_log_path(store).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return failed
    for head, message in zip(lines, lines[1:] + [""]):
        m = _LOGGED.match(head)
        if m:
            twins = [int(x) for x in m.group(2).split(",")] if m.group(2) else []
            for p in (int(m.group(1)), *twins):
                failed[p] = message.strip()
    return failed


def _one_per_build(sweep: Sweep, todo: list[int]) -> list:
    """The smallest point (by estimated state) of each kernel build the points run (the
    protocol family, or "shared": kernels/specialize.py), for warm_kernels."""
    from extoll_vec.kernels.specialize import kernel_family
    best: dict[str, tuple[int, int]] = {}
    for i in todo:
        cfg = sweep.configs[i]
        key, size = kernel_family(cfg.protocol.name), estimate(cfg).state_bytes
        if key not in best or size < best[key][0]:
            best[key] = (size, i)
    return [sweep.configs[i] for _, i in best.values()]


def run_sweep(sweep: Sweep, store, client, *, overwrite: bool = False,
              max_batch: int = DEFAULT_MAX_BATCH, memory: int = DEFAULT_BATCH_MEMORY,
              quiet: bool = False, stream: TextIO | None = None, workers: int | None = None,
              echo: Callable[[str], None] | None = None,
              on_batch: Callable[[tuple[int, ...], SweepResult], None] | None = None,
              threads: int | None = None, completed: np.ndarray | None = None) -> SweepResult:
    """Compute the points of `sweep` missing from `store` on the distributed `client`.

    `workers` is the worker count to plan batches for (default: the workers connected now;
    give it for clusters whose workers are still starting, e.g. SLURM jobs in the queue).
    `threads`: the threads of each worker, as the cluster spec starts them (default: as the
    connected workers have them); see member_threads.
    on_batch(points, result) is called after each batch is stored (tests use it to interrupt
    or kill workers at a known moment). `completed`: the completed mask of the existing store
    as the caller has just checked it (store.resume_mask), so that it is not read whole twice
    (on object storage, a download of the store)."""
    from distributed import as_completed

    t0 = time.perf_counter()
    echo = echo or (lambda s: None)
    done = completed if completed is not None and not overwrite else \
        prepare_store(store, sweep, overwrite)
    result = SweepResult(total=sweep.n_points, already=int(done.sum()))
    todo = np.flatnonzero(~done).tolist()
    if not todo:
        echo(f"{store}: all {sweep.n_points} points already computed")
        return result
    workers = workers or max(len(client.nthreads()), 1)
    threads = member_threads(client, threads)
    twins = equal_points(sweep, todo)
    plan = plan_batches(sweep.configs, sorted(twins), workers, max_batch, memory, threads)
    same = len(todo) - len(twins)
    echo(f"computing {len(todo)} of {sweep.n_points} points ({result.already} already in the "
         f"store{f'; {same} equal to others, computed once' if same else ''}) in {len(plan)} "
         f"batches on {workers} worker(s)"
         f"{f', each batch on {threads} threads' if threads > 1 else ''}")
    writer = StoreWriter(store)
    progress = Progress(sweep.n_points, result.already, quiet=quiet, stream=stream)
    log = _ErrorLog(sweep, store, result)
    token = secrets.token_hex(3)
    futures: dict[Any, tuple[int, ...]] = {}
    lost = _LostWorkers(client)
    # called before each finished batch is handled: the scheduler sends a remove-worker event
    # before the results of the batches it reruns, so a rerun batch is always counted
    take_lost = lost.note(futures, result, twins)

    def submit(points: tuple[int, ...], priority: int) -> Any:
        result.batches += 1
        fut = client.submit(run_points, [sweep.configs[i] for i in points], threads > 1,
                            pure=False, key=f"sweep-{sweep.name}-{token}-{result.batches}",
                            priority=priority,
                            resources={BATCH_RESOURCE: 1} if threads > 1 else None)
        futures[fut] = points
        return fut

    try:
        # each build the points run on a worker of its own, at once (the builds of several
        # protocol families compile in parallel); then every worker loads them
        warms = [client.submit(warm_kernels, [cfg], pure=False, key=f"warm-{token}-{k}")
                 for k, cfg in enumerate(_one_per_build(sweep, todo))]
        try:
            for warm in warms:
                warm.result(timeout=15)
        except TimeoutError:
            echo(f"compiling the kernels of {len(warms)} build(s) on the workers (a cold "
                 "Numba cache: about a minute or two each, once)...")
            echo(f"compiled the kernels in {max(w.result() for w in warms):.0f} s")
        progress.update(force=True)
        ac = as_completed([submit(b.points, -b.index) for b in plan])
        for fut in _completed(ac, progress, take_lost):
            take_lost(progress)
            if fut.status in ("lost", "pending"):
                # it had finished on a worker that died before we fetched the result: the
                # scheduler computes it again, wait for it once more
                ac.add(fut)
                continue
            points = futures.pop(fut)
            value = fut.result() if fut.status == "finished" else None
            if isinstance(value, BatchFailure):
                detail = f"traceback (on {value.worker}):\n{value.traceback}"
                for new in _after_failure(points, value.error, result, progress, twins, log,
                                          detail):
                    ac.add(submit(new, 0))
                continue
            if fut.status == "finished":
                rows = [j for j, p in enumerate(points) for _ in (p, *twins[p])]
                every = [q for p in points for q in (p, *twins[p])]
                writer.write(every, {k: np.asarray(v)[rows] for k, v in value.items()})
                result.computed += len(every)
                progress.update(len(every))
                if on_batch is not None:
                    on_batch(points, result)
                continue
            if fut.status == "cancelled":
                raise RuntimeError(f"batch {fut.key} was cancelled by someone else")
            exc = fut.exception()
            detail = f"no traceback: {type(exc).__name__}: {exc}"
            for new in _after_failure(points, exc, result, progress, twins, log, detail):
                ac.add(submit(new, 0))
    except KeyboardInterrupt:
        result.interrupted = True
        client.cancel(list(futures))
        raise
    finally:
        lost.close()
        take_lost(progress, show=False)
        progress.close()
        result.seconds = time.perf_counter() - t0
    return result


class _LostWorkers:
    """The batches of this sweep that were on workers the scheduler removed (a process that
    died, a job that ended): collected from the scheduler's remove-worker events, which list
    the tasks the worker was processing (running, or queued there) and the finished ones whose
    results died with it; Dask runs those again elsewhere."""
    TOPIC = "all"

    def __init__(self, client):
        self.client, self.events = client, []
        try:
            client.subscribe_topic(self.TOPIC, self.events.append)
            self.subscribed = True
        except Exception:  # noqa: BLE001 - a client without events (old scheduler): no count
            self.subscribed = False

    def note(self, futures: dict, result: SweepResult, twins: dict[int, list[int]]):
        """A callable that moves the events received so far into `result` (rerun points,
        workers lost) and the progress line."""
        def take(progress: Progress, show: bool = True) -> None:
            while self.events:
                _, msg = self.events.pop(0)
                if not isinstance(msg, dict) or msg.get("action") != "remove-worker":
                    continue
                keys = set(msg.get("processing-tasks", ())) | set(
                    msg.get("lost-computed-tasks", ()))
                points = [p for fut, pts in futures.items() if fut.key in keys
                          for q in pts for p in (q, *twins[q])]
                if points:
                    result.workers_lost += 1
                    result.rerun += len(points)
                    progress.rerun, progress.lost = result.rerun, result.workers_lost
                    if show:
                        progress.update(force=True)
        return take

    def close(self) -> None:
        if self.subscribed:
            try:
                self.client.unsubscribe_topic(self.TOPIC)
            except Exception:  # noqa: BLE001 - the client may be closing
                pass


def member_threads(client, threads: int | None = None) -> int:
    """Threads each batch task uses. 1: a worker runs one single-threaded
    batch per thread. k > 1: every worker runs one batch at a time (each task asks for the
    worker resource cluster.BATCH_RESOURCE, which a worker started with k threads declares
    once) and advances k of its members at once. `threads` is the spec's threads per worker;
    None (a running scheduler) takes the connected workers' threads if every one of them
    declares the resource (else 1: a task asking for a resource no worker has never runs)."""
    if threads is not None:
        return threads
    info = client.scheduler_info().get("workers", {}).values()
    if not info or not all((w.get("resources") or {}).get(BATCH_RESOURCE) for w in info):
        return 1
    return min(int(w.get("nthreads", 1)) for w in info)


def _completed(ac, progress: Progress, lost: Callable | None = None, poll: float = 0.2):
    """The futures of `ac` as they finish (futures added meanwhile included), ticking
    `progress` while none is ready: a batch of 1024-rank points runs for minutes, and a log
    (a pipe, a CI job) should still get its line every 30 s to show the sweep is alive.
    lost(progress): takes the lost-worker events received meanwhile (_LostWorkers.note)."""
    while not ac.is_empty():
        if lost is not None:
            lost(progress)
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
                   progress: Progress, twins: dict[int, list[int]], log: _ErrorLog | None = None,
                   detail: str = "") -> list[tuple[int, ...]]:
    """Record what failed (a point and its twins; in `log` with `detail`, the traceback) and
    return the batches to run again."""
    from distributed import KilledWorker

    def fail(p: int, msg: str) -> None:
        for q in (p, *twins[p]):
            result.failed.append((q, msg))
        progress.update(failed=1 + len(twins[p]))
        if log is not None:
            log.write(p, twins[p], msg, detail)

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
