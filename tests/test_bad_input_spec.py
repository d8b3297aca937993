"""Bad sweep specs never crash, hang or pass silently: every example
listed here, and specs generated from the spec grammar (hypothesis), are refused by
`extoll-vec sweep SPEC --dry-run` with exit 2 and one line `extoll-vec: error: ...` naming the
file position or the --set, no traceback, in well under a second; derived expressions are
evaluated within bounds; the dry run's size printer cannot overflow; a point that fails in a
real sweep is one line on the terminal, its traceback and config go to OUT.errors.log."""
from __future__ import annotations

import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec.cli import main
from extoll_vec.config import load_yaml
from extoll_vec.errors import SpecError
from extoll_vec.sweep import build_sweep, load_sweep
from extoll_vec.sweep.cli import _count, _mb, _seconds, _secs
from extoll_vec.sweep.expr import (MAX_DEPTH, MAX_EXPONENT, MAX_INT, MAX_SIZE, MAX_TEXT,
                                   ExprError, evaluate)
from extoll_vec.sweep.runner import error_log_path
from extoll_vec.sweep.spec import DEFAULT_MAX_POINTS, TOP_KEYS

FAST = 1.0   # seconds: a refusal must come well within this (typically 20 ms)


def refused(capsys, argv: list[str]) -> str:
    """Run `extoll-vec ARGV`; assert exit 2, one stderr line `extoll-vec: error: ...`, no
    traceback, fast; return that line."""
    t0 = time.perf_counter()
    rc = main(argv)
    took = time.perf_counter() - t0
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2, (argv, err)
    assert len(lines) == 1 and lines[0].startswith("extoll-vec: error: "), (argv, err)
    assert "Traceback" not in err, err
    assert took < FAST, (argv, took, err)
    return lines[0]


TINY = "base: {example: tiny}\n"
SIX = TINY + "axes:\n" + "".join(f"  {k}: {{range: [1, 100, 1]}}\n" for k in (
    "protocol.window", "protocol.threshold", "workload.message_bytes", "workload.iterations",
    "seed", "workload.warmup"))
BIG_INT = "1" + "0" * 5000     # past Python's 4300-digit limit of int(str)

# (spec text, extra arguments, where the message points, what it says)
EXAMPLES = {
    "six range axes: 10^12 points": (
        SIX, [], ":2:1: axes: 1,000,000,000,000 points (a 100 x 100 x 100 x 100 x 100 x 100 "
                 "grid) exceed the limit of 100,000 points (--max-points N raises it)", None),
    "repeat 10^11": (
        TINY + "repeat: 100000000000\n", [],
        ":2:1: repeat: 100,000,000,000 repetitions x 1 grid point(s) = 100,000,000,000 points "
        "exceed the limit of 100,000 points", None),
    "derived 'a' * 10 ** 12": (
        TINY + "derived:\n  protocol.mailbox_slots: \"'a' * 10 ** 12\"\n", [],
        ":3:3: protocol.mailbox_slots: string repeated 1000000000000 times is too long (more "
        "than 10000 characters) (point 0)", None),
    "derived [0] * 10 ** 10": (
        TINY + "derived:\n  protocol.mailbox_slots: '[0] * 10 ** 10'\n", [],
        ":3:3: protocol.mailbox_slots: list repeated 10000000000 times is too long", None),
    "derived (9 ** 64) ** 64": (
        TINY + "derived:\n  protocol.mailbox_slots: '(9 ** 64) ** 64'\n", [],
        ":3:3: protocol.mailbox_slots: integer too large: an integer of about 62 digits (at "
        "most 2**63 - 1", None),
    "derived 10 ** 60": (
        TINY + "derived:\n  protocol.mailbox_slots: '10 ** 60'\n", [],
        ":3:3: protocol.mailbox_slots: integer too large", None),
    "range with a NaN start": (
        TINY + "axes:\n  protocol.window: {range: [.nan, 10, 1]}\n", [],
        ":3:21: axes.protocol.window.range: start, stop, step/factor must be finite numbers",
        None),
    "range with a NaN step": (
        TINY + "axes:\n  protocol.window: {range: {start: 1, stop: 10, step: .nan}}\n", [],
        ":3:21: axes.protocol.window.range: start, stop, step/factor must be finite", None),
    "range with an infinite stop": (
        TINY + "axes:\n  protocol.window: {range: [1, .inf, 1]}\n", [],
        ":3:21: axes.protocol.window.range: start, stop, step/factor must be finite", None),
    "range of 10^15 values": (
        TINY + "axes:\n  seed: {range: [0, 1000000000000000, 1]}\n", [],
        ":3:10: axes.seed.range: gives more values than the limit of 100,000 points",
        None),
    "geometric range of 10^7 values": (
        TINY + "axes:\n  seed: {range: {start: 1, stop: 1000000000000000000, factor: "
               "1.000001}}\n", [], ":3:10: axes.seed.range: gives more values than the limit",
        None),
    "base.example a list": (
        "base: {example: [tiny]}\n", [],
        ":1:8: base.example: got ['tiny']; allowed: the name of an example: ", None),
    "base.variant a list": (
        "base: {example: tiny, variant: [a]}\n", [],
        ":1:23: base.variant: got ['a']; allowed: the name of a model variant: fifo16, buffers40",
        None),
    "an axis list over the limit": (
        TINY + "axes:\n  seed: [" + ", ".join(map(str, range(1001))) + "]\n",
        ["--max-points", "1000"], ":3:3: axes.seed: 1,001 values: more than the limit of 1,000 "
                                  "points (--max-points N raises it)", None),
    "zipped lists of different lengths": (
        TINY + "axes:\n  c:\n    zip: {protocol.window: [1, 2], protocol.threshold: [1]}\n",
        [], ":4:5: axes.c.zip: zipped lists differ in length: protocol.window has 2, "
            "protocol.threshold has 1", None),
    "an integer axis name": (
        TINY + "axes:\n  1: [1, 2]\n", [], ":3:3: 1: unknown config key", None),
    "a null axis name": (
        TINY + "axes:\n  null: [1, 2]\n", [], ":3:3: None: unknown config key", None),
    "a boolean zipped axis name": (
        TINY + "axes:\n  true: {zip: {seed: [1, 2]}}\n", [],
        ":3:3: True: a zipped axis needs a new identifier as its name", None),
    "repeat.seeds over the limit": (
        TINY + "axes:\n  protocol.window: [4, 8]\nrepeat: {seeds: [" +
        ", ".join(map(str, range(501))) + "]}\n", ["--max-points", "1000"],
        ":4:10: repeat.seeds: 501 seeds x 2 grid point(s) = 1,002 points exceed the limit of "
        "1,000 points", None),
    "repeat.seeds with a duplicate": (
        TINY + "repeat: {seeds: [1, 2, 1]}\n", [],
        ":2:24: repeat.seeds[2]: duplicate seed 1; seeds must be distinct", None),
    # the same through --set: the message names the --set argument instead of a line
    "--set repeat 10^11": (
        TINY, ["--set", "repeat=100000000000"],
        "--set repeat=100000000000: repeat: 100,000,000,000 repetitions", "set"),
    "--set a derived [0] * 10 ** 10": (
        TINY, ["--set", "derived.protocol.mailbox_slots='[0] * 10 ** 10'"],
        "--set 'derived.protocol.mailbox_slots='\"'\"'[0] * 10 ** 10'\"'\"'': "
        "protocol.mailbox_slots: list repeated", "set"),
    "--set a range with an infinite stop": (
        TINY, ["--set", "axes.seed={range: [1, .inf, 1]}"],
        "--set 'axes.seed={range: [1, .inf, 1]}': axes.seed.range: start, stop, step/factor "
        "must be finite", "set"),
    "--set six axes": (
        TINY, [a for k in ("protocol.window", "protocol.threshold", "workload.message_bytes",
                           "workload.iterations", "seed", "workload.warmup")
               for a in ("--set", f"axes.{k}={{range: [1, 100, 1]}}")],
        ": axes: 1,000,000,000,000 points", "set"),
    "--set base.example a list": (
        TINY, ["--set", "base.example=[tiny]"],
        "--set 'base.example=[tiny]': base.example: got ['tiny']", "set"),
    "--set repeat.seeds over the limit": (
        TINY, ["--set", "repeat.seeds=[" + ",".join(map(str, range(1001))) + "]",
               "--max-points", "1000"], "repeat.seeds: 1,001 seeds x 1 grid point(s)", "set"),
    "--set an integer of 5000 digits": (
        TINY, ["--set", f"repeat.count={BIG_INT}"],
        "repeat.count: not valid YAML (an integer too long to read (over 4300 digits))", "set"),
    "--set a value nested 20,000 deep": (
        TINY, ["--set", "axes.seed=" + "[" * 20_000], "axes.seed: nested more than 64 levels deep",
        "set"),
    "--set an alias bomb": (
        TINY, ["--set", "description=[&a [x,x,x,x,x,x,x,x,x,x], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a],"
               " &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b], &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c],"
               " &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d], [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]]"],
        "description: more than", "set"),
    "--max-points 0": (TINY, ["--max-points", "0"], "--max-points: got 0; allowed: an integer >= 1",
                       "option"),
    "--batch-memory negative": (TINY, ["--batch-memory=-5GiB"], "--batch-memory: got '-5GiB'",
                                "option"),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_issue_examples_are_refused_in_one_line_fast(tmp_path, capsys, name):
    text, extra, needle, kind = EXAMPLES[name]
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    line = refused(capsys, ["sweep", str(spec), "--dry-run", *extra])
    if kind is None:        # a file position: FILE:LINE:COL
        assert line.startswith(f"extoll-vec: error: {spec}:"), line
    elif kind == "set":     # the --set argument
        assert line.startswith("extoll-vec: error: --set "), line
    assert needle in line, line
    assert len(line) < 600, line


def test_max_points_counts_axes_and_repeat_and_the_option_raises_it(tmp_path, capsys):
    spec = tmp_path / "grid.yaml"
    spec.write_text(TINY + "axes:\n  protocol.window: [4, 8, 16, 32]\n"
                    "  workload.message_bytes: [512, 1024, 2048, 4096, 8192]\n")
    line = refused(capsys, ["sweep", str(spec), "--dry-run", "--max-points", "19"])
    assert "axes: 20 points (a 4 x 5 grid) exceed the limit of 19 points" in line
    assert main(["sweep", str(spec), "--dry-run", "--max-points", "20"]) == 0
    assert "20 points on a 4 x 5 grid" in capsys.readouterr().out
    line = refused(capsys, ["sweep", str(spec), "--dry-run", "--max-points", "39", "--set",
                            "repeat=2"])
    assert "repeat: 2 repetitions x 20 grid point(s) = 40 points exceed the limit of 39" in line
    assert DEFAULT_MAX_POINTS == 100_000
    with pytest.raises(SpecError, match="the limit of 100,000 points"):
        build_sweep({"base": {"example": "tiny"}, "repeat": 100_001})


def test_absurd_sizes_are_refused_before_they_are_built():
    base = {"example": "tiny"}
    cases = [
        {"axes": {"seed": list(range(10**6))}},                       # a list of 10^6 values
        {"axes": {"seed": {"range": [0, 2**62, 1]}}},
        {"axes": {"seed": {"range": {"start": 1, "stop": 2**62, "factor": 1 + 1e-12}}}},
        {"repeat": {"seeds": list(range(10**6))}},
        {"repeat": {"count": 10**30}},
        {"axes": {f"x{i}": [1, 2] for i in range(64)},                 # 2^64 variable points
         "derived": {"seed": " + ".join(f"x{i}" for i in range(64))}},
    ]
    for extra in cases:
        t0 = time.perf_counter()
        with pytest.raises(SpecError, match="limit of 100,000 points"):
            build_sweep({"base": base, **extra})
        assert time.perf_counter() - t0 < FAST, extra


def test_valid_ranges_expand_as_before():
    sw = build_sweep({"base": {"example": "tiny"}, "axes": {"seed": {"range": [0, 99, 1]}}},
                     max_points=100)
    assert sw.n_points == 100 and sw.configs[-1].seed == 99
    with pytest.raises(SpecError, match="gives more values than the limit of 99 points"):
        build_sweep({"base": {"example": "tiny"}, "axes": {"seed": {"range": [0, 99, 1]}}},
                    max_points=99)
    sw = build_sweep({"base": {"example": "tiny"}, "axes": {
        "network.cycle_ns": {"range": [0.5, 1.0, 0.25]},
        "network.buffer_flits": {"range": {"start": 40, "stop": 160, "factor": 2}}}})
    assert sw.axes[0].labels == (0.5, 0.75, 1.0) and sw.axes[1].labels == (40, 80, 160)


@pytest.mark.parametrize("text, needle", [
    ("'a' * 10 ** 12", "string repeated 1000000000000 times is too long"),
    ("[0] * 10 ** 10", "list repeated 10000000000 times is too long"),
    ("[[0] * 10000] * 10000", "list repeated 10000 times is too long"),
    ("'ab' * 5000 + 'c'", "string too long (more than 10000 characters)"),
    ("(9 ** 64) ** 64", "integer too large"),
    ("2 ** 63", "integer too large: 9223372036854775808"),
    ("-(2 ** 62) * 2 - 1", "integer too large"),
    ("2 ** 100000", f"exponent too large: 100000 (at most {MAX_EXPONENT})"),
    ("2.0 ** -65", "exponent too large: -65"),
    ("1e308 * 10", "result inf is not a finite number"),
    ("1e999", "result inf is not a finite number"),
    ("float('nan')", "result nan is not a finite number"),
    ("'%09999999d' % 1", "string formatting with % is not supported"),
    ("round(5, -10 ** 9)", "round to -1000000000 digits: at most 64"),
    ("int('9' * 5000)", "failed: ValueError: Exceeds the limit (4300 digits)"),
    ("1 + " * 150 + "1", f"nested too deeply (more than {MAX_DEPTH} levels)"),
    ("-" * 1900 + "1", "nested too deeply"),
    ("(" * 300 + "1" + ")" * 300, "too many nested parentheses"),
    ("1" * (MAX_TEXT + 1), f"expression too long ({MAX_TEXT + 1} characters; at most "
                           f"{MAX_TEXT})"),
])
def test_expression_bounds(text, needle):
    env = {"protocol": {"window": 8}, "nodes": 4, "seed": 0}
    t0 = time.perf_counter()
    with pytest.raises(ExprError) as exc:
        evaluate(text, env)
    assert time.perf_counter() - t0 < FAST
    assert needle in str(exc.value), str(exc.value)
    assert len(str(exc.value)) < 400


def test_derived_expressions_of_all_points_share_a_time_budget(monkeypatch):
    from extoll_vec.sweep import spec
    monkeypatch.setattr(spec, "DERIVED_SECONDS", 0.0)
    with pytest.raises(SpecError, match=r"protocol.threshold: the derived expressions took over "
                                        r"0 s for 1 points; simplify them or sweep fewer "
                                        r"points \(point 0\)"):
        build_sweep({"base": {"example": "tiny"}, "axes": {"seed": [1, 2]},
                     "derived": {"protocol.threshold": "protocol.window // 2"}})


def test_expressions_within_the_bounds_still_evaluate():
    env = {"protocol": {"window": 8, "name": "window"}, "nodes": 4, "seed": 0}
    assert evaluate("2 ** 62 + (2 ** 62 - 1)", env) == MAX_INT
    assert evaluate("[0] * 10000", env) == [0] * MAX_SIZE
    assert evaluate("'' * 10 ** 12", env) == ""
    assert evaluate("0 if protocol.name == 'none' else 4 * nodes", env) == 16
    assert evaluate("round(2.5 * protocol.window, 1) ** 2", env) == 400.0


def test_the_dry_run_printer_cannot_overflow():
    assert _mb(0) == "0.0 MiB" and _mb(3 * 2**30) == "3.00 GiB"
    assert _mb(14 * 2**40) == "14.00 TiB" and _mb(2**69) == "512.00 EiB"
    assert _mb(10**53) == "over 1024 EiB" and _mb(10**400) == "over 1024 EiB"
    assert _secs(2.5) == "~2.5 s" and _secs(36000) == "~36000 s"
    assert _secs(3 * 86400) == "~259200 s (3.0 days)"
    assert _secs(math.inf) == _secs(math.nan) == _secs(1e40) == "over 100 years"
    assert _seconds(10**400) == math.inf and _seconds(2_000_000) == 2.0
    assert _count(11_248) == "11,248" and _count(3 * 10**18) == "3.0e+18"
    assert _count(10**400) == "over 1e300"


def test_a_point_the_planner_cannot_take_is_refused_by_dry_run(tmp_path, capsys, monkeypatch):
    from extoll_vec.sweep import plan

    def broken(cfg):
        if cfg.seed == 1:
            raise ValueError("iterations must be an integer in 1..2147483647")
        return real(cfg)
    real = plan.estimate
    monkeypatch.setattr(plan, "estimate", broken)
    spec = tmp_path / "s.yaml"
    spec.write_text(TINY + "axes:\n  seed: [0, 1]\n")
    line = refused(capsys, ["sweep", str(spec), "--dry-run"])
    assert line == ("extoll-vec: error: point 1: cannot be planned (seed=1): iterations must be "
                    "an integer in 1..2147483647")


def test_error_log_path_is_beside_the_store():
    assert error_log_path("out/sweep.zarr") == Path("out/sweep.errors.log")
    assert error_log_path("out/store") == Path("out/store.errors.log")
    assert error_log_path(Path("a.b.zarr/")) == Path("a.b.errors.log")


# ---- specs generated from the grammar -------------------------------------------------------
# A valid spec (4 points); each generated case changes one entry of it so that it is invalid.
VALID = {"name": "fuzz",
         "base": {"example": "tiny", "protocol": {"name": "backpressure", "mailbox_slots": 512}},
         "axes": {"protocol.window": [4, 8]},
         "repeat": 2,
         "derived": {"protocol.threshold": "protocol.window // 2"}}
FUZZ_MAX_POINTS = 1000          # the fuzz runs with --max-points 1000: a 'too many' is cheap

NAN, INF = float("nan"), float("inf")
scalars = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                    st.booleans(), st.none(), st.text(max_size=8))
anything = st.one_of(scalars, st.lists(scalars, max_size=3),
                     st.dictionaries(st.sampled_from(["a", "rang", "values", "x"]), scalars,
                                     max_size=2))
not_a_mapping = st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(),
                          st.text(max_size=8), st.lists(scalars, max_size=3))
not_a_string = st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(),
                         st.lists(st.text(max_size=4), max_size=2),
                         st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
identifiers = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)
non_finite = st.sampled_from([NAN, INF, -INF, 2**63, -(2**64), 10**30])
ints = st.integers(1, 50)


def _case(path: tuple, value, settable: bool = True):
    return st.tuples(st.just(path), st.just(value), st.just(settable))


@st.composite
def bad_ranges(draw):
    kind = draw(st.sampled_from(["length", "type", "finite", "zero", "direction", "many",
                                 "factor", "keys"]))
    a, b = draw(ints), draw(ints)
    start, stop = min(a, b), max(a, b) + 1
    if kind == "length":
        return draw(st.lists(ints, max_size=5).filter(lambda x: len(x) != 3))
    if kind == "type":
        r = [start, stop, 1]
        r[draw(st.integers(0, 2))] = draw(st.one_of(st.text(max_size=4), st.booleans(),
                                                     st.none(), st.lists(ints, max_size=2)))
        return r
    if kind == "finite":
        r = [start, stop, 1]
        r[draw(st.integers(0, 2))] = draw(non_finite)
        return r
    if kind == "zero":
        return [start, stop, 0]
    if kind == "direction":
        return [start, stop, -draw(ints)]
    if kind == "many":
        return [0, draw(st.integers(FUZZ_MAX_POINTS + 1, 2**62)), 1]
    if kind == "factor":
        f = draw(st.sampled_from([0, -2, 1, 1.0]))
        return {"start": start, "stop": stop, "factor": f}
    extra = draw(st.sampled_from([{"step": 1, "factor": 2}, {"step": 1, "foo": 1}, {}]))
    return {"start": start, **extra} if not extra else {"start": start, "stop": stop, **extra}


BAD_EXPRESSIONS = st.one_of(
    st.integers(5, 30).map(lambda k: f"'a' * 10 ** {k}"),
    st.integers(5, 30).map(lambda k: f"[0] * 10 ** {k}"),
    st.integers(2, 99).map(lambda b: f"({b} ** 64) ** 64"),
    st.integers(65, 10**6).map(lambda e: f"2 ** {e}"),
    st.integers(63, 200).map(lambda e: f"2 ** 63 * 2 ** {e - 62}"),
    st.integers(200, 400).map(lambda n: "(" * n + "1" + ")" * n),
    st.integers(100, 199).map(lambda n: "[" * n + "]" * n),
    st.integers(101, 1900).map(lambda n: "-" * n + "1"),
    st.integers(101, 600).map(lambda n: "1 + " * n + "1"),
    st.integers(MAX_TEXT + 1, MAX_TEXT + 500).map(lambda n: "1" * n),
    st.sampled_from(["1e308 * 10", "1 / 0", "protocol.nope", "nope + 1", "open('x')",
                     "'%d' % 1", "[1, 2][5]", "protocol.window.x", "1 +", "lambda: 1",
                     "[x for x in [1]]", "float('nan')", "round(1, -10 ** 9)",
                     "int('9' * 5000)", "protocol.__class__", "(1).real", "min()",
                     "'a' + 1", "[1] * 20000", "'x' * 10001"]),
)


def bad_cases():
    """(key path into VALID, the invalid value there, whether --set can give it)."""
    top = st.one_of(
        identifiers.filter(lambda k: k not in TOP_KEYS).flatmap(
            lambda k: anything.map(lambda v: ((k,), v, False))),
        st.one_of(not_a_string, st.sampled_from(["", "   "])).map(lambda v: (("name",), v, True)),
        not_a_string.map(lambda v: (("description",), v, True)),
        not_a_mapping.map(lambda v: (("base",), v, False)),
        not_a_mapping.map(lambda v: (("axes",), v, False)),
        not_a_mapping.map(lambda v: (("derived",), v, False)),
    )
    base = st.one_of(
        st.one_of(not_a_string, st.sampled_from(["nope", "Tiny", ""])).map(
            lambda v: (("base", "example"), v, True)),
        st.one_of(not_a_string, st.sampled_from(["buffered", "none"])).map(
            lambda v: (("base", "variant"), v, True)),
        identifiers.filter(lambda k: k not in ("topology", "network", "host", "mpi", "protocol",
                                               "workload", "limits", "seed", "example",
                                               "variant")).map(
            lambda k: (("base", k), {}, False)),
        not_a_mapping.map(lambda v: (("base", "network"), v, False)),
        identifiers.filter(lambda k: k not in ("name", "mailbox_slots", "window", "threshold",
                                               "credit_slots", "piggyback")).map(
            lambda k: (("base", "protocol", k), 1, False)),
    )
    axes = st.one_of(
        st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=6), st.booleans(),
                  st.just([]), st.just({}),
                  st.dictionaries(st.sampled_from(["rang", "values", "x"]), ints, min_size=1,
                                  max_size=2)).map(
            lambda v: (("axes", "protocol.window"), v, True)),
        bad_ranges().map(lambda r: (("axes", "workload.message_bytes"), {"range": r}, True)),
        st.one_of(st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False),
                  st.sampled_from(["protocol.windw", "bogus", "x y", "network"])).map(
            lambda k: (("axes", k), [1, 2], False)),
        st.tuples(st.integers(1, 4), st.integers(1, 4)).filter(lambda t: t[0] != t[1]).map(
            lambda t: (("axes", "c"), {"zip": {"workload.message_bytes": [512 * (i + 1) for i in
                                                                        range(t[0])],
                                               "network.buffer_flits": [40 * (i + 1) for i in
                                                                        range(t[1])]}}, True)),
        st.sampled_from(["point", "rank", "kind", "completed", "rep", "seed", "1c", "a-b"]).map(
            lambda k: (("axes", k), {"zip": {"workload.message_bytes": [512, 1024]}}, False)),
        st.one_of(not_a_mapping, st.just({}),
                  st.just({"workload.message_bytes": [512], "bogus.key": [1]})).map(
            lambda z: (("axes", "c"), {"zip": z}, True)),
        st.sampled_from([{"zip": {"workload.message_bytes": [512, 1024]}, "lables": [1, 2]},
                         {"zip": {"workload.message_bytes": [512, 1024]}, "labels": [1]},
                         {"zip": {"workload.message_bytes": [512, 1024]},
                          "labels": [[1], [2]]}]).map(lambda v: (("axes", "c"), v, True)),
        st.integers(FUZZ_MAX_POINTS // 2 + 1, 10**6).map(
            lambda n: (("axes", "network.buffer_flits"), {"range": [1, n, 1]}, True)),
    )
    repeat = st.one_of(
        st.one_of(st.integers(-10, 0), st.booleans(), st.floats(allow_nan=True),
                  st.text(max_size=5), st.lists(ints, max_size=2),
                  st.integers(FUZZ_MAX_POINTS // 2 + 1, 10**30)).map(
            lambda v: (("repeat",), v, True)),
        st.sampled_from([{"count": 2, "bogus": 1}, {"seeds": [1, 2], "count": 2}, {"seeds": []},
                         {"seeds": [1, 1]}, {"seeds": [1, "a"]}, {"seeds": [1, 2.5]},
                         {"seeds": "1, 2"}, {"count": 2, "seed": "a"}, {"count": 0},
                         {"count": 2, "seed": 1.5}, {"seeds": [True, 2]},
                         {"seeds": list(range(FUZZ_MAX_POINTS // 2 + 1))}]).map(
            lambda v: (("repeat",), v, True)),
    )
    derived = st.one_of(
        BAD_EXPRESSIONS.map(lambda e: (("derived", "protocol.threshold"), e, True)),
        st.sampled_from(["bogus", "protocol.windw", "protocol.window", "network"]).map(
            lambda k: (("derived", k), "1", True)),
        st.one_of(st.lists(ints, min_size=1, max_size=3),
                  st.dictionaries(st.text(max_size=3), ints, min_size=1, max_size=2)).map(
            lambda v: (("derived", "protocol.threshold"), v, True)),
    )
    return st.one_of(top, base, axes, repeat, derived)


def _apply(path: tuple, value) -> dict:
    import copy
    spec = copy.deepcopy(VALID)
    node = spec
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    return spec


def _set_arg(path: tuple, value) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10**9).strip()
    text = re.sub(r"\n\.\.\.$", "", text)
    return ".".join(map(str, path)) + "=" + text


def test_the_valid_fuzz_spec_is_valid(tmp_path, capsys):
    spec = tmp_path / "valid.yaml"
    spec.write_text(yaml.safe_dump(VALID, sort_keys=False))
    assert main(["sweep", str(spec), "--dry-run", "--max-points", str(FUZZ_MAX_POINTS)]) == 0
    assert "4 points on a 2 x 2 grid" in capsys.readouterr().out


@pytest.mark.slow     # 1,000 generated specs; the explicit cases above stay in the inner loop
def test_generated_bad_specs_are_refused_in_one_line(tmp_path, capsys):
    """Specs from the grammar with one entry made invalid (an unknown top key, a wrong type for
    every key, bad ranges, zips, repeats, derived expressions, too many points), in the file or
    through --set: exit 2, one line, no traceback, each fast and all within a budget."""
    seen = []

    @settings(max_examples=1000, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(case=bad_cases(), via_set=st.booleans())
    def check(case, via_set):
        path, value, settable = case
        spec = tmp_path / "bad.yaml"
        args = ["--max-points", str(FUZZ_MAX_POINTS)]
        if via_set and settable:     # the bad value comes from --set KEY=VALUE
            spec.write_text(yaml.safe_dump(VALID, sort_keys=False))
            args += ["--set", _set_arg(path, value)]
        else:
            spec.write_text(yaml.safe_dump(_apply(path, value), sort_keys=False))
        t0 = time.perf_counter()
        line = refused(capsys, ["sweep", str(spec), "--dry-run", *args])
        seen.append((path, time.perf_counter() - t0))
        assert len(line) < 1000, line

    t0 = time.perf_counter()
    check()
    total = time.perf_counter() - t0
    assert len(seen) >= 900
    assert total < 25, f"{len(seen)} bad specs took {total:.1f} s"


# ---- a failing point in a real sweep --------------------------------------------------------
@pytest.mark.slow
def test_a_failing_point_is_one_line_and_its_traceback_goes_to_the_log(tmp_path):
    """Backpressure with 64 mailbox slots deadlocks with the 16-packet FIFO of the variant fifo16
    (as in test_sweep_dask): the terminal shows
    the point's one-line error and the summary, no Dask "Compute Failed" dump and no
    traceback; OUT.errors.log holds the traceback and the point's config (loadable as it is)."""
    spec = tmp_path / "fail.yaml"
    spec.write_text("name: fail\nbase: {example: tiny, variant: fifo16, "
                    "protocol: {name: backpressure}}\n"
                    "axes:\n  protocol.mailbox_slots: [512, 64, 1024]\n")
    out = tmp_path / "f.zarr"
    run = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "sweep", str(spec), "-o",
                          str(out), "--workers", "1"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert run.returncode == 2, run.stderr
    assert "Compute Failed" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    log = tmp_path / "f.errors.log"
    errors = [x for x in run.stderr.splitlines() if x.startswith("extoll-vec:")]
    assert len(errors) == 2, run.stderr
    assert errors[0].startswith("extoll-vec: point 1 (protocol.mailbox_slots=64) failed: "
                                "deadlock at cycle")
    assert errors[1].startswith("extoll-vec: error: 1 of 3 points failed (first: point 1")
    assert errors[1].endswith(f"the store holds the others; details in {log}")
    assert "summary of fail: 2 points" in run.stdout
    text = log.read_text()
    assert "---- point 1 (protocol.mailbox_slots=64) failed:\ndeadlock at cycle" in text
    assert "Traceback (most recent call last):" in text and "SimulationError" in text
    config = text.split("reproduces it):\n")[1].split("\n\ntraceback")[0]
    cfg_file = tmp_path / "point1.yaml"
    cfg_file.write_text(config)
    assert load_yaml(cfg_file) == load_sweep(spec).configs[1]
