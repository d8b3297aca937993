"""Config validation: malformed YAML files through the CLI, and the RunConfig Python API."""
from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import subprocess
import sys

import pytest
import yaml

from extoll_vec.cli import main
from extoll_vec.config import RunConfig, from_dict, load_yaml
from extoll_vec.errors import ConfigError, SimulationError, StoreError
from extoll_vec.examples import EXAMPLES, get_example

# A valid small config; each malformed case below changes one thing.
BASE = {
    "topology": {"kind": "mesh", "dims": [2, 2]},
    "mpi": {"ranks_per_node": 4},
    "protocol": {"name": "none"},
    "workload": {"kind": "alltoall", "ranks": 16, "message_bytes": 2048},
}


def with_changes(**sections) -> dict:
    d = copy.deepcopy(BASE)
    for section, changes in sections.items():
        if changes is None:
            d.pop(section, None)
        elif isinstance(changes, dict):
            d.setdefault(section, {}).update(changes)
        else:
            d[section] = changes
    return d


# (id, YAML text or a dict to dump, substring the single error line must contain)
MALFORMED = [
    ("negative-mailbox-slots",
     with_changes(protocol={"name": "backpressure", "mailbox_slots": -4}),
     "protocol.mailbox_slots"),
    ("unknown-topology-kind", with_changes(topology={"kind": "hexmesh"}), "topology.kind"),
    ("ranks-not-divisible-by-nodes", with_changes(workload={"ranks": 18}), "workload.ranks"),
    ("typo-key-in-section", with_changes(network={"bufer_flits": 40}), "network.bufer_flits"),
    ("unknown-section", {**BASE, "netwrok": {"buffer_flits": 40}}, "netwrok"),
    ("string-where-int-expected", with_changes(workload={"ranks": "many"}), "workload.ranks"),
    ("torus-radix-2", with_changes(topology={"kind": "torus", "dims": [2, 2]}), "topology.dims"),
    ("protocol-none-with-mailbox", with_changes(protocol={"name": "none", "mailbox_slots": 10}),
     "protocol.mailbox_slots"),
    ("window-threshold-above-window",
     with_changes(protocol={"name": "window", "mailbox_slots": 64, "window": 4, "threshold": 8}),
     "protocol.threshold"),
    ("buffer-smaller-than-packet", with_changes(network={"buffer_flits": 2}),
     "network.buffer_flits"),
    # a full VELO packet is 5 flits on the wire (64-byte slot + 8-byte network header), more
    # than a 32-byte RMA packet's 3
    ("buffer-smaller-than-velo-packet",
     with_changes(network={"buffer_flits": 4, "rma_packet_bytes": 32}), "network.buffer_flits"),
    ("negative-nic-packet-ns", with_changes(network={"nic_packet_ns": -1.0}),
     "network.nic_packet_ns"),
    ("injection-rate-above-1", with_changes(workload={"kind": "uniform", "injection_rate": 1.5}),
     "workload.injection_rate"),
    ("invalid-yaml-syntax", "topology: {kind: mesh, dims: [2, 2]\nworkload: {ranks: 16}\n",
     "not valid YAML"),
    ("missing-file", None, "file not found"),
    ("top-level-list", "- topology\n- workload\n", "config"),
    ("bool-where-int-expected", with_changes(workload={"iterations": True}), "workload.iterations"),
    ("dims-not-a-list", with_changes(topology={"dims": "4x4"}), "topology.dims"),
    ("section-not-a-mapping", with_changes(network=[1, 2]), "network"),
    ("pairs-above-ranks-per-node",
     with_changes(workload={"kind": "multi_pingpong", "pairs": 5}), "workload.pairs"),
    ("ranks-per-node-mismatch", with_changes(mpi={"ranks_per_node": 2}), "mpi.ranks_per_node"),
    ("negative-start-skew", with_changes(workload={"start_skew_ns": -5}),
     "workload.start_skew_ns"),
]


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "extoll_vec.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_base_config_is_valid(tmp_path):
    path = tmp_path / "base.yaml"
    path.write_text(yaml.safe_dump(BASE))
    cfg = load_yaml(str(path))
    assert cfg.n_nodes == 4 and cfg.n_ranks == 16


@pytest.mark.parametrize("content, field", [(c, f) for _, c, f in MALFORMED],
                         ids=[i for i, _, _ in MALFORMED])
def test_malformed_config_cli(tmp_path, content, field):
    path = tmp_path / "bad.yaml"
    if content is not None:
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content))
    proc = run_cli("run", str(path))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("extoll-vec: error: ")
    assert field in lines[0]
    assert proc.stdout == ""


def test_missing_file_names_path(tmp_path):
    path = tmp_path / "nowhere.yaml"
    proc = run_cli("run", str(path))
    assert proc.returncode == 2 and str(path) in proc.stderr


def test_usage_errors_exit_2(capsys):
    assert main([]) == 2
    assert main(["run"]) == 2                      # neither CONFIG nor --example
    assert main(["run", "a.yaml", "--example", "tiny"]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["--version"]) == 0
    capsys.readouterr()


def test_unknown_example_lists_names(capsys):
    assert main(["run", "--example", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("extoll-vec: error: ")
    for name in EXAMPLES:
        assert name in err


def test_examples_command_lists_all(capsys):
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    for name in EXAMPLES:
        assert name in out


def test_set_override_is_validated(capsys):
    assert main(["run", "--example", "tiny", "--set", "protocol.window=0",
                 "--set", "protocol.name=window", "--set", "protocol.mailbox_slots=8"]) == 2
    assert "protocol.window" in capsys.readouterr().err
    assert main(["run", "--example", "tiny", "--set", "nokey"]) == 2
    assert "--set" in capsys.readouterr().err


# ---- Python API ------------------------------------------------------------------------------
def test_from_dict_defaults_and_round_trip():
    assert from_dict({}) == RunConfig()
    assert from_dict(None) == RunConfig()
    cfg = from_dict(BASE)
    assert cfg.topology.dims == (2, 2)                      # lists become tuples
    assert from_dict(cfg.to_dict()) == cfg
    assert from_dict(json.loads(cfg.to_json())) == cfg
    assert hash(from_dict(BASE)) == hash(cfg)               # usable as a dict key


def test_to_dict_is_asdict():
    """RunConfig.to_dict builds the nested data itself (no deep copies); it must stay what
    dataclasses.asdict gives, key order and value types included, for every example."""
    for name in EXAMPLES:
        cfg = get_example(name)
        mine, theirs = cfg.to_dict(), dataclasses.asdict(cfg)
        assert json.dumps(mine) == json.dumps(theirs), name
        assert [type(v) for s in mine.values() if isinstance(s, dict) for v in s.values()] == \
            [type(v) for s in theirs.values() if isinstance(s, dict) for v in s.values()], name


def test_from_dict_coerces_int_to_float():
    cfg = from_dict(with_changes(network={"cycle_ns": 1}))
    assert cfg.network.cycle_ns == 1.0 and isinstance(cfg.network.cycle_ns, float)


def test_replace_returns_validated_copy():
    cfg = from_dict(BASE)
    new = cfg.replace(**{"protocol.name": "window", "protocol.mailbox_slots": 64, "seed": 7})
    assert new.protocol.name == "window" and new.protocol.mailbox_slots == 64 and new.seed == 7
    assert cfg.protocol.name == "none" and cfg.seed == 0    # original unchanged
    with pytest.raises(ConfigError) as exc:
        cfg.replace(**{"protocol.mailbox_slots": 10})       # invalid for protocol none
    assert exc.value.field == "protocol.mailbox_slots"
    with pytest.raises(ConfigError) as exc:
        cfg.replace(**{"protocl.name": "window"})
    assert exc.value.field == "protocl"
    with pytest.raises(ConfigError) as exc:
        cfg.replace(**{"protocol.nam": "window"})
    assert exc.value.field == "protocol.nam"


def test_frozen():
    cfg = from_dict(BASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.seed = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.protocol.name = "window"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.topology.dims = (4, 4)
    assert isinstance(cfg.topology.dims, tuple)


def test_direct_construction_validates():
    from extoll_vec.config import ProtocolConfig
    with pytest.raises(ConfigError) as exc:
        RunConfig(protocol=ProtocolConfig(name="backpressure", mailbox_slots=0))
    assert exc.value.field == "protocol.mailbox_slots"


def test_config_error_pickles():
    err = pickle.loads(pickle.dumps(ConfigError("a.b", "bad")))
    assert isinstance(err, ConfigError) and err.field == "a.b" and str(err) == "a.b: bad"


def test_examples_match_spec():
    assert set(EXAMPLES) >= {"pingpong", "pingpong-14", "alltoall-256", "alltoall-1024",
                             "uniform", "tiny"}
    for name in EXAMPLES:
        assert isinstance(get_example(name), RunConfig)
    pp = get_example("pingpong")
    assert (pp.topology.kind, pp.topology.dims) == ("mesh", (8, 8))
    w = pp.workload
    assert (w.kind, w.ranks, w.pairs, w.hops, w.message_bytes, w.iterations) == \
        ("multi_pingpong", 1024, 16, 1, 2048, 10)
    assert pp.mpi.ranks_per_node == 16
    assert get_example("pingpong-14") == pp.replace(**{"workload.hops": 14})
    a256, a1024 = get_example("alltoall-256"), get_example("alltoall-1024")
    assert (a256.topology.dims, a256.workload.ranks, a256.workload.kind) == \
        ((4, 4), 256, "alltoall")
    assert (a1024.topology.dims, a1024.workload.ranks) == ((4, 4, 4), 1024)
    uni = get_example("uniform")
    assert (uni.topology.dims, uni.workload.kind, uni.workload.injection_rate) == \
        ((4, 4, 4), "uniform", 0.2)
    tiny = get_example("tiny")
    assert (tiny.topology.dims, tiny.mpi.ranks_per_node, tiny.workload.ranks,
            tiny.workload.kind, tiny.workload.message_bytes) == ((2, 2), 4, 16, "alltoall", 2048)


@pytest.mark.parametrize("exc", [
    ConfigError("a.b", "bad value"),
    SimulationError("point 0: deadlock\nrank 3 stuck"),
    StoreError("/x.zarr", "already exists"),
], ids=["config", "simulation", "store"])
def test_every_extoll_vec_error_is_one_line(monkeypatch, capsys, exc):
    from extoll_vec import cli

    def boom(args):
        raise exc
    monkeypatch.setitem(cli.SUBCOMMANDS, "boom",
                        cli.Subcommand("boom", "raise", lambda p: None, boom))
    assert main(["boom"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("extoll-vec: error: ")
    assert "Traceback" not in captured.err and captured.out == ""


# ---- single definitions the configuration shares with the kernels ----------------------------

def test_protocol_catalogue_is_the_one_list_of_protocols():
    from extoll_vec.config import CREDIT_PROTOCOLS, PROTOCOLS, ProtocolConfig
    from extoll_vec.protocols.catalogue import CATALOGUE, protocol, protocol_with_id
    assert PROTOCOLS == tuple(CATALOGUE) and CREDIT_PROTOCOLS == ("static", "dynamic")
    settable = {f.name for f in dataclasses.fields(ProtocolConfig)} - {"name"}
    for p in CATALOGUE.values():
        assert protocol_with_id(p.kernel_id) is p is protocol(p.name)
        assert set(p.parameters) <= settable
        assert p.credit == (p.name in CREDIT_PROTOCOLS)
    with pytest.raises(ValueError, match="unknown protocol"):
        protocol("credit")


def test_packet_sizes_follow_the_kernels_convention():
    """Payload + 8-byte VELO header + network header, in whole flits (extoll_vec/formulas.py):
    a 248-byte RMA packet is 264 bytes on the wire, 17 flits of 16 bytes, so a 16-flit buffer
    cannot hold it (virtual cut-through)."""
    cfg = RunConfig(network=dataclasses.replace(RunConfig().network, rma_packet_bytes=248))
    assert cfg.network.max_packet_flits == 17 and cfg.network.velo_packet_flits == 5
    with pytest.raises(ConfigError, match="network.buffer_flits"):
        cfg.replace(**{"network.buffer_flits": 16})
    assert cfg.mpi.packets(2048) == 37 and cfg.mpi.packets(0) == 1
