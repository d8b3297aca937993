"""The pair table's lookup: where the per-pair state (fc, ux_head, ux_tail) of ranks (x, y)
lives. Issue 23, item 3: per-pair state only for the pairs that exchange packets, so that it
grows with the traffic instead of ranks**2 (a 16,384-rank barrier talks to about 30 peers per
rank, not 16,384).

Row x of the table (state.py: pair_ptr, pair_peer; built by extoll_vec/engine/pairs.py) holds
x's peers in ascending order. A dense row (it holds every rank, self included) is found by
arithmetic, pair_ptr[x] + y; any other row by binary search. A pair that is not in the table
raises ERR_PAIR and gets the sink entry (the table's last, which no real pair uses), so a
missing pair is an error, never a write into another pair's state.

The table lives in State, not in the read-only Topo, because it belongs to a member's program,
and members of one batch run different programs (engine.shape_key does not include the
workload's pattern).
"""
from extoll_vec.dtypes import ERR_PAIR
from extoll_vec.kernels.jit import inner


@inner
def pair(S, b, x, y):
    """Index of pair (x, y) in S.fc / S.ux_head / S.ux_tail of member b."""
    lo = S.pair_ptr[b, x]
    hi = S.pair_ptr[b, x + 1]
    if hi - lo == S.rk_pc.shape[1]:
        return lo + y                      # dense row: every rank, in order
    while lo < hi:                         # the first entry >= y
        mid = (lo + hi) >> 1
        if S.pair_peer[b, mid] < y:
            lo = mid + 1
        else:
            hi = mid
    if lo < S.pair_ptr[b, x + 1] and S.pair_peer[b, lo] == y:
        return lo
    S.status[b] |= ERR_PAIR
    S.err_info[b, 0] = x
    S.err_info[b, 1] = y
    return S.pair_peer.shape[1] - 1


@inner
def row(S, b, x):
    """(first, end) entries of row x: its peers are S.pair_peer[b, first:end]."""
    return S.pair_ptr[b, x], S.pair_ptr[b, x + 1]
