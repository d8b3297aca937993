"""Sweep specs, cluster files and batch planning (no cluster, no simulation)."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from extoll_vec.cli import main
from extoll_vec.errors import ConfigError, SpecError
from extoll_vec.examples import get_example
from extoll_vec.sweep import load_sweep
from extoll_vec.sweep.cluster import load_cluster_spec
from extoll_vec.sweep.expr import ExprError, evaluate
from extoll_vec.sweep.plan import batch_size, plan_batches

GOOD = """\
name: good
base: {example: tiny, protocol: {mailbox_slots: 64}}
axes:
  protocol.name: [backpressure, window]
  credits:
    zip: {protocol.window: [4, 8], protocol.threshold: [2, 4]}
    labels: [small, large]
  workload.message_bytes: {range: [512, 2048, 512]}
repeat: {count: 2, seed: 7}
derived:
  protocol.mailbox_slots: "protocol.window * 16 + nodes"
"""


def write(tmp_path, text: str, name: str = "spec.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_expansion_order_labels_and_derived(tmp_path):
    sw = load_sweep(write(tmp_path, GOOD))
    assert sw.name == "good" and sw.shape == (2, 2, 4, 2) and sw.n_points == 32
    assert [a.name for a in sw.axes] == ["protocol.name", "credits", "workload.message_bytes",
                                         "rep"]
    assert [a.coord for a in sw.axes] == ["protocol_name", "credits", "workload_message_bytes",
                                          "rep"]
    assert sw.axes[1].labels == ("small", "large")
    assert sw.axes[2].labels == (512, 1024, 1536, 2048)
    # row-major: the last axis (rep) varies fastest
    c = sw.configs
    assert [x.seed for x in c[:4]] == [7, 8, 7, 8]
    assert [x.workload.message_bytes for x in c[:4]] == [512, 512, 1024, 1024]
    assert c[0].protocol.name == "backpressure" and c[16].protocol.name == "window"
    assert (c[8].protocol.window, c[8].protocol.threshold) == (8, 4)
    assert c[8].protocol.mailbox_slots == 8 * 16 + 4          # derived: window*16 + nodes
    assert sw.labels(9) == {"protocol.name": "backpressure", "credits": "large",
                            "workload.message_bytes": 512, "rep": 1}
    assert sw.index(9) == (0, 1, 0, 1)
    # the base example is kept where nothing overrides it
    assert all(x.topology == get_example("tiny").topology for x in c)


def test_fingerprint_ignores_comments_and_names_but_not_values(tmp_path):
    a = load_sweep(write(tmp_path, GOOD, "a.yaml"))
    b = load_sweep(write(tmp_path, "# a comment\n" + GOOD.replace("good", "other"), "b.yaml"))
    c = load_sweep(write(tmp_path, GOOD.replace("[512, 2048, 512]", "[512, 2048, 1536]"),
                         "c.yaml"))
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint


def test_fingerprint_of_a_field_added_later_counts_only_away_from_its_default():
    """config.ADDED_FIELDS: at its default, network.nic_packet_ns is not part of a sweep's
    identity, so a store written before the field existed is resumed (the goldens' fingerprints,
    written before it, guard the same); any other value is."""
    import hashlib
    import json

    from extoll_vec.config import ADDED_FIELDS
    from extoll_vec.sweep.spec import fingerprint
    cfg = get_example("tiny")
    before = cfg.to_dict()
    for dotted in ADDED_FIELDS:                     # what a config was before the fields existed
        section, name = dotted.split(".")
        del before[section][name]
    old = hashlib.sha256(json.dumps({"axes": [], "configs": [before]}, sort_keys=True,
                                    separators=(",", ":")).encode()).hexdigest()
    assert fingerprint((), (cfg,)) == old
    assert fingerprint((), (cfg.replace(**{"network.nic_packet_ns": 0.0}),)) == old
    assert fingerprint((), (cfg.replace(**{"network.nic_packet_ns": 100.0}),)) != old


def test_ranges_geometric_and_seed_lists(tmp_path):
    sw = load_sweep(write(tmp_path, """\
        base: {example: tiny, protocol: {name: window}}
        axes:
          protocol.mailbox_slots: {range: {start: 64, stop: 1000, factor: 2}}
          host.match_ns: {range: {start: 100, stop: 150, step: 25}}
        repeat: {seeds: [3, 1]}
        """))
    assert sw.axes[0].labels == (64, 128, 256, 512)
    assert sw.axes[1].labels == (100.0, 125.0, 150.0)      # float field: coerced like configs
    assert [c.seed for c in sw.configs[:2]] == [3, 1]
    assert sw.n_points == 4 * 3 * 2


def test_variable_axes_feed_derived_fields(tmp_path):
    """An axis along slots per process (what the papers plot) setting the mailbox size (what
    the configuration has) for two rank counts."""
    sw = load_sweep(write(tmp_path, """\
        base: {example: tiny, protocol: {name: backpressure}}
        axes:
          topo:
            zip: {topology.dims: [[2, 2], [2, 4]], workload.ranks: [16, 32]}
            labels: [small, large]
          slots_per_process: [8, 12.5]
        derived:
          protocol.mailbox_slots: "int(slots_per_process * workload.ranks)"
        """))
    assert sw.axes[1].variable and sw.axes[1].keys == () and sw.axes[1].labels == (8, 12.5)
    assert sw.axes[1].coord == "slots_per_process"
    assert [c.protocol.mailbox_slots for c in sw.configs] == [128, 200, 256, 400]
    assert sw.labels(3) == {"topo": "large", "slots_per_process": 12.5}


def test_model_variant_replaces_the_defaults_it_names_and_sections_override_it(tmp_path):
    from extoll_vec.examples import MODEL_VARIANTS
    sw = load_sweep(write(tmp_path, "base: {example: tiny, variant: fifo16, "
                                    "network: {buffer_flits: 30}}\n"))
    cfg = sw.configs[0]
    want = get_example("tiny").replace(**MODEL_VARIANTS["fifo16"])
    assert cfg.network.nic_fifo_packets == 16 and cfg.host == want.host
    assert cfg.host != get_example("tiny").host and cfg.host.posted_writes == "rank"
    assert cfg.network.cycle_ns == want.network.cycle_ns
    assert cfg.network.buffer_flits == 30          # the spec's own section wins over the variant
    assert cfg.topology == want.topology and cfg.workload == want.workload


def test_no_axes_is_one_point(tmp_path):
    sw = load_sweep(write(tmp_path, "base: {example: tiny}\n"))
    assert sw.n_points == 1 and sw.shape == () and sw.describe(0) == ""


@pytest.mark.parametrize("text, where, needle", [
    ("base: {example: tiny}\naxes:\n  protocol.slots: [1]\n", ":3:3:",
     "protocol.slots: unknown config key"),
    ("base: {example: tiny}\nbogus: 1\n", ":2:1:", "bogus: unknown key"),
    ("base: {example: tiny}\naxes:\n  protocol.name: []\n", ":3:3:", "empty axis"),
    ("base: {example: tiny}\naxes:\n  protocol.name: [none, window]\n"
     "  protocol.mailbox_slots: [64]\n", ":4:3:",
     "protocol.mailbox_slots: got 64; allowed: 0 for protocol none"),
    ("base: {example: tiny, workload: {bytes: 3}}\n", ":1:", "workload.bytes: unknown key"),
    ("base: {example: nope}\n", ":1:", "unknown example 'nope'"),
    ("base: {example: tiny, variant: fifo}\n", ":1:",
     "unknown model variant 'fifo'; allowed: fifo16, buffers40"),
    ("base: {example: tiny}\naxes:\n  c:\n    zip: {protocol.window: [1, 2], "
     "protocol.threshold: [1]}\n", ":4:5:", "zipped lists differ in length"),
    ("base: {example: tiny}\naxes:\n  protocol.window: [4, 4]\n", ":3:3:",
     "duplicate value 4"),
    ("base: {example: tiny}\naxes:\n  protocol.name: [window]\n  protocol.name: [none]\n",
     ":4:3:", "duplicate key"),
    ("base: {example: tiny}\nderived:\n  protocol.window: \"protocol.nope + 1\"\n", ":3:3:",
     "unknown field 'nope'"),
    ("base: {example: tiny}\nderived:\n  protocol.window: \"__import__('os')\"\n", ":3:3:",
     "unknown function '__import__'"),
    ("base: {example: tiny}\naxes:\n  protocol.window: [2]\nderived:\n"
     "  protocol.window: \"3\"\n", ":5:3:", "is set by axis"),
    ("base: {example: tiny}\naxes:\n  seed: [1, 2]\nrepeat: 2\n", ":4:1:",
     "seed is already an axis"),
    ("base: {example: tiny}\naxes:\n  x: {range: [1, 5, -1]}\n", ":3:3:",
     "x: unknown config key"),
    ("base: {example: tiny}\naxes:\n  slots: [1, 2]\nderived:\n"
     "  protocol.mailbox_slots: \"slot * 16\"\n", ":3:3:", "slots: unknown config key"),
    ("base: {example: tiny}\naxes:\n  workload.iterations: {range: [1, 5, -1]}\n", ":3:",
     "never goes from 1 to 5"),
    ("base: {example: tiny\naxes: [\n", ":2:", "not valid YAML"),
    ("[1, 2]\n", ":1:1:", "a sweep spec is a mapping"),
])
def test_malformed_specs_exit_2_with_one_line(tmp_path, capsys, text, where, needle):
    spec = write(tmp_path, text)
    with pytest.raises(SpecError):
        load_sweep(spec)
    rc = main(["sweep", str(spec), "--dry-run"])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"extoll-vec: error: {spec}{where}"), lines[0]
    assert needle in lines[0], lines[0]


def test_missing_spec_file_and_missing_output(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "none.yaml"), "--dry-run"]) == 2
    assert "file not found" in capsys.readouterr().err
    spec = write(tmp_path, "base: {example: tiny}\n")
    assert main(["sweep", str(spec)]) == 2
    assert "-o: required" in capsys.readouterr().err


def test_dry_run_lists_points_batches_and_work(tmp_path, capsys):
    spec = write(tmp_path, GOOD)
    assert main(["sweep", str(spec), "--dry-run", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "32 points on a 2 x 2 x 4 x 2 grid" in out
    assert "axis credits [protocol.window, protocol.threshold] (2): small, large" in out
    assert "   31      protocol.name=window, credits=large, workload.message_bytes=2048, rep=1" \
        in out
    assert "batches (8 for 2 worker(s)" in out
    assert "work: 32 of 32 points to compute" in out and "packets" in out


def test_dry_run_plans_equal_points_once(tmp_path, capsys):
    """The reference protocol repeated along a window axis simulates identically: the dry run
    plans and estimates it once, as the runner computes it."""
    spec = write(tmp_path, """\
        name: twins
        base: {example: tiny}
        axes:
          protocol.name: [none, window]
          protocol.window: [4, 8, 16]
        derived:
          protocol.mailbox_slots: "0 if protocol.name == 'none' else 64"
        """)
    assert main(["sweep", str(spec), "--dry-run", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "work: 6 of 6 points to compute (2 equal to others, computed once)" in out
    planned = [int(m) for m in re.findall(r"points [0-9,-]+ \((\d+)\)", out)]
    assert sum(planned) == 4


def test_expressions_are_sandboxed():
    env = {"protocol": {"window": 8}, "nodes": 4, "seed": 0}
    assert evaluate("max(1, protocol.window // 2) + nodes", env) == 8
    assert evaluate("'a' if nodes > 2 else 'b'", env) == "a"
    for bad in ("open('x')", "protocol.__class__", "(1).real", "2 ** 100000", "[x for x in []]"):
        with pytest.raises(ExprError):
            evaluate(bad, env)


# ---- cluster files -------------------------------------------------------------------------------
def test_cluster_default_and_overrides(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                      # no ./cluster.yaml here
    spec = load_cluster_spec()
    assert spec.kind == "local" and spec.workers >= 1
    assert load_cluster_spec(workers=3).workers == 3
    f = write(tmp_path, "cluster:\n  kind: slurm\n  slurm: {cores: 1, processes: 2}\n"
                        "  scale: {jobs: 3}\n", "c.yaml")
    assert load_cluster_spec(str(f)).workers == 6
    assert load_cluster_spec(str(f), workers=4).scale == {"workers": 4}
    f = write(tmp_path, "cluster:\n  kind: address\n  address: tcp://h:8786\n", "a.yaml")
    with pytest.raises(ConfigError, match="--workers"):
        load_cluster_spec(str(f), workers=2)


def test_repository_cluster_yaml_is_valid():
    from pathlib import Path
    spec = load_cluster_spec(str(Path(__file__).parents[1] / "cluster.yaml"))
    assert spec.kind == "local"


@pytest.mark.parametrize("text, needle", [
    ("cluster:\n  kind: cloud\n", ":2:3: cluster.kind: got 'cloud'"),
    ("cluster:\n  kind: local\n  local: {workers: 2}\n", ":3:11: cluster.local.workers: "
                                                         "unknown key"),
    ("cluster:\n  kidn: local\n", ":2:3: cluster.kidn: unknown key"),
    ("clusters: {}\n", "expected a single top-level mapping"),
    ("cluster: " + "[" * 20_000 + "\n", "cluster: nested more than 64 levels deep"),
    ("cluster:\n  kind: local\n  kind: slurm\n", ":3:3: cluster.kind: duplicate key"),
])
def test_malformed_cluster_files(tmp_path, capsys, text, needle):
    f = write(tmp_path, text, "cluster.yaml")
    spec = write(tmp_path, "base: {example: tiny}\n")
    assert main(["sweep", str(spec), "--dry-run", "--cluster", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err, err


def test_jobqueue_without_sbatch_fails_clearly(tmp_path, monkeypatch):
    pytest.importorskip("dask_jobqueue")
    from extoll_vec.sweep.cluster import connect
    monkeypatch.setenv("PATH", str(tmp_path))        # no sbatch anywhere
    f = write(tmp_path, "cluster:\n  kind: slurm\n  slurm: {cores: 1, memory: 1GiB}\n", "c.yaml")
    with pytest.raises(ConfigError, match="sbatch not found"):
        with connect(load_cluster_spec(str(f)), quiet=True):
            pass


# ---- planning ------------------------------------------------------------------------------------
def test_batches_group_equal_shapes_and_balance(tmp_path):
    from extoll_vec.engine import shape_key
    sw = load_sweep(write(tmp_path, """\
        base: {example: tiny, protocol: {name: window, mailbox_slots: 64}}
        axes:
          topology.dims: [[2, 2], [4, 1]]
          protocol.window: [2, 4, 8, 16, 32]
        derived:
          protocol.threshold: "max(1, protocol.window // 2)"
        """))
    plan = plan_batches(sw.configs, range(sw.n_points), workers=2, max_batch=8)
    covered = sorted(p for b in plan for p in b.points)
    assert covered == list(range(10))
    for b in plan:
        assert len({shape_key(sw.configs[p]) for p in b.points}) == 1
    assert max(len(b.points) for b in plan) == 2     # 10 points / (2 workers x 4) -> 2
    assert batch_size(1000, 2, per_point_bytes=2**30, memory=2**31) == 2   # memory bound
    assert batch_size(1000, 1, per_point_bytes=1, max_batch=5) == 5
    assert batch_size(3, 4, per_point_bytes=1) == 1


def test_memory_estimate_matches_engine_allocation():
    from extoll_vec.engine import Batch
    from extoll_vec.state import nbytes
    from extoll_vec.sweep.plan import estimate
    tiny = get_example("tiny")
    for cfg in (tiny, tiny.replace(**{"protocol.name": "window", "protocol.mailbox_slots": 64}),
                tiny.replace(**{"protocol.name": "backpressure",
                                "protocol.mailbox_slots": 1024})):
        real = nbytes(Batch([cfg]).S)
        est = estimate(cfg).state_bytes
        assert real <= est <= 1.1 * real, (cfg.protocol, real, est)


@pytest.mark.parametrize("path", sorted((Path(__file__).parents[1] / "sweeps").rglob("*.yaml")),
                         ids=lambda p: p.name)
def test_every_shipped_spec_builds(path):
    """Every spec in sweeps/ expands to valid configurations (a spec of a target that nobody
    runs in the tests must not rot)."""
    sweep = load_sweep(path)
    assert sweep.n_points >= 1 and len(sweep.configs) == sweep.n_points


# ---- --set overrides -------------------------------------------------------------------------------
BASE = """\
name: base
base: {example: tiny, protocol: {name: window, mailbox_slots: 64}}
axes:
  protocol.window: [2, 4]
  workload.message_bytes: [512, 1024]
repeat: 2
derived:
  protocol.threshold: "max(1, protocol.window // 2)"
"""

# BASE as a file of its own would write it, and the --set arguments that make BASE that sweep
VARIANT = """\
# a one-off copy of BASE
name: variant
base: {example: tiny, protocol: {name: window, mailbox_slots: 64}, workload: {iterations: 2}}
axes:
  protocol.window: [2, 4, 8]
  host.match_ns: [100, 200]
repeat: {count: 2, seed: 5}
derived:
  protocol.threshold: "max(1, protocol.window // 2)"
"""
VARIANT_SETS = ["name=variant", "workload.iterations=2", "axes.protocol.window=[2, 4, 8]",
                "axes.workload.message_bytes=null", "axes.host.match_ns=[100, 200]",
                "repeat.seed=5"]


def test_set_overrides_base_axes_repeat_and_derived(tmp_path):
    spec = write(tmp_path, BASE)
    plain = load_sweep(spec)
    sw = load_sweep(spec, ["protocol.mailbox_slots=128", "base.host.match_ns=50",
                           "axes.protocol.window=[4, 8, 16]",            # replaced in place
                           "axes.topology.dims=[[2, 2], [4, 1]]",        # added last
                           "repeat={count: 3, seed: 10}",
                           "derived.protocol.threshold=protocol.window - 1"])
    assert [a.name for a in sw.axes] == ["protocol.window", "workload.message_bytes",
                                         "topology.dims", "rep"]
    assert sw.shape == (3, 2, 2, 3) and sw.sets[0] == "protocol.mailbox_slots=128"
    c = sw.configs
    assert {x.protocol.mailbox_slots for x in c} == {128} and {x.host.match_ns for x in c} == {50}
    assert [x.seed for x in c[:3]] == [10, 11, 12]
    assert [(x.protocol.window, x.protocol.threshold) for x in c[::12]] == [(4, 3), (8, 7),
                                                                             (16, 15)]
    assert sw.name == "base" and sw.fingerprint != plain.fingerprint
    # the repeat count of `repeat: 2` moved on by repeat.seed; an axis removed with null
    sw = load_sweep(spec, ["repeat.seed=7", "axes.workload.message_bytes=null"])
    assert [a.name for a in sw.axes] == ["protocol.window", "rep"]
    assert [x.seed for x in sw.configs] == [7, 8, 7, 8]
    # null removes a base setting: back to the example's value
    sw = load_sweep(spec, ["host.match_ns=50", "host.match_ns=null", "network.cycle_ns=null"])
    assert sw.fingerprint == plain.fingerprint and "network:" not in sw.text
    assert load_sweep(spec, ["base.protocol.name=null", "derived.protocol.threshold=null",
                             "axes.protocol.window=null", "protocol.mailbox_slots=null"]
                      ).configs[0].protocol == get_example("tiny").protocol
    no_rep = load_sweep(spec, ["repeat=null", "seed=3"])
    assert no_rep.shape == (2, 2) and {c.seed for c in no_rep.configs} == {3}
    assert load_sweep(spec, ["name=other", "description=why"]).description == "why"


def test_set_equal_in_effect_to_another_file_has_its_fingerprint_and_text(tmp_path):
    """The fingerprint decides: BASE with VARIANT_SETS is VARIANT's sweep. The store keeps the
    merged spec under a header naming the file and the overrides; it loads as the same sweep."""
    import yaml

    from extoll_vec.sweep import build_sweep
    sw = load_sweep(write(tmp_path, BASE), VARIANT_SETS)
    assert sw.fingerprint == load_sweep(write(tmp_path, VARIANT, "variant.yaml")).fingerprint
    head = sw.text.splitlines()[:len(VARIANT_SETS) + 2]
    assert head[0].startswith(f"# {tmp_path / 'spec.yaml'} with ")
    assert head[1:-1] == ["#   --set name=variant", "#   --set workload.iterations=2",
                          "#   --set 'axes.protocol.window=[2, 4, 8]'",
                          "#   --set axes.workload.message_bytes=null",
                          "#   --set 'axes.host.match_ns=[100, 200]'", "#   --set repeat.seed=5"]
    again = build_sweep(yaml.safe_load(sw.text))
    assert again.fingerprint == sw.fingerprint and again.name == "variant"
    assert load_sweep(write(tmp_path, BASE)).text == BASE     # no --set: the file's own text


@pytest.mark.parametrize("sets, needle", [
    (["bogus=1"], "--set bogus=1: bogus: unknown key; allowed: name, description, repeat"),
    (["axes=[1]"], "--set 'axes=[1]': axes: unknown key; allowed:"),
    (["base.protocl.name=x"], "--set base.protocl.name=x: base.protocl.name: unknown key; "
                              "allowed: base.example"),
    (["protocol.nme=x"], "--set protocol.nme=x: protocol.nme: unknown config key; allowed: "
                         "protocol.name"),
    (["protocol.window"], "--set protocol.window: --set: expected KEY=VALUE"),
    (["axes.nope=null"], "--set axes.nope=null: axes.nope: no axis nope to remove; the spec's: "
                         "protocol.window, workload.message_bytes"),
    (["protocol.window=8"], "--set protocol.window=8: protocol.window: is set by axis "
                            "protocol.window of the spec ("),
    (["protocol.threshold=1"], "--set protocol.threshold=1: protocol.threshold: is derived by "
                               "the spec (derived.protocol.threshold, "),
    (["seed=4"], "--set seed=4: seed: is set by repeat (axis rep, "),
    # bad values: named by their --set, not by a line of the file
    (["axes.protocol.window=[0, 2]"], "--set 'axes.protocol.window=[0, 2]': protocol.window: "
                                      "got 0"),
    (["axes.protocol.window=[2, 2]"], "--set 'axes.protocol.window=[2, 2]': "
                                      "axes.protocol.window: duplicate value 2"),
    (["axes.protocol.window=[2,"], "--set 'axes.protocol.window=[2,': axes.protocol.window: "
                                   "not valid YAML"),
    (["base.protocol.mailbox_slots=null"], "--set base.protocol.mailbox_slots=null: "
                                           "protocol.mailbox_slots: got 0"),
    (["axes.protocol.window=two"], "--set axes.protocol.window=two: axes.protocol.window: "
                                   "expected a list of values"),
    (["protocol.mailbox_slots=-1"], "--set protocol.mailbox_slots=-1: protocol.mailbox_slots: "
                                    "got -1"),
    (["repeat.count=0"], "--set repeat.count=0: repeat.count: got 0; allowed: an integer >= 1"),
    (["base.example=nope"], "--set base.example=nope: base.example: unknown example 'nope'"),
    (["derived.protocol.threshold=protocol.nope"],
     "--set derived.protocol.threshold=protocol.nope: protocol.threshold: unknown field 'nope'"),
    (["axes.credits={zip: {protocol.window: [1]}, labels: [a, b]}"],
     "--set 'axes.credits={zip: {protocol.window: [1]}, labels: [a, b]}': axes.credits.labels: "
     "expected 1 strings or numbers"),
])
def test_bad_sets_exit_2_with_one_line_naming_the_set(tmp_path, capsys, sets, needle):
    spec = write(tmp_path, BASE)
    rc = main(["sweep", str(spec), "--dry-run", *(a for s in sets for a in ("--set", s))])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"extoll-vec: error: {needle}"), err


def test_a_set_of_a_key_an_axis_sets_names_both(tmp_path):
    with pytest.raises(SpecError) as exc:
        load_sweep(write(tmp_path, BASE), ["workload.message_bytes=4096"])
    assert str(exc.value) == (
        f"--set workload.message_bytes=4096: workload.message_bytes: is set by axis "
        f"workload.message_bytes of the spec ({tmp_path / 'spec.yaml'}:5); change that axis "
        "(--set axes.workload.message_bytes=VALUES) or remove it (--set "
        "axes.workload.message_bytes=null) instead")
    # once the axis is gone (in any order of the arguments) the key is the base's again
    sw = load_sweep(write(tmp_path, BASE), ["workload.message_bytes=4096",
                                            "axes.workload.message_bytes=null"])
    assert {c.workload.message_bytes for c in sw.configs} == {4096}


def test_an_error_in_the_file_names_its_line_and_the_sets_under_it(tmp_path):
    spec = write(tmp_path, BASE.replace("repeat: 2", "repeat: {seeds: [1, 2]}"))
    with pytest.raises(SpecError) as exc:
        load_sweep(spec, ["repeat.count=3"])
    assert str(exc.value).startswith(f"{spec}:6:1: repeat: give either seeds or count")
    assert str(exc.value).endswith("(after --set repeat.count=3)")


def test_an_equivalent_set_command_resumes_the_store_of_a_spec_file(tmp_path, capsys):
    """A store written from a spec file (a one-off copy of a catalogue spec) is the same sweep
    for the catalogue spec with --set arguments equal in effect: accepted, its completed points
    kept; without them it is another sweep and refused."""
    from test_sweep_store import fake_results

    from extoll_vec.sweep.store import StoreWriter, prepare_store
    old = load_sweep(write(tmp_path, VARIANT, "variant.yaml"))
    store = tmp_path / "variant.zarr"
    prepare_store(store, old)
    StoreWriter(store).write([0, 5], fake_results([old.configs[0], old.configs[5]]))
    spec = str(write(tmp_path, BASE))
    argv = ["sweep", spec, "--dry-run", "-o", str(store), "--workers", "1"]
    assert main(argv + [a for s in VARIANT_SETS for a in ("--set", s)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"sweep variant ({spec} with 6 --set): 12 points on a 3 x 2 x 2 grid")
    assert re.findall(r"^ +(\d+) done ", out, re.M) == ["0", "5"]
    assert "work: 10 of 12 points to compute" in out
    assert main(argv) == 2
    assert "holds a different sweep ('variant', 12 points)" in capsys.readouterr().err
