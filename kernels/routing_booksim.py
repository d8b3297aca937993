"""Stock BookSim2's `ugal_dragonflynew` as its source writes it (routefunc.cpp), for comparison
with the project's UGAL-L (kernels/routing_dragonfly.py); Schneider et al. ran their Dragonfly
on BookSim with this routing's constants (bias 2x, threshold 30 flits).

- The intermediate is a random *node* of the whole network (not a group), drawn at injection
  from the source node's routing stream (common.route_draw, so the traffic's destinations do
  not change). One in the source's own group means minimal routing.
- UGAL-L at the source router only: minimal iff q_min <= bias * q_nm + threshold, q the
  occupancy of the candidate output's downstream buffers as this router's credits see it.
- The VC is the packet's phase: 0 on the way to the intermediate node's router, 1 after it,
  raised to 2 at the global hop into the destination group (a minimal packet starts at 1;
  one to its own group at 2). 3 VCs.

The phases do not order the channels: an intermediate group's local hop (phase 0) shares VC 0
with source-group local hops, so local(Y, 0) -> global(Y->Z, 0) -> local(Z, 0) -> global(Z->Y,
0) closes a cycle of the channel dependency graph (routing/booksim.py gives it; the config-time
check refuses it unless network.deadlock_check is false), and under load part of the network
can stop for good while the rest moves (engine/stall.py names such a cycle).

Per-packet state S.pk[b, h].route: bits 0..25 the intermediate node + 1 (0: none), bits 26..27
the phase.
"""
import numpy as np

from extoll_vec.dtypes import (ADAPT_BIAS_BITS, P_ADAPT_BIAS, P_ADAPT_THRESH, PORT_GLOBAL,
                               PORT_TERMINAL)
from extoll_vec.kernels.common import route_draw
from extoll_vec.kernels.jit import inner, outlined
from extoll_vec.kernels.routing_dragonfly import _used

BS_NODE = (1 << 26) - 1
BS_PHASE = 26


@inner
def route(S, T, par, b, r, p, v, h, mode):
    return _route(S.pk, S.rt_ctr, S.cr, T.route_port, T.terminal_node, T.port_class,
                  T.node_router, T.geo, par, b, r, p, h)


# outlined: a comparison routing, not worth growing every family's event loop (and its compile
# time) by its body; it takes arrays, not the State (an outlined callee of the frame would keep
# the whole frame in memory, kernels/byref.py)
@outlined
def _route(pk, rt_ctr, cr, route_port, terminal_node, port_class, node_router, geo, par, b, r,
           p, h):
    PA = geo[0] * geo[1]               # nodes per group
    dn = pk[b, h].dnode
    grp = r // geo[1]
    st = np.int64(pk[b, h].route)
    if port_class[r, p] == PORT_TERMINAL:        # injected here: intermediate node and phase
        intm = np.int64(-1)
        if dn // PA == grp:
            ph = np.int64(2)
        else:
            # any node, as BookSim's RandomInt(gNodes - 1)
            intm = np.int64(route_draw(rt_ctr, par, b, terminal_node[r, p])
                            % np.uint64(PA * geo[3]))
            ph = np.int64(1)
            if intm // PA != grp:
                qm = _used(cr, par, b, r, route_port[r, dn])
                qn = _used(cr, par, b, r, route_port[r, intm])
                if (qm << ADAPT_BIAS_BITS) > par[b, P_ADAPT_BIAS] * qn + (
                        par[b, P_ADAPT_THRESH] << ADAPT_BIAS_BITS):
                    ph = np.int64(0)
    else:
        intm = (st & BS_NODE) - 1
        ph = (st >> BS_PHASE) & 3
    if ph == 0 and r == node_router[intm]:
        ph = np.int64(1)                          # at the intermediate node's router
    if ph == 0:
        out = np.int64(route_port[r, intm])
    else:
        out = np.int64(route_port[r, dn])
    if ph == 1 and port_class[r, out] == PORT_GLOBAL:
        ph = np.int64(2)                          # the global hop into the destination group
    pk[b, h].route = (intm + 1) | (ph << BS_PHASE)
    if terminal_node[r, out] >= 0:
        return out, np.int64(0)                   # the NIC has one ejection buffer
    return out, ph
