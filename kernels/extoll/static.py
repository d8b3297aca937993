"""EXTOLL static credit-based end-to-end flow control (paper section 5), and the checks of the
mailbox regions shared with the dynamic protocol.

Every sender owns `credit quota` credits towards every receiver (one credit = one data-region
slot of the receiver's mailbox). A data packet costs one credit. The receiver counts the data
packets it retrieves from each sender (retrieved packets counter: data packets only, 5.2) and
returns a credit packet carrying `threshold` credits (Eq. 1) each time the count reaches the
threshold; credit packets consume no credits: Eq. 1 guarantees that at most `credit slots` of
them are outstanding, so they always find room in the sender's credit region (checked below).
A send that finds no credits writes what it can and waits (the host kernel). Piggybacking
(5.4): the retrieved count rides on the last, partly filled VELO packet of a message to that
sender, when there is room, and the counter restarts.

Parameters (per member): P_QUOTA, P_RETURN_THRESHOLD, P_CREDIT_SLOTS, P_DATA_REGION (see
extoll_vec.protocols.extoll.static.layout). Fields: extoll_vec/protocols/fc_layout.py. q is the
entry of pair (x, y), looked up once by the hook (kernels/extoll/hooks.py): an entry never moves
(kernels/pairs.py), and every lookup is code the compiler must build again.
"""
from extoll_vec.dtypes import CT_CREDIT, CT_PIGGYBACK, ERR_INVARIANT, PIGGYBACK_MAX, PK_CTRL
from extoll_vec.kernels.fc_fields import (F_A_GIVEN, F_A_GOT, F_A_RETR, F_A_SENT, F_CRPK,
                                          F_INMB, F_OWNED, F_QUEUED, F_RETRIEVED, PAIR_FIELDS,
                                          R_MBDATA, promise_credits)
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.pairs import row
from extoll_vec.protocols.extoll.params import P_CREDIT_SLOTS, P_DATA_REGION, P_QUOTA, P_RETURN_THRESHOLD

# err_info[3] codes of a region check that failed (err_info = [receiver, sender, value, code])
BAD_CREDIT_REGION = 1   # more credit packets from one receiver than credit slots
BAD_SENDER_SHARE = 2    # more packets from one sender in the mailbox than it was granted
BAD_DATA_REGION = 3     # the data region holds more packets than its slots


@inner
def init(S, par, b):
    K = S.fc.shape[2]
    q = par[b, P_QUOTA]
    for x in range(S.rk_pc.shape[1]):
        for k in range(S.fcr.shape[2]):
            S.fcr[b, x, k] = 0
        first, end = row(S, b, x)
        for i in range(first, end):
            for k in range(PAIR_FIELDS, K):
                S.fc[b, i, k] = 0
            if S.pair_peer[b, i] != x:
                S.fc[b, i, F_OWNED] = q


@inner
def fail(S, b, x, y, value, code):
    S.status[b] |= ERR_INVARIANT
    S.err_info[b, 0] = x
    S.err_info[b, 1] = y
    S.err_info[b, 2] = value
    S.err_info[b, 3] = code


@inner
def on_arrival(S, par, b, x, y, q, kind, ctype, grant):
    """The NIC wrote a packet from y into x's mailbox: account for its region. `grant` is what
    y may hold there at most (static: the credit quota; dynamic: its current credits)."""
    if kind == PK_CTRL and ctype == CT_CREDIT:
        S.fc[b, q, F_CRPK] += 1
        if S.fc[b, q, F_CRPK] > par[b, P_CREDIT_SLOTS]:
            fail(S, b, x, y, S.fc[b, q, F_CRPK], BAD_CREDIT_REGION)
        return
    S.fc[b, q, F_INMB] += 1
    S.fcr[b, x, R_MBDATA] += 1
    if S.fc[b, q, F_INMB] > grant:
        fail(S, b, x, y, S.fc[b, q, F_INMB], BAD_SENDER_SHARE)
    if S.fcr[b, x, R_MBDATA] > par[b, P_DATA_REGION]:
        fail(S, b, x, y, S.fcr[b, x, R_MBDATA], BAD_DATA_REGION)


@inner
def on_sent(S, b, q):
    S.fc[b, q, F_OWNED] -= 1
    S.fc[b, q, F_A_SENT] += 1
    return 1


@inner
def take_out(S, b, x, q):
    """A credit-consuming packet from y left x's mailbox (the first half of retrieving it)."""
    S.fc[b, q, F_INMB] -= 1
    S.fcr[b, x, R_MBDATA] -= 1
    S.fc[b, q, F_A_RETR] += 1
    S.fc[b, q, F_RETRIEVED] += 1


@inner
def on_retrieved(S, par, b, x, y, q):
    """x retrieved a data packet from y: count it; at the threshold, return a credit packet."""
    take_out(S, b, x, q)
    t = par[b, P_RETURN_THRESHOLD]
    if S.fc[b, q, F_RETRIEVED] >= t:
        S.fc[b, q, F_RETRIEVED] -= t
        promise_credits(S, b, x, y, q, t)
        return 2
    return 1


@inner
def credit_payload(S, b, q):
    """The credit packet x writes to y now carries every credit promised so far."""
    k = S.fc[b, q, F_QUEUED]
    S.fc[b, q, F_QUEUED] = 0
    S.fc[b, q, F_A_GIVEN] += k
    return k


@inner
def piggyback(S, b, q):
    """Credits x piggybacks on the last packet of a message to y: its retrieved count."""
    k = min(S.fc[b, q, F_RETRIEVED], PIGGYBACK_MAX)
    if k > 0:
        S.fc[b, q, F_RETRIEVED] -= k
        S.fc[b, q, F_A_GIVEN] += k
    return k


@inner
def got_credits(S, b, q, ctype, k):
    """x takes k credits from y (a credit packet leaves the credit region; piggybacked credits
    use no slot of their own)."""
    if ctype == CT_CREDIT:
        S.fc[b, q, F_CRPK] -= 1
    S.fc[b, q, F_OWNED] += k
    S.fc[b, q, F_A_GOT] += k


@inner
def on_control(S, b, q, ctype, k):
    if ctype == CT_CREDIT or ctype == CT_PIGGYBACK:
        got_credits(S, b, q, ctype, k)
    return 1
