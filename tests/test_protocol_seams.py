"""The protocol seams: the core kernels name no protocol, the dispatch is generated
from the registry, and the registry drives the config section, the sizing and the outputs."""
from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from pathlib import Path

import pytest

from extoll_vec import dtypes as D
from extoll_vec import kernels
from extoll_vec.config import ADDED_FIELDS, ProtocolConfig, bounds, from_dict
from extoll_vec.dataset import PROTOCOL_SCHEMA, SCHEMA, schema_for
from extoll_vec.errors import ConfigError
from extoll_vec.protocols import registry

CORE = ("network.py", "nic.py", "host.py", "common.py", "sim.py", "wheel.py")
KERNELS = Path(kernels.__file__).parent
# identifiers of the core whose words are English, not a protocol: nic.on_gen's measurement
# window of synthetic traffic, "no wait reason" (dtypes.W_NONE), no progress pass
# (host.PASS_NONE), Python's None. Every other identifier is checked word by word.
ALLOWED = {"in_window", "W_NONE", "PASS_NONE", "None"}


def _code_words(path: Path):
    """Identifiers (split at '_') and string literals of a file, without comments and
    docstrings: "window" and "none" are also English words of the comments ("the
    measurement window")."""
    toks = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
    prev = tokenize.NEWLINE
    for t in toks:
        if t.type == tokenize.NAME:
            yield t.string, t.string.lower().split("_")
        elif t.type == tokenize.STRING and prev not in (tokenize.NEWLINE, tokenize.INDENT,
                                                        tokenize.DEDENT, tokenize.NL):
            yield t.string, re.findall(r"\w+", t.string.lower())
        if t.type not in (tokenize.COMMENT,):
            prev = t.type


@pytest.mark.parametrize("name", CORE)
def test_core_kernels_name_no_protocol(name):
    names = set(registry.registered())
    hook_modules = {p.hooks.rsplit(".", 1)[1] for p in registry.registered().values() if p.hooks}
    path = KERNELS / name
    text = path.read_text()
    assert not re.search(r"\bPROTO_", text), f"{name} uses a protocol id"
    for token, words in _code_words(path):
        if token in ALLOWED:
            continue
        assert not names & set(words), f"{name}: {token!r} names a protocol"
        assert token not in hook_modules, f"{name} imports a protocol's hooks ({token})"
    assert "fc_static" not in text and "fc_dynamic" not in text and "fc_window" not in text


def test_the_seams_check_catches_a_protocol_name(tmp_path):
    """Negative control of the check above: a core file that branches on a protocol."""
    bad = tmp_path / "nic.py"
    bad.write_text('def f(par, b):\n    """the window of the measurement"""\n'
                   '    if par[b, 17] == PROTO_STATIC:  # static\n        return "dynamic"\n')
    assert re.search(r"\bPROTO_", bad.read_text())
    words = [w for _t, ws in _code_words(bad) for w in ws]
    assert "static" in words and "dynamic" in words and "window" not in words


def test_dispatch_is_generated_from_the_registry_into_the_cache_dir():
    src = registry.dispatch_source()
    path = kernels.cache_dir() / "proto_dispatch.py"
    assert path.read_text() == src
    assert kernels.dispatch.__file__ == str(path)
    for hook in registry.HOOKS:
        assert f"def {hook}(" in src
    for p in registry.registered().values():
        if p.hooks:
            assert f"proto == {p.kernel_id}:" in src
    # the cache key covers the generated text and the record modules
    names = {p.name for p in kernels._SOURCES}
    assert {"registry.py", "extoll.py", "fc_window.py", "proto_extoll.py"} <= names


def test_registry_ids_and_hook_masks():
    recs = registry.registered()
    assert [recs[n].kernel_id for n in ("none", "backpressure", "window", "static",
                                        "dynamic")] == [0, 1, 2, 3, 4]
    assert registry.hook_mask(recs["static"]) == 0   # rank hooks only: no hot-path bit
    assert D.P_HOOKS in range(41, 48) and D.P_PP0 + D.N_PP - 1 <= 47


def test_protocol_fields_come_from_the_registry_with_bounds():
    names = [f.name for f in dataclasses.fields(ProtocolConfig)]
    assert names[:6] == ["name", "mailbox_slots", "window", "threshold", "credit_slots",
                         "piggyback"]
    declared = [d.name for d, _ in registry.declared_params()]
    assert names[1:] == declared
    assert set(bounds(ProtocolConfig)) == set(names)
    assert "protocol.window" not in ADDED_FIELDS
    with pytest.raises(ConfigError, match="protocol.window: got 0; allowed: an integer 1"):
        from_dict({"protocol": {"name": "window", "window": 0, "mailbox_slots": 8}})
    # a protocol's checks run only when it is selected
    from_dict({"protocol": {"name": "backpressure", "mailbox_slots": 8, "threshold": 99}})


def test_protocol_outputs_join_the_schema_of_the_points_that_run_it():
    for name, o in registry.all_outputs().items():
        assert PROTOCOL_SCHEMA[name].dims == o.dims and PROTOCOL_SCHEMA[name].units == o.units
        assert name not in SCHEMA
    assert set(schema_for([from_dict({})])) == set(SCHEMA)
