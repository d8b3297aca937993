"""The partial-deadlock check (engine/stall.py): stock BookSim2's ugal_dragonflynew
(`ugal_booksim`, VC = phase, a cyclic channel dependency graph) stops a cycle of buffers on a
Dragonfly at full load while the rest of the network moves; the check names the cycle, and
without it the run ends with a throughput measured over a partly dead network (the negative
control). The layered routings stay clean with it. It looks only at runs that skipped the
config-time proof (network.deadlock_check false): no other run can stop so."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec.config import TopologyConfig
from extoll_vec.engine import Batch, run_batch
from extoll_vec.errors import ConfigError, SimulationError
from extoll_vec.examples import get_example
from extoll_vec.routing.deadlock import channel_cycle
from extoll_vec.topology import build

# 528 nodes (33 groups of 8 routers, 2 nodes each), the Booksim machine of dragonfly-5256
# otherwise: pairwise permutation at load 1.0; with this seed ugal_booksim stops a cycle of
# VC 0 buffers between cycles 10,000 and 12,000
DF = {"topology.p": 2, "topology.a": 8, "topology.h": 4, "workload.measure_cycles": 14000,
      "workload.converge_tolerance": 1e-9, "seed": 0}


def dragonfly(routing: str, **over):
    # deadlock_check false for every routing: the config-time proof skipped, the run looks
    d = dict(DF, **{"network.routing": routing, "network.vcs": 4 if routing == "par" else 3,
                    "network.deadlock_check": False})
    return get_example("dragonfly-72").replace(**{**d, **over})


def test_booksim_ugal_graph_is_cyclic_and_refused_at_config_time():
    t = build(TopologyConfig(kind="dragonfly", p=2, a=4, h=2))
    cycle = channel_cycle(t, "ugal_booksim", False)
    assert cycle is not None and all(c % D.MAX_VCS == 0 for c in cycle)   # all on VC 0
    with pytest.raises(ConfigError) as exc:
        Batch([dragonfly("ugal_booksim", **{"network.deadlock_check": True})])
    assert exc.value.field == "network.routing" and "cycle router" in str(exc.value)


@pytest.mark.slow
def test_booksim_ugal_partial_deadlock_is_caught_and_named():
    with pytest.raises(SimulationError) as exc:
        run_batch([dragonfly("ugal_booksim")])
    msg = str(exc.value)
    assert exc.value.flags & D.ERR_STALL and not exc.value.flags & D.ERR_NO_PROGRESS
    assert "partial deadlock:" in msg and "have not changed since cycle" in msg
    cycle = msg.split("the cycle ")[1].split(" (network.routing")[0].split(" -> ")
    assert len(cycle) >= 3 and cycle[0] == cycle[-1]                 # closed, router by router
    assert all(c.startswith("router ") and c.endswith(" VC 0") for c in cycle)
    since = int(msg.split("since cycle ")[1].split()[0])
    assert 2000 <= since <= int(msg.split(" at cycle ")[1].split()[0]) + 1 - 2000


@pytest.mark.slow
def test_without_the_check_the_same_run_reports_a_throughput():
    """Negative control: the run the check stops completes without it, and its 'throughput'
    is that of a network with a dead cycle; the layered UGAL-L on the same traffic runs clean
    with the check on."""
    res = run_batch([dragonfly("ugal_booksim", **{"limits.stall_check_cycles": 0}),
                     dragonfly("ugal")])
    acc = res["accepted_flits_per_node_cycle"]
    assert np.all(acc > 0.1) and acc[0] < acc[1]


def test_the_check_changes_no_result():
    cfg = get_example("tiny").replace(**{"network.deadlock_check": False})   # so it looks
    on, off = run_batch([cfg]), run_batch([cfg.replace(**{"limits.stall_check_cycles": 0})])
    for k in on:
        np.testing.assert_array_equal(on[k], off[k], err_msg=k)
