"""Shared pieces of the tests that run one sweep two ways (worker counts, clusters, object
storage, killed workers): the sweep they run, an interrupted run, a cluster file naming a
running scheduler, and the store comparison (the stores must hold the same results bit for
bit)."""
import numpy as np
import pytest

from extoll_vec.sweep import open_sweep
from extoll_vec.sweep.runner import run_sweep
from extoll_vec.sweep.store import open_store, read_completed

# three flow-control settings x two message sizes of the tiny alltoall (one protocol family)
TINY_SWEEP = {
    "base": {"example": "tiny", "protocol": {"window": 8, "threshold": 4}},
    "axes": {
        "fc": {"zip": {"protocol.name": ["none", "backpressure", "window"],
                       "protocol.mailbox_slots": [0, 512, 64]}},
        "workload.message_bytes": [512, 2048],
    },
}


def interrupted_sweep(sw, where, client, after: int = 3) -> int:
    """Run sweep sw into `where` (a path or URL) on client, interrupted as by a Ctrl-C once
    `after` points are stored; checks that what is left is a valid store of the finished
    points and returns how many there are."""
    def interrupt(points, result):
        if result.computed >= after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(sw, where, client, quiet=True, max_batch=1, on_batch=interrupt)
    stored = int(read_completed(where).sum())
    part = open_sweep(where, completed_only=True)
    assert part.sizes["point"] == stored and not np.isnan(part.exec_time_us.values).any()
    return stored


def address_cluster(path, client):
    """A cluster.yaml at path naming client's running scheduler (kind address); returns path."""
    path.write_text(f"cluster:\n  kind: address\n  address: {client.scheduler.address}\n")
    return path


def assert_same_store(a, b):
    """Every variable and coordinate of stores a and b (paths or URLs) equal bit for bit (NaN
    patterns included), same attributes."""
    da, db = open_store(a).load(), open_store(b).load()
    assert set(da.variables) == set(db.variables)
    for name in da.variables:
        va, vb = da[name].values, db[name].values
        assert va.dtype == vb.dtype and va.shape == vb.shape, name
        if va.dtype.kind in "fiub":
            assert va.tobytes() == vb.tobytes(), name
        else:
            assert [str(x) for x in va.ravel()] == [str(x) for x in vb.ravel()], name
    assert da.attrs == db.attrs
