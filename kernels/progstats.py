"""Static analysis of rank programs, used to size queues before a run."""
import numpy as np

from extoll_vec.dtypes import OP_END, OP_ENDLOOP, OP_IMCAST, OP_ISEND, OP_LOOP, OP_MCAST, OP_SEND
from extoll_vec.kernels.common import message_packets
from extoll_vec.kernels.jit import analysis


@analysis
def inbound(ops, starts, n_ranks, hdr, payload, eager):
    """Messages and eager VELO packets each rank receives over the whole program, loops
    multiplied out. ops int32 [rows, 4]; starts int32 [n_ranks]. Returns (msgs, packets) int64."""
    msgs = np.zeros(n_ranks, np.int64)
    pkts = np.zeros(n_ranks, np.int64)
    mult = np.ones(8, np.int64)
    for r in range(n_ranks):
        pc = starts[r]
        depth = 0
        m = 1
        while ops[pc, 0] != OP_END:
            op = ops[pc, 0]
            if op == OP_LOOP:
                mult[depth] = m
                depth += 1
                m *= max(1, ops[pc, 1])
            elif op == OP_ENDLOOP:
                depth -= 1
                m = mult[depth]
            elif op == OP_SEND or op == OP_ISEND:
                dst = ops[pc, 1]
                msgs[dst] += m
                pkts[dst] += m * message_packets(ops[pc, 2], hdr, payload, eager)
            elif op == OP_MCAST or op == OP_IMCAST:   # to every other member of 0..a-1
                k = message_packets(ops[pc, 2], hdr, payload, eager)
                for dst in range(ops[pc, 1]):
                    if dst != r:
                        msgs[dst] += m
                        pkts[dst] += m * k
            pc += 1
    return msgs, pkts
