"""Bhoedjang et al.'s testbed is calibrated on two numbers (analysis/lfc/calibration.py): the NI
processor's per-packet scale on the 61-node multicast latency, its per-KiB transmit cost on the
61-node peak throughput. The values in force must reproduce both within 1 %; the checked
numbers are reported in docs/reproduction/lfc.md."""
from __future__ import annotations

import pytest

from extoll_vec.analysis.lfc import calibration as cal
from extoll_vec.examples import LFC_STEPS, myrinet_testbed


def test_the_testbed_runs_the_fitted_costs():
    lam, beta = cal.fitted()
    p = myrinet_testbed()["protocol"]
    for k, ns in LFC_STEPS.items():
        assert p[k] == pytest.approx(lam * ns)
    assert p["lfc_tx_ns_per_kb"] == beta


def test_the_fitted_numbers_are_met():
    lam, beta = cal.fitted()
    assert cal.latency(61, lam, beta) == pytest.approx(cal.PAPER["latency_61"], rel=0.01)
    assert cal.peak(61, lam, beta) == pytest.approx(cal.PAPER["peak_61"], rel=0.01)
