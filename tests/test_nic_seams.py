"""The seams a programmable NI needs (Bhoedjang et al.'s LFC): state per pair of NICs sized from
the record, protocol timers in the event pool, a protocol's diagnosis in the error text, and
the NIC processor's helpers (common.nic_work, pk_clone, proto_retire, proto_resend_at).
The protocols that use them (LFC) test them in runs; here each is checked on its own."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from extoll_vec import dtypes as D
from extoll_vec.config import from_dict
from extoll_vec.engine import Batch, describe_error
from extoll_vec.engine.sizing import estimate_parts, state_sizes, topology_shape, least_figures
from extoll_vec.kernels import common
from extoll_vec.protocols import registry
from extoll_vec.state import PACKET


def _cfg():
    return from_dict({"topology": {"kind": "mesh", "dims": [4]},
                      "workload": {"kind": "uniform", "injection_rate": 0.1}, "protocol": {"name": "capped"}})


@pytest.fixture
def capped_with(monkeypatch):
    """Replace the capped record's fields for one test (the registry is read by name)."""
    registry.registered()

    def use(**fields):
        rec = dataclasses.replace(registry.protocol("capped"), **fields)
        monkeypatch.setitem(registry._CACHE, "capped", rec)
        return rec
    return use


def _sizes(cfg):
    return state_sizes([cfg], topology_shape(cfg.topology), [least_figures(cfg)])


def test_node_pair_state_and_timers_are_sized_from_the_record(capped_with):
    cfg = _cfg()
    plain = _sizes(cfg)
    assert plain["KNN"] == 0                  # no protocol keeps NIC-pair state: zero bytes
    seen = []
    capped_with(node_pair_fields=lambda c: seen.append(c) or 3, timers_alive=lambda c: 70)
    sized = _sizes(cfg)
    assert seen[0] is cfg                     # the count callables get the whole RunConfig
    assert sized["KNN"] == 3 and "TA" not in sized
    assert sized["E"] == plain["E"] + 70
    b = Batch([cfg])
    assert b.S.nn.shape == (1, 4, 4, 3) and b.S.nn.dtype == np.int32


def test_node_pair_bytes_are_in_the_memory_estimate(capped_with):
    cfg = _cfg()
    base = estimate_parts([cfg])[0]["NICs"]
    capped_with(node_pair_fields=lambda c: 5)
    assert estimate_parts([cfg])[0]["NICs"] - base == 4 * 4 * 5 * 4


def test_a_protocols_diagnosis_joins_the_error_text(capped_with):
    cfg = _cfg()
    capped_with(diagnose=lambda batch, b: ["NI 1 -> NI 2 (queue of 3, 0 credits)"])
    b = Batch([cfg])
    b.S.status[0] = D.ERR_NO_PROGRESS
    assert "NI 1 -> NI 2 (queue of 3, 0 credits)" in describe_error(b, 0)
    b.S.status[0] = D.ERR_POOL                 # not a stuck run: no diagnosis asked
    assert "NI 1" not in describe_error(b, 0)


def test_the_sent_hook_is_a_hot_path_hook_of_the_dispatch():
    assert registry.HOOK_BITS["nic_on_sent"] == D.H_NIC_SENT
    assert len(set(registry.HOOK_BITS.values())) == len(registry.HOOK_BITS)
    assert "def nic_on_sent(S, T, par, b, node, h, now):" in registry.dispatch_source()


# ---- the helpers, on a small state of only the arrays they touch --------------------------------
Mini = namedtuple("Mini", "now nic_cpu pk pk_meta pk_pf status proto_made delivered pq pq_head pq_cnt "
                          "nic_txt nic_busy ev_t ev_k ev_a ev_b ev_c ev_next wh_head wh_tail heap "
                          "ev_meta")


def _mini(npk=8, pf=3):
    pk = np.zeros((1, npk), PACKET)
    pk["next"][0] = np.arange(1, npk + 1)
    pk["next"][0, -1] = -1
    E, W = 64, 128
    z = lambda *s: np.zeros(s, np.int64)
    ev_next = np.arange(1, E + 1, dtype=np.int32).reshape(1, E)
    ev_next[0, -1] = -1
    return Mini(z(1), z(1, 2), pk, np.array([[0, 0]], np.int64), np.zeros((1, npk, pf), np.int32),
                z(1), z(1), z(1), np.full((1, 2, 4), -1, np.int32), np.zeros((1, 2), np.int32),
                np.zeros((1, 2), np.int32), np.full((1, 2), -1, np.int64), z(1, 2),
                z(1, E), np.zeros((1, E), np.int32), np.zeros((1, E), np.int32),
                np.zeros((1, E), np.int32), np.zeros((1, E), np.int32), ev_next,
                np.full((1, W), -1, np.int32), np.full((1, W), -1, np.int32),
                np.zeros((1, E), np.int32), np.zeros((1, 4), np.int64))


@njit
def _work(S, out):
    out[0] = common.nic_work(S, 0, 1, 100, 7)     # free: starts at 100
    out[1] = common.nic_work(S, 0, 1, 103, 5)     # busy until 107: queued behind it
    out[2] = common.nic_work(S, 0, 1, 200, 1)     # free again
    out[3] = common.nic_work(S, 0, 0, 0, 4)       # another node's processor is its own


def _in_own_cache(tmp_path, check: str) -> None:
    """Run check() of this module in a process whose kernel cache is tmp_path: compiling the
    cached helpers for Mini, a type of this test module, would write it into the indexes of
    the kernel cache, and every later process compiling a build that calls those helpers (a
    protocol family's, kernels/specialize.py) would fail to unpickle them."""
    code = f"import test_nic_seams as t; t.{check}()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).parent,
                         env={**os.environ, "EXTOLL_VEC_CACHE_DIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-3000:]


def test_nic_work_serves_one_step_at_a_time_in_request_order(tmp_path):
    _in_own_cache(tmp_path, "check_nic_work")


def check_nic_work():
    S, out = _mini(), np.zeros(4, np.int64)
    _work(S, out)
    assert out.tolist() == [107, 112, 201, 4]
    assert S.nic_cpu[0].tolist() == [4, 201]


@njit
def _clone(S, out):
    h = common.pk_new(S, 0, D.PK_DATA, 3, 5, 2, 9, 1, 1024, 11, 12, 40)
    S.pk[0, h].seq = 77
    S.pk_pf[0, h, 0] = 6
    S.pk_pf[0, h, 2] = -1
    c = common.pk_clone(S, 0, h, 90)
    out[0] = h
    out[1] = c
    ok = common.proto_resend_at(S, None, 0, 1, c, 150)
    out[2] = 1 if ok else 0
    common.proto_retire(S, 0, h)


def test_pk_clone_copies_the_record_and_protocol_fields_and_counts_it_made(tmp_path):
    _in_own_cache(tmp_path, "check_clone")


def check_clone():
    S, out = _mini(), np.zeros(3, np.int64)
    _clone(S, out)
    h, c = int(out[0]), int(out[1])
    assert c != h and out[2] == 1
    copy = {f: S.pk[0, c][f] for f in ("kind", "src", "dst", "dnode", "flits", "last", "pay",
                                         "aux", "aux2", "seq", "t0", "next")}
    assert copy == dict(kind=D.PK_DATA, src=3, dst=5, dnode=2, flits=9, last=1, pay=1024,
                        aux=11, aux2=12, seq=77, t0=40, next=-1)
    assert S.pk_pf[0, c].tolist() == [6, 0, -1]
    # proto_resend_at: queued at node 1 with its not-before cycle, a transmit requested then
    assert S.pk[0, c]["ready"] == 150 and S.pq_cnt[0, 1] == 1 and S.pq[0, 1, 0] == c
    assert S.nic_txt[0, 1] == 150
    # made: the clone (the original is a host packet); retired: the original, slot freed with
    # its protocol fields cleared
    assert S.proto_made[0] == 1 and S.delivered[0] == 1
    assert S.pk_meta[0, 1] == 1 and S.pk_meta[0, 0] == h
    assert S.pk_pf[0, h].tolist() == [0, 0, 0]


def test_the_kernel_cache_names_no_test_module():
    """Every index of the kernel cache (this checkout's builds, as the suite left them so far)
    unpickles in a process that cannot import the tests: a test type in an index breaks every
    later compile calling that helper (the negative control: Mini, before _in_own_cache)."""
    from extoll_vec import kernels
    code = ("import pickle, sys, pathlib\n"
            "bad = []\n"
            "for p in pathlib.Path(sys.argv[1]).rglob('*.nbi'):\n"
            "    with open(p, 'rb') as f:\n"
            "        pickle.load(f)\n"
            "        try:\n"
            "            pickle.loads(f.read())\n"
            "        except ImportError as e:\n"
            "            bad.append(f'{p.name}: {e}')\n"
            "print('\\n'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code, str(kernels.CACHE_DIR)], capture_output=True,
                         text=True, cwd="/", check=True)
    assert out.stdout.strip() == ""
