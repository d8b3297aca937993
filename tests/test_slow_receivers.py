"""Slow receivers (network.slow_nodes / slow_share / slow_factor, Schneider et al.) and pairwise
traffic (workload.kind pairwise): the seeded choices, the validation, and the physics: a slow node's
memory sinks 1/slow_factor of the link rate and holds the network back through its ejection
buffer."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch, run_batch
from extoll_vec.errors import ConfigError
from extoll_vec.workloads.patterns import slow_nodes, synthetic_destinations

DF = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}          # 9 groups, 72 nodes


def cfg(topo=DF, routing="table", vcs=4, packet_flits=8, **over):
    d = {"topology": dict(topo), "network": {"routing": routing, "vcs": vcs, "buffer_flits": 40},
         "workload": {"kind": "pairwise", "injection_rate": 1.0, "packet_flits": packet_flits,
                      "warmup_cycles": 2000, "measure_cycles": 4000, "drain_cycles": 0}}
    for key, v in over.items():
        if key == "seed":
            d["seed"] = v
            continue
        sec, name = key.split("__")
        d.setdefault(sec, {})[name] = v
    return from_dict(d)


def test_pairwise_destinations_are_a_random_perfect_matching():
    n = 5256
    d = synthetic_destinations("pairwise", n, 7)
    idx = np.arange(n)
    assert np.all(d != idx) and np.all(d[d] == idx)          # A -> B and B -> A, no fixed point
    np.testing.assert_array_equal(d, synthetic_destinations("pairwise", n, 7))
    assert np.mean(d == synthetic_destinations("pairwise", n, 8)) < 0.01
    with pytest.raises(ValueError, match="even number"):
        synthetic_destinations("pairwise", 5, 0)


def test_slow_nodes_are_drawn_by_the_seed_apart_from_the_traffic():
    a = slow_nodes(5256, 53, 3)
    assert len(set(a.tolist())) == 53 and np.all(np.diff(a) > 0) and a.max() < 5256
    np.testing.assert_array_equal(a, slow_nodes(5256, 53, 3))
    assert len(set(a.tolist()) & set(slow_nodes(5256, 53, 4).tolist())) < 10
    assert len(slow_nodes(10, 0, 3)) == 0
    # the share is rounded to the nearest count: 0.02 % and 0.04 % of 5,256 are 1 and 2 nodes
    big = {"kind": "dragonfly", "p": 6, "a": 12, "h": 6}
    for share, count in ((0.0002, 1), (0.0004, 2), (0.001, 5), (0.01, 53), (0.02, 105)):
        c = from_dict({"topology": big, "workload": {"kind": "pairwise"},
                       "network": {"slow_share": share, "slow_factor": 8, "vcs": 4,
                                   "routing": "par", "buffer_flits": 40}})
        assert c.n_nodes == 5256 and c.slow_node_count == count


@pytest.mark.parametrize("over, field", [
    ({"network": {"slow_nodes": 2, "slow_share": 0.1}}, "network.slow_nodes"),
    ({"network": {"slow_nodes": 73}}, "network.slow_nodes"),
    ({"network": {"slow_factor": 0.5}}, "network.slow_factor"),
    ({"network": {"slow_share": 1.5}}, "network.slow_share"),
    ({"topology": {"kind": "crossbar", "p": 5}}, "workload.kind"),
])
def test_bad_values_name_the_field(over, field):
    d = {"topology": dict(DF), "workload": {"kind": "pairwise"}}
    for k, v in over.items():
        d[k] = {**d.get(k, {}), **v}
    with pytest.raises(ConfigError) as exc:
        from_dict(d)
    assert exc.value.field == field


@pytest.mark.parametrize("factor", [2.0, 4.0, 8.0])
def test_a_slow_memory_sinks_one_over_its_factor_of_the_link_rate(factor):
    """Every node slow, pairwise on one switch at full load: each accepts 1/factor flits per
    cycle (the link delivers more, the memory writes less), while at factor 1 the same run
    accepts nearly the whole offered load."""
    sw = {"kind": "crossbar", "p": 6}
    fast = run_batch([cfg(sw)])
    slow = run_batch([cfg(sw, network__slow_share=1.0, network__slow_factor=factor)])
    assert fast["accepted_flits_per_node_cycle"][0] > 0.9
    assert slow["accepted_flits_per_node_cycle"][0] == pytest.approx(1 / factor, rel=0.03)


def test_one_slow_node_holds_back_the_network_and_the_seed_picks_it():
    """A pairwise dragonfly at full load under adaptive routing loses throughput to one 8x slow
    receiver (how far the congestion tree spreads at Schneider et al.'s scale is their Figure 1's
    target, not this test's); factor 1 changes nothing; the seed picks the nodes and gives the same
    result again."""
    base = dict(routing="par", network__buffer_flits=64, packet_flits=16)
    runs = run_batch([cfg(**base), cfg(**base, network__slow_nodes=1, network__slow_factor=8),
                      cfg(**base, network__slow_nodes=1, network__slow_factor=1.0)])
    acc = runs["accepted_flits_per_node_cycle"]
    assert acc[2] == acc[0]
    assert acc[1] < acc[0]
    b = Batch([cfg(**base, network__slow_nodes=3, network__slow_factor=8, seed=5)])
    sink = b.S.ej_sink[0]
    assert np.count_nonzero(sink) == 3 and set(np.flatnonzero(sink)) == set(slow_nodes(72, 3, 5))
    again = run_batch([cfg(**base, network__slow_nodes=1, network__slow_factor=8)])
    assert again["accepted_flits_per_node_cycle"][0] == acc[1]
