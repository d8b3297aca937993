"""host.posted_writes: with "node" (the default) a rank's release of a retrieved mailbox slot is
a posted write in its node's one in-order stream, so it waits while the node's requester FIFO
is full (docs/calibration.md, "The requester model"); with "rank" it never waits."""
from __future__ import annotations

import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import run_batch
from extoll_vec.workloads import ProgramBuilder


def _cfg(order: str, fifo: int = 2) -> object:
    # two nodes, two ranks each; the NIC sends a packet every 2 us, far slower than a rank
    # writes them, so a long send keeps its node's FIFO full
    return from_dict({"topology": {"kind": "mesh", "dims": [2]},
                      "mpi": {"ranks_per_node": 2, "eager_threshold": 4096, "limic": False},
                      "network": {"nic_fifo_packets": fifo, "nic_packet_ns": 2000},
                      "host": {"posted_writes": order},
                      "workload": {"kind": "program", "ranks": 4}})


def _program() -> ProgramBuilder:
    """Rank 0 (node 0) streams 60 packets to rank 2 (node 1); rank 1, on rank 0's node, receives
    a 10-packet message from rank 3 (node 1) and must retrieve it meanwhile."""
    pb = ProgramBuilder(4)
    pb.send(0, 2, 60 * 56 - 16)
    pb.recv(2, 0, 60 * 56 - 16)
    pb.send(3, 1, 10 * 56 - 16)
    pb.recv(1, 3, 10 * 56 - 16)
    return pb


def _finish_us(order: str, fifo: int = 2):
    res = run_batch([_cfg(order, fifo)], programs=[_program().build("posted writes")])
    return res["rank_time_us"][0]


def test_a_slot_release_waits_behind_its_nodes_full_fifo():
    node, rank = _finish_us("node"), _finish_us("rank")
    # rank 1 retrieves its 10 packets only when a FIFO slot frees (every 2 us), taking turns
    # with rank 0's blocked writes: twice as late as when its releases pass the full FIFO
    assert rank[1] < rank[0] and node[1] > 1.5 * rank[1]
    # rank 0's stream and rank 3's send are not slowed by it
    assert node[0] == pytest.approx(rank[0]) and node[3] == pytest.approx(rank[3])


def test_without_a_full_fifo_the_order_changes_nothing():
    assert (_finish_us("node", fifo=1000) == _finish_us("rank", fifo=1000)).all()


def test_an_unknown_order_is_refused():
    from extoll_vec.errors import ConfigError
    with pytest.raises(ConfigError, match="host.posted_writes"):
        from_dict({"host": {"posted_writes": "socket"}})
