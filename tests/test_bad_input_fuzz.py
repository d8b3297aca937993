"""Bad input never crashes, hangs or passes silently, end to end.

A sample of every family of tests/badinput.py (config fields, config files, files, specs,
damaged stores, tables) through the command line, drawn by hypothesis from the full list:
each case must exit with 2, print at most three lines and no traceback, finish in time, and
leave the files that were there byte-identical. `python benchmarks/fuzz_bad_input.py` runs
them all (the figures of the closing note); the budget here keeps this under about 2 minutes.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from badinput import FAMILIES, all_cases, build_fixtures, run_case

pytestmark = pytest.mark.slow   # end to end over every family: the full suite

CASES = all_cases()
PER_FAMILY = {"config-field": 60, "config-file": 40, "file": 30, "spec": 50, "store": 25,
              "table": 25}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    return build_fixtures(tmp_path_factory.mktemp("fuzz") / "fixtures")


def test_every_family_has_cases_and_there_are_a_thousand():
    by = {f: sum(c.family == f for c in CASES) for f in FAMILIES}
    assert all(n >= 20 for n in by.values()), by
    assert len(CASES) >= 1000, by


@pytest.mark.parametrize("family", list(FAMILIES))
def test_bad_inputs_are_refused_in_one_line(family, fixtures, tmp_path):
    cases = [c for c in CASES if c.family == family]

    @settings(max_examples=PER_FAMILY[family], deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(cases))
    def check(case):
        o = run_case(case, fixtures, tmp_path)
        assert not o.problems, (case.label, case.argv[:6], o.problems, o.stderr[-2000:])

    check()
