"""Field layout of the flow-control state: the per-pair table, the per-rank fields and the
control queue entries. Integers only, without Numba, so that the protocol catalogue sizes the
table and the audit reads it without loading the kernels; the kernels import these names
through kernels/fc_fields.py (and this file is part of their cache key, kernels/__init__.py).

fc int32 [B, NR, NR, K]: fc[b, x, y, F] is what rank x keeps about peer y. A rank is sender
and receiver at once (EXTOLL section 5.2), so one row holds both roles: "sender side" fields
are x's view of y as a destination, "receiver side" fields x's view of y as a source.
fcr int32 [B, NR, KR]: per-rank (receiver) fields.

The first two fields are the NIC's in-order check (every protocol, `none` included): a
packet's per-pair sequence number is written next to the sender's credit counter and checked
next to the receiver's mailbox share, so a write or an arrival under flow control touches one
per-pair record, not two arrays.

Audit fields count totals that are never reset; the engine checks with them that credits are
conserved (engine.check_invariants, protocols.audit): for static, for every pair (x, y)
    owned(x->y) + sent(x->y) - retrieved(y<-x) + retrieved-not-returned(y<-x) + queued(y->x)
        + given(y->x) - got(x<-y) == credit quota;
for dynamic the same sum (plus credits in compulsory responses still in flight) equals the
receiver's current credits counter, and the current credits of all senders plus the available
slots counter equal the data region less the receiver's own static slots.
"""

# ---- every protocol: the NIC's in-order check (kernels/host.py writes, kernels/nic.py checks)
F_SEQ_TX = 0      # sender side: VELO packets x wrote to y (the next one's sequence number)
F_SEQ_RX = 1      # receiver side: VELO packets from y that reached x's mailbox
PAIR_FIELDS = 2
# ---- common to static and dynamic (the window protocol uses the first three of them) ------
F_OWNED = 2       # sender side: credits x owns towards y (the paper's credit counter)
F_RETRIEVED = 3   # receiver side: credit-consuming packets from y retrieved, not yet returned
F_QUEUED = 4      # receiver side: credits promised to y in a credit packet still in x's queue
F_CRPK = 5        # credit packets from y in x's mailbox now (credit slots in use, <= c)
F_INMB = 6        # credit-consuming packets from y in x's mailbox now
F_A_SENT = 7      # audit, sender side: credit-consuming packets x wrote to y
F_A_RETR = 8      # audit, receiver side: credit-consuming packets from y that x retrieved
F_A_GIVEN = 9     # audit, receiver side: credits x returned to y (credit packets, piggyback)
F_A_GOT = 10      # audit, sender side: credits x received from y
CREDIT_FIELDS = 11
# ---- dynamic only (section 6.2) ------------------------------------------------------------
F_INTENDED = 11   # receiver side: intended credit quota of y
F_CURRENT = 12    # receiver side: current credits counter (owned by y + in flight to x)
F_PIGGY = 13      # receiver side: piggybacked credits counter
F_BLOCKED = 14    # receiver side: a compulsory request to y awaits its response
F_LIST = 15       # receiver side: activity list of y (physical list id, -1: not a sender)
F_PREV = 16       # receiver side: neighbours of y in that list (-1: none)
F_NEXT = 17
F_CROSS = 18      # receiver side: thresholds reached since y's last monitoring point
F_FHEAD = 19      # receiver side: index of the current threshold in the FIFO ring
F_REQ_FLAG = 20   # sender side: a compulsory request to y waits for a credit
F_RESP_FLAG = 21  # sender side: a compulsory response to y waits for a credit
F_A_RESP_SENT = 22  # audit, sender side: credits x gave back to y in compulsory responses
F_A_RESP_GOT = 23   # audit, receiver side: credits x took back from y's responses
F_FIFO = 24       # receiver side: FIFO of credit_slots + 1 thresholds (a ring from F_FHEAD)
DYNAMIC_FIELDS = F_FIFO   # + credit_slots + 1
WINDOW_FIELDS = F_QUEUED + 1

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
