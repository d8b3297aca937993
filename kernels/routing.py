"""Routing plug-ins: the output port and VC of a packet entering a router (route_out), and the
latency of the link behind a port (link_lat).

route_out(S, T, par, b, r, p, v, h, now) is called by network.router_accept when packet h
enters input (p, v) of router r. P_ROUTING = 0 (table routing, layered VCs) is the fast path:
route_port / vc_next, exactly the lookups router_accept made before plug-ins existed. Every
other mode goes to adaptive_out, one call site.

Dragonfly adaptive routings (groups of a routers, p nodes each; group of router r = r // a, of
node n = n // (p*a)); Schneider et al., section 4, Booksim's dragonfly UGAL:
- Valiant: at injection a random intermediate group IG (neither the source's nor the
  destination's, from a counter-based stream of the source node, S.rt_ctr: the traffic
  generator's stream is untouched, so destinations do not change with the routing); minimal to
  IG (route_port towards IG's first node), then, from the first router of IG, minimal to the
  destination.
- UGAL-L: at the source router, minimal iff q_min <= bias * q_nm + threshold, where q is the
  occupancy of the candidate output's downstream buffers (all VCs) as this router's credits see
  it (local information only); else Valiant through the candidate IG.
- PAR (Jiang, Kim, Dally, ISCA 2009, section 4.2): the same test, re-evaluated at every router
  of the source group while the packet still routes minimally: at injection, and once more
  after its first (minimal) local hop; after that it routes on as decided (at most one local
  hop before diverting).
Packets to their own group route minimally (one local hop) under every routing.

Per-packet state S.pk[b, h].route (int32): bits 0..19 candidate IG + 1 (0: none); bits 20..21
global hops taken (gh); bits 22..23 local hops taken in the source group (lh); RS_DONE: no more
re-evaluation; RS_NONMIN: routing towards IG (cleared on reaching IG). Set on injection (input
port of class terminal), updated as the packet crosses links (class of its input port).

VC assignments (deadlock freedom: every path climbs a strict order of (link class, VC), so the
channel dependency graph is acyclic; topology/deadlock.py checks it at config time):
- table: the topology's vc_next (dragonfly: VC 0, VC 1 after the global hop).
- Valiant, UGAL: VC = gh on local and global links; order l0 < g0 < l1 < g1 < l2. A path has at
  most one local hop per group, so it climbs: [l0] g0 [l1] (minimal) or [l0] g0 [l1] g1 [l2]
  (via IG). 3 VCs.
- PAR: global links VC = gh; local links VC = lh in the source group (0, then 1 for the hop
  after a diversion at the second router), 1 + gh after a global hop. Order l0 < l1 < g0 < l2 <
  g1 < l3: paths [l0] [l1] g0 [l2] g1 [l3] climb it. 4 VCs.
- flat (RT_FLAT, network.vc_assignment flat): VC 0 on every hop, cyclic on purpose (to show
  the config-time check and the runtime deadlock report).
The ejection port always uses VC 0 (the NIC has one buffer).
"""
import numpy as np

from extoll_vec.dtypes import (P_ADAPT_BIAS, P_ADAPT_THRESH, P_BUF_FLITS, P_LAT_TERM, P_ROUTING,
                               P_SEED, PORT_GLOBAL, PORT_TERMINAL, RT_FLAT, RT_PAR, RT_TABLE,
                               RT_UGAL, RT_VALIANT, ADAPT_BIAS_BITS)

from extoll_vec.kernels.byref import by_ref
from extoll_vec.kernels.common import splitmix64
from extoll_vec.kernels.jit import entry, inner

RS_IG = (1 << 20) - 1
RS_GH1 = 1 << 20
RS_LH1 = 1 << 22
RS_DONE = 1 << 24
RS_NONMIN = 1 << 25


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
    return adaptive_out(S.pk, S.rt_ctr, S.cr, T.route_port, T.terminal_node,
                        T.port_class, T.geo, par, b, r, p, h, mode)


@inner
def _draw_group(rt_ctr, par, b, node, G, g0, g1):
    """A group uniformly from 0..G-1 without g0 and g1 (g0 != g1), from the routing stream of
    node: (seed, node, counter) hashed with a salt that the traffic generator does not use."""
    c = rt_ctr[b, node]
    rt_ctr[b, node] = c + 1
    key = splitmix64(np.uint64(par[b, P_SEED]) ^ np.uint64(0x52A0E7C1D3B9F046)
               ^ (np.uint64(node) * np.uint64(0xD1B54A32D192ED03)))
    x = np.int64(splitmix64(key ^ np.uint64(c)) % np.uint64(G - 2))
    lo = np.int64(min(g0, g1))
    hi = np.int64(max(g0, g1))
    if x >= lo:
        x += 1
    if x >= hi:
        x += 1
    return x


@inner
def _used(cr, par, b, r, po):
    """Flits in the downstream buffers of output po (all VCs), as r's credits see them."""
    V = cr.shape[3]
    u = V * par[b, P_BUF_FLITS]
    for k in range(V):
        u -= cr[b, r, po, k]
    return u


@inner
def adaptive_out(pk, rt_ctr, cr, route_port, terminal_node, port_class, geo,
                 par, b, r, p, h, mode):
    """route_out for every mode but the table fast path (see the module docstring)."""
    rid = mode & (RT_FLAT - 1)
    dn = pk[b, h].dnode
    if rid == RT_TABLE:        # table routes, flat VCs
        return np.int64(route_port[r, dn]), np.int64(0)
    A = geo[1]
    G = geo[3]
    grp = r // A
    dgrp = dn // (geo[0] * A)
    cls = port_class[r, p]
    st = np.int64(pk[b, h].route)
    if cls == PORT_TERMINAL:   # injected here: fresh state, a candidate intermediate group
        st = np.int64(0)
        if dgrp != grp:
            ig = _draw_group(rt_ctr, par, b, terminal_node[r, p], G, grp, dgrp)
            st = np.int64(ig + 1)
            if rid == RT_VALIANT:
                st |= RS_NONMIN | RS_DONE
    elif cls == PORT_GLOBAL:
        st += RS_GH1
    elif (st & (3 * RS_GH1)) == 0:
        st += RS_LH1           # a local hop in the source group
    ig = (st & RS_IG) - 1
    if (st & RS_NONMIN) != 0 and grp == ig:
        st &= ~RS_NONMIN       # reached the intermediate group: minimal from here
    elif (st & RS_DONE) == 0 and ig >= 0 and (st & (3 * RS_GH1)) == 0:
        # UGAL-L at the source router; PAR at every router of the source group until decided
        pm = route_port[r, dn]
        pn = route_port[r, ig * geo[0] * A]
        qm = _used(cr, par, b, r, pm)
        qn = _used(cr, par, b, r, pn)
        if (qm << ADAPT_BIAS_BITS) > par[b, P_ADAPT_BIAS] * qn + (par[b, P_ADAPT_THRESH]
                                                                    << ADAPT_BIAS_BITS):
            st |= RS_NONMIN | RS_DONE
        elif rid == RT_UGAL or (st & (3 * RS_LH1)) != 0 or port_class[r, pm] == PORT_GLOBAL:
            st |= RS_DONE      # UGAL decides once; PAR after one local hop or at the gateway
    pk[b, h].route = st
    if (st & RS_NONMIN) != 0:
        out = np.int64(route_port[r, ig * geo[0] * A])
    else:
        out = np.int64(route_port[r, dn])
    if terminal_node[r, out] >= 0 or (mode & RT_FLAT) != 0:
        return out, np.int64(0)
    gh = np.int64((st >> 20) & 3)
    if rid == RT_PAR and port_class[r, out] != PORT_GLOBAL:
        if gh == 0:
            return out, np.int64((st >> 22) & 3)
        return out, 1 + gh
    return out, gh


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
