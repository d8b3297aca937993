"""host._sendable skips the queued sends it already found blocked when the protocol declares
unblocks_on_control (par[P_SEND_MEMO]): a pure speed-up, so every result must be bit-identical
to a run that asks the protocol about every queued send at every turn."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.protocols.registry import protocol


def _cfg(protocol_section: dict, benchmark: str) -> object:
    # IMB's Alltoall posts a send to every peer at once: a long send queue, most of it blocked
    # with a small mailbox; Alltoallv (pairwise exchange) keeps one send queued at a time
    return from_dict({"topology": {"kind": "mesh", "dims": [2, 2]},
                      "mpi": {"ranks_per_node": 4},
                      "protocol": protocol_section,
                      "workload": {"kind": "imb", "ranks": 16, "benchmark": benchmark,
                                   "iterations": 2, "warmup": 1, "start_skew_ns": 2000},
                      "seed": 3})


def _results(cfg, memo: int) -> tuple[dict, int]:
    batch = Batch([cfg])
    batch.par[:, D.P_SEND_MEMO] = memo
    batch.run()
    return batch.results(), int(batch.S.st_delayed[0].sum())


CREDIT = {"credit_slots": 2, "mailbox_slots": 4 * 16}   # 4 slots per process


@pytest.mark.parametrize("section", [
    {"name": "static", **CREDIT}, {"name": "static", "piggyback": True, **CREDIT},
    {"name": "dynamic", "piggyback": True, **CREDIT},
    {"name": "window", "mailbox_slots": 256, "window": 2, "threshold": 1}],
    ids=["static", "static-piggyback", "dynamic-piggyback", "window"])
@pytest.mark.parametrize("benchmark", ["Alltoall", "Alltoallv"])
def test_skipping_known_blocked_sends_changes_no_result(section, benchmark):
    cfg = _cfg(section, benchmark)
    assert protocol(section["name"]).unblocks_on_control
    fast, delayed = _results(cfg, 1)
    slow, delayed_slow = _results(cfg, 0)
    assert delayed > 0 and delayed == delayed_slow   # sends did wait for credits
    for k in slow:
        np.testing.assert_array_equal(fast[k], slow[k], err_msg=k)


def test_only_the_protocols_whose_credits_come_back_in_control_packets_declare_it():
    # the default is off: a protocol whose credits arrive at a NIC hook or a timer must be
    # asked about every queued send at every turn
    assert not protocol("capped").unblocks_on_control
    assert not protocol("none").unblocks_on_control
    assert all(protocol(p).unblocks_on_control for p in ("static", "dynamic", "window"))
