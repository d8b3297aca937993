"""Field layout of the credit-based protocols, and the control queue they write into.

fc int32 [B, NR, NR, K]: fc[b, x, y, F] is what rank x keeps about peer y. A rank is sender
and receiver at once (EXTOLL section 5.2), so one row holds both roles: "sender side" fields
are x's view of y as a destination, "receiver side" fields x's view of y as a source.
fcr int32 [B, NR, KR]: per-rank (receiver) fields.

Audit fields count totals that are never reset; the engine checks with them that credits are
conserved (engine.check_invariants, protocols.audit): for static, for every pair (x, y)
    owned(x->y) + sent(x->y) - retrieved(y<-x) + retrieved-not-returned(y<-x) + queued(y->x)
        + given(y->x) - got(x<-y) == credit quota;
for dynamic the same sum (plus credits in compulsory responses still in flight) equals the
receiver's current credits counter, and the current credits of all senders plus the available
slots counter equal the data region less the receiver's own static slots.
"""
from extoll_vec.dtypes import CT_CREDIT, ERR_QUEUE
from extoll_vec.kernels.jit import inner

# ---- common to static and dynamic (the window protocol uses the first three) --------------
F_OWNED = 0       # sender side: credits x owns towards y (the paper's credit counter)
F_RETRIEVED = 1   # receiver side: credit-consuming packets from y retrieved, not yet returned
F_QUEUED = 2      # receiver side: credits promised to y in a credit packet still in x's queue
F_CRPK = 3        # credit packets from y in x's mailbox now (credit slots in use, <= c)
F_INMB = 4        # credit-consuming packets from y in x's mailbox now
F_A_SENT = 5      # audit, sender side: credit-consuming packets x wrote to y
F_A_RETR = 6      # audit, receiver side: credit-consuming packets from y that x retrieved
F_A_GIVEN = 7     # audit, receiver side: credits x returned to y (credit packets, piggyback)
F_A_GOT = 8       # audit, sender side: credits x received from y
CREDIT_FIELDS = 9
# ---- dynamic only (section 6.2) ------------------------------------------------------------
F_INTENDED = 9    # receiver side: intended credit quota of y
F_CURRENT = 10    # receiver side: current credits counter (owned by y + in flight to x)
F_PIGGY = 11      # receiver side: piggybacked credits counter
F_BLOCKED = 12    # receiver side: a compulsory request to y awaits its response
F_LIST = 13       # receiver side: activity list of y (physical list id, -1: not a sender)
F_PREV = 14       # receiver side: neighbours of y in that list (-1: none)
F_NEXT = 15
F_CROSS = 16      # receiver side: thresholds reached since y's last monitoring point
F_FHEAD = 17      # receiver side: index of the current threshold in the FIFO ring
F_REQ_FLAG = 18   # sender side: a compulsory request to y waits for a credit
F_RESP_FLAG = 19  # sender side: a compulsory response to y waits for a credit
F_A_RESP_SENT = 20  # audit, sender side: credits x gave back to y in compulsory responses
F_A_RESP_GOT = 21   # audit, receiver side: credits x took back from y's responses
F_FIFO = 22       # receiver side: FIFO of credit_slots + 1 thresholds (a ring from F_FHEAD)
DYNAMIC_FIELDS = F_FIFO   # + credit_slots + 1
WINDOW_FIELDS = 3

# ---- per rank (fcr) ------------------------------------------------------------------------
R_MBDATA = 0      # credit-consuming packets in the mailbox (data region in use)
R_AVAIL = 1       # dynamic: available slots counter
R_BASE = 2        # dynamic: physical id of the high activity list (lists 0-2 rotate)
R_HEAD = 3        # dynamic: heads of the physical lists 0, 1, 2 and 3 (null list)
R_TAIL = 7        # dynamic: tails of the same lists
RANK_FIELDS = 11
NULL_LIST = 3

# ---- control queue entries: peer + type * CQ_TYPE ---------------------------------------
CQ_TYPE = 1 << 22


def fields_needed(proto_name: str, credit_slots: int) -> int:
    """K of the fc table for one protocol."""
    if proto_name == "window":
        return WINDOW_FIELDS
    if proto_name == "static":
        return CREDIT_FIELDS
    if proto_name == "dynamic":
        return DYNAMIC_FIELDS + credit_slots + 1
    return 0


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
def promise_credits(S, b, x, y, k):
    """Receiver x returns k credits to y: they ride on one credit packet (merged with any
    credit packet to y still waiting in x's queue)."""
    if S.fc[b, x, y, F_QUEUED] == 0:
        queue_ctrl(S, b, x, y, CT_CREDIT)
    S.fc[b, x, y, F_QUEUED] += k
