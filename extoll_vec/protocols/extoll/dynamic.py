"""EXTOLL dynamic credit-based flow control: where the mailbox can go in a traffic pattern.

Source: the EXTOLL journal paper (docs/papers.md), sections 6.2-6.5. Pure arithmetic, no
simulation; the simulated protocol is kernels/extoll/dynamic.py.

The static protocol gives every sender the same credit quota, so the receive buffer at which
its overhead stabilizes (Eq. 4-5, Table 2) does not depend on the pattern. The dynamic one moves
the data region to the senders that use it, so that buffer depends on how many senders are
active. Two facts of the paper fix how much an active sender can get:

- "the sum of the intended credit quota counters for all senders is equal to the size of the
  data region" (6.2), and credit stealing (Eq. 6, 6.4) takes an idle sender's intended quota
  down to its static slots and no further (6.3: "the minimum credit quota a given sender can
  own at any time");
- the threshold of Eq. 1 is computed on the intended quota (6.5.2), so a sender whose intended quota
  is q holds, in the steady flow of section 5.3, the credits Eq. 4 gives for quota q: enough
  for a whole message only from eq4_min_quota on.

So with n processes (the mailbox shared among all of them, as extoll_static.layout does), s
slots per process, c credit slots and A active senders, the active senders share
``(s - c) * (n - 1) - c * (n - 1 - A)`` slots of intended quota. If that is below
``A * eq4_min_quota`` (or the static slots, if more), at least one of them holds less than a
message's worth in the steady state, whatever the lists and stealing do. The bound is
necessary, not sufficient: the stealing does not share evenly (4x256 at 16 slots,
docs/reproduction/extoll_conference.md).
With every sender active it is the static protocol's Eq. 4 bound
(``stabilizing_slots(c, exact=True)``).
"""
from __future__ import annotations

from collections import Counter

from .static import PACKETS_PER_2KB_MESSAGE, eq4_min_quota

__all__ = ["alltoall_active_senders", "active_quota_total", "even_share", "stabilizing_slots"]


def alltoall_active_senders(groups: int, group_size: int, ranks_per_node: int,
                            limic: bool = True) -> int:
    """The most senders one receiver of `groups` concurrent alltoalls of `group_size`
    consecutive ranks gets credit-consuming packets from: the other members of its group, less
    the ones on its node if they use LiMIC (section 7.2: no credits)."""
    if not limic:
        return group_size - 1
    same_node = Counter((r // group_size, r // ranks_per_node)
                        for r in range(groups * group_size))
    return group_size - min(same_node.values())


def active_quota_total(slots_per_process: int, processes: int, active_senders: int,
                       credit_slots: int) -> int:
    """Intended quota the active senders of one receiver hold together once every idle sender
    is down to its static slots (module docstring)."""
    _check_senders(processes, active_senders)
    senders = processes - 1
    return (slots_per_process - credit_slots) * senders - credit_slots * (senders - active_senders)


def even_share(slots_per_process: int, processes: int, active_senders: int,
               credit_slots: int) -> float:
    """The intended quota of each active sender if they share active_quota_total evenly."""
    return active_quota_total(slots_per_process, processes, active_senders,
                              credit_slots) / active_senders


def stabilizing_slots(processes: int, active_senders: int, credit_slots: int,
                      packets_per_message: int = PACKETS_PER_2KB_MESSAGE) -> int:
    """Smallest slots per process at which an even share reaches Eq. 4's quota: below it some
    active sender cannot hold a whole message in the steady state (module docstring)."""
    _check_senders(processes, active_senders)
    senders = processes - 1
    # eq4_min_quota checks credit_slots and packets_per_message. No intended quota goes below
    # the static slots (6.3), whatever Eq. 4 would allow.
    quota = max(eq4_min_quota(credit_slots, packets_per_message), credit_slots)
    need = quota * active_senders + credit_slots * (senders - active_senders)
    # Eq. 2 (extoll_static.layout): at least credit_slots of data region per process
    return max(credit_slots + -(-need // senders), 2 * credit_slots)


def _check_senders(processes: int, active_senders: int) -> None:
    if not 1 <= active_senders <= processes - 1:
        raise ValueError(f"active_senders must be 1..processes - 1 = {processes - 1}, "
                         f"got {active_senders!r}")
