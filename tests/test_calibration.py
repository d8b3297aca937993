"""analysis/extoll/calibration.py fit(): which host-cost scale m it takes. The simulations are
replaced by a table of times per m (the selection is what is tested here; the simulated
times themselves are checked by the extoll_reference target)."""
from __future__ import annotations

import pytest

from extoll_vec.analysis.extoll import calibration as cal

PAPER = {case: paper for case, (_ex, paper, _f) in cal.CASES.items()}
RATIO = PAPER["alltoall-1024"] / PAPER["pingpong"]


def _fake(monkeypatch, table):
    """table[m] = (ratio error, pingpong-14 error, alltoall-256 error), fractions; times at
    cycle 1 with a pingpong of 1 us."""
    by_pio = {cal.host_cycles(m)["pio_ns"]: m for m in table}

    def measure(case, override=None, util=False):
        cfg = override(cal.get_example(cal.CASES[case][0]))
        m = by_pio[round(cfg.host.pio_ns)]
        ratio_err, pp14_err, a256_err = table[m]
        t = {"pingpong": 1.0, "alltoall-1024": RATIO * (1 + ratio_err),
             "pingpong-14": PAPER["pingpong-14"] / PAPER["pingpong"] * (1 + pp14_err),
             "alltoall-256": PAPER["alltoall-256"] / PAPER["pingpong"] * (1 + a256_err)}[case]
        return (t, 0.3) if util else t
    monkeypatch.setattr(cal, "measure", measure)


def test_the_held_out_cases_choose_among_scales_that_fit_alike(monkeypatch):
    _fake(monkeypatch, {0.2: (0.035, -0.002, -0.036), 0.25: (0.014, -0.004, -0.012),
                        0.3: (-0.005, -0.004, -0.038), 0.35: (-0.002, -0.004, -0.039),
                        0.4: (-0.076, -0.004, -0.05)})
    log = []
    cyc, m = cal.fit((0.2, 0.25, 0.3, 0.35, 0.4), log=lambda *a, **k: log.append(a[0]))
    assert m == 0.25 and cyc == pytest.approx(PAPER["pingpong"])
    assert any("best held-out fit of the 4 scales" in line for line in log)
    assert "stands" in log[-1]


def test_without_scales_within_the_tolerance_the_closest_ratio_wins(monkeypatch):
    _fake(monkeypatch, {0.2: (0.30, 0.0, 0.0), 0.3: (0.08, 0.5, 0.5), 0.4: (-0.2, 0.0, 0.0)})
    log = []
    _cyc, m = cal.fit((0.2, 0.3, 0.4), log=lambda *a, **k: log.append(a[0]))
    assert m == 0.3
    assert not any("held-out" in line for line in log)
    assert "noise spike" in log[-1]          # its neighbours are 20 % and 26 % away


def test_a_bad_scan_is_refused(capsys):
    assert cal.main(["--scan", "0.2,x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calibration: error: --scan") and "Traceback" not in err
