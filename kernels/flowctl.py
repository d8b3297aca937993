"""The protocol hooks: the core kernels (host, NIC, router, event loop) call these and never look
inside a protocol. They are the generated dispatch module (extoll_vec/protocols/registry.py
dispatch_source, written and imported by kernels/__init__.py): per hook, one branch per
registered protocol that defines it, on proto = par[b, P_PROTO], else the default below.
A protocol is a record (protocols/registry.py) and a module of hook functions; adding one
changes no core kernel (docs/design.md, "Protocols plug in through hooks").

Rank hooks (costs are CPU time in fixed point, credit operations x par[P_CREDIT] in
1/2**CREDIT_FRAC_BITS cycles: host.fc_cycles turns them into cycles):
- fc_init(S, T, par, b)              state at cycle 0 (may schedule timers)        default: -
- may_send(r, dst)                   may rank r write one more data packet to dst?  True
                                     (a protocol whose answer turns true only in r's
                                     on_control declares unblocks_on_control: the host
                                     then does not ask again about a blocked send before)
- eager_ok(r, dst)                   may r's new message to dst (below the eager
                                     threshold) go eagerly? False: by rendezvous    True
- on_sent(r, dst, h, delayed)        data packet h to dst was written (delayed: its send
                                     waited for flow control first; h's pk_pf may be set)  0
- on_arrival(r, src, kind, ctype)    the NIC wrote a packet from src into r's mailbox
- on_retrieved(r, src)               a data packet from src was taken out of r's mailbox  0
- on_mc_retrieved(r, root)           a multicast packet of root's was taken out instead    0
- on_control(r, src, ctype, pay)     a control packet (or piggybacked credits) from src was
                                     taken out of r's mailbox                      0
- ctrl_payload(r, dst, ctype)        the payload of the control packet r writes now, or -1:
                                     withheld (the protocol queues it again later)  0
- piggyback(r, dst)                  credits riding on the last, partly filled packet to dst  0
- snapshot_field()                   the fc field of credits a rank owns towards a peer, which
                                     OP_SNAPSHOT records (a field index, not a call per pair:
                                     every inlined copy enlarges rank_step)         -1: none
Protocols queue control packets themselves (fc_fields.queue_ctrl); the host writes them
before any data. State: fc int32 [B, NR, NR, K], fcr int32 [B, NR, KR] (per pair, per rank).

NIC, router and timer hooks (called only if the member's par[P_HOOKS] has their bit H_*):
- nic_may_inject(S, T, par, b, node, h, now)  the NIC would inject its FIFO head h now (it has
      the link credits): 0 inject, t > now retry at t (throttle), INJ_HOLD wait until the
      protocol calls common.request_tx; a polling NIC's processor (Protocol.nic_polls) asks
      it through nic_may_inject_polled, which dispatches to the polling protocols only (and
      nic_may_inject to the others: each call site inlines only the hooks that run there)
- nic_on_eject(S, T, par, b, node, h, now)    packet h is next in node's ejection buffer:
      EJ_ACCEPT (handled as usual), EJ_HOLD (stop draining, back-pressure, until
      common.drain_at), EJ_CONSUMED (the protocol took it; the core frees it). A protocol
      answers or forwards with common.proto_send (a PK_PROTO packet from a NIC); EJ_KEPT
      (the protocol keeps it: forwards copies with common.pk_clone and proto_resend_at,
      hands it to its host with common.to_host, and retires it with common.proto_retire)
- nic_on_sent(S, T, par, b, node, h, now)     packet h left node's NIC (protocol queue, FIFO
      or RMA engine; S.nic_cr already less its flits): e.g. free the NI buffer of a packet
      whose last copy has left
- nic_on_host(S, T, par, b, node, h, now)     packet h (handed over by common.to_host) is in
      its rank's mailbox, after its DMA; the core frees it next
- router_on_forward(S, T, par, b, r, pi, po, h, now)  packet h won output po of router r
      (from input pi; S.cr[b, r, po, pk.ovc] already less its flits): mark it (pk_pf), count
- on_timer(S, T, par, b, target, arg, now)    an EV_PROTO_TIMER scheduled by common.proto_timer
A programmable NI's processor time: common.nic_work (one in-order processor per NIC, state
nic_cpu), and proto_resend_at's not-before cycle for the packets it prepares.
State: fcn int32 [B, N, KN] per node, nn int32 [B, N, N, KNN] per pair of NICs, npar int64 [B, N, KNP] per-node parameters (the
record's node_params), pk_pf int32 [B, NPK, PF] the packet fields the protocol declares,
the protocol's own scalar parameters in par[P_PP0..] (or slots of its own).
"""
from extoll_vec.kernels.dispatch import (ctrl_payload, eager_ok, fc_init, may_send,  # noqa: F401
                                         nic_may_inject, nic_may_inject_polled, nic_on_eject,
                                         nic_on_host, nic_on_sent, on_arrival, on_control,
                                         on_mc_retrieved, on_retrieved, on_sent, on_timer, piggyback,
                                         router_on_forward, snapshot_field)
