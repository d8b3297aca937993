"""valiant_mesh: Valiant's randomized routing on a mesh, through a random intermediate node in
two dimension-order phases on VCs 0 and 1 (kernels/routing_valiant_mesh.py). Its channel
dependency graph: the table routes' graph once per phase (VC 0, and the same shifted to VC 1),
and at every router an edge from each input buffer on VC 0 to each output link's VC 1 (a
packet may turn into phase two anywhere): a superset, acyclic because no edge leads back from
VC 1 to VC 0 and each phase's own graph is acyclic. With the flat assignment both phases share
VC 0 and the check finds the cycle. Packets of a pair take different paths, so it runs
network-only traffic (its record says in_order=False).
"""
from __future__ import annotations

import numpy as np

from .deadlock import buffer_id, table_edges
from .registry import Routing


def _edges(topo, flat: bool) -> np.ndarray:
    one = table_edges(topo, False)
    shift = 0 if flat else 1                  # buffer ids count VCs in their lowest digit
    r, p = np.nonzero(topo.neighbor >= 0)     # every input port with a link behind it...
    inputs = np.concatenate([np.nonzero(topo.terminal_node >= 0)[0], topo.neighbor[r, p]])
    in_ports = np.concatenate([np.nonzero(topo.terminal_node >= 0)[1], topo.neighbor_port[r, p]])
    turns = []
    for rr in np.unique(inputs):              # ... to every output link of its router
        outs = np.flatnonzero(topo.neighbor[rr] >= 0)
        pins = in_ports[inputs == rr]
        a = np.repeat(pins, len(outs))
        o = np.tile(outs, len(pins))
        turns.append(np.stack([buffer_id(rr, a, 0),
                               buffer_id(topo.neighbor[rr, o], topo.neighbor_port[rr, o], shift)],
                              1))
    return np.unique(np.concatenate([one, one + shift] + turns), axis=0)


def _three_nodes(cfg) -> str | None:
    if cfg.topology.n_nodes >= 3:
        return None
    return "table on a mesh of fewer than 3 nodes (no intermediate node)"


ROUTINGS = (
    Routing("valiant_mesh", edges=_edges, hooks="extoll_vec.kernels.routing_valiant_mesh",
            vcs=2, topologies=("mesh",), in_order=False, problem=_three_nodes,
            note="Valiant: a random intermediate node, dimension order to it and on (2 VCs)"),
)
