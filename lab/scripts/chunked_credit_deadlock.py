"""The chunked rendezvous under EXTOLL's credits deadlocked in an IMB Alltoall of 4 KB messages
in 1 KB chunks at c = 30 (72-node Dragonfly, one rank per node, minimal routing, 2 VCs): every
rank waits in its WAITALL with an empty mailbox and no packet in a router buffer. The same
with 64 slots per process; not at c = 1, not with 16 KB messages in 4 KB chunks, not without
credits (protocol none). Found while choosing portals_mpi_slow's message size. Fixed: the
first chunk arriving after every other byte had left the sender lost its send's completion
(lab/portals_mpi.md); every case now completes.

    python lab/scripts/chunked_credit_deadlock.py
"""
from extoll_vec.analysis.extoll.common import measured_us
from extoll_vec.engine.batch import simulate
from extoll_vec.examples import get_example

BASE = {"network.routing": "table", "network.vcs": 2, "mpi.ranks_per_node": 1,
        "workload.kind": "imb", "workload.benchmark": "Alltoall", "workload.ranks": 72,
        "workload.iterations": 1, "workload.warmup": 1, "mpi.rendezvous": "chunked",
        "mpi.chunk_bytes": 1024, "workload.message_bytes": 4096}
CREDITS = {"protocol.piggyback": True, "protocol.mailbox_slots": 16 * 72}
CASES = {
    "none, 4 KB / 1 KB chunks, c = 30": {"protocol.name": "none"},
    "static, 4 KB / 1 KB chunks, c = 1": {"protocol.name": "static", **CREDITS,
                                          "mpi.outstanding_gets": 1},
    "static, 16 KB / 4 KB chunks, c = 30": {"protocol.name": "static", **CREDITS,
                                            "mpi.chunk_bytes": 4096,
                                            "workload.message_bytes": 16384},
    "static, 4 KB / 1 KB chunks, c = 30": {"protocol.name": "static", **CREDITS},
    "static, 64 slots, 4 KB / 1 KB chunks, c = 30": {"protocol.name": "static", **CREDITS,
                                                     "protocol.mailbox_slots": 64 * 72},
    "dynamic, 4 KB / 1 KB chunks, c = 30": {"protocol.name": "dynamic", **CREDITS},
}
for name, over in CASES.items():
    cfg = get_example("dragonfly-72").replace(**{**BASE, **over})
    try:
        ds = simulate([cfg])
        print(f"{name}: {measured_us(ds, 0, cfg):,.1f} us", flush=True)
    except Exception as exc:   # the run's own deadlock report, first line
        print(f"{name}: {str(exc)[:160]}", flush=True)
