"""A batch of one protocol family runs a copy of the kernels bound to that family's dispatch
alone (kernels/specialize.py): same source, so bit-identical results to the shared build.

The rest of the suite runs the shared build (conftest.py); this module compiles the EXTOLL
family's copy once (minutes on a fresh machine, then cached)."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from extoll_vec.engine import Batch, batch_key, shape_key
from extoll_vec.errors import ConfigError
from extoll_vec.examples import get_example
from extoll_vec.kernels import sim as shared_sim
from extoll_vec.kernels import specialize


def _configs():
    """EXTOLL's family: its five protocols on one 16-rank all-to-all, one batch."""
    base = get_example("tiny")
    out = [base.replace(**{"protocol.name": "none", "protocol.mailbox_slots": 0})]
    for name in ("backpressure", "window", "static", "dynamic"):
        out.append(base.replace(**{"protocol.name": name, "protocol.mailbox_slots": 64}))
    return out


def _run(monkeypatch, policy, threads=1):
    monkeypatch.setenv("EXTOLL_VEC_KERNELS", policy)
    batch = Batch(_configs())
    batch.run(threads=threads)
    return batch, batch.results()


def test_a_family_batch_runs_its_own_build_with_the_shared_builds_results(monkeypatch):
    shared, want = _run(monkeypatch, "shared")
    assert shared.sim is shared_sim
    for threads in (1, 2):
        own, got = _run(monkeypatch, "family", threads)
        assert own.sim is not shared_sim and own.sim.__name__.startswith(shared_sim.__name__ + "@")
        # its event loop reaches a dispatch generated for EXTOLL's protocols alone
        may_send = own.sim.flowctl.may_send
        text = Path(inspect.getfile(may_send.py_func)).read_text()
        assert "kernels.extoll.hooks" in text and "kernels.lfc" not in text
        assert "kernels.infiniband" not in text
        assert set(got) == set(want)
        for name, arr in want.items():
            np.testing.assert_array_equal(got[name], arr, err_msg=name)
        assert (own.S.events == shared.S.events).all() and (own.S.now == shared.S.now).all()


def test_batches_split_by_family_only_under_the_family_policy(monkeypatch):
    none = get_example("uniform")          # network-only traffic: none or the seams' capped
    capped = none.replace(**{"protocol.name": "capped"})
    static, dynamic = _configs()[3:]
    monkeypatch.setenv("EXTOLL_VEC_KERNELS", "family")
    assert shape_key(none) == shape_key(capped) and batch_key(none) != batch_key(capped)
    assert batch_key(static) == batch_key(dynamic)
    # a batch built by hand over two families runs the shared build (no compile here)
    assert specialize.sim_for(["static", "capped"]) is shared_sim
    monkeypatch.setenv("EXTOLL_VEC_KERNELS", "shared")
    assert batch_key(none) == batch_key(capped)


def test_an_unknown_policy_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("EXTOLL_VEC_KERNELS", "fast")
    with pytest.raises(ConfigError, match="EXTOLL_VEC_KERNELS: 'fast' is not one of family, "
                                          "shared"):
        Batch(_configs()[:1])
    env = {**os.environ, "EXTOLL_VEC_KERNELS": "fast"}
    out = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "run", "--example", "tiny"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 2, out.stderr
    assert "EXTOLL_VEC_KERNELS" in out.stderr and "Traceback" not in out.stderr
