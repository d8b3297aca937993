"""The per-pair flow-control table's kernel helpers: the control queue the protocols write into
and the credits a receiver promises.

The table's field layout (F_*, R_*, the field counts, CQ_TYPE) is defined in
extoll_vec/protocols/fc_layout.py, without Numba, and re-exported here: kernels import every
name from this module.
"""
from extoll_vec.dtypes import CT_CREDIT, ERR_QUEUE
from extoll_vec.kernels.jit import inner
from extoll_vec.protocols.fc_layout import *  # noqa: F401,F403 (the layout, for the kernels)
from extoll_vec.protocols.fc_layout import CQ_TYPE, F_QUEUED


@inner
def queue_ctrl(S, b, r, dst, ctype):
    """Queue a control packet of type ctype from r to dst; it is written before any data."""
    CQ = S.cq.shape[2]
    if S.cq_cnt[b, r] >= CQ:
        S.status[b] |= ERR_QUEUE
        return
    S.cq[b, r, (S.cq_head[b, r] + S.cq_cnt[b, r]) % CQ] = dst + ctype * CQ_TYPE
    S.cq_cnt[b, r] += 1


@inner
def promise_credits(S, b, x, y, q, k):
    """Receiver x returns k credits to y (q: the pair's entry): they ride on one credit packet
    (merged with any credit packet to y still waiting in x's queue)."""
    if S.fc[b, q, F_QUEUED] == 0:
        queue_ctrl(S, b, x, y, CT_CREDIT)
    S.fc[b, q, F_QUEUED] += k
