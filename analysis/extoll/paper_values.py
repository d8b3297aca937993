"""Published values of the EXTOLL paper, transcribed by hand for comparison with our formulas.

Source: the EXTOLL journal paper (Prades, Silla, Duato, Fröning, Nüssle; docs/papers.md). Each
table cites its section and caption (the *_WHERE strings also name the lines of the text
extraction it was copied from). Values are copied as printed: numbers the paper
prints with decimals are kept as strings so that their printed precision is not lost.
"""
from __future__ import annotations


# Section 5.2, "Table 1: Example of values assigned to threshold depending on the exact formula
# used". Columns: credit quota, credit slots, Equation 1, Formula (a),
# Formula (b).
TABLE1_WHERE = "section 5.2, Table 1"
TABLE1_COLUMNS = ("credit_quota", "credit_slots", "eq1", "formula_a", "formula_b")
TABLE1 = (
    (100, 1, 51, 101, 100),
    (100, 2, 34, 51, 50),
    (100, 3, 26, 34, 33),
    (100, 4, 21, 26, 25),
    (100, 5, 17, 21, 20),
    (60, 2, 21, 31, 30),
    (40, 2, 14, 21, 20),
    (20, 2, 7, 11, 10),
    (10, 2, 4, 6, 5),
    (3, 2, 2, 2, 1),
)

# Section 5.3, "Table 2: Minimum size of receive buffer that makes the overhead stable", read
# by the authors from the measured Figure 6(b) (alltoall, 1024 processes, 2 KB).
# credit slots -> (receive buffer, data region, credit region), slots per process. The 1-slot row
# is printed "Unknown; >> 64 slots ? ?": None here.
TABLE2_WHERE = "section 5.3, Table 2, measured from Figure 6(b)"
TABLE2 = {
    1: None,
    2: (57, 55, 2),
    3: (52, 49, 3),
    4: (50, 46, 4),
    5: (49, 44, 5),
}
TABLE2_ROW1_TEXT = "Unknown; >> 64 slots"

# Section 5.3 text before Table 2: receive buffer at which the overhead of
# Figure 6(b) starts decreasing, per credit slots.
OVERHEAD_DROP_WHERE = "section 5.3 text on Figure 6(b)"
OVERHEAD_DROP = {1: 38, 2: 39, 3: 40, 4: 41, 5: 42}

# Section 7.5, "Table 3: Total memory consumption, in MB, per receiver",
# computed by the authors with Eq. 8. Processes as printed ("1K" ... "256K"), values as printed.
TABLE3_WHERE = "section 7.5, Table 3, from Eq. 8"
TABLE3_PROCESSES = ("1K", "4K", "16K", "64K", "256K")
TABLE3_STATIC_MB = ("4", "16", "64", "256", "1024")
TABLE3_DYNAMIC_MB = ("1.14", "4.6", "18.3", "73.3", "293.5")


def processes_count(label: str) -> int:
    """``"4K"`` -> 4096: Table 3's K is 1024 (see extoll_vec.protocols.extoll.static, item 7)."""
    label = label.strip().upper()
    return int(label[:-1]) * 1024 if label.endswith("K") else int(label)


def table3_rows() -> list[tuple[int, str, str]]:
    """(processes, static MB as printed, dynamic MB as printed), one per column of Table 3."""
    return [(processes_count(p), s, d)
            for p, s, d in zip(TABLE3_PROCESSES, TABLE3_STATIC_MB, TABLE3_DYNAMIC_MB)]
