"""The flow-control plug: the host and NIC kernels call these hooks and never look inside a
protocol. Adding a protocol adds a branch here and a module of its own; the network, NIC and
host kernels stay as they are.

Hooks (proto = par[b, P_PROTO], per batch member; costs are CPU time in fixed point, credit
operations x par[P_CREDIT] in 1/2**CREDIT_FRAC_BITS cycles: host.fc_cycles turns them into cycles):
- fc_init()                          state at cycle 0
- may_send(r, dst)                   may rank r write one more data packet to dst now?
- on_sent(r, dst)                    a data packet to dst was written
- on_arrival(r, src, kind, ctype)    the NIC wrote a packet from src into r's mailbox
- on_retrieved(r, src)               a data packet from src was taken out of r's mailbox
- on_control(r, src, ctype, pay)     a control packet (or piggybacked credits) from src was
                                     taken out of r's mailbox
- ctrl_payload(r, dst, ctype)        the payload of the control packet r writes now, or -1:
                                     withheld (the protocol queues it again later)
- piggyback(r, dst)                  credits riding on the last, partly filled packet to dst
Protocols queue control packets themselves (fc_fields.queue_ctrl); the host writes them
before any data. State: fc int32 [B, NR, NR, K] and fcr int32 [B, NR, KR] (protocols/fc_layout.py).

Protocols:
- none / backpressure: always may send; no control packets.
- window (the trivial plug-in of the tests): a sender owns `window` credits per receiver; the
  receiver returns what it retrieved in a control packet every `threshold` packets.
- static (fc_static.py) and dynamic (fc_dynamic.py): EXTOLL sections 5 and 6.
"""
from extoll_vec.dtypes import (CT_CREDIT, P_CREDIT, P_PROTO, P_QUOTA, P_THRESHOLD, P_WINDOW,
                               PROTO_DYNAMIC, PROTO_STATIC, PROTO_WINDOW)
from extoll_vec.kernels import fc_dynamic, fc_static
from extoll_vec.kernels.fc_fields import (F_CURRENT, F_OWNED, F_QUEUED, F_RETRIEVED,
                                          queue_ctrl)
from extoll_vec.kernels.jit import inner

# window fields (its own three; protocols/fc_layout.py documents the credit protocols' layout)
F_CREDITS = F_OWNED


@inner
def fc_init(S, par, b):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC:
        fc_static.init(S, par, b)
    elif proto == PROTO_DYNAMIC:
        fc_dynamic.init(S, par, b)
    elif proto == PROTO_WINDOW:
        R = S.fc.shape[1]
        w = par[b, P_WINDOW]
        for r in range(R):
            for q in range(R):
                S.fc[b, r, q, F_CREDITS] = w
                S.fc[b, r, q, F_RETRIEVED] = 0
                S.fc[b, r, q, F_QUEUED] = 0


@inner
def may_send(S, par, b, r, dst):
    if par[b, P_PROTO] >= PROTO_WINDOW:
        return S.fc[b, r, dst, F_OWNED] > 0
    return True


@inner
def on_sent(S, par, b, r, dst):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC or proto == PROTO_DYNAMIC:
        return fc_static.on_sent(S, b, r, dst) * par[b, P_CREDIT]
    if proto == PROTO_WINDOW:
        S.fc[b, r, dst, F_CREDITS] -= 1
        return par[b, P_CREDIT]
    return 0


@inner
def on_arrival(S, par, b, r, src, kind, ctype):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC:
        fc_static.on_arrival(S, par, b, r, src, kind, ctype, par[b, P_QUOTA])
    elif proto == PROTO_DYNAMIC:
        fc_static.on_arrival(S, par, b, r, src, kind, ctype, S.fc[b, r, src, F_CURRENT])


@inner
def on_retrieved(S, par, b, r, src):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC:
        return fc_static.on_retrieved(S, par, b, r, src) * par[b, P_CREDIT]
    if proto == PROTO_DYNAMIC:
        return fc_dynamic.on_retrieved(S, par, b, r, src) * par[b, P_CREDIT]
    if proto == PROTO_WINDOW:
        S.fc[b, r, src, F_RETRIEVED] += 1
        if S.fc[b, r, src, F_RETRIEVED] >= par[b, P_THRESHOLD] and S.fc[b, r, src, F_QUEUED] == 0:
            S.fc[b, r, src, F_QUEUED] = 1
            queue_ctrl(S, b, r, src, CT_CREDIT)
        return par[b, P_CREDIT]
    return 0


@inner
def ctrl_payload(S, par, b, r, dst, ctype):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC:
        return fc_static.credit_payload(S, b, r, dst)
    if proto == PROTO_DYNAMIC:
        return fc_dynamic.payload(S, par, b, r, dst, ctype)
    if proto == PROTO_WINDOW:
        n = S.fc[b, r, dst, F_RETRIEVED]
        S.fc[b, r, dst, F_RETRIEVED] = 0
        S.fc[b, r, dst, F_QUEUED] = 0
        return n
    return 0


@inner
def piggyback(S, par, b, r, dst):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC:
        return fc_static.piggyback(S, b, r, dst)
    if proto == PROTO_DYNAMIC:
        return fc_dynamic.piggyback(S, par, b, r, dst)
    return 0


@inner
def on_control(S, par, b, r, src, ctype, payload):
    proto = par[b, P_PROTO]
    if proto == PROTO_STATIC:
        return fc_static.on_control(S, b, r, src, ctype, payload) * par[b, P_CREDIT]
    if proto == PROTO_DYNAMIC:
        return fc_dynamic.on_control(S, par, b, r, src, ctype, payload) * par[b, P_CREDIT]
    if proto == PROTO_WINDOW:
        S.fc[b, r, src, F_CREDITS] += payload
        return par[b, P_CREDIT]
    return 0
