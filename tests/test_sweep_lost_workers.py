"""Workers that die mid-sweep: 40 points on a real LocalCluster of 2 worker processes, a worker
process killed (SIGKILL) twice at seeded random moments while points are still pending. Every
point is stored exactly once, the store equals an undisturbed run bit for bit, and the progress
line says how many points were rerun after how many lost workers."""
from __future__ import annotations

import io
import os
import re
import signal
import time
from collections import Counter

import numpy as np
import pytest
from stores import assert_same_store

from extoll_vec.sweep import build_sweep
from extoll_vec.sweep.runner import run_sweep
from extoll_vec.sweep.store import read_completed

pytestmark = pytest.mark.slow   # a real cluster: the full suite only

# 40 points of the tiny alltoall, about 0.1-0.2 s each, in batches of 2: a kill after the 4th
# to the 20th stored point leaves at least 19 points (seconds of work) pending
SPEC = {
    "name": "lost-workers",
    "base": {"example": "tiny", "protocol": {"mailbox_slots": 512, "window": 8,
                                             "threshold": 4}},
    "axes": {"protocol.name": ["backpressure", "window"],
             "workload.iterations": [15, 20, 25, 30]},
    "repeat": 5,
}
KILL_SEED = 20260
N = 40


def _busy_worker(client, rng, timeout: float = 30.0) -> str:
    """A worker holding a batch (running or queued on it); the other may still be restarting."""
    t0 = time.monotonic()
    while time.monotonic() < t0 + timeout:
        busy = sorted(w for w, keys in client.processing().items() if keys)
        if busy:
            return busy[int(rng.integers(len(busy)))]
        time.sleep(0.05)
    raise AssertionError("no worker held a batch while points were pending")


def test_two_killed_workers_rerun_their_points_once_and_change_nothing(tmp_path, client2):
    sw = build_sweep(SPEC)
    assert sw.n_points == N
    ref = tmp_path / "undisturbed.zarr"      # in the default batches (results do not depend
    res = run_sweep(sw, ref, client2, quiet=True)   # on the batch composition)
    assert res.complete and (res.rerun, res.workers_lost) == (0, 0)

    rng = np.random.default_rng(KILL_SEED)
    kill_at = sorted(int(k) for k in rng.choice(np.arange(4, 21), size=2, replace=False))
    killed, stored = [], Counter()

    def kill_at_random_moments(points, result):
        stored.update(points)
        if len(killed) < len(kill_at) and result.computed >= kill_at[len(killed)]:
            assert result.computed <= N - 19          # points still pending
            worker = _busy_worker(client2, rng)
            pid = client2.run(os.getpid, workers=[worker])[worker]
            os.kill(pid, signal.SIGKILL)
            killed.append((result.computed, pid))

    log = io.StringIO()
    path = tmp_path / "killed.zarr"
    res = run_sweep(sw, path, client2, max_batch=2, stream=log,
                    on_batch=kill_at_random_moments)
    # each kill came when the stored points first reached its moment (batches of 2 points)
    assert len(killed) == 2 and all(0 <= k - at <= 1 for (k, _), at in zip(killed, kill_at))
    # every point stored exactly once, none failed
    assert res.complete and res.computed == N and not res.failed
    assert sorted(stored) == list(range(N)) and set(stored.values()) == {1}
    assert read_completed(path).all()
    # the batches on the two killed workers ran again, and the progress line says so
    assert res.workers_lost == 2 and res.rerun >= 2, (res.rerun, res.workers_lost)
    last = log.getvalue().splitlines()[-1]
    assert re.search(rf"\] {N}/{N} points, {res.rerun} rerun after 2 lost workers ", last), last
    # the nannies started new worker processes
    client2.wait_for_workers(2, timeout=60)
    assert not {pid for _, pid in killed} & set(client2.run(os.getpid).values())
    # bit for bit what the undisturbed run stored
    assert_same_store(ref, path)
