"""Valiant's randomized routing on a mesh (Valiant and Brebner, STOC 1981): each packet goes by
dimension order to an intermediate node drawn at injection (uniformly, neither its source nor
its destination; common.draw_other, the routing stream of the source node), then by dimension
order to its destination. It spreads any permutation over the whole mesh at the price of
longer paths. Deadlock freedom: phase one on VC 0, phase two on VC 1; each phase is dimension
order (acyclic) and a packet only moves from VC 0 to VC 1 (routing/valiant_mesh.py gives the
channel dependency graph).

Per-packet state S.pk[b, h].route: the intermediate node + 1 while in phase one, VM_PHASE2
after its router. The record (routing/valiant_mesh.py) admits meshes only: on a torus the
tables' dateline VCs would need a second pair of VCs per phase.
"""
import numpy as np

from extoll_vec.dtypes import PORT_TERMINAL, RT_FLAT
from extoll_vec.kernels.common import draw_other
from extoll_vec.kernels.jit import inner

VM_PHASE2 = 1 << 30


@inner
def route(S, T, par, b, r, p, v, h, mode):
    dn = S.pk[b, h].dnode
    st = np.int64(S.pk[b, h].route)
    if T.port_class[r, p] == PORT_TERMINAL:    # injected here: draw the intermediate node
        src = T.terminal_node[r, p]
        st = draw_other(S.rt_ctr, par, b, src, T.node_router.shape[0], src, dn) + 1
    if st != VM_PHASE2 and T.node_router[st - 1] == r:
        st = VM_PHASE2                         # at the intermediate node: on to the destination
    S.pk[b, h].route = st
    if st == VM_PHASE2:
        out = np.int64(T.route_port[r, dn])
        vc = np.int64(1)
    else:
        out = np.int64(T.route_port[r, st - 1])
        vc = np.int64(0)
    if T.terminal_node[r, out] >= 0 or (mode & RT_FLAT) != 0:
        return out, np.int64(0)                # the NIC has one ejection buffer
    return out, vc
