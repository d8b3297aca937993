"""The EXTOLL protocols as registered units (registry.py): none, backpressure, window, static
and dynamic. Their kernels: kernels/extoll/ (window.py; hooks.py, the static and dynamic hooks
over static.py and dynamic.py); their pair-table layout: protocols/fc_layout.py; their
arithmetic: static.py, dynamic.py; their credit audit: audit.py.

Kernel ids 0..4 are the values par[P_PROTO] always had for these protocols."""
from __future__ import annotations

from ... import dtypes as D
from .. import fc_layout as L
from ..audit import audit_args
from .audit import quiescent_problems
from .params import (P_CREDIT_SLOTS, P_DATA_REGION, P_DYN_REGION, P_QUOTA, P_RETURN_THRESHOLD,
                     P_WINDOW, P_WINDOW_THRESHOLD)
from .static import layout as mailbox_layout
from ..registry import Param, Protocol

# the credit search (section 5.2) is off: at no cost per slot does it give Figure 6(b)'s drop
# (lab/extoll/credit_search.md)
SEARCH_NS = 0.0

_CREDIT_PARAMETERS = ("mailbox_slots", "credit_slots", "piggyback", "credit_search_ns")



def _check_none(pc, pre, _check):
    _check(pc.mailbox_slots == 0, f"{pre}.mailbox_slots",
           "0 for protocol none (its mailbox never fills; use backpressure for a finite one)",
           pc.mailbox_slots)


def _check_window(pc, pre, _check):
    _check(1 <= pc.threshold <= pc.window, f"{pre}.threshold", f"1..window ({pc.window})",
           pc.threshold)


def _check_credit_run(cfg, _check):
    p, w = cfg.protocol, cfg.workload
    _check(not w.synthetic, "protocol.name",
           "none for network-only traffic (no ranks, no mailboxes)", p.name)
    n = cfg.n_ranks
    need = 2 * p.credit_slots * n
    _check(p.mailbox_slots >= need, "protocol.mailbox_slots",
           f">= {need} = {2 * p.credit_slots} slots per process x {n} processes (Eq. 2: "
           f"data region >= credit region >= 1 slot per process, credit_slots "
           f"{p.credit_slots})", p.mailbox_slots)


def _window_params(cfg, p):
    p[P_WINDOW] = cfg.protocol.window
    p[P_WINDOW_THRESHOLD] = cfg.protocol.threshold


def _credit_params(cfg, p):
    pr = cfg.protocol
    lay = mailbox_layout(pr.mailbox_slots, cfg.n_ranks, pr.credit_slots)
    p[P_CREDIT_SLOTS] = pr.credit_slots
    p[P_QUOTA] = lay.quota
    p[P_RETURN_THRESHOLD] = lay.threshold
    p[P_DATA_REGION] = lay.data_region
    p[P_DYN_REGION] = lay.dynamic_region
    p[D.P_PIGGY] = int(pr.piggyback)
    p[D.P_SEARCH] = round(pr.credit_search_ns / cfg.network.cycle_ns * (1 << D.CREDIT_FRAC_BITS))


def _credit_audit(batch, b):
    if batch.par[b, D.P_SYNTH] != 0:
        return []
    return quiescent_problems(*audit_args(batch.S, b), batch.S.fcr[b], batch.par[b])


def _idle_senders(cfg, packets_in):
    """Pair-table entries for the idle senders a dynamic receiver may steal from: at most one
    per steal, a steal at most one per monitoring point, which comes every credit_slots + 1
    thresholds of one sender, each threshold after at least one retrieved packet (the 2:
    control packets retrieved count too). A row that runs out raises ERR_SPARE and the batch
    runs again with dense tables (engine/batch.py)."""
    return 2 * packets_in // (cfg.protocol.credit_slots + 1) + 2


def _fixed(k):
    return lambda cfg: k


_CREDIT = dict(mailbox_hard=True, credit=True, parameters=_CREDIT_PARAMETERS,
               check_run=_check_credit_run, rank_fields=_fixed(L.RANK_FIELDS),
               params=_credit_params, audit=_credit_audit,
               hooks="extoll_vec.kernels.extoll.hooks",
               # a sender's credits come back only in credit packets, piggybacked on data
               # (5.3-5.4) or in compulsory responses (6.5.4): all taken out by on_control
               unblocks_on_control=True)

PROTOCOLS = (
    # the unlimited reference: a mailbox that never fills
    Protocol("none", 0, mailbox_hard=True, mailbox="unlimited", check=_check_none,
             describe=lambda pc: "protocol none",
             declares=(Param("mailbox_slots", "int", 0, 0, unit="slots",
                             note="0: unlimited, protocol none only", added=False),),
             rank_fields=_fixed(L.RANK_FIELDS)),
    # finite mailbox, EXTOLL hardware back-pressure only
    Protocol("backpressure", 1, parameters=("mailbox_slots",), rank_fields=_fixed(L.RANK_FIELDS)),
    # a fixed credit window per peer (the trivial plug-in of the tests)
    Protocol("window", 2, hooks="extoll_vec.kernels.extoll.window",
             parameters=("mailbox_slots", "window", "threshold"),
             declares=(Param("window", "int", 8, 1, unit="credits", added=False),
                       Param("threshold", "int", 4, 1, unit="packets", added=False)),
             check=_check_window, pair_fields=_fixed(L.WINDOW_FIELDS),
             describe=lambda pc: (f"protocol window {pc.window}/{pc.threshold}, "
                                  f"{pc.mailbox_slots} slots"),
             rank_fields=_fixed(L.RANK_FIELDS), params=_window_params,
             unblocks_on_control=True),
    # EXTOLL static credit-based flow control (paper section 5)
    Protocol("static", 3, prefix="static_", **_CREDIT,
             declares=(Param("credit_slots", "int", 2, 1, 16, "slots", added=False),
                       Param("piggyback", "bool", False, added=False,
                             exclusive="piggybacking is part of"),
                       # a sender waiting for credits examines its mailbox for a credit
                       # packet at this cost per slot (kernels/host._search_credits)
                       Param("credit_search_ns", "float", SEARCH_NS, 0.0, 1000.0, "ns",
                             "per mailbox slot examined",
                             exclusive="the credit search is part of")),
             pair_fields=_fixed(L.CREDIT_FIELDS)),
    # EXTOLL dynamic (section 6): a FIFO of credit_slots + 1 thresholds per peer. Its activity
    # lists hold every other process (6.3) and Eq. 6 steals from the last of the low list, an
    # idle sender as often as not: so its pair table keeps entries for idle senders
    Protocol("dynamic", 4, prefix="dynamic_", **_CREDIT, every_pair=True,
             spare_entries=_idle_senders,
             pair_fields=lambda cfg: L.DYNAMIC_FIELDS + cfg.protocol.credit_slots + 1),
)
