"""The pair table's lookup: where the per-pair state (fc, ux_head, ux_tail) of ranks (x, y)
lives. Per-pair state only for the pairs that exchange packets, so that it
grows with the traffic instead of ranks**2 (a 16,384-rank barrier talks to about 30 peers per
rank, not 16,384).

Row x of the table (state.py: pair_ptr, pair_peer, pair_real; built by extoll_vec/engine/
pairs.py) holds x's communicating peers in ascending order, then spare entries. A dense row
(every rank, self included, no spares) is found by arithmetic, pair_ptr[x] + y; any other row
by binary search, then among its spares. A pair that is in neither raises ERR_PAIR and gets the
sink entry (the table's last, which no pair uses), so a missing pair is an error, never a write
into another pair's state.

Idle senders (the dynamic protocol, kernels/extoll/dynamic.py): its receiver keeps every other
rank in its activity lists, and Eq. 6 steals from the last of the low list, often a sender that
never writes to it. Such a sender's state is the protocol's initial one until it is stolen
from, so it needs no entry until then: the untouched idle senders of x are the ids below the
cursor pair_idle[x] that are not communicating peers (and not x), in the low list in id order
after the communicating peers of lower id; take_idle gives the highest of them a spare entry
when it is stolen from. A row out of spares raises ERR_SPARE: the engine runs the batch again
with dense tables (engine/batch.py), with the same result.

The table lives in State, not in the read-only Topo, because it belongs to a member's program,
and members of one batch run different programs (engine.shape_key does not include the
workload's pattern).
"""
from extoll_vec.dtypes import ERR_PAIR, ERR_SPARE
from extoll_vec.kernels.jit import inner, outlined


@inner
def _search(ptr, real, peer, b, x, y):
    """Entry of y among x's communicating peers, or -1."""
    lo = ptr[b, x]
    end = lo + real[b, x]
    hi = end
    while lo < hi:                         # the first entry >= y
        mid = (lo + hi) >> 1
        if peer[b, mid] < y:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and peer[b, lo] == y:
        return lo
    return -1


@inner
def pair(S, b, x, y):
    """Index of pair (x, y) in S.fc / S.ux_head / S.ux_tail of member b."""
    if S.pair_dense[b] != 0:
        return x * S.rk_pc.shape[1] + y    # every row dense
    return _lookup(S.pair_ptr, S.pair_real, S.pair_peer, S.status, S.err_info,
                   S.rk_pc.shape[1], b, x, y)


@outlined
def _lookup(ptr, real, peer, status, err_info, n_ranks, b, x, y):
    """pair() in a table with rows that are not dense. A function of its own, given only the
    table: the protocols look pairs up at hundreds of places, and a copy of the search at each
    of them was about two thirds of the rank's turn's code (lab/compile_time.md)."""
    lo = ptr[b, x]
    hi = ptr[b, x + 1]
    if hi - lo == n_ranks and real[b, x] == hi - lo:
        return lo + y                      # dense row: every rank, in order
    i = _search(ptr, real, peer, b, x, y)
    if i >= 0:
        return i
    for k in range(lo + real[b, x], hi):   # the idle senders given an entry
        if peer[b, k] == y:
            return k
    status[b] |= ERR_PAIR
    err_info[b, 0] = x
    err_info[b, 1] = y
    return peer.shape[1] - 1


@inner
def row(S, b, x):
    """(first, end) entries of row x's communicating peers: S.pair_peer[b, first:end]."""
    return S.pair_ptr[b, x], S.pair_ptr[b, x] + S.pair_real[b, x]


@inner
def next_idle(S, b, x, below):
    """The highest idle sender of x (not x, not a communicating peer) below id `below`, or -1."""
    y = below - 1
    while y >= 0 and (y == x or _search(S.pair_ptr, S.pair_real, S.pair_peer, b, x, y) >= 0):
        y -= 1
    return y


@inner
def take_idle(S, b, x):
    """Give x's highest untouched idle sender (the cursor) a spare entry, move the cursor
    down; returns the entry (its fields are the caller's to initialise), or the sink with
    ERR_SPARE when the row has no spare left."""
    y = S.pair_idle[b, x]
    for k in range(S.pair_ptr[b, x] + S.pair_real[b, x], S.pair_ptr[b, x + 1]):
        if S.pair_peer[b, k] < 0:
            S.pair_peer[b, k] = y
            S.pair_idle[b, x] = next_idle(S, b, x, y)
            return k
    S.status[b] |= ERR_SPARE
    S.err_info[b, 0] = x
    S.err_info[b, 1] = y
    return S.pair_peer.shape[1] - 1
