"""Credit conservation of the EXTOLL protocols, checked from the kernels' counters.

``credit_problems(fc, fcr, par)`` works on one member's arrays at any time between kernel calls
(the tests call it mid-run); ``quiescent_problems`` adds what must hold once a run is over
(nothing in flight, every compulsory request answered). Both return human-readable problems
(empty: all is well). Field meanings: fc_layout.py.

Static, for every sender s and receiver r (s != r):
    owned(s->r) + packets in flight or in r's mailbox + retrieved-not-returned(r<-s)
        + credits promised or in flight back to s  ==  credit quota.
Dynamic, the same sum (without the retrieved count: a retrieved slot goes back to the available
slots counter) plus credits s returned in a compulsory response that r has not processed yet
equals current(r<-s); sum over s of current(r<-s) + available(r) == data region - r's own
static slots; and, unless s is blocked, the sum of s's FIFO of thresholds covers what s can
still make r retrieve: credits s holds + retrieved-not-returned + credits in flight < sum of
the FIFO (kernels/fc_dynamic.py, item 1), which keeps the credit region from overflowing.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from . import fc_layout as F
from .registry import protocol_with_id


def _pairs(fc: np.ndarray, field: int) -> np.ndarray:
    """[x, y] view of one field (x = this rank, y = peer)."""
    return fc[:, :, field].astype(np.int64)


def _first(mask: np.ndarray) -> tuple[int, int]:
    i = np.argwhere(mask)[0]
    return int(i[0]), int(i[1])


def credit_problems(fc: np.ndarray, fcr: np.ndarray, par: np.ndarray) -> list[str]:
    """fc int32 [NR, NR, K], fcr int32 [NR, KR], par int64 [N_PAR] of one member."""
    proto = protocol_with_id(int(par[D.P_PROTO]))
    if not proto.credit:
        return []
    n = fc.shape[0]
    off = ~np.eye(n, dtype=bool)
    out = []
    # sender-side fields read [s, r]; receiver-side fields read [r, s]: transpose them to [s, r]
    owned = _pairs(fc, F.F_OWNED)
    in_flight = _pairs(fc, F.F_A_SENT) - _pairs(fc, F.F_A_RETR).T
    back = _pairs(fc, F.F_QUEUED).T + _pairs(fc, F.F_A_GIVEN).T - _pairs(fc, F.F_A_GOT)
    retrieved = _pairs(fc, F.F_RETRIEVED).T
    for name, a in (("credits owned", owned), ("packets in flight", in_flight),
                    ("credits in flight", back), ("retrieved packets", retrieved)):
        if (a[off] < 0).any():
            s, r = _first((a < 0) & off)
            out.append(f"{name} {int(a[s, r])} < 0 from rank {s} to rank {r}")
    if proto.name == "static":
        total = owned + in_flight + retrieved + back
        bad = (total != par[D.P_QUOTA]) & off
        if bad.any():
            s, r = _first(bad)
            out.append(f"credits of rank {s} towards rank {r}: {int(total[s, r])} owned, in "
                       f"flight or unreturned, credit quota {int(par[D.P_QUOTA])}")
        return out
    c = int(par[D.P_CREDIT_SLOTS])
    current = _pairs(fc, F.F_CURRENT).T
    responses = _pairs(fc, F.F_A_RESP_SENT) - _pairs(fc, F.F_A_RESP_GOT).T
    total = owned + in_flight + back + responses
    bad = (total != current) & off
    if bad.any():
        s, r = _first(bad)
        out.append(f"current credits of rank {s} at rank {r}: counter {int(current[s, r])}, "
                   f"owned + in flight {int(total[s, r])}")
    pool = (current * off).sum(axis=0) + fcr[:, F.R_AVAIL].astype(np.int64)
    want = int(par[D.P_DATA_REGION]) - c
    if (pool != want).any():
        r = int(np.flatnonzero(pool != want)[0])
        out.append(f"rank {r}: current credits + available slots = {int(pool[r])}, data region "
                   f"less own static slots = {want}")
    if (fcr[:, F.R_AVAIL] < 0).any():
        out.append(f"rank {int(np.flatnonzero(fcr[:, F.R_AVAIL] < 0)[0])}: available slots < 0")
    fifo = fc[:, :, F.F_FIFO:F.F_FIFO + c + 1].astype(np.int64).sum(axis=2).T
    blocked = _pairs(fc, F.F_BLOCKED).T != 0
    covered = owned + in_flight + retrieved + back
    bad = (covered >= fifo) & off & ~blocked
    if bad.any():
        s, r = _first(bad)
        out.append(f"FIFO of rank {s} at rank {r} sums to {int(fifo[s, r])}, not more than the "
                   f"{int(covered[s, r])} credits it covers (the credit region could overflow)")
    if (fc[:, :, F.F_FIFO:F.F_FIFO + c + 1][off] < 1).any():
        out.append("a threshold FIFO holds an entry < 1")
    return out


def quiescent_problems(fc: np.ndarray, fcr: np.ndarray, par: np.ndarray) -> list[str]:
    """credit_problems plus what holds when the run is over."""
    out = credit_problems(fc, fcr, par)
    proto = protocol_with_id(int(par[D.P_PROTO]))
    if not proto.credit:
        return out
    n = fc.shape[0]
    off = ~np.eye(n, dtype=bool)
    checks = [(F.F_QUEUED, "credits queued"), (F.F_CRPK, "credit packets in a mailbox"),
              (F.F_INMB, "data packets in a mailbox")]
    if proto.name == "dynamic":
        checks += [(F.F_BLOCKED, "senders blocked (a request without response)"),
                   (F.F_REQ_FLAG, "compulsory requests withheld"),
                   (F.F_RESP_FLAG, "compulsory responses withheld")]
    for field, name in checks:
        a = _pairs(fc, field)
        if (a[off] != 0).any():
            x, y = _first((a != 0) & off)
            out.append(f"{name} at the end: rank {x}, peer {y}: {int(a[x, y])}")
    if (_pairs(fc, F.F_A_SENT) != _pairs(fc, F.F_A_RETR).T)[off].any():
        out.append("packets written and retrieved differ at the end")
    if (_pairs(fc, F.F_A_GIVEN) != _pairs(fc, F.F_A_GOT).T)[off].any():
        out.append("credits returned and received differ at the end")
    if proto.name == "dynamic" and (_pairs(fc, F.F_A_RESP_SENT)
                                     != _pairs(fc, F.F_A_RESP_GOT).T)[off].any():
        out.append("a compulsory response was not processed")
    return out
