"""Input-queued router (network.router "iq"), beside the VOQ router of kernels/network.py:
Booksim's router model in Schneider et al. (section 4.1: "an input queued router model with 2.4x
internal speedup"), so that head-of-line blocking is modelled when Booksim-style numbers are
wanted.

Model (as kernels/network.py wherever not said otherwise: links, virtual cut-through,
credit-based link flow control, table routing, the same event kinds EV_ARB and EV_CREDIT):
- Each input VC buffer is one FIFO. Only its head packet may be switched, so a head waiting
  for a busy output or for credits blocks every packet behind it, whatever their outputs
  (head-of-line blocking). The other VCs of the input are separate FIFOs.
- Internal speedup s (network.speedup, fixed point P_SPEEDUP): the crossbar moves a packet's
  flits s times faster than a link, so a packet of L flits occupies its crossbar input
  ceil(L / s) cycles, but never ends before its tail has arrived over the input link
  (xbar_free). The output link serializes at one flit per cycle. What speedup buys is the
  input side: an input whose head went out may serve its next head (on another VC, to
  another output) after ceil(L / s) cycles instead of L, which offsets the allocator's
  matching losses. With s = 1 both routers are today's model exactly (the VOQ router reads
  the same helper).
- Output buffer (network.output_queue_flits, Q): a packet is switched to an output while at
  most Q flits wait there for its link (op_busy - now), with credits for all of it taken at
  the switch (Booksim's iq_router with internal speedup moves flits into output buffers,
  unbounded by default, so only the downstream credits bound them); it leaves on the link
  when the flits ahead of it have gone (op_busy), and its input's buffer space goes back
  upstream at the crossbar read, not at the link. Q = 0: an output takes a packet only when
  its link is free (the model before the field existed). The downstream router routes it
  when it is switched here, at most Q cycles before its head leaves the link.
- Separable allocation, input-first, round-robin at both stages, one grant per input and per
  output per allocation (allocate): (1) every free input offers the head of one of its VCs,
  round-robin from the VC after its last granted one, among heads that are ready and whose
  output is free and has the credits; (2) every output grants one of the inputs that offered
  it a packet, round-robin from the input after its last granted one. Pointers move only on a
  grant (as Booksim's separable allocators update their arbiters), so no VC and no input
  starves. Input-first because an input is one crossbar port: offering one request per input
  means an output never grants an input that another output took in the same allocation
  (output-first wastes such grants and leaves outputs idle), and the second stage is a pass
  over at most P requests.
- Events: an allocation covers the whole router (EV_ARB with b = -1; an EV_ARB for a port,
  from the NIC's ejection credits, or an EV_CREDIT also runs it). It runs only where a packet
  may move: when a head becomes ready at an empty FIFO, at the earliest cycle a waiting
  head's input, output and readiness allow (a head that was eligible and lost retries next
  cycle), and when credits arrive for an output VC that a head waits on for credits (the
  allocation marks such output VCs in iq_starved; credits for any other output VC cannot
  make a head eligible: every head with credits already has an allocation pending at or
  before the cycle it may move). A later event of the same cycle (credits, an arrival) may
  run a further allocation over the inputs and outputs still free, as a further iteration of
  the allocator would.

Array shapes: iq_head/iq_tail int32 [B, R, P, V] (FIFO per input VC, packets chained through
pk_next), iq_hout/iq_hovc/iq_hlen int32 and iq_hrdy int64 [B, R, P, V] (the head's output,
output VC, flits and ready cycle, copied when it becomes the head: the allocator scans them
for every non-empty FIFO, a few cache lines per router instead of one packet record each),
iq_mask int64 [B, R, MW] (bit pi * MAX_VCS + vi set while FIFO (pi, vi) is not empty),
iq_starved int64 [B, R, MW] (bit po * MAX_VCS + vo set when an allocation found a head
short of credits for output VC (po, vo); cleared by the credits' event), ip_rr
int32 [B, R, P] (last VC granted at each input), ra_t int64 [B, R] (pending allocation cycle,
for duplicate suppression), iq_req/iq_best int32 [B, P] (allocator scratch: this
allocation's requests, each output's best request); op_rr [B, R, P] holds the last input
granted at each output. The buffer, credit and busy arrays are the VOQ router's.
"""
from numba.cpython.unsafe.numbers import trailing_zeros   # LLVM cttz: the lowest set bit

from extoll_vec.dtypes import (ERR_BUFFER_OVERFLOW, EV_ARB, EV_CREDIT, EV_NIC_CREDIT, EV_NIC_RX,
                               H_ROUTER, MAX_VCS, P_BUF_FLITS, P_HOOKS, P_LINK_LAT, P_OUTQ,
                               P_ROUTER_DELAY, P_SPEEDUP, SPEEDUP_ONE, VC_SHIFT)
from extoll_vec.kernels import flowctl
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.routing import link_lat, route_out
from extoll_vec.kernels.wheel import schedule

VC_BITS = (1 << MAX_VCS) - 1    # an input's VC bits in iq_mask (MAX_VCS divides 64)


@inner
def xbar_free(par, b, ready, L, now):
    """Cycle at which the crossbar input is free again after starting to read a packet of L
    flits at `now` whose head became ready (after link and pipeline) at `ready`: ceil(L / s)
    cycles, but not before its tail arrived (ready - router_delay + L - 1, plus one)."""
    s = par[b, P_SPEEDUP]
    if s == SPEEDUP_ONE:
        return now + L
    t = now + (L * SPEEDUP_ONE + s - 1) // s
    return max(t, ready - par[b, P_ROUTER_DELAY] + L)


@inner
def enter_input(S, T, par, b, r, p, v, h, now):
    """Packet h starts crossing the link into input (p, v) of router r at `now` (both
    routers): it takes its space in the VC buffer (reserved by the upstream credits), is
    routed (kernels/routing.py: pk.out, pk.ovc) and becomes eligible after the link and the
    pipeline. Returns that cycle, or -1 on a buffer overflow (an error flag is set)."""
    L = S.pk[b, h].flits
    if S.ib_flits[b, r, p, v] + L > par[b, P_BUF_FLITS]:
        S.status[b] |= ERR_BUFFER_OVERFLOW
        return -1
    S.ib_cnt[b, r, p, v] += 1
    S.ib_flits[b, r, p, v] += L
    out, ovc = route_out(S, T, par, b, r, p, v, h, now)
    S.pk[b, h].out = out
    S.pk[b, h].ovc = ovc
    t = now + link_lat(T, par, b, r, p) + par[b, P_ROUTER_DELAY]
    S.pk[b, h].ready = t
    S.pk[b, h].next = -1
    return t


@inner
def credits_upstream(S, T, par, b, r, pi, vi, L, t_in):
    """The tail of a packet of L flits leaves input (pi, vi) of router r at t_in - 1 (the
    crossbar read, xbar_free): its buffer's credits travel back over the input link, to the
    upstream router's output or to the NIC (both routers)."""
    up_node = T.terminal_node[r, pi]
    if up_node >= 0:
        schedule(S, b, t_in - 1 + par[b, P_LINK_LAT], EV_NIC_CREDIT, up_node, 0, L)
    else:
        up_vc = (T.neighbor_port[r, pi] << VC_SHIFT) | vi
        schedule(S, b, t_in - 1 + link_lat(T, par, b, r, pi), EV_CREDIT, T.neighbor[r, pi],
                 up_vc, L)


@inner
def iq_request(S, b, r, t):
    """Ask router r to allocate at cycle t (once per cycle: later requests are duplicates)."""
    if S.ra_t[b, r] != t:
        S.ra_t[b, r] = t
        schedule(S, b, t, EV_ARB, r, -1, 0)


@inner
def _set_head(S, b, r, p, v, h):
    """Packet h became the head of FIFO (p, v): the allocator reads its fields from these
    per-router copies, a few cache lines, instead of from the packet pool."""
    S.iq_head[b, r, p, v] = h
    S.iq_hout[b, r, p, v] = S.pk[b, h].out
    S.iq_hovc[b, r, p, v] = S.pk[b, h].ovc
    S.iq_hlen[b, r, p, v] = S.pk[b, h].flits
    S.iq_hrdy[b, r, p, v] = S.pk[b, h].ready


@inner
def iq_accept(S, T, par, b, r, p, v, h, now):
    """Packet h starts crossing the link into input (p, v) of router r at cycle now: it joins
    the FIFO (its space was reserved by the upstream credits) and, if it is the head, asks for
    an allocation once it is ready and its input is free."""
    t = enter_input(S, T, par, b, r, p, v, h, now)
    if t < 0:
        return
    tail = S.iq_tail[b, r, p, v]
    S.iq_tail[b, r, p, v] = h
    if tail >= 0:
        S.pk[b, tail].next = h   # behind the head: waits whatever its output
    else:
        _set_head(S, b, r, p, v, h)
        q = (p << VC_SHIFT) | v
        S.iq_mask[b, r, q >> 6] |= 1 << (q & 63)
        iq_request(S, b, r, max(t, S.ip_busy[b, r, p]))


@inner
def _rr_after(i, last, n):
    """Position of i in round-robin order starting after `last` (0 .. n-1)."""
    d = i - last - 1
    return d + n if d < 0 else d


@inner
def _send(S, T, par, b, r, pi, vi, h, po, now):
    """The head h of FIFO (pi, vi) was granted output po: it leaves on its output VC."""
    vo = S.pk[b, h].ovc
    L = S.pk[b, h].flits
    S.ip_rr[b, r, pi] = vi
    S.op_rr[b, r, po] = pi
    nxt = S.pk[b, h].next
    if nxt >= 0:
        _set_head(S, b, r, pi, vi, nxt)
    else:
        S.iq_head[b, r, pi, vi] = -1
        S.iq_tail[b, r, pi, vi] = -1
        q = (pi << VC_SHIFT) | vi
        S.iq_mask[b, r, q >> 6] &= ~(1 << (q & 63))
    S.ib_cnt[b, r, pi, vi] -= 1
    S.ib_flits[b, r, pi, vi] -= L
    S.cr[b, r, po, vo] -= L
    lat = par[b, P_LINK_LAT]
    t_in = xbar_free(par, b, S.pk[b, h].ready, L, now)
    S.ip_busy[b, r, pi] = t_in
    d = max(now, S.op_busy[b, r, po])   # its head leaves on the link after the queued flits
    S.op_busy[b, r, po] = d + L
    S.op_util[b, r, po] += L
    S.hops[b] += 1
    if par[b, P_HOOKS] & H_ROUTER:   # the protocol's router hook, as in network.arbitrate
        flowctl.router_on_forward(S, T, par, b, r, pi, po, h, now)
    credits_upstream(S, T, par, b, r, pi, vi, L, t_in)
    dn = T.terminal_node[r, po]
    if dn >= 0:
        schedule(S, b, d + lat + L - 1, EV_NIC_RX, dn, h, 0)
    else:
        iq_accept(S, T, par, b, T.neighbor[r, po], T.neighbor_port[r, po], vo, h, d)


@inner
def allocate(S, T, par, b, r, now):
    """One separable input-first allocation of router r at cycle now (module docstring), then
    the request for the next one, at the earliest cycle a waiting head may move."""
    V = S.iq_head.shape[3]
    P = S.iq_head.shape[2]
    MW = S.iq_mask.shape[2]
    outq = par[b, P_OUTQ]
    k = 0
    # stage 1: each free input offers one head, round-robin over its VCs
    for w in range(MW):
        m = S.iq_mask[b, r, w]
        while m != 0:
            pi = ((w << 6) + trailing_zeros(m)) >> VC_SHIFT
            m &= ~(VC_BITS << ((pi << VC_SHIFT) & 63))   # the input's VCs, handled here
            if S.ip_busy[b, r, pi] > now:
                continue
            last = S.ip_rr[b, r, pi]
            for j in range(1, V + 1):
                vi = last + j
                if vi >= V:
                    vi -= V
                if S.iq_head[b, r, pi, vi] < 0 or S.iq_hrdy[b, r, pi, vi] > now:
                    continue
                po = S.iq_hout[b, r, pi, vi]
                if S.op_busy[b, r, po] - now > outq:
                    continue   # more flits wait at the output than its buffer holds
                if S.cr[b, r, po, S.iq_hovc[b, r, pi, vi]] < S.iq_hlen[b, r, pi, vi]:
                    continue   # the credit's arrival brings it back
                S.iq_req[b, k] = (pi << VC_SHIFT) | vi
                k += 1
                break
    # stage 2: each output grants one offer, round-robin over the inputs
    for i in range(k):
        e = S.iq_req[b, i]
        pi = e >> VC_SHIFT
        po = S.iq_hout[b, r, pi, e & (MAX_VCS - 1)]
        cur = S.iq_best[b, po]
        last = S.op_rr[b, r, po]
        if cur < 0 or _rr_after(pi, last, P) < _rr_after(cur >> VC_SHIFT, last, P):
            S.iq_best[b, po] = e
    for i in range(k):
        e = S.iq_req[b, i]
        pi = e >> VC_SHIFT
        vi = e & (MAX_VCS - 1)
        po = S.iq_hout[b, r, pi, vi]
        if S.iq_best[b, po] == e:
            S.iq_best[b, po] = -1
            _send(S, T, par, b, r, pi, vi, S.iq_head[b, r, pi, vi], po, now)
    # next allocation: the earliest cycle a head with credits may move (one that was eligible
    # and lost, the next cycle); heads short of credits wait for the credits' event
    retry = -1
    for w in range(MW):
        m = S.iq_mask[b, r, w]
        while m != 0:
            q = (w << 6) + trailing_zeros(m)
            m &= m - 1
            pi = q >> VC_SHIFT
            vi = q & (MAX_VCS - 1)
            po = S.iq_hout[b, r, pi, vi]
            vo = S.iq_hovc[b, r, pi, vi]
            if S.cr[b, r, po, vo] < S.iq_hlen[b, r, pi, vi]:
                o = (po << VC_SHIFT) | vo   # the credits' event allocates again
                S.iq_starved[b, r, o >> 6] |= 1 << (o & 63)
                continue
            t = max(S.iq_hrdy[b, r, pi, vi], S.ip_busy[b, r, pi], S.op_busy[b, r, po] - outq)
            if t <= now:
                t = now + 1
            if retry < 0 or t < retry:
                retry = t
    if retry >= 0:
        iq_request(S, b, r, retry)


@inner
def iq_event(S, T, par, b, k, a, bb, c, now):
    """EV_ARB or EV_CREDIT at router a of an input-queued member: the duplicate suppression
    is cleared (a later request for this cycle must schedule a new event), credits are added,
    and the router allocates, after credits only if a head waits on them (iq_starved)."""
    if k == EV_ARB:
        if bb < 0:
            if S.ra_t[b, a] == now:
                S.ra_t[b, a] = -1
            allocate(S, T, par, b, a, now)
            return
        if S.op_arbt[b, a, bb] == now:
            S.op_arbt[b, a, bb] = -1   # from network.request_arb (the NIC's ejection credits)
        o = bb << VC_SHIFT             # ejection credits are output VC 0's (nic.on_ej_credit)
    else:
        S.cr[b, a, bb >> VC_SHIFT, bb & (MAX_VCS - 1)] += c
        o = bb
    bit = 1 << (o & 63)
    if S.iq_starved[b, a, o >> 6] & bit:   # a head waits on these credits
        S.iq_starved[b, a, o >> 6] &= ~bit
        allocate(S, T, par, b, a, now)
