"""bit_reverse: network-only traffic in which node i sends all its packets to the node whose
index is i's bits reversed (log2(nodes) bits), the bit-reversal permutation of Dally and
Towles (Principles and Practices of Interconnection Networks, sec. 3.2), an adversarial pattern
for dimension-order routing on meshes and hypercubes. The nodes must be a power of 2; the
palindromic indices send to themselves (their packets leave the network at their own router,
as BookSim's bitrev traffic does).
"""
from __future__ import annotations

import numpy as np

from .registry import Workload


def bit_reverse_destinations(n_nodes: int) -> np.ndarray:
    """int32 [n_nodes]: node i's destination, i with its log2(n_nodes) bits reversed."""
    bits = int(n_nodes).bit_length() - 1
    i = np.arange(n_nodes, dtype=np.int64)
    out = np.zeros(n_nodes, np.int64)
    for k in range(bits):
        out |= ((i >> k) & 1) << (bits - 1 - k)
    return out.astype(np.int32)


def _power_of_two(cfg, check) -> None:
    n = cfg.topology.n_nodes
    check(n >= 2 and n & (n - 1) == 0, "workload.kind",
          f"a kind other than bit_reverse on {n} nodes (it needs a power of 2)",
          cfg.workload.kind)


WORKLOADS = (
    Workload("bit_reverse", destinations=lambda n, cfg: bit_reverse_destinations(n),
             check_run=_power_of_two),
)
