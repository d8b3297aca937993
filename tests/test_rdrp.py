"""Protocol `rdrp` (Schneider et al.'s receiver-driven rendezvous at network level) on a small
dragonfly: throughput grows with the outstanding transfers allowed and reaches the baseline,
credits are conserved (the audit, with a negative control), credits go back piggybacked under
pairwise traffic and in credit packets otherwise, and the validation."""
from __future__ import annotations

import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch, run_batch
from extoll_vec.errors import ConfigError
from extoll_vec.protocols.portals.rdrp import CN_CREDITS, audit

DF = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}          # 9 groups, 72 nodes


def cfg(c=None, kind="pairwise", **net):
    proto = {"name": "none"} if c is None else {"name": "rdrp", "outstanding": c}
    return from_dict({"topology": DF, "network": {"routing": "par", "vcs": 4, "buffer_flits": 64,
                                                  **net},
                      "workload": {"kind": kind, "injection_rate": 1.0, "packet_flits": 16,
                                   "warmup_cycles": 2000, "measure_cycles": 4000,
                                   "drain_cycles": 0},
                      "protocol": proto})


@pytest.fixture(scope="module")
def runs():
    return run_batch([cfg(), cfg(1), cfg(4), cfg(30), cfg(4, kind="permutation")])


def test_throughput_grows_with_outstanding_transfers_to_the_baseline(runs):
    acc = runs["accepted_flits_per_node_cycle"]
    assert acc[1] < acc[2] < acc[3]
    assert acc[3] == pytest.approx(acc[0], rel=0.05)
    assert acc[1] < 0.5 * acc[0]        # one transfer at a time: a round trip per packet


def test_credits_ride_back_on_reverse_traffic_or_in_credit_packets(runs):
    assert runs["rdrp_piggybacked"][3].sum() > runs["rdrp_credit_packets"][3].sum()
    assert runs["rdrp_piggybacked"][4].sum() == 0 and runs["rdrp_credit_packets"][4].sum() > 0
    assert runs["rdrp_held"][1].sum() > runs["rdrp_held"][3].sum()


def test_the_audit_catches_a_lost_credit():
    b = Batch([cfg(4)])
    b.run()
    assert audit(b, 0) == []
    b.S.fcn[0, 5, CN_CREDITS] -= 1
    (problem,) = audit(b, 0)
    assert "node 5" in problem and "it has 4" in problem


@pytest.mark.parametrize("over, field", [({"protocol": {"name": "rdrp", "outstanding": 0}},
                                          "protocol.outstanding")])
def test_bad_values_name_the_field(over, field):
    d = {"topology": DF, "network": {"routing": "par", "vcs": 4},
         "workload": {"kind": "pairwise"}, **over}
    with pytest.raises(ConfigError) as exc:
        from_dict(d)
    assert exc.value.field == field


def test_only_for_network_only_traffic():
    with pytest.raises(ConfigError) as exc:
        from_dict({"topology": {"kind": "mesh", "dims": [2, 2]},
                   "workload": {"kind": "alltoall", "ranks": 16},
                   "mpi": {"ranks_per_node": 4}, "protocol": {"name": "rdrp"}})
    assert exc.value.field == "protocol.name"


def test_the_pool_counts_credit_packets_by_credits_not_by_flits():
    """Credit packets are 1 flit; sizing counts them as one per credit (each carries at least
    one) instead of filling every buffer with 1-flit packets (engine/sizing.proto_packets),
    and the pool still holds at saturation with credit packets everywhere (permutation
    traffic: none piggybacked)."""
    from extoll_vec.engine.sizing import least_packet_flits, proto_packets
    c = cfg(64, kind="permutation")
    assert least_packet_flits(c) == 16 and proto_packets(c) == 72 * 64
    batch = Batch([c])
    S, t, peak = batch.S, 0, 0
    while t < 4000:
        t += 25
        batch.advance_to(t)
        assert S.status[0] == 0
        peak = max(peak, int(S.pk_meta[0, 1]))
    assert peak <= batch.sizes["NPK"] - 1024
    batch.run()
    assert audit(batch, 0) == []
