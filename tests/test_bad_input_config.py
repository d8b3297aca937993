"""Bad input never crashes, hangs or passes silently: config fields and config/spec files
Every refusal is one line ``extoll-vec: error: ...`` naming the field
or the file, exit 2, no traceback, nothing written."""
from __future__ import annotations

import copy
import dataclasses
import gzip
import math
import os
import re
import subprocess
import sys
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec import config as C
from extoll_vec import inputs
from extoll_vec.cli import main
from extoll_vec.config import SECTIONS, RunConfig, from_dict, load_yaml
from extoll_vec.engine import sizing
from extoll_vec.errors import ConfigError, SpecError
from extoll_vec.examples import get_example

BASE = {
    "topology": {"kind": "mesh", "dims": [2, 2]},
    "mpi": {"ranks_per_node": 4},
    "protocol": {"name": "none"},
    "workload": {"kind": "alltoall", "ranks": 16, "message_bytes": 2048},
}
BIG = 10**30
GiB = 2**30


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """An empty working directory; the test checks that nothing was written into it."""
    d = tmp_path / "cwd"
    d.mkdir()
    monkeypatch.chdir(d)
    return d


def refused(capsys, argv, needle: str, cwd=None) -> str:
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("extoll-vec: error: "), lines[0]
    assert needle in lines[0], lines[0]
    if cwd is not None:
        assert os.listdir(cwd) == []
    return lines[0][len("extoll-vec: error: "):]


# ---- known bad settings, through `run --example tiny --set ...` ----------------------------

def _dotted_limits_fields():
    """Every field of network, host and limits, protocol.window/threshold and the workload's
    cycle fields: what 'any 1e30 in a network, host, window, threshold, cycles or limits
    field' covers."""
    out = [f"{s}.{f.name}" for s in ("network", "host", "limits")
           for f in dataclasses.fields(SECTIONS[s])]
    out += ["protocol.window", "protocol.threshold"]
    out += [f"workload.{f.name}" for f in dataclasses.fields(C.WorkloadConfig)
            if f.name.endswith("_cycles")]
    return out


ISSUE = [
    ("host.pio_ns=.inf", "host.pio_ns: got inf; allowed: a finite cost 0..1e9 nanoseconds"),
    (f"topology.a={BIG}", f"topology.a: got {BIG}; allowed: an integer 1..2147483647"),
    (f"workload.iterations={BIG}", f"workload.iterations: got {BIG}; allowed: an integer"),
    (f"limits.chunk_cycles={BIG}", f"limits.chunk_cycles: got {BIG}; allowed: an integer 1..1e18"),
    ("network.buffer_flits=2147483648", "network.buffer_flits: got 2147483648; allowed: "
                                        "an integer 1..2147483647 flits"),
    ("network.cycle_ns=.inf", "network.cycle_ns: got inf; allowed: a finite cycle length "
                              "0.001..1e6 nanoseconds"),
    ("topology.a=-1", "topology.a: got -1;"),                 # ignored by a mesh
    ("protocol.window=-1", "protocol.window: got -1;"),      # ignored by protocol none
    ("protocol.threshold=-1", "protocol.threshold: got -1;"),
    ("workload.phases=[-2,2]", "workload.phases: got [-2, 2];"),   # ignored by alltoall
    ("network.cycle_ns=.nan", "network.cycle_ns: got nan;"),
    ("network.cycle_ns=0", "network.cycle_ns: got 0.0;"),
    ("host.credit_ns=-.inf", "host.credit_ns: got -inf;"),
    ("seed=-1", "seed: got -1; allowed: an integer 0..9223372036854775807"),
    ("topology.dims=[100000,100000]", "topology.dims: got [100000, 100000]; allowed: at most "
                                      "2147483647 nodes and routers"),
]


def _huge(dotted: str) -> str:
    """1e30 as YAML for the field: a float (1.0e+30; YAML 1.1 reads 1e30 as a string) or an
    integer."""
    sec, name = dotted.split(".")
    return "1.0e+30" if isinstance(getattr(getattr(RunConfig(), sec), name), float) else str(BIG)


ISSUE += [(f"{k}={_huge(k)}", f"{k}: got ") for k in _dotted_limits_fields()]


@pytest.mark.parametrize("setting, needle", ISSUE, ids=[s[:40] for s, _ in ISSUE])
def test_issue_examples_refused_in_one_line(capsys, cwd, setting, needle):
    refused(capsys, ["run", "--example", "tiny", "--set", setting, "-o", "out.zarr"], needle, cwd)


def test_issue_examples_in_a_subprocess(cwd):
    for setting, needle in ISSUE[:1] + [("workload.phases=[-2,2]", "workload.phases")]:
        proc = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "run", "--example", "tiny",
                               "--set", setting], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and needle in proc.stderr, proc.stderr
    assert os.listdir(cwd) == []


def test_set_values_yaml_cannot_parse(capsys, cwd):
    refused(capsys, ["run", "--example", "tiny", "--set", "workload.phases=" + "[" * 20000],
            "workload.phases: value '[[[[", cwd)
    refused(capsys, ["run", "--example", "tiny", "--set", "network={vcs: 2, vcs: 3}"],
            "duplicate key", cwd)
    refused(capsys, ["run", "--example", "tiny", "--set", "topology.a=1" + "0" * 5000],
            "topology.a: value '1000", cwd)


# ---- memory: refused before anything is allocated ---------------------------------------------

def test_memory_refused_naming_the_field(capsys, cwd, monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 22 * GiB)
    msg = refused(capsys, ["run", "--example", "tiny", "--set", "network.buffer_flits=10000000",
                           "-o", "out.zarr"], "network.buffer_flits", cwd)
    assert re.fullmatch(r"network\.buffer_flits: got 10000000; the run would need at least "
                        r"[\d.]+ GiB \(event calendar [\d.]+ GiB, packet pool [\d.]+ GiB\), "
                        r"more than the 22 GiB available", msg), msg
    msg = refused(capsys, ["run", "--example", "tiny", "--set", "workload.ranks=16384",
                           "--set", "mpi.ranks_per_node=4096"], "workload.ranks: got 16384;", cwd)
    assert "rank programs" in msg and "22 GiB available" in msg
    # beyond what int32 indices address, whatever the machine
    monkeypatch.setattr(sizing, "available_memory", lambda: 2**70)
    msg = refused(capsys, ["run", "--example", "tiny", "--set", "network.buffer_flits=2147483647"],
                  "network.buffer_flits: got 2147483647; the run would need", cwd)
    assert "event pool entries, more than the 2147483647" in msg
    refused(capsys, ["run", "--example", "tiny", "--set", "workload.kind=multiphase",
                     "--set", "workload.iterations=2147483647"], "workload.iterations", cwd)


EXTREME = [
    {"network": {"buffer_flits": C.I32_MAX, "nic_fifo_packets": C.I32_MAX,
                 "nic_ejection_flits": C.I32_MAX, "link_latency": C.HOP_CYCLES_MAX,
                 "router_delay": C.HOP_CYCLES_MAX, "vcs": 8}},
    {"topology": {"dims": [46340, 46340]}, "workload": {"kind": "uniform"}},
    {"topology": {"kind": "dragonfly", "p": 1, "a": C.PORTS_MAX - 1, "h": 1},
     "workload": {"kind": "uniform"}},
    {"topology": {"kind": "crossbar", "p": C.PORTS_MAX}, "network": {"vcs": 8},
     "workload": {"kind": "uniform"}},
    {"workload": {"ranks": C.RANKS_MAX, "kind": "multiphase", "iterations": C.I32_MAX},
     "topology": {"dims": [2, 2]}, "mpi": {"ranks_per_node": C.RANKS_MAX // 4},
     "protocol": {"name": "dynamic", "mailbox_slots": C.I32_MAX, "credit_slots": 16}},
]


@pytest.mark.parametrize("topo, field", [
    ({"kind": "crossbar", "p": C.PORTS_MAX + 1}, "topology.p"),
    ({"kind": "dragonfly", "p": 2, "a": C.PORTS_MAX, "h": 1, "groups": 2}, "topology.a"),
    ({"kind": "hypercube", "p": C.PORTS_MAX, "cube_dim": 1}, "topology.p")])
def test_ports_per_router_beyond_the_int16_route_table_are_refused(topo, field):
    with pytest.raises(ConfigError) as exc:
        from_dict({"topology": topo})
    assert exc.value.field == field and f"at most {C.PORTS_MAX} ports per router" in str(exc.value)


@pytest.mark.parametrize("i", range(len(EXTREME)))
def test_memory_estimate_of_extreme_configs_allocates_nothing(i):
    cfg = from_dict(copy.deepcopy(EXTREME[i]))     # valid: within every declared bound
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(ConfigError) as exc:
            sizing.check_memory([cfg], available=32 * GiB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20 and time.perf_counter() - t0 < 5, peak
    assert "\n" not in str(exc.value) and exc.value.field != "config"


def test_memory_estimate_is_a_lower_bound_of_the_batch():
    from extoll_vec.engine import Batch
    from extoll_vec.state import nbytes
    tiny = get_example("tiny")
    for cfg in (tiny, tiny.replace(**{"protocol.name": "static", "protocol.mailbox_slots": 256}),
                tiny.replace(**{"workload.kind": "multiphase", "workload.iterations": 3}),
                tiny.replace(**{"workload.kind": "uniform"})):
        b = Batch([cfg])
        parts, sizes = sizing.estimate_parts([cfg])
        besides = ("topology tables", "rank programs", "process")
        state = sum(v for k, v in parts.items() if k not in besides)
        assert state <= nbytes(b.S) <= 1.2 * state
        assert sizes["program rows"] <= b.ops.shape[1]
        assert sizing.check_memory([cfg]) == sum(parts.values())
        # with the program's figures: the state the batch allocates, exactly
        from extoll_vec.engine.batch import member_figures
        from extoll_vec.workloads import build_program, skewed
        prog = skewed(build_program(cfg), cfg) if cfg.n_ranks else None
        fig, _ = member_figures(cfg, prog)
        parts, sizes = sizing.estimate_parts([cfg], [fig], [len(prog.ops) if prog else 0])
        assert {k: v for k, v in sizes.items() if k != "program rows"} == b.sizes
        state = sum(v for k, v in parts.items() if k not in besides + ("working memory",))
        assert state == nbytes(b.S) and b.memory_estimate == sum(parts.values())


def test_topology_shape_matches_the_built_topology():
    from extoll_vec.topology import build
    for kw in (dict(kind="mesh", dims=(3, 1, 2)), dict(kind="torus", dims=(4, 4)),
               dict(kind="dragonfly", p=2, a=4, h=2),
               dict(kind="dragonfly", p=2, a=4, h=2, groups=5),
               dict(kind="crossbar", p=5), dict(kind="hypercube", p=2, cube_dim=3)):
        t = C.TopologyConfig(**kw)
        topo = build(t)
        assert sizing.topology_shape(t) == (topo.n_routers, topo.n_ports, topo.n_nodes)
        assert t.n_routers == topo.n_routers


# ---- files ----------------------------------------------------------------------------------

# seven levels of ten aliases each: 10**7 values once expanded, from 8 lines
LAUGHS = b"a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + b"".join(
    b"%c: &%c [%s]\n" % (c, c, b", ".join([b"*" + bytes([c - 1])] * 10)) for c in b"bcdefgh")


def _files(tmp_path):
    d = tmp_path / "in"
    d.mkdir()

    def w(name, data: bytes):
        (d / name).write_bytes(data)
        return str(d / name)
    good = b"topology: {kind: mesh, dims: [2, 2]}\n"
    os.symlink(d / "loop2", d / "loop1")
    os.symlink(d / "loop1", d / "loop2")
    return {
        "empty": (w("empty.yaml", b""), "nothing to run: give --example or a config with at "
                                        "least one section"),
        "whitespace": (w("ws.yaml", b"  \n\t\n# only a comment\n"), "nothing to run"),
        "dev-null": ("/dev/null", "/dev/null: config: nothing to run"),
        "empty-mapping": (w("map.yaml", b"{}\n"), "nothing to run"),
        "seed-only": (w("seed.yaml", b"seed: 3\n"), "seed.yaml: config: nothing to run"),
        "duplicate-key": (w("dup.yaml", b"topology: {kind: mesh}\nnetwork: {vcs: 2}\n"
                                         b"network: {vcs: 3}\n"),
                          "dup.yaml:3:1: network: duplicate key (first at line 2)"),
        "duplicate-field": (w("dup2.yaml", b"mpi:\n  ranks_per_node: 4\n  ranks_per_node: 5\n"),
                            "dup2.yaml:3:3: mpi.ranks_per_node: duplicate key"),
        "latin-1": (w("l1.yaml", "topology: {kind: mesh}  # café\n".encode("latin-1")),
                    "l1.yaml:1:30: config: is not UTF-8 text (byte 0xe9)"),
        "binary": (w("bin.yaml", bytes(range(256)) * 4), "bin.yaml:1:1: config: is a binary file"),
        "utf-16": (w("u16.yaml", good.decode().encode("utf-16")), "u16.yaml: config: is UTF-16"),
        "utf-16-no-bom": (w("u16n.yaml", good.decode().encode("utf-16-le")), "is UTF-16 text"),
        "gzip": (w("cfg.yaml.gz", gzip.compress(good)), "cfg.yaml.gz: config: is a "
                                                         "gzip-compressed file"),
        "nested": (w("deep.yaml", b"[" * 20000), "deep.yaml: config: nested more than 64"),
        "nested-closed": (w("deep2.yaml", b"topology: " + b"[" * 100 + b"]" * 100 + b"\n"),
                          "deep2.yaml:1:"),
        "aliases-expanding": (w("laughs.yaml", LAUGHS), "more than 100000 values"),
        "control-char": (w("ctl.yaml", b"topology: {kind: mesh}\nseed: \x07\n"),
                         "ctl.yaml:2:7: config: control character U+0007"),
        "two-documents": (w("two.yaml", good + b"---\n" + good), "two.yaml:2:1: config: not valid"),
        "directory": (str(d), f"{d}: config: is a directory"),
        "symlink-loop": (str(d / "loop1"), "loop1: config: too many levels of symbolic links"),
        "missing": (str(d / "nowhere.yaml"), "nowhere.yaml: config: file not found"),
        "long-name": ("x" * 5000, "(5000 characters): config: file name too long"),
        "too-large": (w("big.yaml", b"# " + b"x" * (2 << 20) + b"\n"), "larger than 1 MiB"),
        "bad-timestamp": (w("ts.yaml", b"seed: 2020-13-45\n"), "ts.yaml: config: not valid YAML"),
        "list": (w("list.yaml", b"- topology\n"), "list.yaml: config: must be a mapping"),
        "bad-field": (w("field.yaml", b"topology: {kind: mesh, dims: [2, 2]}\n"
                                      b"host:\n  pio_ns: .inf\n"),
                      "field.yaml:3:3: host.pio_ns: got inf; allowed: a finite cost"),
    }


def test_bad_config_files_refused_in_one_line(tmp_path, cwd, capsys):
    files = _files(tmp_path)
    before = {n: open(p, "rb").read() for n, (p, _) in files.items()
              if os.path.isfile(p) and p != "/dev/null"}
    for name, (path, needle) in files.items():
        refused(capsys, ["run", path], needle, cwd)
        with pytest.raises(SpecError):
            load_yaml(path)
    assert before == {n: open(p, "rb").read() for n, (p, _) in files.items() if n in before}


def test_spec_files_use_the_same_reader(tmp_path, cwd, capsys):
    from extoll_vec.sweep import load_sweep
    files = _files(tmp_path)
    for name in ("latin-1", "binary", "utf-16", "gzip", "nested", "directory", "symlink-loop",
                 "long-name", "duplicate-key", "aliases-expanding"):
        path, needle = files[name]
        with pytest.raises(SpecError) as exc:
            load_sweep(path)
        assert needle.replace("config:", "spec:") in str(exc.value)
    refused(capsys, ["sweep", files["gzip"][0], "--dry-run"], "spec: is a gzip-compressed", cwd)


def test_unreadable_file(tmp_path, cwd, capsys, monkeypatch):
    path = tmp_path / "secret.yaml"
    path.write_text("topology: {kind: mesh}\n")

    def denied(p, *a, **kw):
        raise PermissionError(13, "Permission denied", p)
    # as root chmod 000 does not stop reading, so the denial is simulated here ...
    with monkeypatch.context() as m:
        m.setattr(inputs, "open", denied, raising=False)
        refused(capsys, ["run", str(path)], f"{path}: config: cannot read: permission denied",
                cwd)
    # ... and real for a user other than root (skipped only when running as root)
    if os.geteuid() != 0:
        path.chmod(0)
        try:
            refused(capsys, ["run", str(path)], "permission denied", cwd)
        finally:
            path.chmod(0o644)


VALID = {
    "anchors": b"topology: {kind: mesh, dims: &two [2, 2]}\nmpi: {ranks_per_node: 4}\n"
               b"workload: {ranks: 16}\nnetwork: {buffer_flits: &b 48, nic_ejection_flits: *b}\n",
    "bom-crlf-comments": b"\xef\xbb\xbf# a comment\r\ntopology: {kind: mesh, dims: [2, 2]}  # x\r\n"
                         b"mpi: {ranks_per_node: 4}\r\nworkload: {ranks: 16}\r\n"
                         b"network: {buffer_flits: 48, nic_ejection_flits: 48}\r\n",
    "json": b'{"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},\n'
            b' "workload": {"ranks": 16}, "network": {"buffer_flits": 48, '
            b'"nic_ejection_flits": 48}}',
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid_variants_accepted(tmp_path, name):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(VALID[name])
    want = from_dict({**BASE, "network": {"buffer_flits": 48, "nic_ejection_flits": 48},
                      "protocol": {}})
    assert load_yaml(str(path)) == want


def test_valid_config_file_runs(tmp_path, cwd, capsys):
    path = tmp_path / "ok.yaml"
    path.write_bytes(VALID["bom-crlf-comments"])
    assert main(["run", str(path)]) == 0
    assert "exec_time_us" in capsys.readouterr().out


# ---- every field of every section: the declared bounds ---------------------------------------

ALL_FIELDS = [(sec, f.name) for sec, cls in SECTIONS.items() for f in dataclasses.fields(cls)]
ALL_FIELDS.append(("", "seed"))


def _bounds(sec, name) -> C.Bounds:
    cls = SECTIONS[sec] if sec else RunConfig
    return {f.name: f for f in dataclasses.fields(cls)}[name].metadata["bounds"]


def test_every_field_declares_bounds():
    for sec, name in ALL_FIELDS:
        b = _bounds(sec, name)
        assert b.kind in ("int", "float", "bool", "str", "ints")
        if b.kind in ("int", "float", "ints"):
            assert b.lo is not None and b.hi is not None and b.lo <= b.hi


def admissible(b: C.Bounds, v) -> bool:
    """What a field's Bounds admit, written out independently of config.Bounds.admits."""
    def in_range(x):
        lo_ok = b.lo < x if b.lo_open else b.lo <= x
        return lo_ok and x <= b.hi
    is_int = isinstance(v, int) and not isinstance(v, bool)
    if b.kind == "int":
        return is_int and in_range(v)
    if b.kind == "float":
        if isinstance(v, float):
            return not math.isnan(v) and not math.isinf(v) and in_range(v)
        return is_int and in_range(v)
    if b.kind == "bool":
        return isinstance(v, bool)
    if b.kind == "str":
        return isinstance(v, str) and v in b.choices
    return (isinstance(v, list) and b.length[0] <= len(v) <= b.length[1]
            and all(isinstance(x, int) and not isinstance(x, bool) and in_range(x) for x in v))


def check_one(sec: str, name: str, value) -> None:
    b = _bounds(sec, name)
    d = copy.deepcopy(BASE)
    dotted = f"{sec}.{name}" if sec else name
    if sec:
        d.setdefault(sec, {})[name] = copy.deepcopy(value)
    else:
        d[name] = value
    try:
        cfg = from_dict(d)
    except ConfigError as exc:
        assert "\n" not in str(exc)
        if not admissible(b, value):
            assert exc.field == dotted, (dotted, value, str(exc))
            assert str(exc).startswith(f"{dotted}: got ") and "allowed: " in str(exc)
        return
    assert admissible(b, value), (dotted, value)
    got = getattr(getattr(cfg, sec), name) if sec else cfg.seed
    assert got == (tuple(value) if isinstance(value, list) else value)


def _families(b: C.Bounds) -> list:
    nan, inf = float("nan"), float("inf")
    vals = ["x", True, False, None, {}, 1.5, [1], -1, 0, -1.0, 0.0, nan, inf, -inf, BIG, -BIG,
            1e30, 10**400, "1e30"]
    if b.kind in ("int", "float"):
        step = 1 if b.kind == "int" else 1e-9 * max(1.0, abs(b.hi))
        vals += [b.lo, b.hi, b.lo - 1, b.hi + step, b.hi + 1]
    if b.kind == "ints":
        vals += [[], [b.lo] * b.length[0], [b.lo - 1], [b.hi + 1], [nan], [inf], [BIG],
                 [2] * (b.length[1] + 1), ["2"], [True]]
    if b.kind == "str":
        vals += list(b.choices) + [b.choices[0].upper(), ""]
    return vals


@pytest.mark.parametrize("sec, name", ALL_FIELDS, ids=[f"{s}.{n}" for s, n in ALL_FIELDS])
def test_every_field_refuses_bad_values(sec, name):
    for value in _families(_bounds(sec, name)):
        check_one(sec, name, value)


VALUES = st.one_of(
    st.integers(), st.integers(-2**80, 2**80), st.integers(-3, 2**31 + 3),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=6), st.lists(st.integers(-3, 2**20), max_size=5),
    st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=2)), max_size=3),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), BIG, -BIG, 0, -1, 0.0]))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field_=st.sampled_from(ALL_FIELDS), value=VALUES)
def test_property_every_field_refused_or_within_bounds(field_, value):
    check_one(*field_, value)


def test_api_paths_share_the_checks():
    cfg = from_dict(BASE)
    with pytest.raises(ConfigError, match=r"^host\.pio_ns: got inf"):
        cfg.replace(**{"host.pio_ns": float("inf")})
    with pytest.raises(ConfigError, match=r"^topology\.a: got -1"):
        RunConfig(topology=dataclasses.replace(cfg.topology, a=-1))
    with pytest.raises(ConfigError, match=r"^network: got"):
        RunConfig(network={"vcs": 2})
    with pytest.raises(ConfigError, match=r"^workload\.phases"):
        from_dict({**BASE, "workload": {**BASE["workload"], "phases": [2, "3"]}})
