"""The flow-control plug: the host kernel asks these hooks and never looks inside a protocol.

Hooks (proto = par[b, P_PROTO], selected per batch member):
- may_send(r, dst)            may rank r write one more data packet to dst now?
- on_sent(r, dst)             a data packet to dst was written; returns CPU cycles spent
- on_retrieved(r, src)        a data packet from src was taken from r's mailbox; returns
                              (cycles, queue) where queue asks for a control packet to src
- ctrl_payload(r, dst)        the payload of the control packet r now writes to dst
- on_control(r, src, payload) a control packet from src was taken from r's mailbox; cycles
State: fc int32 [B, R, R, K], a per-(rank, peer) table whose K fields each protocol documents.
Adding a protocol adds a branch here (and its own module); network, NIC and host kernels stay
as they are.

Protocols here:
- none / backpressure: always may send; no control packets; K = 0.
- window (the trivial plug-in of the tests): K = 3, fields [credits towards peer, data packets
  retrieved from peer and not yet returned, 1 if a control packet to peer is queued]. A sender
  owns `window` credits per receiver; the receiver returns them `threshold` at a time.
"""
from extoll_vec.kernels.jit import inner

from extoll_vec.dtypes import P_CREDIT, P_PROTO, P_THRESHOLD, P_WINDOW, PROTO_WINDOW

F_CREDITS = 0
F_RETRIEVED = 1
F_QUEUED = 2
WINDOW_FIELDS = 3


@inner
def fc_init(S, par, b):
    if par[b, P_PROTO] == PROTO_WINDOW:
        R = S.fc.shape[1]
        w = par[b, P_WINDOW]
        for r in range(R):
            for q in range(R):
                S.fc[b, r, q, F_CREDITS] = w
                S.fc[b, r, q, F_RETRIEVED] = 0
                S.fc[b, r, q, F_QUEUED] = 0


@inner
def may_send(S, par, b, r, dst):
    if par[b, P_PROTO] == PROTO_WINDOW:
        return S.fc[b, r, dst, F_CREDITS] > 0
    return True


@inner
def on_sent(S, par, b, r, dst):
    if par[b, P_PROTO] == PROTO_WINDOW:
        S.fc[b, r, dst, F_CREDITS] -= 1
        return par[b, P_CREDIT]
    return 0


@inner
def on_retrieved(S, par, b, r, src):
    if par[b, P_PROTO] == PROTO_WINDOW:
        S.fc[b, r, src, F_RETRIEVED] += 1
        queue = False
        if S.fc[b, r, src, F_RETRIEVED] >= par[b, P_THRESHOLD] and S.fc[b, r, src, F_QUEUED] == 0:
            S.fc[b, r, src, F_QUEUED] = 1
            queue = True
        return par[b, P_CREDIT], queue
    return 0, False


@inner
def ctrl_payload(S, par, b, r, dst):
    if par[b, P_PROTO] == PROTO_WINDOW:
        n = S.fc[b, r, dst, F_RETRIEVED]
        S.fc[b, r, dst, F_RETRIEVED] = 0
        S.fc[b, r, dst, F_QUEUED] = 0
        return n
    return 0


@inner
def on_control(S, par, b, r, src, payload):
    if par[b, P_PROTO] == PROTO_WINDOW:
        S.fc[b, r, src, F_CREDITS] += payload
        return par[b, P_CREDIT]
    return 0
