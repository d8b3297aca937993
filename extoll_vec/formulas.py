"""Packet arithmetic shared by the configuration, the kernels and the paper's formulas.

Each derivation is defined here once, as plain integer arithmetic: Python code (config.py,
protocols/extoll/static.py) calls these functions as they are, and the kernels compile them
with ``kernels.jit.inner`` (kernels/common.py), so the simulator and the checks made before a
run cannot disagree. No Numba here: config.py must import without the kernels.

A function the kernels compile may call no other function of this module (Numba cannot call a
plain Python function from compiled code); ``eager_packets`` is for Python callers only.
This file is part of the kernels' cache key (kernels/__init__.py).
"""
import math

VELO_SLOT_BYTES = 64        # a VELO packet fills one 64-byte mailbox slot (EXTOLL section 2)
VELO_HEADER_BYTES = 8       # VELO header in the slot, sent on the wire with the packet
VELO_PAYLOAD_BYTES = VELO_SLOT_BYTES - VELO_HEADER_BYTES   # 56: the most a VELO packet carries


def message_packets(nbytes, header_bytes, payload_bytes, eager_threshold):
    """VELO packets an MPI message writes into the receiver's mailbox. Eager (nbytes <=
    eager_threshold): the MPI header and the data in payload_bytes pieces, at least one packet
    (a 0-byte message still carries its header). Rendezvous: one request packet; the data
    follows by RMA, outside the mailbox."""
    if nbytes > eager_threshold:
        return 1
    return max(1, (header_bytes + nbytes + payload_bytes - 1) // payload_bytes)


def eager_packets(nbytes, header_bytes, payload_bytes):
    """VELO packets of a message sent eagerly whatever its size (the paper's section 5.3
    count: ceil((2048 + 16) / 56) = 37)."""
    return message_packets(nbytes, header_bytes, payload_bytes, nbytes)


def packet_flits(payload_bytes, overhead_bytes, flit_bytes):
    """Flits of one packet on the wire: its payload plus overhead_bytes of headers (the VELO
    header and the network header: NetworkConfig.packet_overhead_bytes), rounded up to whole
    flits, at least one."""
    return max(1, (payload_bytes + overhead_bytes + flit_bytes - 1) // flit_bytes)


def cycles(ns: float, cycle_ns: float) -> int:
    """(Python callers only.) Host costs are given in ns; the kernels count whole cycles (rounded up). The credit
    operation's cost is the exception, kept in fixed point (dtypes.CREDIT_FRAC_BITS)."""
    return int(math.ceil(ns / cycle_ns - 1e-9))
