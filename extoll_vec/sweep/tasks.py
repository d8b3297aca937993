"""What a Dask worker runs: importable functions (never defined in __main__, so workers use
the Numba disk cache)."""
from __future__ import annotations

import os
import socket
import time
import traceback
from dataclasses import dataclass

from ..errors import ExtollVecError


@dataclass(frozen=True)
class BatchFailure:
    """A batch that failed on a property of its points (an ExtollVecError: a deadlock, a
    configuration the engine refuses), returned by run_points as its value instead of raised:
    a raised exception makes the worker log Dask's "Compute Failed" dump (every config of the
    batch and the traceback) on the terminal. The runner reports `error` in one line and writes
    `traceback` to the store's error log. Any other exception (a bug) is still raised, and
    Dask still reports it."""
    error: ExtollVecError
    traceback: str
    worker: str          # host and process that ran the batch


# threads the last batch of this process ran on (tests read it with Client.run)
last_threads = 0


def run_points(configs, member_threads: bool = False) -> dict | BatchFailure:
    """Simulate one batch (configs of equal engine.batch_key); the engine's arrays, one row per
    config, or a BatchFailure. member_threads: the task holds the whole worker (the resource
    cluster.BATCH_RESOURCE), so it advances that many members at once as the worker has
    threads (bit-identical to one thread: engine.Batch.run)."""
    global last_threads
    from .. import engine
    threads = 1
    if member_threads:
        from distributed import get_worker
        threads = max(int(get_worker().state.nthreads), 1)
    last_threads = threads
    try:
        return engine.run_batch(list(configs), threads=threads)
    except ExtollVecError as exc:
        return BatchFailure(exc, traceback.format_exc(),
                            f"{socket.gethostname()}, pid {os.getpid()}")


def warm_kernels(configs=None) -> float:
    """Load (or, on a cold Numba cache, compile) the kernels each of `configs` runs (one per
    kernel build: kernels/specialize.py), or by running the smallest example; returns the
    seconds it took. A config's batch is built and advanced to cycle 0 only: compiling
    needs the argument types, not the run."""
    t0 = time.perf_counter()
    from .. import engine
    from ..examples import get_example
    if configs is None:
        engine.run_batch([get_example("tiny")])
    for cfg in configs or ():
        try:
            batch = engine.Batch([cfg])
        except ExtollVecError:
            continue     # its own batch reports it, as one failed point
        batch.warm()
    return time.perf_counter() - t0
