"""The protocol registry: one `Protocol` record per flow-control protocol, holding everything the
code outside its kernel needs to know of it (a protocol is one registered unit).

A protocol is its record (a Python module listed in REGISTERED, exposing PROTOCOLS, a tuple of
records) and its hooks (a Numba module: functions named after the hooks of HOOKS, optionally
with a prefix). Nothing else names it: config.py builds the `protocol:` section's fields from
the records' `declares`, the engine sizes the state, fills the parameter vector and the
per-node parameters and audits a finished run through the record, dataset.py adds its outputs,
and kernels/__init__.py generates the kernels' one dispatch module from the records
(dispatch_source): Numba cannot read a Python table, so the table is turned into source.

This module and the record modules are Numba-free and do not import config.py (config.py
imports them); a record's checks get config's checker as an argument.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import dtypes as D

# The protocol families, in order: one package each (protocols/<family>/), exposing PROTOCOLS,
# its records (their `declares` become ProtocolConfig's fields in this order). A family is
# also the unit of a kernel build (kernels/specialize.py). Adding a family adds one line here.
REGISTERED = (
    "extoll_vec.protocols.extoll",      # none, backpressure, window, static, dynamic
    "extoll_vec.protocols.capped",      # the seams' test protocol
    "extoll_vec.protocols.portals",     # FECN/BECN and RDRP (Schneider et al.)
    "extoll_vec.protocols.infiniband",  # MPI over InfiniBand's schemes (Liu and Panda)
    "extoll_vec.protocols.lfc",         # LFC's NI-level credits and FM/MC (Bhoedjang et al.)
)

# hook name -> (arguments after the state, default body). The rank hooks (EXTOLL's) take
# (S, par, b, ...); the NIC, router and timer hooks take the topology T too.
HOOKS = {
    "fc_init": ("S, T, par, b", "pass"),
    "may_send": ("S, par, b, r, dst", "return True"),
    "eager_ok": ("S, par, b, r, dst", "return True"),
    "on_sent": ("S, par, b, r, dst, h, delayed", "return 0"),
    "on_arrival": ("S, par, b, r, src, kind, ctype", "pass"),
    "on_retrieved": ("S, par, b, r, src", "return 0"),
    "on_mc_retrieved": ("S, par, b, r, root", "return 0"),
    "on_control": ("S, par, b, r, src, ctype, payload", "return 0"),
    "ctrl_payload": ("S, par, b, r, dst, ctype", "return 0"),
    "piggyback": ("S, par, b, r, dst", "return 0"),
    "snapshot_field": ("S, par, b", "return -1"),
    "nic_may_inject": ("S, T, par, b, node, h, now", "return 0"),
    "nic_on_eject": ("S, T, par, b, node, h, now", "return 0"),
    # packet h left node's NIC (any queue: the protocol's, the FIFO, the RMA engine)
    "nic_on_sent": ("S, T, par, b, node, h, now", "pass"),
    # packet h's DMA into its rank's host buffer is done (common.to_host, network.pci_mb_s)
    "nic_on_host": ("S, T, par, b, node, h, now", "pass"),
    "router_on_forward": ("S, T, par, b, r, pi, po, h, now", "pass"),
    "on_timer": ("S, T, par, b, target, arg, now", "pass"),
}
# hot-path hooks: their bit in par[P_HOOKS] is tested before the core calls them
HOOK_BITS = {"nic_may_inject": D.H_NIC_INJECT, "nic_on_eject": D.H_NIC_EJECT,
             "router_on_forward": D.H_ROUTER, "on_timer": D.H_TIMER,
             "nic_on_sent": D.H_NIC_SENT, "nic_on_host": D.H_NIC_HOST}
# The core asks nic_may_inject in two places (kernels/nic.py): the link (nic_tx) asks a
# protocol whose NIC does not poll, a polling NIC's processor (nic_poll) one that does
# (Protocol.nic_polls). Each place calls a dispatch of its own protocols only, so that a hook
# is not also compiled, inlined, where it never runs.
POLLED = "nic_may_inject_polled"


@dataclass(frozen=True)
class Param:
    """A `protocol:` config field a protocol declares: kind "int" | "bool" | "float" | "str" |
    "ints" with config.Bounds' meaning of lo, hi, unit, note (a "str" takes one of `choices`,
    an "ints" list at most `length` items). `added`: the field came after stores were
    written (config.ADDED_FIELDS: it identifies a result only away from its default).
    `exclusive`: only the protocols that list it may set it away from its default; the
    message says why (e.g. "piggybacking is part of")."""
    name: str
    kind: str
    default: Any
    lo: Any = None
    hi: Any = None
    unit: str = ""
    note: str = ""
    added: bool = True
    exclusive: str = ""
    choices: tuple[str, ...] = ()
    length: int = 0


@dataclass(frozen=True)
class Output:
    """A result variable of the protocol (merged into dataset.SCHEMA): dims start with "point";
    extract(batch, b) -> the member's array without the point axis (only called for members
    running this protocol; the others get the fill: NaN or -1)."""
    dims: tuple[str, ...]
    dtype: Any
    units: str
    description: str
    extract: Callable


def _zero(pc) -> int:
    return 0


def _no_problems(batch, b) -> list[str]:
    return []


@dataclass(frozen=True)
class Protocol:
    name: str                 # protocol.name in a configuration
    kernel_id: int            # par[P_PROTO]: what the generated dispatch branches on
    hooks: str | None = None  # dotted Numba module with the hook functions (None: defaults)
    prefix: str = ""          # the hook functions' prefix in that module ("static_": static_on_sent)
    mailbox_hard: bool = False  # a full mailbox is an error (the protocol promises it never
                                # fills); otherwise the NIC waits for a free slot (EXTOLL sec. 2)
    credit: bool = False      # EXTOLL credit-based (sections 5-6): mailbox split in regions
    mailbox: str = "finite"   # "unlimited": mailbox_slots must be 0; "finite": >= 1
    parameters: tuple[str, ...] = ()   # protocol: fields it reads besides `name`
    declares: tuple[Param, ...] = ()   # fields it adds to the protocol: section
    check: Callable | None = None      # check(section, pre, check): its fields, when it is
                              # selected; check(cond, field, allowed, value) is config's checker
                              # (records import no config: config imports them)
    check_run: Callable | None = None  # check_run(RunConfig, check): what depends on other sections
    # The count callables take the RunConfig (a size may depend on the machine: LFC's tree
    # tables have a column block per root node)
    pair_fields: Callable = _zero      # fc int32 [B, NPAIR, K]: K = pair_fields(cfg)
    every_pair: bool = False  # keeps state about every sender, communicating or not (the pair
                              # table is then dense: engine/pairs.py)
    unblocks_on_control: bool = False  # may_send(r, dst) has no side effect and turns true only
                              # in r's on_control (credits come back in control packets or
                              # piggybacked, taken out of r's mailbox by r): the host then skips
                              # the sends it found blocked until r takes one (host._sendable)
    rank_fields: Callable = _zero      # fcr int32 [B, NR, KR]
    node_fields: Callable = _zero      # fcn int32 [B, N, KN]
    node_pair_fields: Callable = _zero  # nn int32 [B, N, N, KNN]: state per pair of NICs (x's
                              # view of y), independent of the ranks: NI-level credits (LFC,
                              # Bhoedjang et al.)
    node_params: Callable | None = None  # (RunConfig, topology) -> int64 [N, KNP]: npar
    node_param_count: Callable = _zero   # KNP = node_param_count(cfg) (sizing w/o topology)
    timers_alive: Callable = _zero     # cfg -> its protocol timers (common.proto_timer) pending
                              # at once beyond one per node, at most: the event pool's share
    multicast: bool = False   # accepts the multicast ops (workloads' OP_MCAST, OP_IMCAST)
    nic_polls: bool = False   # its NIC's processor takes every packet of the FIFO (INJ_TAKEN)
                              # as it polls, not when the link is free (Bhoedjang et al.'s LANai:
                              # the send DMA engine moves the bytes while the processor goes on)
    diagnose: Callable | None = None   # diagnose(batch, b) -> lines on where a stuck member's
                              # protocol waits (its queues and credits), for describe_error
    check_program: Callable | None = None  # check_program(cfg, program, check): what the protocol
                              # needs of the rank programs (raises ConfigError)
    nic_queue: Callable = _zero        # PK_PROTO packets a node may queue (cfg -> slots)
    host_queue: Callable = _zero       # packets a node's NIC hands its host at once, at most
                              # (common.to_host: cfg -> slots of the DMA queue)
    proto_alive: Callable | None = None  # cfg -> its PK_PROTO packets alive at once, at most
                              # (queued, in the network, in ejection buffers), or None: no bound
                              # (engine/sizing.py then sizes every buffer full of 1-flit packets)
    packet_fields: tuple[str, ...] = ()  # pk_pf int32 [B, NPK, PF] columns, in order
    params: Callable | None = None     # params(cfg, p): write its par slots (P_PP0.. or its own)
    audit: Callable = _no_problems     # audit(batch, b) -> problems of a finished member
    spare_entries: Callable | None = None  # every_pair protocols: spare_entries(cfg, packets)
                              # -> pair-table entries a rank keeps for idle senders, given the
                              # eager packets into it (int or int64 array; engine/pairs.py)
    describe: Callable | None = None   # describe(protocol section) -> the protocol's part of a
                              # config line (None: its name and, if finite, its mailbox slots)
    outputs: dict[str, Output] = field(default_factory=dict)


# ---- loading ---------------------------------------------------------------------------------
_CACHE: dict[str, Protocol] = {}
_FAMILY: dict[str, str] = {}   # protocol name -> its record module (REGISTERED entry)
_DECLARED: list[tuple[Param, tuple[str, ...]]] = []   # declared_params(), once loaded


def registered() -> dict[str, Protocol]:
    """name -> record of every registered protocol, in registration order (checked: names and
    kernel ids unique, declared fields not declared twice)."""
    if not _CACHE:
        out: dict[str, Protocol] = {}
        for mod in REGISTERED:
            for p in importlib.import_module(mod).PROTOCOLS:
                out[p.name] = p
                _FAMILY[p.name] = mod
        ids = [p.kernel_id for p in out.values()]
        assert len(set(ids)) == len(ids), f"protocol kernel ids not unique: {ids}"
        names = [d.name for p in out.values() for d in p.declares]
        assert len(set(names)) == len(names), f"protocol field declared twice: {names}"
        _CACHE.update(out)
    return _CACHE


def protocol(name: str) -> Protocol:
    try:
        return registered()[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}") from None


def protocol_with_id(kernel_id: int) -> Protocol:
    for p in registered().values():
        if p.kernel_id == kernel_id:
            return p
    raise ValueError(f"unknown protocol id {kernel_id!r}")


def family(name: str) -> str:
    """The family of a protocol: its record module (one REGISTERED entry). A batch whose
    members all run one family runs kernels compiled for that family alone
    (kernels/specialize.py)."""
    registered()
    return _FAMILY[name]


def describe(pc) -> str:
    """The protocol's part of a config line (`extoll-vec run` and sweeps print it)."""
    p = protocol(pc.name)
    if p.describe is not None:
        return p.describe(pc)
    if p.mailbox != "finite":
        return f"protocol {pc.name}"
    return f"protocol {pc.name}, {pc.mailbox_slots} slots"


def declared_params() -> tuple[tuple[Param, tuple[str, ...]], ...]:
    """Every declared field with the protocols that read it, in declaration order (computed
    once: every config's validation reads it)."""
    if not _DECLARED:
        protos = registered().values()
        _DECLARED.extend((d, tuple(p.name for p in protos if d.name in p.parameters))
                         for p in protos for d in p.declares)
    return tuple(_DECLARED)


def all_outputs() -> dict[str, Output]:
    return {k: v for p in registered().values() for k, v in p.outputs.items()}


# ---- the generated dispatch module ---------------------------------------------------------
_NAMES: dict[str, tuple[str, frozenset]] = {}


def hooks_file(module: str) -> str:
    """The file of a hook module, found without importing it (it is a Numba module)."""
    return importlib.util.find_spec(module).origin


def _defines(p: Protocol, hook: str) -> bool:
    """Does p's hook module define the hook? Read from its source (ast), not by importing it:
    kernels/__init__.py generates the dispatch before any kernel module is compiled."""
    if p.hooks is None:
        return False
    if p.hooks not in _NAMES:
        path = hooks_file(p.hooks)
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        _NAMES[p.hooks] = (path, frozenset(n.name for n in tree.body
                                           if isinstance(n, ast.FunctionDef)))
    return p.prefix + hook in _NAMES[p.hooks][1]


def hook_mask(p: Protocol) -> int:
    """par[P_HOOKS] of a member running p."""
    return (sum(bit for hook, bit in HOOK_BITS.items() if _defines(p, hook))
            | (D.H_NIC_POLL if p.nic_polls else 0))


def dispatch_source(names: tuple[str, ...] | None = None) -> str:
    """The source of the kernels' dispatch module: per hook one if-chain over the kernel ids of
    the protocols that define it, else the default (kernels/__init__.py writes and imports it).
    names: those protocols only (kernels/specialize.py), None: every registered one."""
    defines = _defines
    protos = [p for p in registered().values() if names is None or p.name in names]
    mods = sorted({p.hooks for p in protos if p.hooks})
    alias = {m: f"_m{i}" for i, m in enumerate(mods)}
    lines = ['"""Generated by extoll_vec/protocols/registry.py dispatch_source(): one if-chain per',
             'protocol hook over the registered kernel ids. Do not edit."""',
             "from extoll_vec.dtypes import P_PROTO",
             "from extoll_vec.kernels.jit import inner"]
    lines += [f"import {m} as {a}" for m, a in alias.items()]
    for name, hook, polls in _dispatch_functions():
        args, default = HOOKS[hook]
        call_args = args
        lines += ["", "", "@inner", f"def {name}({args}):"]
        users = [p for p in protos if defines(p, hook) and polls in (None, p.nic_polls)]
        if users:
            lines.append("    proto = par[b, P_PROTO]")
        for k, p in enumerate(users):
            kw = "if" if k == 0 else "elif"
            lines.append(f"    {kw} proto == {p.kernel_id}:")
            lines.append(f"        return {alias[p.hooks]}.{p.prefix}{hook}({call_args})")
        lines.append(f"    {default}")
    return "\n".join(lines) + "\n"


def _dispatch_functions() -> list[tuple[str, str, bool | None]]:
    """(function of the dispatch, the hook it calls, the nic_polls of the protocols it calls
    or None: any): one per hook; nic_may_inject twice, for the NICs that poll (POLLED) and
    for the others."""
    out = []
    for hook in HOOKS:
        if hook == "nic_may_inject":
            out += [(hook, hook, False), (POLLED, hook, True)]
        else:
            out.append((hook, hook, None))
    return out


def source_files() -> list[str]:
    """What the generated dispatch and the kernels compiled through it depend on besides
    kernels/*.py: the record modules (they may hold constants a hook module imports), this
    module, and hook modules outside kernels/ (kernels/__init__.py hashes them all)."""
    out = [__file__]
    for m in REGISTERED:   # a family's package: every module of its folder (slots, layouts)
        f = Path(importlib.import_module(m).__file__)
        out += sorted(str(p) for p in f.parent.glob("*.py")) if f.name == "__init__.py" \
            else [str(f)]
    out += [hooks_file(p.hooks) for p in registered().values()
            if p.hooks and not p.hooks.startswith("extoll_vec.kernels.")]
    return out
