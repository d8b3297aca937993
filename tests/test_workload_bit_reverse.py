"""The workload plug-in bit_reverse (workloads/bit_reverse.py): node i sends to node reverse(i),
network-only. Its destinations, its check, and runs: on a mesh, dimension-order routing
concentrates bit-reversal traffic on few links, so it accepts less than under uniform traffic
at the same offered load; Valiant's randomized routing (valiant_mesh) makes every pattern look
uniform, at about half the uniform capacity."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import run_batch
from extoll_vec.errors import ConfigError
from extoll_vec.workloads.bit_reverse import bit_reverse_destinations


def test_destinations_are_the_bit_reversal_permutation():
    d = bit_reverse_destinations(16)
    assert list(d[:8]) == [0, 8, 4, 12, 2, 10, 6, 14]
    assert sorted(d) == list(range(16)) and np.all(d[d] == np.arange(16))   # an involution
    assert list(bit_reverse_destinations(2)) == [0, 1]


def test_a_node_count_that_is_not_a_power_of_two_is_refused():
    with pytest.raises(ConfigError) as exc:
        from_dict({"topology": {"kind": "mesh", "dims": [3, 4]},
                   "workload": {"kind": "bit_reverse"}})
    assert exc.value.field == "workload.kind" and "power of 2" in str(exc.value)


def _cfg(kind, routing="table", rate=0.5):
    return from_dict({"topology": {"kind": "mesh", "dims": [8, 8]},
                      "network": {"routing": routing, "vcs": 2},
                      "workload": {"kind": kind, "injection_rate": rate, "packet_flits": 4,
                                   "warmup_cycles": 1000, "measure_cycles": 3000,
                                   "drain_cycles": 0}})


def test_dimension_order_saturates_on_bit_reversal_and_valiant_evens_patterns_out():
    res = run_batch([_cfg("uniform"), _cfg("bit_reverse"),
                     _cfg("uniform", routing="valiant_mesh"),
                     _cfg("bit_reverse", routing="valiant_mesh")])
    uni, rev, val_uni, val_rev = res["accepted_flits_per_node_cycle"]
    assert rev < 0.8 * uni                      # the same offered load, fewer links carry it
    assert abs(val_rev - val_uni) < 0.15 * val_uni   # Valiant: the pattern hardly matters
    assert val_uni < 0.7 * uni                  # at the price of about twice the hops
