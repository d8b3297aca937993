"""What the kernels read of a configuration: its costs in cycles, one int64 parameter vector per
batch member (dtypes.P_*), and the topology's tables in the kernels' layout. Units are
converted here, once, so the kernels count only cycles, bytes and slots."""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..formulas import cycles
from ..config import RunConfig
from ..protocols.registry import hook_mask, protocol
from ..routing.registry import kernel_id as routing_id
from ..topology.registry import kind as topology_kind
from ..workloads.registry import workload
from ..state import Topo


def topo_arrays(topo, cfg: RunConfig) -> Topo:
    """The topology's tables (shared by a batch) and each rank's node."""
    rpn = cfg.mpi.ranks_per_node
    nr = cfg.n_ranks
    t = cfg.topology
    geo = topology_kind(t.kind).geo(t)
    return Topo(topo.neighbor, topo.neighbor_port, topo.terminal_node, topo.node_router,
                topo.node_port, topo.route_port.astype(np.int16), topo.vc_next,
                (np.arange(nr, dtype=np.int32) // rpn).astype(np.int32),
                topo.port_class, np.asarray(geo, dtype=np.int32))


def member_params(cfg: RunConfig, mailbox: int) -> np.ndarray:
    """The parameter vector of one member, int64 [dtypes.N_PAR]; mailbox: its slots per rank
    (sizing.mailbox_capacity)."""
    n, h, m, w, pr = cfg.network, cfg.host, cfg.mpi, cfg.workload, cfg.protocol
    proto = protocol(pr.name)
    c = lambda ns: cycles(ns, n.cycle_ns)  # noqa: E731
    p = np.zeros(D.N_PAR, np.int64)
    p[D.P_LINK_LAT] = n.link_latency
    p[D.P_ROUTER_DELAY] = n.router_delay
    p[D.P_PIO] = c(h.pio_ns)
    p[D.P_RETRIEVE] = c(h.retrieve_ns)
    p[D.P_MATCH] = c(h.match_ns)
    p[D.P_CREDIT] = round(h.credit_ns / n.cycle_ns * (1 << D.CREDIT_FRAC_BITS))  # fixed point
    p[D.P_LIMIC] = c(h.limic_ns)
    p[D.P_LIMIC_PER_KB] = c(h.limic_ns_per_kb)
    p[D.P_LIMIC_ON] = int(m.limic)
    p[D.P_PROGRESS] = h.progress_packets
    p[D.P_POSTED_NODE] = int(h.posted_writes == "node")
    p[D.P_EAGER] = m.eager_threshold
    p[D.P_MPI_HDR] = m.header_bytes
    p[D.P_VELO_PAYLOAD] = m.velo_payload
    p[D.P_FLIT_BYTES] = n.flit_bytes
    p[D.P_PKT_OVERHEAD] = n.packet_overhead_bytes
    p[D.P_RMA_BYTES] = n.rma_packet_bytes
    p[D.P_MAILBOX] = mailbox
    p[D.P_MAILBOX_HARD] = int(proto.mailbox_hard)
    p[D.P_PROTO] = proto.kernel_id
    p[D.P_HOOKS] = hook_mask(proto)
    p[D.P_SEND_MEMO] = int(proto.unblocks_on_control)
    p[D.P_NIC_FIFO] = n.nic_fifo_packets
    p[D.P_NIC_GAP] = c(n.nic_packet_ns)
    p[D.P_DMA] = int(n.dma_stage)
    # cycles per byte: cycle_ns / (ns per byte at pci_mb_s = 1000 / pci_mb_s)
    p[D.P_PCI_FP] = (round(1000.0 / n.pci_mb_s / n.cycle_ns * (1 << D.PCI_FRAC_BITS))
                     if n.pci_mb_s > 0 else 0)
    p[D.P_DMA_SETUP] = c(n.dma_setup_ns)
    p[D.P_PIO_KB] = c(h.pio_ns_per_kb)
    p[D.P_COPY_KB] = c(h.copy_ns_per_kb)
    p[D.P_BUF_FLITS] = n.buffer_flits
    p[D.P_EJ_FLITS] = n.nic_ejection_flits
    p[D.P_ROUTER] = D.ROUTER_KINDS.index(n.router)
    p[D.P_SPEEDUP] = round(n.speedup * D.SPEEDUP_ONE)   # fixed point (dtypes.SPEEDUP_FRAC_BITS)
    p[D.P_OUTQ] = n.output_queue_flits
    chunked = cfg.mpi.rendezvous == "chunked"
    p[D.P_CHUNK] = cfg.mpi.chunk_bytes if chunked else 0
    p[D.P_RNDV_WRITE] = int(cfg.mpi.rendezvous == "write")
    p[D.P_GETS] = cfg.mpi.outstanding_gets if chunked else 1
    kind = workload(w.kind)   # network-only traffic: a random node per packet (1) or a table (2)
    p[D.P_SYNTH] = 0 if not kind.synthetic else 1 if kind.random_per_packet else 2
    # Bernoulli injection: w.injection_rate flits per node per cycle in packets of packet_flits
    p[D.P_GEN_P32] = min(1 << 32, int(round(w.injection_rate / w.packet_flits * 2**32)))
    p[D.P_SYN_FLITS] = w.packet_flits
    p[D.P_WARMUP] = w.warmup_cycles
    p[D.P_MEASURE] = w.measure_cycles
    p[D.P_DRAIN] = w.drain_cycles
    p[D.P_SEED] = cfg.seed
    p[D.P_SAMPLE] = w.sample_cycles
    p[D.P_CONV_TOL] = round(w.converge_tolerance * (1 << D.TOL_FRAC_BITS))
    p[D.P_NO_PROGRESS] = max(1, int(cfg.limits.no_progress_us * 1000 / n.cycle_ns))
    p[D.P_MAX_CYCLES] = cfg.limits.max_cycles
    p[D.P_RPN] = m.ranks_per_node
    # routing function (routing/registry.py) and link classes (kernels/routing.py)
    p[D.P_ROUTING] = routing_id(n.routing) | (D.RT_FLAT if n.vc_assignment == "flat" else 0)
    p[D.P_ADAPT_BIAS] = round(n.adaptive_bias * (1 << D.ADAPT_BIAS_BITS))
    p[D.P_ADAPT_THRESH] = n.adaptive_threshold
    p[D.P_LAT_TERM] = n.link_latency
    p[D.P_LAT_LOCAL], p[D.P_LAT_GLOBAL] = cfg.topology.link_latencies(n.link_latency)
    if proto.params is not None:   # the protocol's own slots (protocols/registry.py)
        proto.params(cfg, p)
    return p


def node_params(cfg: RunConfig, topo, knp: int) -> np.ndarray:
    """The per-node parameters of one member, int64 [nodes, knp] (state npar): its protocol's
    node_params builder, zero-padded to the batch's knp."""
    out = np.zeros((topo.n_nodes, knp), np.int64)
    build = protocol(cfg.protocol.name).node_params
    if build is not None:
        a = np.asarray(build(cfg, topo), np.int64)
        out[:, :a.shape[1]] = a
    return out


def sink_rates(cfg: RunConfig, n_nodes: int) -> np.ndarray:
    """Each node's memory sink, int32 [nodes] (state ej_sink): 0 at link rate, else the slow
    receivers' cycles per flit in fixed point (dtypes.SINK_FRAC_BITS)."""
    from ..workloads.patterns import slow_nodes
    out = np.zeros(n_nodes, np.int32)
    f = cfg.network.slow_factor
    if f > 1.0:
        sink = round(f * (1 << D.SINK_FRAC_BITS))
        out[slow_nodes(n_nodes, cfg.slow_node_count, cfg.seed)] = sink
    return out
