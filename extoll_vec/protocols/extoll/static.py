"""EXTOLL static credit-based end-to-end flow control: the paper's closed-form formulas.

Source: the EXTOLL journal paper (EXTOLL end-to-end flow control, Prades, Silla, Duato, Fröning,
Nüssle; docs/papers.md). Section 5.2 (Eq. 1, Eq. 2, Table 1, footnotes 7-8), section 5.3 (Eq. 3-5,
Table 2) and section 7.5 (Eq. 7-8, Table 3). Pure integer/float arithmetic, no Numba, no simulation;
the names follow the paper (credit quota, credit slots, threshold, data region, credit region).

Vocabulary (section 5.2). A receiver's mailbox is split into a *data region*, divided among the
processes that may send to it (each one's share is its *credit quota*, one slot = one credit), and
a *credit region*, divided among the processes it sends to (each one's share is its *credit
slots*: where that receiver's credit packets land). The receiver counts data packets it retrieves
from one sender and returns a credit packet carrying ``threshold`` credits each time the count
reaches ``threshold``; credit packets themselves consume no credits.

Ambiguities and the choices made here
-------------------------------------
1. Safety property of Eq. 1 (what "the credit packet will find at least one free credit slot"
   means as a formula). Derivation: every credit packet returns exactly ``threshold`` credits (the
   counter resets when it reaches the threshold), and the sender owns at most ``credit_quota``
   credits in total, so between two moments at which the sender drains its credit region, at most
   ``credit_quota div threshold`` credit packets can be outstanding (credits held by the sender +
   data packets in flight or unretrieved + the receiver's count + ``threshold`` x outstanding credit
   packets = ``credit_quota`` at all times). The credit region for that receiver holds
   ``credit_slots`` packets, so the protocol cannot overflow it iff
   ``credit_quota div threshold <= credit_slots``, equivalently
   ``(credit_slots + 1) * threshold > credit_quota`` ("the receiver cannot reach the threshold for
   the (credit slots + 1)th time without the sender freeing a credit slot"). See ``is_safe``.
   The companion liveness condition, from the paper's objection to formula (a) (a threshold of 101
   with a quota of 100 "will never be reached"), is ``1 <= threshold <= credit_quota``
   (``is_live``). Eq. 1 is exactly the *smallest* threshold satisfying the safety property
   (``(credit_slots + 1) * T > credit_quota`` <=> ``T >= credit_quota div (credit_slots + 1) + 1``),
   which is why it gives the highest credit update frequency in Table 1.
2. Domain of Eq. 1: the paper uses it with ``credit_quota >= 1`` and ``credit_slots >= 1``
   (Eq. 2 demands at least one slot per process). ``threshold`` raises ValueError outside that
   domain; the two wrong formulas are evaluated as printed for any ``credit_slots >= 1``
   (formula (b) may give 0).
3. Eq. 2 ("data region >= credit region >= 1 slot per process") is read on whole regions, in slots:
   ``data_region >= credit_region >= processes`` where ``processes`` is the number of peers each
   region is split among (the caller chooses n or n - 1). With the same number of peers on both
   sides and divisible sizes this is the per-process ``credit_quota >= credit_slots >= 1``.
   (The shorter Spanish version, the EXTOLL conference paper, states a different Eq. 2 instead:
   ``credit quota min = credit slots + 1``, "guaranteeing a threshold of at least 2". The journal
   version's Eq. 2 is the one implemented; Eq. 1's safety does not depend on either.)
4. Non-divisible regions (footnotes 7 and 8): the paper leaves the rule to the administrator:
   (a) give the excess slots to a subset of the processes, (b) round every share up (a slightly
   larger mailbox) or down (a slightly smaller one). ``credit_quota`` implements ``"floor"`` (lower
   rounding, the default: the mailbox never exceeds the size the user configured), ``"ceil"``
   (upper rounding), ``"exact"`` (refuse a non-divisible size) and ``credit_quotas`` implements
   option (a) ("subset": the first ``data_region_slots mod senders`` senders get one slot more).
   The same rules apply to the credit region (footnote 8): call them with the credit region size.
5. Eq. 3-5 constant 37: "2KB" MPI messages with a 16-byte MPI header and 56-byte VELO payload,
   ceil((2048 + 16) / 56) = 37 packets (``velo_packets``); it is a parameter here.
6. Eq. 5 is the paper's "operating and simplifying" of Eq. 4 and is not an exact rewriting: the
   exact smallest quota satisfying Eq. 4 (``eq4_min_quota``) is one slot smaller than the data part
   of Eq. 5 whenever ``credit_slots`` divides ``packets_per_message`` (for 37 packets: credit slots
   1 and 37), and equal otherwise (checked for 1..299 packets x 1..79 slots; Eq. 5 never falls
   below the exact bound). For credit slots 2-5 (the measured rows of Table 2) both give the
   paper's values; for 1 credit slot Eq. 5 gives 75 slots, Eq. 4 exactly 74, and the paper
   measured "Unknown; >> 64 slots". ``stabilizing_slots`` is Eq. 5 as printed.
7. Memory model units (Eq. 7-8, Table 3). Eq. 7 is in bytes per receiver with n the number of
   processes; Eq. 8 adds the buffers at the 3%-overhead operating point read in the text (static
   64 slots/process, dynamic 16 slots/process, 64 bytes/slot: 4096n and 1024n bytes). Table 3's
   "MB" is 2**20 bytes and "1K" processes is 1024: it is the only reading that reproduces the
   printed dynamic column (1.14 ... 293.5 = 1174 * 256 * 1024 / 2**20 exactly); decimal MB or
   1K = 1000 give 1.20 or 1.12 for the first column. The printed values are truncated in some
   cells (1.1465 -> 1.14, 73.375 -> 73.3) and rounded in others (4.586 -> 4.6); and the static
   cell for 256K prints 1024 where Eq. 8 gives 1025.000002 (the 4n + 2 structures add exactly 1 MB
   there; 1024 is the buffer term 4096n alone). These functions compute Eq. 8 as printed and do
   not adjust to the table; analysis/extoll/tables.py reports the per-cell agreement.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...formulas import VELO_PAYLOAD_BYTES, eager_packets

__all__ = [
    "MailboxLayout", "layout", "MB", "VELO_PAYLOAD_BYTES", "MPI_HEADER_BYTES", "PACKETS_PER_2KB_MESSAGE",
    "threshold", "formula_a", "formula_b", "is_safe", "is_live", "max_outstanding_credit_packets",
    "valid_regions", "credit_quota", "credit_quotas",
    "velo_packets", "sender_steady_credits", "is_stable", "eq4_min_quota", "stabilizing_slots",
    "overhead_drop_slots", "start_credits", "stall_free", "break_even_slots",
    "static_structures_bytes", "dynamic_structures_bytes", "static_memory_bytes",
    "dynamic_memory_bytes", "static_memory_mb", "dynamic_memory_mb",
]

MB = 2 ** 20                # Table 3's megabyte (see ambiguity 7 of the module docstring)
MPI_HEADER_BYTES = 16       # section 5.3: MPI header prepended to the payload
PACKETS_PER_2KB_MESSAGE = 37  # section 5.3: ceil((2048 + 16) / 56)


def _check_positive(**values: int) -> None:
    for name, v in values.items():
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


# ---- section 5.2: threshold -------------------------------------------------------------------
def threshold(credit_quota: int, credit_slots: int) -> int:
    """Credit-return threshold, Eq. 1: ``(credit quota div (credit slots + 1)) + 1``.

    "div" is the integer division (the paper: "discarding the fractional part"). The receiver
    returns a credit packet each time it has retrieved this many data packets from the sender.
    Requires ``credit_quota >= 1`` and ``credit_slots >= 1`` (Eq. 2); e.g. quota 20, 2 slots -> 7
    (Figure 3).
    """
    _check_positive(credit_quota=credit_quota, credit_slots=credit_slots)
    return credit_quota // (credit_slots + 1) + 1


def formula_a(credit_quota: int, credit_slots: int) -> int:
    """Wrong formula (a) of section 5.2 / Table 1: ``(credit quota div credit slots) + 1``.

    Deadlocks with one credit slot: the threshold is ``credit_quota + 1`` and is never reached
    (Table 1, quota 100 and 1 slot -> 101).
    """
    _check_positive(credit_slots=credit_slots)
    return credit_quota // credit_slots + 1


def formula_b(credit_quota: int, credit_slots: int) -> int:
    """Wrong formula (b) of section 5.2 / Table 1: ``credit quota div credit slots``.

    Overflows the credit region, e.g. quota 3 and 2 slots -> threshold 1: three credit packets
    can be outstanding for two credit slots (Table 1, last row).
    """
    _check_positive(credit_slots=credit_slots)
    return credit_quota // credit_slots


def max_outstanding_credit_packets(credit_quota: int, thr: int) -> int:
    """Most credit packets a receiver can have sent that the sender has not yet consumed.

    Each credit packet returns ``thr`` credits and the sender's credits never exceed the quota
    (module docstring, ambiguity 1), so at most ``credit_quota div thr``. Section 5.2 safety
    argument; ``thr >= 1``.
    """
    _check_positive(threshold=thr)
    return credit_quota // thr


def is_safe(credit_quota: int, credit_slots: int, thr: int) -> bool:
    """Section 5.2 safety of a threshold: credit packets always find a free credit slot.

    True iff ``credit_quota div thr <= credit_slots``, i.e. ``(credit_slots + 1) * thr >
    credit_quota`` (the receiver cannot reach the threshold for the (credit slots + 1)th time while
    the sender holds its credit packets). False for ``thr < 1`` (a threshold of 0 would send
    credit packets without retrieving anything).
    """
    if thr < 1:
        return False
    return (credit_slots + 1) * thr > credit_quota


def is_live(credit_quota: int, thr: int) -> bool:
    """Section 5.2 liveness of a threshold: it can be reached with the sender's credits.

    True iff ``1 <= thr <= credit_quota``; formula (a) with one credit slot violates it (threshold
    101 for 100 credits: "it will never be reached").
    """
    return 1 <= thr <= credit_quota


# ---- section 5.2: regions -------------------------------------------------------------------
def valid_regions(data_region: int, credit_region: int, processes: int) -> bool:
    """Eq. 2: ``data region >= credit region >= 1 slot per process``.

    Regions in slots, ``processes`` the number of peers each region is divided among (module
    docstring, ambiguity 3): True iff ``data_region >= credit_region >= processes``.
    """
    _check_positive(processes=processes)
    return data_region >= credit_region >= processes


def credit_quota(data_region_slots: int, senders: int, rounding: str = "floor") -> int:
    """Each sender's share of the data region (section 5.2, "equally distributed"; footnote 7).

    ``rounding`` chooses footnote 7's rule when ``senders`` does not divide the region:
    ``"floor"`` (lower rounding, default: uses at most the configured slots), ``"ceil"`` (upper
    rounding: a slightly larger mailbox) or ``"exact"`` (ValueError unless divisible). Footnote
    7's option (a), the excess to a subset of senders, is ``credit_quotas``. By footnote 8 the same
    function gives the credit slots from the credit region and the number of receivers.
    """
    _check_positive(senders=senders)
    if data_region_slots < 0:
        raise ValueError(f"data_region_slots must be >= 0, got {data_region_slots!r}")
    q, r = divmod(data_region_slots, senders)
    if rounding == "floor":
        return q
    if rounding == "ceil":
        return q + (r > 0)
    if rounding == "exact":
        if r:
            raise ValueError(f"{data_region_slots} slots cannot be divided equally among "
                             f"{senders} senders (footnote 7): choose rounding floor or ceil")
        return q
    raise ValueError(f"rounding must be 'floor', 'ceil' or 'exact', got {rounding!r}")


def credit_quotas(data_region_slots: int, senders: int) -> list[int]:
    """Footnote 7 option (a): per-sender quotas, the excess slots granted to a subset.

    The first ``data_region_slots mod senders`` senders get one slot more than the others; the
    quotas add up to the whole region.
    """
    _check_positive(senders=senders)
    q, r = divmod(data_region_slots, senders)
    return [q + 1] * r + [q] * (senders - r)


# ---- the mailbox of one run (what the simulator uses) ---------------------------------------
@dataclass(frozen=True)
class MailboxLayout:
    """How one process' mailbox is split (sections 5.2 and 6.3), for n processes.

    The mailbox is shared out among all ``processes`` of the job, the process itself included
    (the paper's accounting: "30 slots per sender (30K slots in total per receiver)" for 1024
    processes, and Eq. 8's 4096n bytes); its own share is never used. Each process' ``share``
    is ``mailbox_slots div processes`` (lower rounding, footnote 7 option (b): the mailbox never
    exceeds the configured size; the ``mailbox_slots mod processes`` slots left over stay
    unused). ``credit_slots`` of each share belong to the credit region, the rest is the
    sender's credit quota in the data region. Dynamic (6.3): the static region is
    ``credit_slots`` per process (Eq. 2's minimum), the rest of the data region is dynamic.
    """
    mailbox_slots: int
    processes: int
    credit_slots: int

    @property
    def share(self) -> int:
        """Slots per process (the x axis of the paper's figures)."""
        return credit_quota(self.mailbox_slots, self.processes, "floor")

    @property
    def quota(self) -> int:
        """Credit quota of every sender (static); the initial intended quota (dynamic)."""
        return self.share - self.credit_slots

    @property
    def credit_region(self) -> int:
        return self.credit_slots * self.processes

    @property
    def data_region(self) -> int:
        return self.quota * self.processes

    @property
    def threshold(self) -> int:
        """Eq. 1 with the static quota."""
        return threshold(self.quota, self.credit_slots)

    @property
    def static_region(self) -> int:
        return self.credit_slots * self.processes

    @property
    def dynamic_region(self) -> int:
        return self.data_region - self.static_region

    def check(self) -> None:
        """Eq. 2 per process: quota (data) >= credit slots (credit region) >= 1."""
        if not (self.quota >= self.credit_slots >= 1):
            raise ValueError(f"{self.mailbox_slots} slots for {self.processes} processes give "
                             f"{self.share} per process: Eq. 2 needs >= 2 x {self.credit_slots}")


def layout(mailbox_slots: int, processes: int, credit_slots: int) -> MailboxLayout:
    """The MailboxLayout of one run; ValueError when Eq. 2 does not hold."""
    lay = MailboxLayout(int(mailbox_slots), int(processes), int(credit_slots))
    lay.check()
    return lay


# ---- section 5.3: receive buffer at which the overhead stabilizes ----------------------------
def velo_packets(message_bytes: int = 2048, header_bytes: int = MPI_HEADER_BYTES,
                 payload_bytes: int = VELO_PAYLOAD_BYTES) -> int:
    """VELO packets per MPI message (section 5.3): ``ceil((message + header) / payload)``, at
    least one (formulas.eager_packets, the count the simulator uses).

    The defaults (2 KB, 16-byte header, 56-byte payload) give the paper's 37.
    """
    return eager_packets(message_bytes, header_bytes, payload_bytes)


def sender_steady_credits(credit_quota: int, credit_slots: int) -> int:
    """Left side of Eq. 3: ``credit quota - (threshold - 1)``, with the threshold of Eq. 1.

    The credits the sender owns at every moment in a steady flow (section 5.3): all but the part
    of the quota the receiver is still accumulating towards the next credit packet. Written out
    (Eq. 4) it is ``credit quota - (credit quota div (credit slots + 1))``.
    """
    return credit_quota - (threshold(credit_quota, credit_slots) - 1)


def is_stable(credit_quota: int, credit_slots: int,
              packets_per_message: int = PACKETS_PER_2KB_MESSAGE) -> bool:
    """Eq. 3 / Eq. 4: ``credit quota - (threshold - 1) >= packets_per_message`` (37 in the paper).

    True when the sender always owns enough credits to send a whole message without stalling.
    """
    return sender_steady_credits(credit_quota, credit_slots) >= packets_per_message


def eq4_min_quota(credit_slots: int, packets_per_message: int = PACKETS_PER_2KB_MESSAGE) -> int:
    """The smallest credit quota satisfying Eq. 4 exactly (no simplification).

    Eq. 5's data part ``(37 * (credit slots + 1)) div credit slots`` equals this, or exceeds it by
    one slot when ``credit_slots`` divides ``packets_per_message`` (module docstring, ambiguity 6).
    """
    _check_positive(credit_slots=credit_slots, packets_per_message=packets_per_message)
    # q - q div (s+1) is nondecreasing in q and >= q*s/(s+1): start just below the real solution.
    q = max(1, (packets_per_message * (credit_slots + 1)) // credit_slots - 1)
    while q > 1 and is_stable(q - 1, credit_slots, packets_per_message):
        q -= 1
    while not is_stable(q, credit_slots, packets_per_message):
        q += 1
    return q


def stabilizing_slots(credit_slots: int, packets_per_message: int = PACKETS_PER_2KB_MESSAGE,
                      exact: bool = False) -> int:
    """Eq. 5: receive buffer (slots per process) at which the static protocol's overhead is stable.

    ``((37 * (credit slots + 1)) div credit slots) + credit slots``, 37 = ``packets_per_message``.
    The first term is the data region (credit quota), the second the credit region (Table 2). With
    ``exact=True`` the data region is the exact smallest quota of Eq. 4 (``eq4_min_quota``)
    instead of the paper's simplification.
    """
    _check_positive(credit_slots=credit_slots, packets_per_message=packets_per_message)
    if exact:
        return eq4_min_quota(credit_slots, packets_per_message) + credit_slots
    return (packets_per_message * (credit_slots + 1)) // credit_slots + credit_slots


def overhead_drop_slots(credit_slots: int,
                        packets_per_message: int = PACKETS_PER_2KB_MESSAGE) -> int:
    """Receive buffer at which the overhead starts dropping (section 5.3, Figure 6(b) text).

    ``packets_per_message + credit_slots``: a data region of 37 slots lets the sender own enough
    credits for a whole message (38, 39, 40, 41, 42 slots for 1-5 credit slots in the paper).
    """
    _check_positive(credit_slots=credit_slots)
    return packets_per_message + credit_slots


def start_credits(credit_quota: int, credit_slots: int, packets_before: int) -> int:
    """Credits a sender owns when it starts a message to a receiver that has retrieved
    ``packets_before`` credit-consuming packets from it so far and returned only whole
    thresholds (Eq. 1): the quota less the count still short of the next threshold.

    Eq. 3 takes the worst case of that count (threshold - 1). A workload that sends a fixed
    number of messages to each receiver, like the alltoall, sees only the counts
    ``packets_before mod threshold`` that its message sizes reach (``break_even_slots``).
    """
    return credit_quota - packets_before % threshold(credit_quota, credit_slots)


def stall_free(slots_per_process: int, credit_slots: int, messages: int, extra: int = 0,
               packets_per_message: int = PACKETS_PER_2KB_MESSAGE) -> bool:
    """Whether a sender owns a whole message's credits at the start of each of ``messages``
    consecutive messages to one receiver (quota = slots per process - credit slots), when
    credits come back only at thresholds: no send of them waits for credits.

    ``extra``: up to this many other credit-consuming packets between two messages (e.g. the
    one-packet message a dissemination barrier sends to some peers after a warm-up alltoall).
    Credits returned while a message is still being sent can only help, so a simulation may
    find a send stall-free where this says it waits, never the reverse.
    """
    _check_positive(credit_slots=credit_slots, messages=messages,
                    packets_per_message=packets_per_message)
    q = slots_per_process - credit_slots
    return q >= 1 and all(
        start_credits(q, credit_slots, j * packets_per_message + (e if j else 0))
        >= packets_per_message for j in range(messages) for e in range(extra + 1))


def break_even_slots(credit_slots: int, messages: int, extra: int = 0,
                     packets_per_message: int = PACKETS_PER_2KB_MESSAGE,
                     limit: int = 1024) -> int:
    """Smallest receive buffer from which every larger one is ``stall_free``: the "break-even
    point" of Figures 5 and 7 for a run of ``messages`` messages per pair.

    With ``messages`` large enough for the count to take every value below the threshold this
    is Eq. 4's bound (section 5.3's steady flow, Table 2), or one slot below it where the
    threshold equals the message (1 credit slot: 73, quota 72, threshold 37, against 74: every
    count is then a whole number of thresholds). With few messages the stall-free
    buffers need not be contiguous (the count after one 37-packet message can be threshold - 1,
    e.g. quota 54 with 2 credit slots), so a run that samples a few buffer sizes may see no
    stall from a smaller size on.
    """
    if not stall_free(limit, credit_slots, messages, extra, packets_per_message):
        raise ValueError(f"no break-even below {limit} slots per process")
    s = limit
    while s > credit_slots + 1 and stall_free(s - 1, credit_slots, messages, extra,
                                              packets_per_message):
        s -= 1
    return s


# ---- section 7.5: memory consumption --------------------------------------------------------
def static_structures_bytes(processes: int) -> int:
    """Eq. 7, static: ``4n + 2`` bytes of flow-control structures per receiver, n processes."""
    return 4 * processes + 2


def dynamic_structures_bytes(processes: int) -> int:
    """Eq. 7, dynamic: ``150n`` bytes of flow-control structures per receiver, n processes."""
    return 150 * processes


def static_memory_bytes(processes: int, slots_per_process: int = 64, slot_bytes: int = 64) -> int:
    """Eq. 8, static: ``4n + 2 + 4096n`` bytes per receiver (structures + mailbox).

    4096n = 64 slots per process (the static protocol's 3%-overhead point, section 7.5) of 64
    bytes each.
    """
    return static_structures_bytes(processes) + slots_per_process * slot_bytes * processes


def dynamic_memory_bytes(processes: int, slots_per_process: int = 16,
                         slot_bytes: int = 64) -> int:
    """Eq. 8, dynamic: ``150n + 1024n`` bytes per receiver (structures + mailbox).

    1024n = 16 slots per process (the dynamic protocol's 3%-overhead point) of 64 bytes each.
    """
    return dynamic_structures_bytes(processes) + slots_per_process * slot_bytes * processes


def static_memory_mb(processes: int, slots_per_process: int = 64, slot_bytes: int = 64) -> float:
    """Eq. 8 static total in Table 3's MB (2**20 bytes); not rounded (Table 3 prints it rounded)."""
    return static_memory_bytes(processes, slots_per_process, slot_bytes) / MB


def dynamic_memory_mb(processes: int, slots_per_process: int = 16, slot_bytes: int = 64) -> float:
    """Eq. 8 dynamic total in Table 3's MB (2**20 bytes); not rounded."""
    return dynamic_memory_bytes(processes, slots_per_process, slot_bytes) / MB
