"""EXTOLL dynamic credit-based end-to-end flow control (paper section 6).

The static machinery (kernels/extoll/static.py) plus, at every receiver x and for every sender y:
the available slots counter (x), a FIFO of credit_slots + 1 thresholds, the intended credit
quota, the retrieved packets, piggybacked credits and current credits counters, the blocked
flag, and four activity lists (high, medium, low, null). Senders own `credit slots` credits
at start (the static slots); the dynamic region feeds the available slots counter.

Retrieving a credit-consuming packet (Figure 11): slot management (6.5.1: the slot goes back to
the available slots counter, the sender's current credits drop by one, its retrieved count
rises), then activity control (6.5.2, Figures 12-13), then control-packet management (6.5.4).

Where the paper is ambiguous or, taken literally, unsafe, and what is done here
--------------------------------------------------------------------------------
1. The FIFO entry pushed at a threshold is the number of credits actually returned, not the
   Eq. 1 value when the available slots counter is short (6.5.2 sends "the value of the
   available slots counter" then). With entries equal to returned credits this identity holds:
   credits the sender can spend (owned + in flight + unretrieved) + retrieved-not-returned +
   credits in flight back to it = sum of the FIFO - 1 (true at start: c = (c + 1) - 1). It
   makes c + 1 outstanding credit packets impossible (the credit region never overflows, 6.5.2's
   purpose of the FIFO) and a sender without credits always lets the receiver reach its
   threshold (no deadlock) as long as entries are >= 1. Pushing a larger Eq. 1 value than was
   returned would let the receiver wait for packets the sender has no credits for.
2. A threshold is reached when the retrieved count reaches the current threshold; the count is
   decreased by that threshold (the paper "resets" it: the same when it matches exactly, as it
   always does outside the cases below) and further thresholds are checked at once.
3. Monitoring point (6.4): every credit_slots + 1 thresholds reached by a sender (regular or
   piggyback way), when it has spent a FIFO's worth of credits.
4. Blocked workflow (6.5.2): while a compulsory request to y is unanswered, every packet
   retrieved from y is checked (not only at thresholds): y gets one credit back when its
   current credits are below the static slots, else none; the FIFO is left alone. Checking
   only at thresholds can deadlock: a victim that spent its credits before the request arrived
   needs a credit to answer, and the receiver would wait for a threshold it cannot reach.
   When the response arrives the FIFO is rebuilt for the credits y now has, so that identity 1
   holds again: y is topped up to the static slots if it holds fewer (from the available
   slots), the FIFO becomes credit_slots ones plus one entry covering the rest, and the
   thresholds are checked at once (packets retrieved while blocked may already reach them, and
   y may have no credit left to send the packet that would trigger the check).
5. Stealing (Eq. 6, Figure 13) happens only when the monitored sender was already in the high
   (or null) list, after shifting the lists when the low list is empty; the victim is the last
   of the low list and keeps at least the static slots. A victim left with the static slots
   goes to the null list; if its current credits exceed its intended quota it gets a
   compulsory request and is blocked; otherwise it goes to the front of the medium list.
6. Piggybacking (6.6): at the last packet of a message from x to y with room, if the retrieved
   count plus the piggybacked credits reach the current threshold, the threshold is reached the
   piggyback way: with the new threshold Tn (Eq. 1 on the intended quota) the credits owed are
   g = Tn - (threshold - retrieved) (the part of the old threshold covered by earlier
   piggybacked credits is not returned twice). g >= 0: adjustment by deficit, g credits ride on
   the packet and the FIFO gets the credits this chunk really returned; g < 0: adjustment by
   excess, nothing rides, the FIFO gets Tn and the current threshold grows by -g. This is the
   paper's rule when the counts match the threshold exactly, and keeps identity 1 when they
   overshoot it ("this should later be taken into consideration", 6.6.1). Otherwise the
   retrieved count rides on the packet and joins the piggybacked credits counter. Nothing is
   piggybacked to a blocked sender, nor when no slot is available, nor when the retrieved count
   alone reaches the threshold (that is the regular way's, at the next retrieval).
7. Compulsory requests and responses consume a credit (6.1) and are withheld (flag) while the
   writer owns none; a credit packet (or piggybacked credits) releases them, request first.
   The response carries max(credits - static slots, 0) and costs one more credit (6.5.4).
8. The initial intended quota is the static partition of the data region (the static credit
   quota); senders are all other processes; a process' own share is never used.
9. CPU cost (host.credit_ns per credit operation; the paper gives none): one operation per
   retrieved packet, as in the static protocol (count it, compare with the threshold), one more
   per threshold reached, per list move and per control packet handled, two per steal. Writing
   and retrieving control packets cost their PIO and retrieval like any VELO packet.
"""
from collections import namedtuple

from extoll_vec.dtypes import CT_CREDIT, CT_PIGGYBACK, CT_REQUEST, CT_RESPONSE, PIGGYBACK_MAX
from extoll_vec.kernels.extoll import static as fc_static
from extoll_vec.kernels.fc_fields import (F_A_GIVEN, F_A_RESP_GOT, F_A_RESP_SENT,
                                          F_A_SENT, F_BLOCKED, F_CROSS, F_CURRENT, F_FHEAD,
                                          F_FIFO, F_INTENDED, F_LIST, F_NEXT, F_OWNED, F_PIGGY,
                                          F_PREV, F_REQ_FLAG, F_RESP_FLAG, F_RETRIEVED,
                                          NULL_LIST, PAIR_FIELDS, R_AVAIL, R_BASE, R_HEAD,
                                          R_TAIL, promise_credits, queue_ctrl)
from extoll_vec.kernels.jit import inner, outlined
from extoll_vec.kernels.pairs import next_idle, pair, row, take_idle
from extoll_vec.protocols.extoll.params import P_CREDIT_SLOTS, P_DYN_REGION, P_QUOTA


# ---- the rare paths' arrays -------------------------------------------------------------------
# A monitoring point (once every credit_slots + 1 thresholds of a sender), with its list moves
# and steals, and a compulsory request or response are outlined (kernels/jit.py): inlined, they
# were copied into every hook's call site of the event loop, for code that seldom runs. An
# outlined kernel takes arrays, not the State: these, in a named tuple the helpers below read
# as they read the State.
_Lists = namedtuple("_Lists", ("fc", "fcr", "rk_pc", "pair_dense", "pair_ptr", "pair_real",
                               "pair_peer", "pair_idle", "status", "err_info", "cq",
                               "cq_head", "cq_cnt"))


@inner
def _lists(S):
    return _Lists(S.fc, S.fcr, S.rk_pc, S.pair_dense, S.pair_ptr, S.pair_real, S.pair_peer,
                  S.pair_idle, S.status, S.err_info, S.cq, S.cq_head, S.cq_cnt)


# ---- activity lists (doubly linked over sender ids; lists 0-2 rotate, 3 is null) -----------
# A pair's entry never moves once it exists (kernels/pairs.py: an idle sender gets a spare
# entry), so the hook looks pair (x, y) up once and passes its entry q down: every lookup is a
# branch and, in a table that is not dense, a call the compiler cannot merge with the next one.
# Only the list neighbours and the steal's victim are looked up here.
@inner
def _unlink(S, b, x, q):
    L = S.fc[b, q, F_LIST]
    p = S.fc[b, q, F_PREV]
    n = S.fc[b, q, F_NEXT]
    if p >= 0:
        S.fc[b, pair(S, b, x, p), F_NEXT] = n
    else:
        S.fcr[b, x, R_HEAD + L] = n
    if n >= 0:
        S.fc[b, pair(S, b, x, n), F_PREV] = p
    else:
        S.fcr[b, x, R_TAIL + L] = p


@inner
def _push_front(S, b, x, y, q, L):
    h = S.fcr[b, x, R_HEAD + L]
    S.fc[b, q, F_LIST] = L
    S.fc[b, q, F_PREV] = -1
    S.fc[b, q, F_NEXT] = h
    if h >= 0:
        S.fc[b, pair(S, b, x, h), F_PREV] = y
    else:
        S.fcr[b, x, R_TAIL + L] = y
    S.fcr[b, x, R_HEAD + L] = y


@inner
def _move_front(S, b, x, y, q, L):
    _unlink(S, b, x, q)
    _push_front(S, b, x, y, q, L)


@inner
def _level(S, b, x, k):
    """Physical id of level k (0 high, 1 medium, 2 low)."""
    return (S.fcr[b, x, R_BASE] + k) % 3


@inner
def _fresh(S, par, b, i):
    """Entry i as a pair starts: the sender owns the static slots, the receiver intends the
    static quota for it, its FIFO holds credit_slots + 1 ones, it is in no list."""
    c = par[b, P_CREDIT_SLOTS]
    for k in range(PAIR_FIELDS, S.fc.shape[2]):
        S.fc[b, i, k] = 0
    S.fc[b, i, F_LIST] = -1
    S.fc[b, i, F_PREV] = -1
    S.fc[b, i, F_NEXT] = -1
    S.fc[b, i, F_OWNED] = c
    S.fc[b, i, F_INTENDED] = par[b, P_QUOTA]
    S.fc[b, i, F_CURRENT] = c
    for j in range(c + 1):
        S.fc[b, i, F_FIFO + j] = 1


@inner
def init(S, par, b):
    NR = S.rk_pc.shape[1]
    for x in range(NR):
        for k in range(S.fcr.shape[2]):
            S.fcr[b, x, k] = 0
        S.fcr[b, x, R_AVAIL] = par[b, P_DYN_REGION]
        for L in range(4):
            S.fcr[b, x, R_HEAD + L] = -1
            S.fcr[b, x, R_TAIL + L] = -1
        first, end = row(S, b, x)
        for i in range(end - 1, first - 1, -1):   # pushed in front: the low list in id order
            y = S.pair_peer[b, i]
            if x == y:
                for k in range(PAIR_FIELDS, S.fc.shape[2]):
                    S.fc[b, i, k] = 0
                S.fc[b, i, F_LIST] = -1
                S.fc[b, i, F_PREV] = -1
                S.fc[b, i, F_NEXT] = -1
                continue
            _fresh(S, par, b, i)
            _push_front(S, b, x, y, i, 2)
        # the other senders are idle ones, in the low list after (kernels/pairs.py)
        S.pair_idle[b, x] = next_idle(S, b, x, NR)


# ---- credits going back to a sender ----------------------------------------------------------
@inner
def _grant(S, b, x, q, k):
    """k credits from x's available slots to the sender of x's pair entry q."""
    S.fcr[b, x, R_AVAIL] -= k
    S.fc[b, q, F_CURRENT] += k


@inner
def _new_threshold(S, par, b, q):
    """Eq. 1 on the intended credit quota of pair entry q."""
    return S.fc[b, q, F_INTENDED] // (par[b, P_CREDIT_SLOTS] + 1) + 1


@inner
def _steal(S, par, b, x, mon, qm):
    """Figure 13: the monitored (high-activity) sender takes credits from the last sender of
    the low list (Eq. 6), which keeps its static slots. Returns credit operations."""
    low = _level(S, b, x, 2)
    vic = S.fcr[b, x, R_TAIL + low]
    fresh = S.pair_idle[b, x] > vic   # an untouched idle sender is last (kernels/pairs.py)
    if fresh:
        qv = take_idle(S, b, x)
        if S.pair_peer[b, qv] < 0:
            return 0                      # no spare entry: ERR_SPARE, the batch reruns
        _fresh(S, par, b, qv)
        vic = S.pair_peer[b, qv]
    elif vic < 0:
        return 0
    else:
        qv = pair(S, b, x, vic)
    c = par[b, P_CREDIT_SLOTS]
    i_mon = S.fc[b, qm, F_INTENDED]
    i_vic = S.fc[b, qv, F_INTENDED]
    cred = max(c + 1, abs(i_mon - i_vic) // 2)
    cred = min(cred, i_vic - c)
    if cred > 0:
        S.fc[b, qm, F_INTENDED] = i_mon + cred
        S.fc[b, qv, F_INTENDED] = i_vic - cred
    if S.fc[b, qv, F_INTENDED] <= c:
        if S.fc[b, qv, F_CURRENT] > S.fc[b, qv, F_INTENDED]:
            S.fc[b, qv, F_BLOCKED] = 1
            queue_ctrl(S, b, x, vic, CT_REQUEST)
        L = NULL_LIST
    else:
        L = _level(S, b, x, 1)
    if fresh:
        _push_front(S, b, x, vic, qv, L)  # it was in the low list, but in no linked one
    else:
        _move_front(S, b, x, vic, qv, L)
    return 2


@inner
def _monitor(S, par, b, x, y, q):
    """A threshold of y was reached; every credit_slots + 1 of them is a monitoring point
    (Figure 12). Returns credit operations."""
    c = par[b, P_CREDIT_SLOTS]
    S.fc[b, q, F_CROSS] += 1
    if S.fc[b, q, F_CROSS] < c + 1:
        return 0
    S.fc[b, q, F_CROSS] = 0
    return _monitoring_point(_lists(S), par, b, x, y, q)


@outlined
def _monitoring_point(S, par, b, x, y, q):
    """Figure 12 at a monitoring point of y: up a list, or a steal. S: the arrays of _Lists."""
    L = S.fc[b, q, F_LIST]
    if L == _level(S, b, x, 2):
        _move_front(S, b, x, y, q, _level(S, b, x, 1))
        return 1
    if L == _level(S, b, x, 1):
        _move_front(S, b, x, y, q, _level(S, b, x, 0))
        return 1
    # already high, or null (treated as high: it must recover credits fast)
    if S.fcr[b, x, R_HEAD + _level(S, b, x, 2)] < 0 and S.pair_idle[b, x] < 0:
        S.fcr[b, x, R_BASE] = (S.fcr[b, x, R_BASE] + 2) % 3   # high->medium->low, new high
    _move_front(S, b, x, y, q, _level(S, b, x, 0))
    return 1 + _steal(S, par, b, x, y, q)


@inner
def _pop_push(S, par, b, q, entry):
    """Drop pair entry q's current threshold, append `entry`; returns the dropped threshold."""
    n = par[b, P_CREDIT_SLOTS] + 1
    i = S.fc[b, q, F_FHEAD]
    h = S.fc[b, q, F_FIFO + i]
    S.fc[b, q, F_FIFO + i] = entry       # the popped slot is the ring's new tail
    S.fc[b, q, F_FHEAD] = (i + 1) % n
    return h


@inner
def _head(S, b, q):
    return S.fc[b, q, F_FIFO + S.fc[b, q, F_FHEAD]]


@inner
def _regular_thresholds(S, par, b, x, y, q):
    """Activity control after a retrieval (6.5.2): the unblocked workflow at each threshold
    reached the regular way. Returns credit operations."""
    ops = 1
    while S.fc[b, q, F_RETRIEVED] >= _head(S, b, q) and S.fcr[b, x, R_AVAIL] > 0:
        ops += 1 + _monitor(S, par, b, x, y, q)
        g = min(_new_threshold(S, par, b, q), S.fcr[b, x, R_AVAIL])
        h = _pop_push(S, par, b, q, g)
        S.fc[b, q, F_RETRIEVED] -= h
        S.fc[b, q, F_PIGGY] = 0
        _grant(S, b, x, q, g)
        promise_credits(S, b, x, y, q, g)
    return ops


@inner
def _slot_management(S, b, x, q):
    """6.5.1: a credit-consuming packet from y was retrieved: its slot is free again."""
    fc_static.take_out(S, b, x, q)
    S.fc[b, q, F_CURRENT] -= 1
    S.fcr[b, x, R_AVAIL] += 1


@inner
def _activity(S, par, b, x, y, q):
    if S.fc[b, q, F_BLOCKED] != 0:
        if S.fc[b, q, F_CURRENT] < par[b, P_CREDIT_SLOTS]:
            S.fc[b, q, F_RETRIEVED] -= 1
            _grant(S, b, x, q, 1)
            promise_credits(S, b, x, y, q, 1)
            return 2
        return 1
    return _regular_thresholds(S, par, b, x, y, q)


@inner
def on_retrieved(S, par, b, x, y, q):
    """x retrieved a data packet from y. Costs one credit operation, as in the static protocol
    (count the packet, compare with the threshold); thresholds and steals cost more."""
    _slot_management(S, b, x, q)
    return _activity(S, par, b, x, y, q)


@inner
def _unblock(S, par, b, x, y, q, k):
    """The compulsory response of y returned k credits: rebuild y's FIFO (docstring item 4).
    Returns credit operations."""
    c = par[b, P_CREDIT_SLOTS]
    S.fc[b, q, F_CURRENT] -= k
    S.fcr[b, x, R_AVAIL] += k
    S.fc[b, q, F_A_RESP_GOT] += k
    S.fc[b, q, F_BLOCKED] = 0
    held = S.fc[b, q, F_CURRENT] + S.fc[b, q, F_RETRIEVED]
    if held < c:
        t = min(c - held, S.fcr[b, x, R_AVAIL])
        if t > 0:
            _grant(S, b, x, q, t)
            promise_credits(S, b, x, y, q, t)
            held += t
    for i in range(c + 1):
        S.fc[b, q, F_FIFO + i] = 1
    S.fc[b, q, F_FIFO + c] = max(1, held + 1 - c)
    S.fc[b, q, F_FHEAD] = 0
    S.fc[b, q, F_PIGGY] = 0
    # packets retrieved while y was blocked may already reach the new current threshold; y may
    # have no credit left to send another packet that would trigger the check
    return _regular_thresholds(S, par, b, x, y, q)


@inner
def _flush_flags(S, b, x, y, q):
    """Credits arrived from y: release withheld compulsory packets, the request first."""
    spare = S.fc[b, q, F_OWNED]
    if S.fc[b, q, F_REQ_FLAG] != 0 and spare > 0:
        S.fc[b, q, F_REQ_FLAG] = 0
        queue_ctrl(S, b, x, y, CT_REQUEST)
        spare -= 1
    if S.fc[b, q, F_RESP_FLAG] != 0 and spare > 0:
        S.fc[b, q, F_RESP_FLAG] = 0
        queue_ctrl(S, b, x, y, CT_RESPONSE)


@inner
def on_control(S, par, b, x, y, q, ctype, k):
    """x retrieved a control packet from y (or piggybacked credits): 6.5.4."""
    if ctype == CT_CREDIT or ctype == CT_PIGGYBACK:
        fc_static.got_credits(S, b, q, ctype, k)
        _flush_flags(S, b, x, y, q)
        return 1
    return _compulsory(_lists(S), par, b, x, y, q, ctype, k)


@outlined
def _compulsory(S, par, b, x, y, q, ctype, k):
    """x retrieved a compulsory request or response from y. S: the arrays of _Lists."""
    # requests and responses used a credit: slot management and activity control first
    _slot_management(S, b, x, q)
    ops = _activity(S, par, b, x, y, q)
    if ctype == CT_REQUEST:
        queue_ctrl(S, b, x, y, CT_RESPONSE)
        return ops + 1
    return ops + _unblock(S, par, b, x, y, q, k)


@inner
def payload(S, par, b, q, ctype):
    """What the control packet x writes to y now carries, or -1: withheld for lack of a
    credit (its flag is set; a credit from y queues it again)."""
    if ctype == CT_CREDIT:
        return fc_static.credit_payload(S, b, q)
    if S.fc[b, q, F_OWNED] <= 0:
        S.fc[b, q, F_REQ_FLAG if ctype == CT_REQUEST else F_RESP_FLAG] = 1
        return -1
    S.fc[b, q, F_OWNED] -= 1
    S.fc[b, q, F_A_SENT] += 1
    if ctype == CT_REQUEST:
        return 0
    k = max(S.fc[b, q, F_OWNED] + 1 - par[b, P_CREDIT_SLOTS], 0)
    k = min(k, S.fc[b, q, F_OWNED])
    S.fc[b, q, F_OWNED] -= k
    S.fc[b, q, F_A_RESP_SENT] += k
    return k


@inner
def piggyback(S, par, b, x, y, q):
    """Credits x piggybacks on the last packet of a message to y (docstring item 6)."""
    avail = S.fcr[b, x, R_AVAIL]
    r = S.fc[b, q, F_RETRIEVED]
    h = _head(S, b, q)
    if S.fc[b, q, F_BLOCKED] != 0 or avail <= 0 or r >= h:
        return 0
    p = S.fc[b, q, F_PIGGY]
    if r + p >= h:                                   # threshold reached the piggyback way
        _monitor(S, par, b, x, y, q)
        tn = _new_threshold(S, par, b, q)
        g = tn - (h - r)
        if g >= 0:                                   # adjustment by deficit
            give = min(g, avail, PIGGYBACK_MAX)
            _pop_push(S, par, b, q, h - r + give)
        else:                                        # adjustment by excess
            give = 0
            _pop_push(S, par, b, q, tn)
            i = S.fc[b, q, F_FHEAD]
            S.fc[b, q, F_FIFO + i] -= g
        S.fc[b, q, F_RETRIEVED] = 0
        S.fc[b, q, F_PIGGY] = 0
    else:
        give = min(r, avail, PIGGYBACK_MAX)
        S.fc[b, q, F_RETRIEVED] -= give
        S.fc[b, q, F_PIGGY] += give
    if give > 0:
        _grant(S, b, x, q, give)
        S.fc[b, q, F_A_GIVEN] += give
    return give
