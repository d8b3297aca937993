"""Bhoedjang et al.'s targets at their --quick scale, end to end through the CLI on a real
LocalCluster (2 worker processes) into real zarr stores: one row per point, a real PNG, the CSV
and notes equal to docs/data/quick's copies, and the shapes the paper states that the reduced
scale already shows (the paper-scale figures: docs/reproduction/lfc.md)."""
from __future__ import annotations

import pytest

from test_extoll_targets import finite, run_target

pytestmark = pytest.mark.slow   # real clusters: the full suite only


def test_lfc_multicast(out):
    """Figure 4: the latency grows with the group (one tree level per doubling) and the
    message; the root's throughput falls with the group (its fan-out grows)."""
    rows = run_target(out, "lfc_multicast")
    assert len(rows) == 2 * 4                         # groups x (2 latencies + 2 blasts)
    finite(rows, "latency_us_or_mb_s")
    v = {(r["benchmark"], int(r["processors"]), int(r["message_bytes"])):
         float(r["latency_us_or_mb_s"]) for r in rows}
    assert v[("latency", 4, 0)] < v[("latency", 16, 0)] < v[("latency", 16, 1024)]
    assert 20 < v[("latency", 4, 0)] < 30             # the checked 22 us within 15 %
    assert v[("blast", 4, 16384)] > 1.5 * v[("blast", 16, 16384)]


def test_lfc_recovery_overhead(out):
    """Figure 5: on binomial trees recovery is all false alarms, counted, and costs little."""
    rows = run_target(out, "lfc_recovery_overhead")
    assert len(rows) == 2 * 2 * 2                     # packet sizes x BP/DR x message sizes
    finite(rows, "mb_s", "recoveries_per_mcast", "dl_packets_per_mcast")
    by = {(r["packet_bytes"], r["protocol"], r["message_bytes"]): r for r in rows}
    for (pkt, proto, m), r in by.items():
        if proto == "BP":
            assert float(r["recoveries_per_mcast"]) == 0
            dr = by[(pkt, "DR", m)]
            assert float(dr["recoveries_per_mcast"]) > 0
            assert abs(float(dr["mb_s"]) / float(r["mb_s"]) - 1) < 0.15   # "modest"


def test_lfc_trees(out):
    """Figure 6 and Table 1 at 16 processors: the chain best for one sender; in the all-to-all
    binomial above binary; the chain's recoveries flag the most packets per recovery; the
    fraction of multicasts with a recovery in the paper's order."""
    rows = run_target(out, "lfc_trees")
    assert len(rows) == 3 * 2                         # trees x (blast, all-to-all)
    finite(rows, "mb_s", "recovery_fraction", "recoveries_per_mcast", "dl_packets_per_mcast")
    v = {(r["benchmark"], r["tree"]): r for r in rows}
    blast = {t: float(v[("blast", t)]["mb_s"]) for t in ("binomial", "binary", "chain")}
    assert blast["chain"] == max(blast.values())
    assert float(v[("alltoall", "binomial")]["mb_s"]) > float(v[("alltoall", "binary")]["mb_s"])
    size = {t: float(v[("alltoall", t)]["dl_packets_per_mcast"])
            / float(v[("alltoall", t)]["recoveries_per_mcast"]) for t in ("binary", "chain")}
    assert size["chain"] > size["binary"]
    # Table 1's fraction: a multicast packet counts once, however often its copies are flagged
    frac = {t: float(v[("alltoall", t)]["recovery_fraction"]) for t in ("binomial", "binary",
                                                                       "chain")}
    assert all(0 < f <= 1 for f in frac.values())
    assert all(frac[t] <= float(v[("alltoall", t)]["dl_packets_per_mcast"]) for t in frac)
    assert frac["binary"] < frac["binomial"] < frac["chain"]     # the paper's order


def test_lfc_vs_fmmc(out):
    """Figures 7-8 at 8 and 16 processors: FM/MC's single-sender throughput falls faster with
    the group than LFC's (its credits come back only once the token has passed every member:
    section 5.3, "LFC's multicast protocol scales better"); at 8 processors the two blasts are
    within 10 % (FM/MC's lighter NI steps against its credit round trips)."""
    rows = run_target(out, "lfc_vs_fmmc")
    assert len(rows) == 2 * 2 * 2                     # protocols x groups x benchmarks
    finite(rows, "mb_s", "swaps_per_mcast")
    v = {(r["benchmark"], r["protocol"], int(r["processors"])): float(r["mb_s"]) for r in rows}
    fm, lfc = (v[("blast", p, 16)] / v[("blast", p, 8)] for p in ("fmmc", "lfc"))
    assert fm < lfc < 1
    assert abs(v[("blast", "fmmc", 8)] / v[("blast", "lfc", 8)] - 1) < 0.1
