"""The dry run refuses what the run refuses, in the same one line.

Every config field (read from the declared Bounds by badinput.config_fields, so a new field
is covered) with an invalid value of each kind (wrong type, non-finite or fractional, out of
range or absurdly large, an unknown name): `run --set` and `sweep --dry-run` on a spec whose
base holds it (and, for a share of the fields, whose axis holds it) both exit with 2 and one
line naming the field. Then what only building a point finds (a topology's VCs, a routing's
channel dependency cycle, the memory a point needs): the same refusal both ways. In-process
calls of the command line, so that the whole file takes seconds."""
from __future__ import annotations

import contextlib
import io

import pytest
import yaml

from badinput import bad_values, config_fields, yaml_text
from extoll_vec.cli import main

FIELDS = list(config_fields())
AXIS_EVERY = 3      # every third field also as an axis value (the base covers every field)


def kinds_of_bad(b) -> list:
    """One invalid value of each kind the field's Bounds refuse: the first of bad_values
    (a wrong type), a non-finite or fractional number, the largest above the range and the
    one below it (numbers), a near miss (names), items out of range (lists)."""
    vals = bad_values(b)
    picks = [vals[0]]
    odd = [v for v in vals if isinstance(v, float) and (v != v or v in (float("inf"), 1.5))]
    picks += odd[:1]
    if b.kind in ("int", "float"):
        picks += [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)
                  and v == v and abs(v) != float("inf") and v > b.hi][-1:]
        picks += [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)
                  and v == v and v < b.lo][:1]
    elif b.kind == "str":
        picks += [v for v in vals if isinstance(v, str) and v not in ("abc", "")
                  and len(v) < 100][:1]          # a near miss: Mesh, mes, mesh + space
    elif b.kind == "ints":
        picks += [v for v in vals if isinstance(v, list) and v and isinstance(v[0], int)][:2]
    out = []
    for v in picks:
        if yaml_text(v) not in map(yaml_text, out):
            out.append(v)
    return out


CASES = [(name, v) for name, b in FIELDS for v in kinds_of_bad(b)]


def one_line(argv) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(argv)
    return rc, err.getvalue()


def check_refused(rc: int, err: str, name: str, how: str, value) -> None:
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, (how, name, value, rc, err)
    assert lines[0].startswith("extoll-vec: error: ") and name in lines[0], (how, lines[0])


def spec_file(tmp_path, base: dict, axes: dict) -> str:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"name": "dry", "base": base, "axes": axes}, width=10**6))
    return str(p)


def other_axis(name: str) -> dict:
    """An axis that does not set the field under test."""
    return {"seed": [1, 2]} if name != "seed" else {"workload.warmup": [0, 1]}


def test_every_field_has_an_invalid_value_of_each_kind():
    assert len(FIELDS) > 100
    for name, b in FIELDS:
        assert len(kinds_of_bad(b)) >= 2, name


def test_run_and_dry_run_refuse_every_fields_invalid_values(tmp_path):
    """Both ways, every field: the base of the spec holds the value; every AXIS_EVERY-th field
    also as an axis."""
    for i, (name, b) in enumerate(FIELDS):
        sec, _, fld = name.rpartition(".")
        for v in kinds_of_bad(b):
            check_refused(*one_line(["run", "--example", "tiny", "--set",
                                     f"{name}={yaml_text(v)}"]), name, "run", v)
            base = {"example": "tiny", **({sec: {fld: v}} if sec else {fld: v})}
            path = spec_file(tmp_path, base, other_axis(name))
            check_refused(*one_line(["sweep", path, "--dry-run"]), name, "dry run (base)", v)
        if i % AXIS_EVERY == 0:
            v = kinds_of_bad(b)[-1]
            axes = {**other_axis(name), name: [v]}
            path = spec_file(tmp_path, {"example": "tiny"}, axes)
            check_refused(*one_line(["sweep", path, "--dry-run"]), name, "dry run (axis)", v)


# ---- valid fields, a point the run refuses when it builds it ---------------------------------
TORUS = {"topology": {"kind": "torus", "dims": [4, 4]}, "mpi": {"ranks_per_node": 1},
         "workload": {"kind": "alltoall", "ranks": 16}}
BUILT = {
    # the torus's dateline VCs: its tables need two
    "torus with one VC": ({**TORUS, "network": {"vcs": 1}}, "network.vcs"),
    # every hop on VC 0 of a torus: a channel dependency cycle
    "torus on flat VCs": ({**TORUS, "network": {"vc_assignment": "flat"}},
                          "network.vc_assignment"),
}


def _config_file(tmp_path, cfg: dict) -> str:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return str(p)


@pytest.mark.parametrize("label", list(BUILT))
def test_what_building_a_point_refuses_the_dry_run_refuses(label, tmp_path):
    cfg, name = BUILT[label]
    check_refused(*one_line(["run", _config_file(tmp_path, cfg)]), name, "run", label)
    path = spec_file(tmp_path, cfg, {"seed": [1, 2]})
    check_refused(*one_line(["sweep", path, "--dry-run"]), name, "dry run", label)
    path = spec_file(tmp_path, {k: v for k, v in cfg.items() if k != "network"},
                     {"seed": [1], f"network.{name.split('.')[1]}": [cfg["network"][
                         name.split(".")[1]]]})
    check_refused(*one_line(["sweep", path, "--dry-run"]), name, "dry run (axis)", label)


def test_a_point_larger_than_the_memory_limit_is_refused_both_ways(tmp_path, monkeypatch):
    """The sizing check (engine/sizing.py) with the limit of EXTOLL_VEC_MEMORY_LIMIT: the same
    refusal, naming the field that makes the point large."""
    monkeypatch.setenv("EXTOLL_VEC_MEMORY_LIMIT", "64MiB")
    cfg = {"topology": {"kind": "mesh", "dims": [4, 4]}, "mpi": {"ranks_per_node": 64},
           "protocol": {"name": "static", "mailbox_slots": 2**20},
           "workload": {"kind": "alltoall", "ranks": 1024}}
    rc, err = one_line(["run", _config_file(tmp_path, cfg)])
    check_refused(rc, err, "protocol.mailbox_slots", "run", "64MiB")
    assert "64 MiB" in err
    rc, err = one_line(["sweep", spec_file(tmp_path, cfg, {"seed": [1, 2]}), "--dry-run"])
    check_refused(rc, err, "protocol.mailbox_slots", "dry run", "64MiB")
    assert "64 MiB" in err
