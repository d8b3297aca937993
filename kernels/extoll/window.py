"""The window protocol's hooks (registered in extoll_vec/protocols/extoll/__init__.py): a sender owns
`window` credits per receiver; the receiver returns what it retrieved in a control packet
every `threshold` packets. The trivial credit plug-in of the tests (tests/test_invariants.py).
Fields: the first three flow-control fields of protocols/fc_layout.py."""
from extoll_vec.dtypes import CT_CREDIT, P_CREDIT
from extoll_vec.kernels.fc_fields import F_OWNED, F_QUEUED, F_RETRIEVED, queue_ctrl
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.pairs import pair, row
from extoll_vec.protocols.extoll.params import P_WINDOW, P_WINDOW_THRESHOLD

F_CREDITS = F_OWNED   # credits the sender owns towards the receiver


@inner
def fc_init(S, T, par, b):
    w = par[b, P_WINDOW]
    for r in range(S.rk_pc.shape[1]):
        first, end = row(S, b, r)
        for i in range(first, end):
            S.fc[b, i, F_CREDITS] = w
            S.fc[b, i, F_RETRIEVED] = 0
            S.fc[b, i, F_QUEUED] = 0


@inner
def may_send(S, par, b, r, dst):
    return S.fc[b, pair(S, b, r, dst), F_CREDITS] > 0


@inner
def on_sent(S, par, b, r, dst, h, delayed):
    S.fc[b, pair(S, b, r, dst), F_CREDITS] -= 1
    return par[b, P_CREDIT]


@inner
def on_retrieved(S, par, b, r, src):
    i = pair(S, b, r, src)   # one lookup per function: an entry never moves (kernels/pairs.py)
    S.fc[b, i, F_RETRIEVED] += 1
    if S.fc[b, i, F_RETRIEVED] >= par[b, P_WINDOW_THRESHOLD] and S.fc[b, i, F_QUEUED] == 0:
        S.fc[b, i, F_QUEUED] = 1
        queue_ctrl(S, b, r, src, CT_CREDIT)
    return par[b, P_CREDIT]


@inner
def ctrl_payload(S, par, b, r, dst, ctype):
    i = pair(S, b, r, dst)
    n = S.fc[b, i, F_RETRIEVED]
    S.fc[b, i, F_RETRIEVED] = 0
    S.fc[b, i, F_QUEUED] = 0
    return n


@inner
def on_control(S, par, b, r, src, ctype, payload):
    S.fc[b, pair(S, b, r, src), F_CREDITS] += payload
    return par[b, P_CREDIT]


@inner
def snapshot_field(S, par, b):
    return F_CREDITS
