"""One source for integer widths, op codes, packet kinds, wait reasons and error flags.

Kernels import these module-level constants; Numba freezes them at compile time, so they are
compile-time constants, not globals read at run time.
"""
import numpy as np

# ---- integer widths -------------------------------------------------------------------------
TIME = np.int64      # simulated time in network cycles
IDX = np.int32       # indices: ranks, nodes, routers, ports, packet ids
CNT = np.int64       # counters that may exceed 2**31 (packets, flits, busy cycles)
WORD = np.int64      # packed mailbox entries and event payloads

# ---- rank program op codes (program rows are int32 [opcode, a, b, c]) -------------------------
OP_END = 0        # program finished
OP_SEND = 1       # blocking send:      a = destination rank, b = bytes
OP_ISEND = 2      # non-blocking send:  a = destination rank, b = bytes
OP_RECV = 3       # blocking receive:   a = source rank or ANY_SOURCE, b = bytes
OP_IRECV = 4      # non-blocking recv:  a = source rank or ANY_SOURCE, b = bytes
OP_WAITALL = 5    # wait for every outstanding non-blocking send and receive
OP_COMPUTE = 6    # CPU busy for a = nanoseconds
OP_LOOP = 7       # begin loop: a = iteration count (>= 1); body runs until the matching OP_ENDLOOP
OP_ENDLOOP = 8
OP_MARK = 9       # record the time and the MC_* counters at mark a (phase boundaries for analysis)
OP_SNAPSHOT = 10  # record the credits the rank owns towards every peer, and they towards it
# multicast (a protocol that declares `multicast`: Bhoedjang et al.'s LFC): one message of b bytes
# to every other member of the group of ranks 0..a-1, the sender one of them; each member posts
# an ordinary receive from the sender. Blocking (as OP_SEND) and non-blocking (as OP_ISEND)
OP_MCAST = 11
OP_IMCAST = 12
N_OPS = 13
OP_NAMES = ("END", "SEND", "ISEND", "RECV", "IRECV", "WAITALL", "COMPUTE", "LOOP", "ENDLOOP",
            "MARK", "SNAPSHOT", "MCAST", "IMCAST")
ANY_SOURCE = -1
MAX_LOOP_DEPTH = 4
MAX_MARKS = 8
# per-rank counters recorded at every OP_MARK (state mark_cnt[b, r, mark, MC_*]), so that the
# measured part of a run (between two marks) excludes warm-ups: dataset *_at_mark variables
MC_DELAYED = 0    # sends that waited for credits (st_delayed)
MC_MSGS = 1       # messages received (st_msgs)
MC_STALL = 2      # cycles waiting for credits or NIC back-pressure (st_stall)
MC_FCCPU = 3      # cycles of flow-control CPU time (st_fccpu)
N_MC = 4
MAX_VCS = 8            # virtual channels per port; a router's VOQ bitmask holds one bit per
                       # (input port, VC) at pi * MAX_VCS + vi (kernels/network.py)
VC_SHIFT = 3           # log2(MAX_VCS)

# ---- packet kinds ------------------------------------------------------------------------------
PK_DATA = 0       # eager MPI data, VELO packet into the receiver's mailbox
PK_RNDV = 1       # rendezvous request (VELO packet into the mailbox, counts as data)
PK_CTRL = 2       # flow-control packet (credits, requests), VELO packet into the mailbox
PK_RMA_GET = 3    # RMA get request, handled by the sender's NIC, no mailbox
PK_RMA_DATA = 4   # RMA payload, written to user memory by the receiver's NIC, no mailbox
PK_SYNTH = 5      # synthetic network-only traffic, consumed by the destination NIC
PK_PROTO = 6      # a protocol's own NIC-to-NIC packet (common.proto_send), consumed by the
                  # destination's nic_on_eject hook (credits, NAKs, BECNs: docs/design.md)
PK_REPLY = 7      # rendezvous handshake of mpi.rendezvous "write" (Liu and Panda, sec. 3.1),
                  # a packet into a mailbox: last 1, the receiver's reply (the sender's CPU then
                  # posts the RDMA write); last 0, the sender's finish message behind the data
N_PK = 8
# Control packets (PK_CTRL) carry a type in pk_aux / the mailbox entry (EXTOLL sections 5.2, 6.1).
CT_CREDIT = 0     # credit packet: returns credits, uses a credit slot, consumes no credit
CT_REQUEST = 1    # compulsory credit return request (dynamic): consumes a credit
CT_RESPONSE = 2   # compulsory credit return response (dynamic): consumes a credit
CT_PIGGYBACK = 3  # not a packet: credits piggybacked on the last VELO packet of a message
N_CT = 4
CTRL_CLASSES = ("credit", "request", "response", "piggyback")   # dim "ctrl" of control_sent
PIGGYBACK_BYTES = 2   # section 5.4: credit information in the last two bytes of the packet
# The bytes a multi-packet eager message carries beyond the MPI header, counted only when
# deciding whether its last packet has room for piggybacked credits (docs/model.md,
# "Piggybacking room"): section 5.4 says a 2048-byte message leaves no room and a 2044-byte one does
VELO_MSG_TAG_BYTES = 8
PIGGYBACK_MAX = 0xFFFF
# Output statistics fold packet kinds into these classes (dim "kind" of packets_sent).
KIND_CLASSES = ("data", "control", "rma")
PK_CLASS = (0, 0, 1, 2, 2, 0, 1)

# ---- event kinds (timing-wheel entries) ------------------------------------------------------
EV_ARB = 1        # arbitrate an output port: a = router, b = port
EV_CREDIT = 2     # link credits back at an output: a = router, b = port*MAX_VCS + vc, c = flits
EV_PROTO_TIMER = 3  # a protocol's timer (common.proto_timer): a = target, b = arg (its own meaning)
EV_NIC_TX = 4     # try to inject from the NIC: a = node
EV_NIC_RX = 5     # a packet tail reached the destination NIC: a = node, b = packet
EV_NIC_CREDIT = 6 # injection-link credits back at the NIC: a = node, c = flits
EV_RANK = 7       # the rank's CPU is free: a = rank
EV_GEN = 8        # synthetic source generates a packet: a = node
EV_EJ_CREDIT = 9  # ejection-buffer credits back at the router output: a = node, c = flits
EV_NIC_DRAIN = 10 # a mailbox slot was freed: the NIC retries its ejection queue: a = node
# profiled runs (benchmarks/profile_events.py) split EV_RANK turns by what the turn did
PROF_RANK_RETRIEVE = 11   # took a packet out of the mailbox (progress engine)
PROF_RANK_WRITE = 12      # wrote a packet (data, control or RMA request) into the NIC
PROF_RANK_IDLE = 13       # found nothing to do and went idle (or waits)
PROF_RANK_OTHER = 14      # ran its program (posted a send or receive, computed, ...)
EV_SAMPLE = 15            # the end of a measurement window (workload.sample_cycles)
EV_HOST_DMA = 16          # the node's DMA engine to host memory (kernels/nic.py host_dma): a = node
EV_NIC_POLL = 17          # a polling NIC's processor looks at its FIFO (H_NIC_POLL): a = node
N_PROF = 18               # rows of the profile array: event kinds and the turn classes above

# ---- why a rank is not running -----------------------------------------------------------------
W_NONE = 0        # running (an EV_RANK is scheduled)
W_RECV = 1        # waiting for a message
W_WAITALL = 2     # waiting for outstanding requests
W_CREDIT = 3      # flow control withholds a send (polls the mailbox meanwhile)
W_NIC = 4         # the NIC injection FIFO is full: hardware back-pressure stalls the CPU
W_SEND = 5        # a blocking send waits for its rendezvous completion
W_DONE = 6        # program finished (still drains its mailbox, as MPI_Finalize does)
WAIT_NAMES = ("running", "recv", "waitall", "credit", "nic-backpressure", "send-completion", "done")

# ---- error flags returned by kernels (bit set) --------------------------------------------------
ERR_DEADLOCK = 1          # no event left while ranks are unfinished
ERR_NO_PROGRESS = 2       # events still flow but nothing completed for too long
ERR_MAILBOX_OVERFLOW = 4  # a mailbox was written beyond its slots (must never happen)
ERR_BUFFER_OVERFLOW = 8   # a router/NIC buffer above its capacity (must never happen)
ERR_POOL = 16             # packet or event pool exhausted (static size too small)
ERR_QUEUE = 32            # a per-rank queue (sends, receives, control) overflowed
ERR_INVARIANT = 64        # conservation check failed
ERR_MAX_CYCLES = 128      # simulation reached limits.max_cycles
ERR_PROGRAM = 256         # malformed program (bad op, loop stack overflow)
ERR_PAIR = 512            # a pair of ranks missing from the pair table was looked up (kernels/pairs.py)
ERR_SPARE = 1024          # a table sized from the program ran out (spare pair entries, mailbox
                          # ring): the engine reruns the batch at full size (engine/batch.py)
ERR_STALL = 2048          # router buffers that wait only on each other while the rest moves
                          # (a partial deadlock; set outside the kernels, engine/stall.py)
ERR_NAMES = {ERR_DEADLOCK: "deadlock", ERR_NO_PROGRESS: "no progress",
             ERR_MAILBOX_OVERFLOW: "mailbox overflow", ERR_BUFFER_OVERFLOW: "buffer overflow",
             ERR_POOL: "pool exhausted", ERR_QUEUE: "queue overflow",
             ERR_INVARIANT: "invariant broken", ERR_MAX_CYCLES: "max cycles reached",
             ERR_PROGRAM: "malformed program",
             ERR_PAIR: "pair of ranks missing from the pair table",
             ERR_SPARE: "spare pair entries or mailbox ring exhausted",
             ERR_STALL: "partial deadlock"}

# ---- protocol hooks (kernel ids and names: extoll_vec/protocols/registry.py) ------------------
# bits of par[P_HOOKS]: the hot-path hooks the member's protocol defines; a core call site tests
# its bit first, so a member whose protocol lacks the hook pays one predictable branch
H_NIC_INJECT = 1      # nic_may_inject
H_NIC_EJECT = 2       # nic_on_eject (also: the member's protocol may send PK_PROTO packets)
H_ROUTER = 4          # router_on_forward
H_TIMER = 8           # on_timer
H_NIC_SENT = 16       # nic_on_sent
H_NIC_HOST = 32       # nic_on_host
H_NIC_POLL = 64       # the protocol's NIC takes every FIFO packet itself (Protocol.nic_polls):
                      # nic_may_inject is asked whenever the NIC runs, whatever its link does
# nic_may_inject results: 0 inject now, t > now retry at t (throttle), INJ_HOLD wait for the
# protocol to wake the NIC (common.request_tx)
INJ_HOLD = -1
INJ_TAKEN = -2        # the protocol took the FIFO head (kept for a retransmission, e.g. IB's
                      # go-back-N after an RNR NAK): the core removes it without sending it
# nic_on_eject results
EJ_ACCEPT = 0         # the core handles the packet as usual
EJ_HOLD = 1           # stop draining this node's ejection buffer (back-pressure) until the
                      # protocol schedules EV_NIC_DRAIN (common.drain_at)
EJ_CONSUMED = 2       # the protocol took the packet (dropped, NAKed, forwarded): the core frees it
EJ_KEPT = 3           # the protocol keeps the packet to send it again (a receiver without a posted
                      # buffer, IB's RNR NAK): the core takes it out of the buffer, does not free
                      # it and does not count it delivered

# ---- per-member parameter vector (int64 [batch, N_PAR], times in cycles) ------------------------
# The single declaration of the core's slots: name -> what it holds (engine/params.py writes
# them). P_<name> = its position is generated below, as state.FIELDS declares the state. The
# protocol's own parameters follow in one block that every protocol shares (a member runs one
# protocol): its record module names them with protocol_slots().
CORE_PARAMS = {
    # network and router model (kernels/network.py, kernels/router_iq.py)
    "LINK_LAT": "link latency",
    "ROUTER_DELAY": "router pipeline delay",
    "FLIT_BYTES": "bytes per flit",
    "PKT_OVERHEAD": "bytes added to a packet's payload on the wire (VELO + network header)",
    "RMA_BYTES": "payload bytes per RMA data packet",
    "BUF_FLITS": "router input buffer per port and VC, flits",
    "EJ_FLITS": "NIC ejection buffer, flits",
    "NIC_FIFO": "NIC injection FIFO capacity, packets",
    "NIC_GAP": "NIC packet rate: cycles from one injected packet's head to the next's, at least",
    "ROUTER": "ROUTER_VOQ or ROUTER_IQ",
    "SPEEDUP": "crossbar speedup, fixed point: round(speedup * 2**SPEEDUP_FRAC_BITS)",
    "OUTQ": "iq router: flits that may wait at an output behind its link (0: none)",
    # routing (routing/registry.py, kernels/routing.py) and link classes
    "ROUTING": "routing kernel id | RT_FLAT; 0: table routing, layered VCs (the fast path)",
    "ADAPT_BIAS": "UGAL/PAR minimal bias, fixed point x 2**ADAPT_BIAS_BITS",
    "ADAPT_THRESH": "UGAL/PAR threshold, flits",
    "LAT_TERM": "link latency of a port of class PORT_TERMINAL (= P_LINK_LAT) ...",
    "LAT_LOCAL": "... of class PORT_LOCAL (router links of meshes, cubes; dragonfly local)",
    "LAT_GLOBAL": "... of class PORT_GLOBAL (dragonfly global links); P_LAT_TERM + class",
    # the host's I/O bus (kernels/nic.py host_dma)
    "DMA": "1: received packets reach the mailbox through the DMA stage",
    "PCI_FP": "its cycles per byte, fixed point (PCI_FRAC_BITS)",
    "DMA_SETUP": "its cycles per transfer",
    # host costs (kernels/host.py)
    "PIO": "CPU cycles to write one VELO packet",
    "PIO_KB": "CPU cycles per KiB of payload written by PIO (host.pio_ns_per_kb)",
    "RETRIEVE": "CPU cycles to retrieve one mailbox packet",
    "COPY_KB": "CPU cycles per KiB of payload copied out of a mailbox slot",
    "MATCH": "CPU cycles of MPI bookkeeping per message",
    "CREDIT": "CPU time per flow-control credit operation, 1/2**CREDIT_FRAC_BITS cycles",
    "LIMIC": "LiMIC fixed cycles per message (0 if LiMIC is off: see P_LIMIC_ON)",
    "LIMIC_PER_KB": "LiMIC copy cycles per KiB",
    "LIMIC_ON": "1: same-node messages use LiMIC",
    "PROGRESS": "packets the MPI progress engine retrieves at most per MPI call",
    "POSTED_NODE": "1: host.posted_writes node: a mailbox slot's release waits behind a full FIFO",
    # MPI layer
    "RPN": "ranks per node",
    "EAGER": "eager threshold, bytes",
    "MPI_HDR": "MPI header bytes in the first VELO packet",
    "VELO_PAYLOAD": "payload bytes per VELO packet",
    "CHUNK": "mpi.rendezvous chunked: chunk bytes (0: one GET of the whole message)",
    "GETS": "its outstanding gets per receive",
    "RNDV_WRITE": "1: mpi.rendezvous write: the receiver replies, the sender writes the data",
    # the protocol's interface to the core (protocols/registry.py)
    "PROTO": "the protocol's kernel id (what the generated dispatch branches on)",
    "HOOKS": "bitmask H_* of the hot-path hooks the member's protocol defines",
    "MAILBOX": "mailbox slots per rank (logical capacity)",
    "MAILBOX_HARD": "1: a full mailbox is an error (Protocol.mailbox_hard), 0: back-pressure",
    "SEND_MEMO": "1: the protocol's sends unblock only when the rank takes a control packet",
    "PIGGY": "1: credits are piggybacked on the last packet of a message when it has room",
    "SEARCH": "CPU time per mailbox slot a sender waiting for credits examines in its search "
              "for a credit packet, 1/2**CREDIT_FRAC_BITS cycles (0: no search)",
    # workload and limits
    "SYNTH": "0: MPI program, 1: uniform random, 2: destination table (permutation, shift)",
    "GEN_P32": "synthetic: packet generation probability per cycle, scaled by 2**32",
    "SYN_FLITS": "synthetic packet length, flits",
    "WARMUP": "synthetic: cycles before the measurement window",
    "MEASURE": "synthetic: the measurement window, cycles",
    "DRAIN": "synthetic: cycles after it",
    "SAMPLE": "network-only traffic: sample length for convergence (0: one window)",
    "CONV_TOL": "its tolerance, fixed point (TOL_FRAC_BITS)",
    "SEED": "the member's seed",
    "NO_PROGRESS": "cycles without progress before ERR_NO_PROGRESS",
    "MAX_CYCLES": "simulated cycles at most (ERR_MAX_CYCLES)",
}
for _i, _name in enumerate(CORE_PARAMS):
    globals()["P_" + _name] = _i
PROTOCOL_BLOCK = len(CORE_PARAMS)   # the protocol's own block starts here ...
PROTOCOL_SLOTS = 8                  # ... and holds this many slots at most
N_PAR = PROTOCOL_BLOCK + PROTOCOL_SLOTS


def protocol_slots(params: dict[str, str]) -> dict[str, int]:
    """A protocol's own parameters, declared as CORE_PARAMS is (name -> what it holds):
    {"P_<name>": slot} in the protocol block, in order. A record module binds them with
    globals().update(protocol_slots(PARAMS)) and writes them in its `params` callable."""
    assert len(params) <= PROTOCOL_SLOTS, (f"{len(params)} protocol parameters; the block holds "
                                           f"{PROTOCOL_SLOTS} (dtypes.PROTOCOL_SLOTS)")
    return {"P_" + name: PROTOCOL_BLOCK + i for i, name in enumerate(params)}


PCI_FRAC_BITS = 16
ROUTER_VOQ = 0        # network.router "voq": virtual output queues (kernels/network.py)
ROUTER_IQ = 1         # network.router "iq": one FIFO per input VC (kernels/router_iq.py)
ROUTER_KINDS = ("voq", "iq")
SPEEDUP_FRAC_BITS = 16
SPEEDUP_ONE = 1 << SPEEDUP_FRAC_BITS
# a slow receiver's memory: cycles per flit in fixed point (state ej_sink, network.slow_factor)
SINK_FRAC_BITS = 16
# the measurement of network-only traffic, int64 [B, N_CV] (state syn_cv, kernels/nic.py)
CV_START = 0      # first cycle of the measurement window the statistics cover
CV_END = 1        # its end: the sources stop here (moved up when the throughput converges)
CV_PREV = 2       # flits accepted in the previous window (-1: none yet)
CV_SAMPLES = 3    # windows completed
CV_CONVERGED = 4  # 1: two successive windows within the tolerance
N_CV = 5
TOL_FRAC_BITS = 16   # workload.converge_tolerance in fixed point (P_CONV_TOL)

# ---- routing (network.routing: routing/registry.py) and port classes (topology port_class) ---
# P_ROUTING = the routing's kernel id (its registration order; 0: the table routing, the fast
# path) or-ed with RT_FLAT for the flat VC assignment (every router-to-router hop on VC 0)
RT_FLAT = 8
ADAPT_BIAS_BITS = 8
PORT_TERMINAL = 0
PORT_LOCAL = 1
PORT_GLOBAL = 2

# A credit operation (a counter update and compare) costs nanoseconds of a 2.1 GHz Opteron (15
# by default), under one 29.54 ns network cycle; rounding it up to a cycle would overcharge it. So
# its cost is kept in fixed point and each rank carries the fraction (kernels/host.py
# fc_cycles): P_CREDIT = round(credit_ns / cycle_ns * 2**CREDIT_FRAC_BITS).
CREDIT_FRAC_BITS = 10
