"""Event calendar of one batch member: a timing wheel for near events, a binary heap for far ones.

Why not one heap: almost every event in a network simulation lands a few cycles ahead (link
latency, router delay, packet length), so a wheel of W buckets gives O(1) insertion and
removal; only host timers (compute phases, long CPU costs) go further than W cycles and use
the heap. Events of one cycle are processed in insertion order (FIFO per bucket), which makes a
member's history a pure function of its inputs: the same in any batch, on any worker.

Shapes (E = event pool size, W = wheel size, a power of two): ev_t int64 [B, E];
ev_k, ev_a, ev_b, ev_c, ev_next int32 [B, E]; wh_head, wh_tail int32 [B, W];
heap int32 [B, E]; meta int64 [B, 4] = (free-list head, events in wheel, heap size, pool use).
"""
from extoll_vec.dtypes import ERR_POOL
from extoll_vec.kernels.jit import inner

M_FREE = 0
M_WHEEL = 1
M_HEAP = 2
M_USED = 3


@inner
def _heap_less(S, b, i, j):
    ti = S.ev_t[b, i]
    tj = S.ev_t[b, j]
    if ti != tj:
        return ti < tj
    return i < j  # ties: any fixed rule keeps the run deterministic


@inner
def _heap_push(S, b, e):
    n = S.ev_meta[b, M_HEAP]
    S.heap[b, n] = e
    S.ev_meta[b, M_HEAP] = n + 1
    while n > 0:
        p = (n - 1) >> 1
        if _heap_less(S, b, S.heap[b, n], S.heap[b, p]):
            tmp = S.heap[b, p]
            S.heap[b, p] = S.heap[b, n]
            S.heap[b, n] = tmp
            n = p
        else:
            break


@inner
def _heap_pop(S, b):
    n = S.ev_meta[b, M_HEAP] - 1
    top = S.heap[b, 0]
    S.heap[b, 0] = S.heap[b, n]
    S.ev_meta[b, M_HEAP] = n
    i = 0
    while True:
        l = 2 * i + 1
        if l >= n:
            break
        c = l
        if l + 1 < n and _heap_less(S, b, S.heap[b, l + 1], S.heap[b, l]):
            c = l + 1
        if _heap_less(S, b, S.heap[b, c], S.heap[b, i]):
            tmp = S.heap[b, c]
            S.heap[b, c] = S.heap[b, i]
            S.heap[b, i] = tmp
            i = c
        else:
            break
    return top


@inner
def _wheel_append(S, b, e):
    W = S.wh_head.shape[1]
    w = S.ev_t[b, e] & (W - 1)
    S.ev_next[b, e] = -1
    if S.wh_tail[b, w] < 0:
        S.wh_head[b, w] = e
    else:
        S.ev_next[b, S.wh_tail[b, w]] = e
    S.wh_tail[b, w] = e
    S.ev_meta[b, M_WHEEL] += 1


@inner
def schedule(S, b, t, kind, a, bb, c):
    """Schedule event `kind`(a, bb, c) at cycle t (t >= now). Sets ERR_POOL when full."""
    e = S.ev_meta[b, M_FREE]
    if e < 0:
        S.status[b] |= ERR_POOL
        return
    S.ev_meta[b, M_FREE] = S.ev_next[b, e]
    S.ev_meta[b, M_USED] += 1
    S.ev_t[b, e] = t
    S.ev_k[b, e] = kind
    S.ev_a[b, e] = a
    S.ev_b[b, e] = bb
    S.ev_c[b, e] = c
    W = S.wh_head.shape[1]
    if t - S.now[b] < W:
        _wheel_append(S, b, e)
    else:
        _heap_push(S, b, e)


@inner
def pending(S, b):
    return S.ev_meta[b, M_WHEEL] + S.ev_meta[b, M_HEAP]


@inner
def next_time(S, b, horizon):
    """Earliest pending event time, or horizon if there is none before it. Moves heap
    events that came within W cycles into the wheel."""
    W = S.wh_head.shape[1]
    now = S.now[b]
    if S.ev_meta[b, M_WHEEL] > 0:
        t = now
        while t < now + W:
            if S.wh_head[b, t & (W - 1)] >= 0:
                break
            t += 1
        best = t
    else:
        best = horizon
    if S.ev_meta[b, M_HEAP] > 0:
        ht = S.ev_t[b, S.heap[b, 0]]
        if ht < best:
            best = ht
    return best


@inner
def pull_far(S, b, t):
    """Move every heap event due before t + W into the wheel (called when the clock moves to t)."""
    W = S.wh_head.shape[1]
    while S.ev_meta[b, M_HEAP] > 0 and S.ev_t[b, S.heap[b, 0]] < t + W:
        e = _heap_pop(S, b)
        _wheel_append(S, b, e)


@inner
def pop_at(S, b, t):
    """Pop the first event of cycle t, or -1 when that bucket is empty. The caller reads the
    fields and must call release(e)."""
    W = S.wh_head.shape[1]
    w = t & (W - 1)
    e = S.wh_head[b, w]
    if e < 0:
        return -1
    S.wh_head[b, w] = S.ev_next[b, e]
    if S.wh_head[b, w] < 0:
        S.wh_tail[b, w] = -1
    S.ev_meta[b, M_WHEEL] -= 1
    return e


@inner
def release(S, b, e):
    S.ev_next[b, e] = S.ev_meta[b, M_FREE]
    S.ev_meta[b, M_FREE] = e
    S.ev_meta[b, M_USED] -= 1
