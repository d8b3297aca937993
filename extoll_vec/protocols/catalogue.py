"""The end-to-end flow-control protocols: one entry per protocol with what the code outside its
kernel needs to know of it.

config.py validates protocol names and finds the fields a protocol ignores here, the engine
takes the kernel id, the mailbox rule and the mailbox layout from here, the state is sized with
``pair_fields``, and the analysis iterates ``CREDIT_PROTOCOLS``. Adding a protocol means an
entry here, its kernel (kernels/flowctl.py dispatches on the dtypes.PROTO_* id: Numba cannot
read this table) and, if it keeps per-pair state, its fields in fc_layout.py. No kernels and no
config here: config.py imports this module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import dtypes as D
from . import fc_layout as L


@dataclass(frozen=True)
class Protocol:
    name: str                 # protocol.name in a configuration
    kernel_id: int            # dtypes.PROTO_*: what the kernels dispatch on
    mailbox_hard: bool        # a full mailbox is an error: the protocol promises it never fills
                              # (the unlimited reference, the credit protocols); otherwise the NIC
                              # waits for a free slot (hardware back-pressure, EXTOLL section 2)
    credit: bool              # EXTOLL credit-based flow control (sections 5-6): the mailbox is
                              # split into data and credit regions (extoll_static.layout)
    parameters: tuple[str, ...]          # ProtocolConfig fields it reads besides `name`
    pair_fields: Callable[[int], int]    # fields per (rank, peer) of the fc table, given
                                         # protocol.credit_slots (the state's dimension K)


def _fixed(k: int) -> Callable[[int], int]:
    return lambda credit_slots: k


_CREDIT_PARAMETERS = ("mailbox_slots", "credit_slots", "piggyback")

CATALOGUE: dict[str, Protocol] = {p.name: p for p in (
    Protocol("none", D.PROTO_NONE, True, False, (), _fixed(L.PAIR_FIELDS)),
    Protocol("backpressure", D.PROTO_BACKPRESSURE, False, False, ("mailbox_slots",),
             _fixed(L.PAIR_FIELDS)),
    Protocol("window", D.PROTO_WINDOW, False, False, ("mailbox_slots", "window", "threshold"),
             _fixed(L.WINDOW_FIELDS)),
    Protocol("static", D.PROTO_STATIC, True, True, _CREDIT_PARAMETERS,
             _fixed(L.CREDIT_FIELDS)),
    # dynamic: a FIFO of credit_slots + 1 thresholds per peer after its fixed fields
    Protocol("dynamic", D.PROTO_DYNAMIC, True, True, _CREDIT_PARAMETERS,
             lambda credit_slots: L.DYNAMIC_FIELDS + credit_slots + 1),
)}

PROTOCOL_NAMES = tuple(CATALOGUE)
CREDIT_PROTOCOLS = tuple(p.name for p in CATALOGUE.values() if p.credit)


def protocol(name: str) -> Protocol:
    """The entry of protocol `name`; ValueError if there is none."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}") from None


def protocol_with_id(kernel_id: int) -> Protocol:
    """The entry of the protocol the kernels know as kernel_id (a member's par[P_PROTO])."""
    for p in CATALOGUE.values():
        if p.kernel_id == kernel_id:
            return p
    raise ValueError(f"unknown protocol id {kernel_id!r}")
