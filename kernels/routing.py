"""Routing in the kernels: the output port and VC of a packet entering a router (route_out),
and the latency of the link behind a port (link_lat).

route_out(S, T, par, b, r, p, v, h, now) is called by network.router_accept when packet h
enters input (p, v) of router r. P_ROUTING = 0 (table routing, layered VCs) is the fast path:
route_port / vc_next, exactly the lookups router_accept made before plug-ins existed. Every
other mode (an adaptive routing, or the flat VC assignment) goes to the generated routing
dispatch (routing/registry.py dispatch_source, written and imported by kernels/__init__.py):
one call site, one branch per registered route function.
The ejection port always uses VC 0 (the NIC has one buffer).
"""
import numpy as np

from extoll_vec.dtypes import P_LAT_TERM, P_ROUTING
from extoll_vec.kernels.byref import by_ref
from extoll_vec.kernels.jit import entry, inner
from extoll_vec.kernels.route_dispatch import route


@inner
def link_lat(T, par, b, r, p):
    """Latency of the link behind port p of router r (its class: terminal, local, global)."""
    return par[b, P_LAT_TERM + T.port_class[r, p]]


@inner
def route_out(S, T, par, b, r, p, v, h, now):
    """(output port, output VC) of packet h entering input (p, v) of router r."""
    mode = par[b, P_ROUTING]
    if mode == 0:
        out = np.int64(T.route_port[r, S.pk[b, h].dnode])
        if T.terminal_node[r, out] >= 0:
            return out, np.int64(0)    # the NIC has one ejection buffer
        return out, np.int64(T.vc_next[r, p, out, v])
    return route(S, T, par, b, r, p, v, h, mode)


@entry
def trace_route(state, topo, par, b, h, src, out):
    """Tests: follow packet slot h (its pk dnode set) from node src by route_out alone, without
    simulating; out[k] = (router, input port, output port, output VC) of hop k. Returns the
    number of hops (-1 if it does not reach a terminal port within out's rows)."""
    S, T = by_ref(state), by_ref(topo)
    r = T.node_router[src]
    p = T.node_port[src]
    v = 0
    for k in range(out.shape[0]):
        po, vo = route_out(S, T, par, b, r, p, v, h, 0)
        out[k, 0] = r
        out[k, 1] = p
        out[k, 2] = po
        out[k, 3] = vo
        if T.terminal_node[r, po] >= 0:
            return k + 1
        p = T.neighbor_port[r, po]
        r = T.neighbor[r, po]
        v = vo
    return -1
