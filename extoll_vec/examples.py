"""Named example configurations (`extoll-vec run --example NAME`, `extoll-vec examples`).

EXAMPLES maps a name to a builder returning a fresh RunConfig; the first docstring line of each
builder is its one-line description. Everything not set here keeps its config.py default
(protocol none, seed 0, ...); derive variants with RunConfig.replace().
"""
from __future__ import annotations

from typing import Callable

from .config import RunConfig, from_dict
from .errors import ConfigError

EXAMPLES: dict[str, Callable[[], RunConfig]] = {}


def _example(name: str):
    def deco(fn: Callable[[], RunConfig]) -> Callable[[], RunConfig]:
        EXAMPLES[name] = fn
        return fn
    return deco


def _pingpong(hops: int) -> RunConfig:
    return from_dict({
        "topology": {"kind": "mesh", "dims": [8, 8]},
        "mpi": {"ranks_per_node": 16},
        "workload": {"kind": "multi_pingpong", "ranks": 1024, "pairs": 16, "hops": hops,
                     "message_bytes": 2048, "iterations": 10},
    })


def _alltoall(dims: list[int], ranks: int, ranks_per_node: int) -> RunConfig:
    return from_dict({
        "topology": {"kind": "mesh", "dims": dims},
        "mpi": {"ranks_per_node": ranks_per_node},
        "workload": {"kind": "alltoall", "ranks": ranks, "message_bytes": 2048},
    })


@_example("pingpong")
def pingpong() -> RunConfig:
    """16 pairs ping-pong 2048 B x10 between neighbour nodes (1 hop), 8x8 mesh, 1024 ranks."""
    return _pingpong(1)


@_example("pingpong-14")
def pingpong_14() -> RunConfig:
    """As pingpong, between two nodes 14 hops apart (opposite corners of the 8x8 mesh)."""
    return _pingpong(14)


@_example("alltoall-256")
def alltoall_256() -> RunConfig:
    """Alltoall of 2048 B among 256 ranks, 4x4 mesh, 16 ranks per node."""
    return _alltoall([4, 4], 256, 16)


@_example("alltoall-1024")
def alltoall_1024() -> RunConfig:
    """Alltoall of 2048 B among 1024 ranks, 4x4x4 mesh, 16 ranks per node (the papers' system)."""
    return _alltoall([4, 4, 4], 1024, 16)


@_example("uniform")
def uniform() -> RunConfig:
    """Network-only uniform random traffic at 0.2 flits/node/cycle, 4x4x4 mesh."""
    return from_dict({
        "topology": {"kind": "mesh", "dims": [4, 4, 4]},
        "workload": {"kind": "uniform", "injection_rate": 0.2},
    })


@_example("tiny")
def tiny() -> RunConfig:
    """Alltoall of 2048 B among 16 ranks, 2x2 mesh, 4 ranks per node (fast; used by tests)."""
    return _alltoall([2, 2], 16, 4)


def _dragonfly(p: int, a: int, h: int) -> RunConfig:
    """Schneider et al.'s Booksim machine (section 4.1) at any size: input-queued routers with 2.4x
    speedup, 256-flit VC buffers, 16-flit packets, local links 2 and global links 10 cycles,
    PAR (bias 2, threshold 30 flits); what the paper leaves to Booksim's iq_router: output
    buffers unbounded but by the downstream credits (4 VCs x 256 flits) and a 3-cycle
    pipeline (its dragonfly example's VC, switch and crossbar stages; docs/reproduction/
    docs/reproduction/portals.md says what each changes); pairwise permutation traffic at offered
    load 1.0, run until the throughput of successive 2000-cycle windows varies by under 5 %
    (at most 20 windows) after 5000 cycles of warm-up: slow receivers' congestion trees take
    3000-5000 cycles to grow, and 1000-cycle windows converge before they have
    (benchmarks/bench_slow_receivers.py --windows). The NIC's ejection buffer holds a VC
    buffer's 256 flits: what a slow receiver backs up before the network does."""
    return from_dict({
        "topology": {"kind": "dragonfly", "p": p, "a": a, "h": h, "local_latency": 2,
                     "global_latency": 10},
        "network": {"router": "iq", "speedup": 2.4, "output_queue_flits": 1024,
                     "router_delay": 3, "routing": "par", "vcs": 4, "buffer_flits": 256,
                     "nic_ejection_flits": 256},
        "workload": {"kind": "pairwise", "injection_rate": 1.0, "packet_flits": 16,
                     "warmup_cycles": 5000, "sample_cycles": 2000, "measure_cycles": 40000,
                     "converge_tolerance": 0.05, "drain_cycles": 0},
    })


@_example("dragonfly-5256")
def dragonfly_5256() -> RunConfig:
    """Schneider et al.'s Dragonfly: 5,256 nodes (73 groups of 72), PAR, pairwise, load 1."""
    return _dragonfly(6, 12, 6)


@_example("dragonfly-72")
def dragonfly_72() -> RunConfig:
    """dragonfly-5256 at reduced scale: 72 nodes (9 groups of 8), p=2 a=4 h=2."""
    return _dragonfly(2, 4, 2)


def ib_testbed(protocol: str = "ib_static", prepost: int = 100) -> dict:
    """Liu and Panda's testbed (section 6.1) as config sections: 8 nodes, one process each, on one
    8-port 4X InfiniBand switch; InfiniHost HCAs on PCI-X. The paper prints no value of its
    figures in the text this project has, so the fit targets the companion papers' figures
    for the same testbed and MPI (docs/reproduction/infiniband.md, "Calibration"): 871 MB/s
    peak bandwidth (Liu et al., ICS'03: the RDMA data path the send/receive design shares)
    sets the link: 64-byte flits of 69.16 ns with 1024-byte RDMA packets (the MTU) and 26
    bytes of IB headers (LRH, BTH, CRCs); 7.5 us small-message latency sets the host costs
    (2.67 x the EXTOLL fit's, same ratios, the retrieval plus one PIO write: the processed
    buffer's descriptor posted again, section 3.1) once the HCA's latency per side (1.38 us:
    its PCI-X DMA, modelled as the NIC link's latency, with 256-flit buffers so that its
    credit loop never limits the link) and the switch's 200 ns are in. 2 KB pre-posted buffers, one
    message each (section 5), a 32-byte MPI header; the rendezvous by RDMA write after the
    receiver's reply (section 3.1)."""
    return {
        "topology": {"kind": "crossbar", "p": 8},
        "network": {"flit_bytes": 64, "packet_header_bytes": 18, "cycle_ns": 69.16,
                    "link_latency": 20, "router_delay": 3, "buffer_flits": 256,
                    "nic_ejection_flits": 256, "rma_packet_bytes": 1024},
        "host": {"pio_ns": 630.97, "retrieve_ns": 1419.69, "match_ns": 1498.56,
                 "credit_ns": 29.54},
        "mpi": {"ranks_per_node": 1, "velo_payload": 2048, "header_bytes": 32,
                "eager_threshold": 2016, "limic": False, "rendezvous": "write"},
        "protocol": {"name": protocol, "prepost": prepost},
    }


@_example("ib-latency")
def ib_latency() -> RunConfig:
    """Liu and Panda's ping-pong (Figure 2): 4 B x 100, ib_static, 100 buffers, 8-node IB switch."""
    d = ib_testbed()
    d["workload"] = {"kind": "latency", "ranks": 8, "message_bytes": 4, "iterations": 100,
                     "warmup": 10}
    return from_dict(d)


@_example("ib-bandwidth")
def ib_bandwidth() -> RunConfig:
    """Liu and Panda's bandwidth test (Figure 5): 4 B, window 64, blocking, ib_static, 10 bufs."""
    d = ib_testbed(prepost=10)
    d["workload"] = {"kind": "bandwidth", "ranks": 8, "message_bytes": 4, "window": 64,
                     "iterations": 20, "warmup": 2}
    return from_dict(d)


@_example("ib-nas")
def ib_nas() -> RunConfig:
    """Liu and Panda's NAS study (6.3): the LU class A skeleton on 8 processes, ib_static, 100
    buffers per connection."""
    d = ib_testbed(prepost=100)
    d["workload"] = {"kind": "nas", "nas": "LU", "ranks": 8}
    return from_dict(d)


def myrinet_testbed(credits: int = 8, packet_bytes: int = 1024) -> dict:
    """Bhoedjang et al.'s testbed (section 5) as config sections: 64 nodes, one process each, on
    sixteen 8-port Myrinet switches in a 4-dimensional hypercube (4 nodes per switch, e-cube
    routing), 1.28 Gbit/s links (160 MB/s: 4-byte flits of 25 ns), NIs on a 33 MHz, 32-bit
    PCI bus (132 MB/s), LFC with 8 buffers of 1 KB per sender. Switch latency, the LFC
    header and every host and NI processor cost are not in the paper: the values here are
    placeholders until the calibration (docs/reproduction/lfc.md) fits them."""
    flits = -(-(max(packet_bytes, 2048) + 16) // 4)
    return {
        "topology": {"kind": "hypercube", "cube_dim": 4, "p": 4},
        "network": {"flit_bytes": 4, "packet_header_bytes": 8, "cycle_ns": 25.0,
                    "link_latency": 4, "router_delay": 12, "vcs": 1, "buffer_flits": flits,
                    "nic_ejection_flits": flits, "nic_fifo_packets": 32,
                    "pci_mb_s": 132.0, "dma_setup_ns": 500.0},
        # posted_writes "rank": releasing a host receive buffer is bookkeeping in host memory,
        # not a write behind the packets in the NI's send pool (an all-to-all whose hosts
        # wait to release buffers while their pools are full would deadlock at the hosts)
        "host": {"pio_ns": 1000.0, "pio_ns_per_kb": 10000.0, "retrieve_ns": 1000.0,
                 "copy_ns_per_kb": 5000.0, "match_ns": 1000.0, "credit_ns": 0.0,
                 "posted_writes": "rank"},
        "mpi": {"ranks_per_node": 1, "velo_payload": packet_bytes, "header_bytes": 0,
                "eager_threshold": 2**24 - 1, "limic": False},
        "protocol": {"name": "lfc", "lfc_credits": credits, "mailbox_slots": 256,
                     **lfc_ni_costs()},
    }


# Bhoedjang et al.'s NI processor (gap G11): its per-packet steps in chosen ratios (ns at scale 1: a
# receive step inspects, accounts and starts the host DMA, five times a send of an empty
# packet; a forwarding descriptor twice; a recovery step as a credit update, gap G17), one
# scale lambda on them and the transmit cost per KiB beta, both fitted by
# analysis/lfc/calibration.py (lambda on the 61-node multicast latency, 59 us; beta on the
# 61-node peak throughput, 13.3 MB/s)
LFC_STEPS = {"lfc_poll_ns": 1000.0, "lfc_tx_ns": 1000.0, "lfc_rx_ns": 5000.0,
             "lfc_fwd_ns": 2000.0, "lfc_credit_ns": 1000.0, "lfc_recovery_ns": 1000.0}
LFC_LAMBDA = 1.125
LFC_BETA = 8850.0


def lfc_ni_costs(lam: float = LFC_LAMBDA, beta: float = LFC_BETA) -> dict:
    """The protocol section's NI costs for a scale lambda and a per-KiB cost beta (ns)."""
    return {**{k: round(lam * v, 3) for k, v in LFC_STEPS.items()}, "lfc_tx_ns_per_kb": beta}


# FM/MC's NI control program on the same LANai (Bhoedjang et al., sec. 2.2): LFC's steps without the
# credit work (a receive step takes no credits: LFC's less one credit step), its own token and
# request steps and a swap's DMA set-ups, at LFC's fitted lambda and beta (gap G11; FM/MC's own
# costs are in the paper's [17])
FMMC_STEPS = {"fmmc_poll_ns": 1000.0, "fmmc_tx_ns": 1000.0, "fmmc_rx_ns": 4000.0,
              "fmmc_fwd_ns": 2000.0, "fmmc_credit_ns": 1000.0, "fmmc_token_ns": 2000.0,
              "fmmc_swap_ns": 2000.0}


def fmmc_testbed(window: int = 8, mc_buffers: int = 18) -> dict:
    """Bhoedjang et al.'s testbed running FM/MC (section 5.3): 256-byte packets whose first word
    is the handler (mpi.header_bytes 4: a 256-byte message takes two packets; footnote 2), binary
    trees, a host window of `window` packets per pair, the host buffers its credits stand for."""
    from .protocols.lfc.fmmc import host_buffers
    d = myrinet_testbed(packet_bytes=256)
    d["mpi"]["header_bytes"] = 4
    lam, beta = LFC_LAMBDA, LFC_BETA
    d["protocol"] = {"name": "fmmc", "window": window, "threshold": max(1, window // 2),
                     "mailbox_slots": host_buffers(64, window, mc_buffers),
                     "fmmc_mc_buffers": mc_buffers,
                     "fmmc_request": 8, "fmmc_tx_ns_per_kb": beta,
                     **{k: round(lam * v, 3) for k, v in FMMC_STEPS.items()}}
    return d


@_example("lfc-unicast")
def lfc_unicast() -> RunConfig:
    """Bhoedjang et al.'s machine: LFC one-way latency, 0 B x 20 ping-pong between nodes 0, 1."""
    d = myrinet_testbed()
    d["workload"] = {"kind": "latency", "ranks": 64, "message_bytes": 0, "iterations": 20,
                     "warmup": 2}
    return from_dict(d)


def lfc_workload(kind: str, group: int, nbytes: int, iterations: int = 1, warmup: int = 0,
                 tree: str = "binomial") -> RunConfig:
    """A multicast benchmark (workloads/multicast.py) on Bhoedjang et al.'s testbed, nodes
    0..group-1."""
    d = myrinet_testbed()
    d["protocol"]["lfc_tree"] = tree
    d["workload"] = {"kind": kind, "ranks": 64, "group_size": group, "message_bytes": nbytes,
                     "iterations": iterations, "warmup": warmup}
    return from_dict(d)


@_example("lfc-latency")
def lfc_latency() -> RunConfig:
    """Bhoedjang et al.'s Figure 4 (top): an empty multicast from node 0 to 61 nodes, binomial."""
    return lfc_workload("mcast_latency", 61, 0, warmup=2)


@_example("lfc-blast")
def lfc_blast() -> RunConfig:
    """Bhoedjang et al.'s Figure 4 (bottom): node 0 multicasts 32 x 16 KB to 61 nodes, binomial."""
    return lfc_workload("mcast_blast", 61, 16384, iterations=32, warmup=1)


@_example("lfc-vs-fmmc")
def lfc_vs_fmmc() -> RunConfig:
    """Bhoedjang et al.'s Figures 7-8: LFC as configured against FM/MC (256-byte packets, 32 buffers
    per sender: the NI memory of 8 x 1 KB, binary trees, deadlock recovery), node 0
    multicasting 16 x 4 KB to 16 nodes; the protocol section also holds FM/MC's settings, so
    protocol.name fmmc with mailbox_slots 522 and mpi.header_bytes 4 runs FM/MC on it."""
    d = myrinet_testbed(credits=32, packet_bytes=256)
    d["protocol"].update(lfc_tree="binary", lfc_recovery=True,
                         **{k: v for k, v in fmmc_testbed()["protocol"].items()
                            if k.startswith("fmmc_") or k in ("window", "threshold")})
    d["workload"] = {"kind": "mcast_blast", "ranks": 64, "group_size": 16,
                     "message_bytes": 4096, "iterations": 16, "warmup": 1}
    return from_dict(d)


@_example("lfc-alltoall")
def lfc_alltoall() -> RunConfig:
    """Bhoedjang et al.'s Figure 6 (right) at reduced scale: 16 nodes each multicast 4 x 4 KB."""
    return lfc_workload("mcast_alltoall", 16, 4096, iterations=4)


# Model variants: parameter sets that replace calibrated defaults together, each fitted by
# analysis/extoll/calibration.py to the same two reference times as the defaults (docs/calibration.md).
# A sweep spec names one with `base: {variant: NAME}`; the benchmarks take --variant NAME.
MODEL_VARIANTS: dict[str, dict[str, object]] = {
    # The earlier 16-packet-FIFO requester model, with its own fit: a 16-packet (1 KB) requester
    # FIFO, and a rank releases mailbox slots whatever the FIFO holds (posted writes ordered per
    # rank, so a rank waiting for credits polls while one blocked in a PIO write cannot). Fitted
    # with `python -m extoll_vec.analysis.extoll.calibration --set network.nic_fifo_packets=16 --set
    # host.posted_writes=rank` (m = 0.25: 8, 10 and 19 cycles of 27.27 ns for a PIO write, a
    # retrieval and a match). Credit-limited runs finish before the reference in it
    # (docs/calibration.md, "The requester model").
    "fifo16": {
        "network.nic_fifo_packets": 16, "host.posted_writes": "rank", "network.buffer_flits": 40,
        "network.cycle_ns": 27.27, "host.pio_ns": 218.16, "host.retrieve_ns": 272.7,
        "host.match_ns": 518.13, "host.credit_ns": 27.27, "host.limic_ns": 3408.75,
        "host.limic_ns_per_kb": 845.37,
    },
    # The current requester model (a 256-packet FIFO, posted writes ordered per node) with
    # the network's 40-flit router buffers from before, and its own fit (m = 0.25: 8, 10 and 19
    # cycles of 29.61 ns). Its alltoall-256 leaves the 16-slot runs faster than the reference
    # (docs/calibration.md, "The router buffers").
    "buffers40": {
        "network.buffer_flits": 40,
        "network.cycle_ns": 29.61, "host.pio_ns": 236.88, "host.retrieve_ns": 296.1,
        "host.match_ns": 562.59, "host.credit_ns": 29.61, "host.limic_ns": 3701.25,
        "host.limic_ns_per_kb": 917.91,
    },
    # One network cycle (29.54 ns) per credit operation, the default before the cost was chosen
    # on Figure 27 (docs/calibration.md, "The credit operation's cost"; no reference run has a
    # credit operation, so the fit is the defaults'): the paper-scale records made before that
    # commit reproduce with it.
    "credit_cycle": {"host.credit_ns": 29.54},
}


def variant_overrides(name: str) -> dict[str, object]:
    """The dotted overrides of a model variant; ConfigError naming the known ones."""
    if name not in MODEL_VARIANTS:
        raise ConfigError("variant", f"unknown model variant {name!r}; allowed: "
                                     f"{', '.join(MODEL_VARIANTS)}")
    return dict(MODEL_VARIANTS[name])


def describe(name: str) -> str:
    return (EXAMPLES[name].__doc__ or "").strip().splitlines()[0]


def get_example(name: str) -> RunConfig:
    """The example's RunConfig; ConfigError naming the known examples for an unknown name."""
    if name not in EXAMPLES:
        raise ConfigError("example", f"unknown example {name!r}; allowed: {', '.join(EXAMPLES)}")
    return EXAMPLES[name]()
