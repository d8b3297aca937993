"""Protocol `fecn` (Schneider et al., section 4.1) on a small dragonfly: no marks without congestion
(then it is the baseline exactly), marks, BECNs and throttling under saturation, every FECN
answered once (the protocol's audit), the aggressive set costing more than the default
without slow receivers, explicit BECN packets where the traffic does not go back, and the
validation."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import run_batch
from extoll_vec.errors import ConfigError
from extoll_vec.protocols.portals.fecn import AGGRESSIVE

DF = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}          # 9 groups, 72 nodes


def cfg(proto="fecn", kind="pairwise", rate=1.0, seed=0, **over):
    d = {"topology": DF, "network": {"routing": "par", "vcs": 4, "buffer_flits": 64},
         "workload": {"kind": kind, "injection_rate": rate, "packet_flits": 16,
                      "warmup_cycles": 3000, "measure_cycles": 6000, "drain_cycles": 0},
         "protocol": {"name": proto}, "seed": seed}
    for key, v in over.items():
        sec, name = key.split(".")
        d[sec] = {**d[sec], name: v}
    return from_dict(d)


AGG = {k: v for k, v in AGGRESSIVE.items()}


@pytest.fixture(scope="module")
def runs():
    return run_batch([cfg("none"), cfg(), cfg(**AGG), cfg(rate=0.1), cfg("none", rate=0.1),
                      cfg(kind="permutation"), cfg(seed=1), cfg()])


def test_without_congestion_nothing_is_marked_and_it_is_the_baseline(runs):
    assert runs["fecn_marked_received"][3].sum() == 0
    assert runs["accepted_flits_per_node_cycle"][3] == runs["accepted_flits_per_node_cycle"][4]


def test_saturation_marks_notifies_and_throttles(runs):
    for i in (1, 2):
        marked = runs["fecn_marked_received"][i].sum()
        assert marked > 100
        assert 0 < runs["becn_received"][i].sum() <= marked
        assert runs["fecn_throttled"][i].sum() > 0
        assert runs["becn_explicit_sent"][i].sum() == 0     # pairwise: all ride back
    acc = runs["accepted_flits_per_node_cycle"]
    # the aggressive set (2x marking, decay every 50 cycles) throttles more and costs
    # throughput without slow receivers (Schneider et al.: about 40 % at 5,256 nodes)
    assert runs["fecn_throttled"][2].sum() > runs["fecn_throttled"][1].sum()
    assert acc[2] < acc[1] and acc[2] < acc[0]


def test_fecns_from_nodes_it_does_not_send_to_get_a_becn_packet(runs):
    assert runs["fecn_marked_received"][5].sum() > 0
    assert runs["becn_explicit_sent"][5].sum() > 0


def test_same_seed_same_run_another_seed_another(runs):
    acc = runs["accepted_flits_per_node_cycle"]
    assert acc[7] == acc[1] and acc[6] != acc[1]
    np.testing.assert_array_equal(runs["fecn_marked_received"][7], runs["fecn_marked_received"][1])


@pytest.mark.parametrize("over, field", [
    ({"protocol.fecn_threshold": 1.0}, "protocol.fecn_threshold"),
    ({"protocol.becn_max": 0}, "protocol.becn_max"),
    ({"protocol.becn_decay_cycles": 0}, "protocol.becn_decay_cycles"),
    ({"protocol.fecn_gain": -1.0}, "protocol.fecn_gain"),
    ({"workload.drain_cycles": 2**31}, "workload.drain_cycles"),
])
def test_bad_values_name_the_field(over, field):
    with pytest.raises(ConfigError) as exc:
        cfg(**over)
    assert exc.value.field == field


def test_only_for_network_only_traffic():
    with pytest.raises(ConfigError) as exc:
        from_dict({"topology": {"kind": "mesh", "dims": [2, 2]},
                   "workload": {"kind": "alltoall", "ranks": 16},
                   "mpi": {"ranks_per_node": 4}, "protocol": {"name": "fecn"}})
    assert exc.value.field == "protocol.name"
