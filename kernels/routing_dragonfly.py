"""Dragonfly adaptive routings (groups of a routers, p nodes each; group of router r = r // a, of
node n = n // (p*a)); Schneider et al., sec. 4, BookSim's dragonfly UGAL:
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
channel dependency graph is acyclic; routing/deadlock.py checks it at config time from the
path shapes of routing/dragonfly.py):
- Valiant, UGAL: VC = gh on local and global links; order l0 < g0 < l1 < g1 < l2. A path has at
  most one local hop per group, so it climbs: [l0] g0 [l1] (minimal) or [l0] g0 [l1] g1 [l2]
  (via IG). 3 VCs.
- PAR: global links VC = gh; local links VC = lh in the source group (0, then 1 for the hop
  after a diversion at the second router), 1 + gh after a global hop. Order l0 < l1 < g0 < l2 <
  g1 < l3: paths [l0] [l1] g0 [l2] g1 [l3] climb it. 4 VCs.
- flat (RT_FLAT, network.vc_assignment flat): VC 0 on every hop, cyclic on purpose (to show
  the config-time check and the runtime deadlock report).

adaptive_route is the route function the generated dispatch calls for the three (their kernel
ids: routing/registry.py, in registration order).
"""
import numpy as np

from extoll_vec.dtypes import (ADAPT_BIAS_BITS, P_ADAPT_BIAS, P_ADAPT_THRESH, P_BUF_FLITS,
                               PORT_GLOBAL, PORT_TERMINAL, RT_FLAT)
from extoll_vec.kernels.common import draw_other
from extoll_vec.kernels.jit import inner
from extoll_vec.routing.registry import kernel_id

RT_VALIANT = kernel_id("valiant")
RT_UGAL = kernel_id("ugal")
RT_PAR = kernel_id("par")

RS_IG = (1 << 20) - 1
RS_GH1 = 1 << 20
RS_LH1 = 1 << 22
RS_DONE = 1 << 24
RS_NONMIN = 1 << 25


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
    """The output port and VC of packet h entering input p of router r under Valiant, UGAL-L
    or PAR (mode: its kernel id, or-ed with RT_FLAT for the flat VC assignment)."""
    rid = mode & (RT_FLAT - 1)
    dn = pk[b, h].dnode
    A = geo[1]
    G = geo[3]
    grp = r // A
    dgrp = dn // (geo[0] * A)
    cls = port_class[r, p]
    st = np.int64(pk[b, h].route)
    if cls == PORT_TERMINAL:   # injected here: fresh state, a candidate intermediate group
        st = np.int64(0)
        if dgrp != grp:
            ig = draw_other(rt_ctr, par, b, terminal_node[r, p], G, grp, dgrp)
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


@inner
def adaptive_route(S, T, par, b, r, p, v, h, mode):
    return adaptive_out(S.pk, S.rt_ctr, S.cr, T.route_port, T.terminal_node, T.port_class, T.geo,
                        par, b, r, p, h, mode)
