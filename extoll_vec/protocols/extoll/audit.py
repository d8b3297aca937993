"""Credit conservation of the EXTOLL protocols, checked from the kernels' counters.

``credit_problems(fc, x, y, rev, fcr, par)`` works on one member's arrays at any time between
kernel calls (the tests call it mid-run); ``quiescent_problems`` adds what must hold once a run
is over (nothing in flight, every compulsory request answered). Both return human-readable
problems (empty: all is well). Field meanings: fc_layout.py.

Both take the member's table as pairs (engine/pairs.py): fc [entries, K] with entry i the pair
(x[i], y[i]) and rev[i] the entry of (y[i], x[i]), -1 if that pair is not in the table; a pair
whose reverse is missing exchanged nothing either way and is left out (y[i] = -1: a spare
entry). ``dense`` turns a dense [NR, NR, K] table (the tests' hand-made ones) into these
arguments. The dynamic protocol's sum over all senders counts an idle sender without an entry
(kernels/pairs.py) at its initial credit_slots.

Static, for every sender s and receiver r (s != r):
    owned(s->r) + packets in flight or in r's mailbox + retrieved-not-returned(r<-s)
        + credits promised or in flight back to s  ==  credit quota.
Dynamic, the same sum (without the retrieved count: a retrieved slot goes back to the available
slots counter) plus credits s returned in a compulsory response that r has not processed yet
equals current(r<-s); sum over s of current(r<-s) + available(r) == data region - r's own
static slots; and, unless s is blocked, the sum of s's FIFO of thresholds covers what s can
still make r retrieve: credits s holds + retrieved-not-returned + credits in flight < sum of
the FIFO (kernels/extoll/dynamic.py, item 1), which keeps the credit region from overflowing.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as D
from .. import fc_layout as F
from ..registry import protocol_with_id
from .params import P_CREDIT_SLOTS, P_DATA_REGION, P_QUOTA


def dense(fc: np.ndarray) -> tuple:
    """(fc, x, y, rev) of a dense [NR, NR, K] table."""
    n = fc.shape[0]
    x, y = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    return fc.reshape(n * n, -1), x, y, y * n + x


def _first(x, y, mask) -> tuple[int, int, int]:
    """The first pair of mask in table order (row-major): (index, x, y)."""
    i = int(np.flatnonzero(mask)[0])
    return i, int(x[i]), int(y[i])


def credit_problems(fc, x, y, rev, fcr: np.ndarray, par: np.ndarray) -> list[str]:
    """fc int32 [pairs, K] (x, y, rev: module docstring), fcr int32 [NR, KR], par int64
    [N_PAR] of one member."""
    proto = protocol_with_id(int(par[D.P_PROTO]))
    if not proto.credit:
        return []
    off = (x != y) & (rev >= 0)
    rv = np.maximum(rev, 0)

    def own(field):       # [s, r] = what s keeps about r (this pair)
        return fc[:, field].astype(np.int64)

    def peer(field):      # [s, r] = what r keeps about s (the reverse pair)
        return fc[rv, field].astype(np.int64)
    out = []
    # sender-side fields read [s, r]; receiver-side fields read [r, s]
    owned = own(F.F_OWNED)
    in_flight = own(F.F_A_SENT) - peer(F.F_A_RETR)
    back = peer(F.F_QUEUED) + peer(F.F_A_GIVEN) - own(F.F_A_GOT)
    retrieved = peer(F.F_RETRIEVED)
    for name, a in (("credits owned", owned), ("packets in flight", in_flight),
                    ("credits in flight", back), ("retrieved packets", retrieved)):
        if (a[off] < 0).any():
            i, s, r = _first(x, y, (a < 0) & off)
            out.append(f"{name} {int(a[i])} < 0 from rank {s} to rank {r}")
    if proto.name == "static":
        total = owned + in_flight + retrieved + back
        bad = (total != par[P_QUOTA]) & off
        if bad.any():
            i, s, r = _first(x, y, bad)
            out.append(f"credits of rank {s} towards rank {r}: {int(total[i])} owned, in "
                       f"flight or unreturned, credit quota {int(par[P_QUOTA])}")
        return out
    c = int(par[P_CREDIT_SLOTS])
    current = peer(F.F_CURRENT)
    responses = own(F.F_A_RESP_SENT) - peer(F.F_A_RESP_GOT)
    total = owned + in_flight + back + responses
    bad = (total != current) & off
    if bad.any():
        i, s, r = _first(x, y, bad)
        out.append(f"current credits of rank {s} at rank {r}: counter {int(current[i])}, "
                   f"owned + in flight {int(total[i])}")
    nr = fcr.shape[0]
    # per receiver r: its current credits of every sender s (its own row, s != r); a sender
    # without an entry is an idle one never stolen from (kernels/pairs.py): c credits
    mine = (x != y) & (y >= 0)
    pool = np.bincount(x, weights=own(F.F_CURRENT) * mine, minlength=nr).astype(np.int64) \
        + fcr[:, F.R_AVAIL].astype(np.int64) \
        + c * (nr - 1 - np.bincount(x[mine], minlength=nr))
    want = int(par[P_DATA_REGION]) - c
    if (pool != want).any():
        r = int(np.flatnonzero(pool != want)[0])
        out.append(f"rank {r}: current credits + available slots = {int(pool[r])}, data region "
                   f"less own static slots = {want}")
    if (fcr[:, F.R_AVAIL] < 0).any():
        out.append(f"rank {int(np.flatnonzero(fcr[:, F.R_AVAIL] < 0)[0])}: available slots < 0")
    fifo = fc[rv, F.F_FIFO:F.F_FIFO + c + 1].astype(np.int64).sum(axis=1)
    blocked = peer(F.F_BLOCKED) != 0
    covered = owned + in_flight + retrieved + back
    bad = (covered >= fifo) & off & ~blocked
    if bad.any():
        i, s, r = _first(x, y, bad)
        out.append(f"FIFO of rank {s} at rank {r} sums to {int(fifo[i])}, not more than the "
                   f"{int(covered[i])} credits it covers (the credit region could overflow)")
    if (fc[:, F.F_FIFO:F.F_FIFO + c + 1][off] < 1).any():
        out.append("a threshold FIFO holds an entry < 1")
    return out


def quiescent_problems(fc, x, y, rev, fcr: np.ndarray, par: np.ndarray) -> list[str]:
    """credit_problems plus what holds when the run is over."""
    out = credit_problems(fc, x, y, rev, fcr, par)
    proto = protocol_with_id(int(par[D.P_PROTO]))
    if not proto.credit:
        return out
    off = (x != y) & (rev >= 0)
    rv = np.maximum(rev, 0)
    checks = [(F.F_QUEUED, "credits queued"), (F.F_CRPK, "credit packets in a mailbox"),
              (F.F_INMB, "data packets in a mailbox")]
    if proto.name == "dynamic":
        checks += [(F.F_BLOCKED, "senders blocked (a request without response)"),
                   (F.F_REQ_FLAG, "compulsory requests withheld"),
                   (F.F_RESP_FLAG, "compulsory responses withheld")]
    for field, name in checks:
        a = fc[:, field].astype(np.int64)
        if (a[off] != 0).any():
            i, s, r = _first(x, y, (a != 0) & off)
            out.append(f"{name} at the end: rank {s}, peer {r}: {int(a[i])}")

    def differ(f_own, f_peer):
        return (fc[:, f_own].astype(np.int64) != fc[rv, f_peer])[off].any()
    if differ(F.F_A_SENT, F.F_A_RETR):
        out.append("packets written and retrieved differ at the end")
    if differ(F.F_A_GIVEN, F.F_A_GOT):
        out.append("credits returned and received differ at the end")
    if proto.name == "dynamic" and differ(F.F_A_RESP_SENT, F.F_A_RESP_GOT):
        out.append("a compulsory response was not processed")
    return out
