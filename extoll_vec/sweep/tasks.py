"""What a Dask worker runs: importable functions (never defined in __main__, so workers use
the Numba disk cache; see ../shared/notes/ecosystem.md)."""
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


def run_points(configs) -> dict | BatchFailure:
    """Simulate one batch (configs of equal engine.shape_key); the engine's arrays, one row per
    config, or a BatchFailure."""
    from .. import engine
    try:
        return engine.run_batch(list(configs))
    except ExtollVecError as exc:
        return BatchFailure(exc, traceback.format_exc(),
                            f"{socket.gethostname()}, pid {os.getpid()}")


def warm_kernels() -> float:
    """Load (or, on a cold Numba cache, compile) the kernels by running the smallest example;
    returns the seconds it took."""
    t0 = time.perf_counter()
    from .. import engine
    from ..examples import get_example
    engine.run_batch([get_example("tiny")])
    return time.perf_counter() - t0
