"""Liu and Panda's micro-benchmark targets at their --quick scale, end to end through the CLI on a
real LocalCluster (2 worker processes) into real zarr stores: one row per point, a real PNG,
the CSV and notes equal to docs/data/quick's copies, and the shapes the paper states."""
from __future__ import annotations

import pytest

from test_extoll_targets import finite, run_target

pytestmark = pytest.mark.slow   # real clusters: the full suite only


def test_ib_latency(out):
    rows = run_target(out, "ib_latency")
    assert len(rows) == 3 * 3                         # schemes x sizes
    finite(rows, "latency_us")
    by = {(r["scheme"], int(r["message_bytes"])): float(r["latency_us"]) for r in rows}
    for b in (4, 1024, 4096):
        vals = [by[(s, b)] for s in ("ib_hardware", "ib_static", "ib_dynamic")]
        assert max(vals) <= 1.03 * min(vals)          # Figure 2: all three comparable
    assert 7.0 < by[("ib_hardware", 4)] < 8.0          # the fitted 7.5 us
    assert by[("ib_static", 4)] < by[("ib_static", 1024)] < by[("ib_static", 4096)]


def test_ib_bandwidth(out):
    rows = run_target(out, "ib_bandwidth")
    assert len(rows) == 3 * 2 * 3 * 3                 # schemes x blocking x settings x windows
    finite(rows, "bandwidth_MBps")
    bw = {(r["scheme"], int(r["message_bytes"]), int(r["prepost"]), r["blocking"],
           int(r["window"])): float(r["bandwidth_MBps"]) for r in rows}
    for blk in ("True", "False"):
        # 4 B, 10 buffers, window 16 > 10: the dynamic scheme grows past the static one
        assert bw[("ib_dynamic", 4, 10, blk, 16)] > bw[("ib_static", 4, 10, blk, 16)]
        # 32 KB: rendezvous for all; the schemes within a few per cent
        vals = [bw[(s, 32768, 10, blk, 16)] for s in ("ib_hardware", "ib_static", "ib_dynamic")]
        assert max(vals) <= 1.03 * min(vals)
    # 32 KB: non-blocking overlaps the transfers
    assert bw[("ib_static", 32768, 10, "False", 16)] > bw[("ib_static", 32768, 10, "True", 16)]
    grown = [int(r["max_posted"]) for r in rows
             if r["scheme"] == "ib_dynamic" and r["prepost"] == "10" and r["window"] == "64"
             and r["message_bytes"] == "4"]
    assert min(grown) > 10                            # the dynamic scheme posted more


def test_ib_nas(out):
    """The three targets of the NAS sweep at 2 time steps per skeleton: Table 1's shape (LU
    the only skeleton with ECMs by the hundred), Table 2's (the dynamic scheme grew from 1
    buffer), Figure 9's (the schemes within 3 % with 100 buffers)."""
    ecm = run_target(out, "ib_nas_ecm")
    assert len(ecm) == 7 * 3                          # skeletons x schemes, 100 buffers
    finite(ecm, "messages_per_process", "ecm_per_process")
    static = {r["benchmark"]: r for r in ecm if r["scheme"] == "ib_static"}
    lu = float(static["LU"]["ecm_per_process"])
    assert lu > 50 and all(float(r["ecm_per_process"]) <= 1 for b, r in static.items()
                           if b != "LU")
    hw = {r["benchmark"]: float(r["ecm_per_process"]) for r in ecm if r["scheme"] == "ib_hardware"}
    assert set(hw.values()) == {0.0}                  # no credits, no ECMs
    buffers = run_target(out, "ib_nas_buffers")
    assert [r["benchmark"] for r in buffers] == ["IS", "FT", "LU", "CG", "MG", "BT", "SP"]
    assert all(int(r["prepost"]) == 1 and 2 <= int(r["max_posted"]) <= 8 for r in buffers)
    times = run_target(out, "ib_nas_prepost")
    assert len(times) == 7 * 3
    t100 = {(r["benchmark"], r["scheme"]): float(r["time_100_s"]) for r in times}
    for b in static:
        vals = [t100[(b, s)] for s in ("ib_hardware", "ib_static", "ib_dynamic")]
        assert max(vals) <= 1.03 * min(vals)
    naks = {(r["benchmark"], r["scheme"]): float(r["rnr_naks_1"]) for r in times}
    assert naks[("LU", "ib_hardware")] > 0            # 1 buffer: the HCA drops and retries


def test_ib_families(out):
    """Both families on one network, each against its own reference: every setting has its
    row, the references are at 0 %, IB memory is posted buffers x 2 KB and EXTOLL's its slots
    x 64 B."""
    rows = run_target(out, "ib_families")
    assert len(rows) == 4 * 9                         # workloads x flow-control settings
    finite(rows, "time_us", "overhead_pct")
    for r in rows:
        if r["setting"] in ("ib_hardware 100/connection", "none"):
            assert float(r["overhead_pct"]) == 0.0
        if r["setting"] == "ib_static 4/connection":
            assert float(r["buffer_kib_per_process"]) == 4 * 7 * 2   # 7 connections x 2 KB
        if r["setting"] == "static 16 slots/process":
            assert float(r["buffer_kib_per_process"]) == 16 * 8 * 64 / 1024
