"""Audit helpers every protocol family may use (protocols/<family>/ hold the audits
themselves): which packet slots are alive, and per-node counters as outputs."""
from __future__ import annotations

import numpy as np


def alive_packets(S, b) -> np.ndarray:
    """bool [NPK]: the packet slots of member b in use (not on the pool's free list), for the
    audits that count credits carried by packets still in the network."""
    free = np.zeros(S.pk["kind"].shape[1], bool)
    h = int(S.pk_meta[b, 0])
    while h >= 0:
        free[h] = True
        h = int(S.pk["next"][b, h])
    return ~free


def node_counter(field: int):
    """An Output extractor (protocols/registry.py): column `field` of the member's per-node
    protocol state fcn, as int64 [nodes]."""
    return lambda batch, b: batch.S.fcn[b, :, field].astype(np.int64)
