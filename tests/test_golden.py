"""Numerical regression: small sweeps against golden results in tests/golden/*.json.

Integers and strings must match exactly; floats within tests/golden/regenerate.py's RTOL/ATOL.
After an intended change of the model, regenerate with `python tests/golden/regenerate.py`
and review the diff of the JSON files.
"""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

_path = Path(__file__).resolve().parent / "golden" / "regenerate.py"
_spec = importlib.util.spec_from_file_location("golden_regenerate", _path)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_every_protocol_is_covered():
    from extoll_vec.config import PROTOCOLS
    seen = {p.protocol.name for name in golden.spec_names()
            for p in golden.load_spec(name).configs}
    assert seen == set(PROTOCOLS)


@pytest.mark.parametrize("name", golden.spec_names())
def test_matches_golden(name):
    sweep = golden.load_spec(name)
    expected = golden.load_golden(name)
    assert expected["fingerprint"] == sweep.fingerprint, (
        f"tests/golden/specs/{name}.yaml changed since {name}.json was written: regenerate")
    problems = golden.compare(expected, golden.compute(sweep))
    assert not problems, "\n".join(problems[:20])


def test_negative_control_a_changed_parameter_is_caught():
    """One host cost changed by 10 ns on the protocols sweep must fail the comparison."""
    from extoll_vec.sweep import build_sweep
    sweep = golden.load_spec("protocols")
    changed = build_sweep({"name": "protocols", "base": {"example": "tiny",
                                                         "protocol": {"window": 8, "threshold": 4},
                                                         "host": {"match_ns": 160.0}},
                           "axes": {"fc": {"zip": {
                               "protocol.name": ["none", "backpressure", "window"],
                               "protocol.mailbox_slots": [0, 512, 64]}},
                               "workload.message_bytes": [512, 2048]},
                           "repeat": {"count": 2, "seed": 1}})
    assert changed.shape == sweep.shape
    problems = golden.compare(golden.load_golden("protocols"), golden.compute(changed))
    assert len(problems) >= 12 and any("exec_time_us" in p for p in problems)


def test_comparison_rules():
    g = golden.load_golden("window")
    ok = copy.deepcopy(g)
    v = ok["points"][0]["values"]
    v["exec_time_us"] *= 1 + golden.RTOL / 10               # inside the float tolerance
    assert golden.compare(g, ok) == []
    bad = copy.deepcopy(g)
    bad["points"][0]["values"]["exec_time_us"] *= 1 + golden.RTOL * 10
    assert "exec_time_us" in golden.compare(g, bad)[0]
    bad = copy.deepcopy(g)
    bad["points"][2]["values"]["packets_sent"][3][0] += 1   # integers: exact
    assert "packets_sent[9]" in golden.compare(g, bad)[0]
    bad = copy.deepcopy(g)
    bad["points"][1]["values"]["packet_latency_cycles_mean"] = 0.0   # NaN (null) only equals NaN
    assert golden.compare(g, bad)
    stale = copy.deepcopy(g)                 # a golden written before a variable existed
    del stale["points"][0]["values"]["stall_us_at_mark"]
    assert golden.compare(stale, g) == [
        f"point 0 ({g['points'][0]['labels']}): stall_us_at_mark not in the golden data: "
        "regenerate"]
