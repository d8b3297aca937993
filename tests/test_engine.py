"""Hand-checkable cases of the engine: closed-form latency, ordering, back-pressure, packet counts,
LiMIC, rendezvous, batching identity, deadlock reports and synthetic traffic."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec.config import MpiConfig, from_dict
from extoll_vec.engine import RESULT_VARIABLES, Batch, check_invariants, run_batch, simulate
from extoll_vec.protocols.audit import lookup
from extoll_vec.errors import SimulationError
from extoll_vec.examples import get_example
from extoll_vec.kernels.fc_fields import F_SEQ_RX, F_SEQ_TX
from extoll_vec.workloads import ProgramBuilder

ZERO_HOST = {"pio_ns": 0.0, "retrieve_ns": 0.0, "match_ns": 0.0, "credit_ns": 0.0,
             "limic_ns": 0.0, "limic_ns_per_kb": 0.0}


def program_cfg(dims, rpn, **sections):
    n = int(np.prod(dims)) * rpn
    d = {"topology": {"kind": "mesh", "dims": list(dims)}, "mpi": {"ranks_per_node": rpn},
         "workload": {"kind": "program", "ranks": n}}
    for k, v in sections.items():
        d.setdefault(k, {}).update(v)
    return from_dict(d)


def run_one(cfg, prog):
    return run_batch([cfg], programs=[prog])


@pytest.mark.parametrize("hops,nbytes", [(1, 0), (2, 40), (3, 10), (5, 0), (5, 40)])
def test_one_packet_arrives_at_closed_form_time(hops, nbytes):
    """k routers, k+1 links, L-1 cycles of serialization (network.py docstring)."""
    lat, rd, flit = 3, 5, 8
    cfg = program_cfg([6], 1, network={"link_latency": lat, "router_delay": rd, "flit_bytes": flit,
                                       "buffer_flits": 40, "cycle_ns": 1.0}, host=ZERO_HOST)
    pb = ProgramBuilder(6)
    pb.send(0, hops, nbytes)
    pb.recv(hops, 0, nbytes)
    res = run_one(cfg, pb.build("one packet"))
    k = hops + 1                                   # routers on the path
    L = -(-(16 + nbytes + 8 + cfg.network.packet_header_bytes) // flit)
    expected = k * rd + (k + 1) * lat + L - 1
    assert res["packets_sent"][0, 0, 0] == 1
    assert round(res["rank_time_us"][0, hops] * 1000) == expected


@pytest.mark.parametrize("gap_ns", [0.0, 4.0, 5.0, 6.0, 9.0, 50.0])
def test_nic_packet_rate_spaces_the_packets_of_a_message(gap_ns):
    """network.nic_packet_ns: the NIC starts a packet at most every max(L, gap) cycles, so the
    37 packets of a 2 KB message arrive 36 x max(L, gap) cycles after the first (zero host
    costs: the PIO writes cost nothing, the NIC alone paces the stream). L = 5 flits: 64 bytes
    of mailbox slot and 8 of network header, in 16-byte flits."""
    def last_arrival(gap):
        cfg = program_cfg([2], 1, network={"cycle_ns": 1.0, "nic_packet_ns": gap},
                          host=ZERO_HOST)
        pb = ProgramBuilder(2)
        pb.send(0, 1, 2048)
        pb.recv(1, 0, 2048)
        return round(run_one(cfg, pb.build("stream"))["rank_time_us"][0, 1] * 1000)
    L = program_cfg([2], 1).network.velo_packet_flits
    assert L == 5
    assert last_arrival(gap_ns) - last_arrival(0.0) == 36 * (max(L, gap_ns) - L)


def test_two_messages_keep_their_order_and_packets_are_sequenced():
    cfg = program_cfg([3], 2, mpi={"limic": False})
    pb = ProgramBuilder(6)
    pb.isend(0, 5, 2048).isend(0, 5, 100).isend(0, 5, 0).waitall(0)
    pb.recv(5, 0, 2048).recv(5, 0, 100).recv(5, 0, 0)
    b = Batch([cfg], [pb.build()])
    b.run()
    # the NIC checked every packet's per-pair sequence number on the way into the mailbox
    rx, tx = lookup(b.S, 0, np.array([5, 0]), np.array([0, 5]))   # the pair table's entries
    assert b.S.fc[0, rx, F_SEQ_RX] == b.S.fc[0, tx, F_SEQ_TX] == 37 + 3 + 1
    assert b.results()["messages_received"][0, 5] == 3
    # the end-of-run check compares the two counts of every pair (negative control: one packet
    # that never reached rank 5's mailbox)
    b.S.fc[0, rx, F_SEQ_RX] -= 1
    with pytest.raises(SimulationError, match="rank 0 wrote 41 VELO packets to rank 5, 40 reached"):
        check_invariants(b, 0)


def test_full_mailbox_blocks_the_sender_and_loses_nothing():
    # a 16-packet FIFO: the 148 packets do not fit, so back-pressure reaches the sender's CPU
    cfg = program_cfg([2], 1, protocol={"name": "backpressure", "mailbox_slots": 8},
                      network={"nic_fifo_packets": 16})
    pb = ProgramBuilder(2)
    for _ in range(4):
        pb.isend(0, 1, 2048)
    pb.waitall(0)
    pb.compute(1, 100_000)                        # the receiver is busy for 100 us
    for _ in range(4):
        pb.recv(1, 0, 2048)
    res = run_one(cfg, pb.build())
    assert res["mailbox_max_slots"][0, 1] == 8    # full, never above
    assert res["messages_received"][0, 1] == 4
    assert res["packets_sent"][0, 0, 0] == 4 * 37
    assert res["packets_delivered"][0] == 4 * 37
    assert res["stall_us"][0, 0] > 50             # the sender's CPU was held by back-pressure
    assert res["exec_time_us"][0] > 100


def test_2kb_is_37_velo_packets():
    assert MpiConfig().packets(2048) == 37
    cfg = program_cfg([2], 1)
    pb = ProgramBuilder(2)
    pb.send(0, 1, 2048).recv(1, 0, 2048)
    res = run_one(cfg, pb.build())
    assert res["packets_sent"][0, 0].tolist() == [37, 0, 0]


def test_limic_messages_create_no_network_traffic():
    pb = ProgramBuilder(4)
    pb.send(0, 1, 2048).recv(1, 0, 2048).send(2, 3, 512).recv(3, 2, 512)
    prog = pb.build()
    res = run_one(program_cfg([2], 2), prog)
    assert res["packets_sent"].sum() == 0 and res["packets_delivered"][0] == 0
    assert res["messages_received"][0].tolist() == [0, 1, 0, 1]
    off = run_one(program_cfg([2], 2, mpi={"limic": False}), prog)
    assert off["packets_sent"][0, :, 0].sum() == 37 + 10


def test_rendezvous_moves_data_over_rma():
    cfg = program_cfg([2], 1)
    pb = ProgramBuilder(2)
    pb.send(0, 1, 8192).recv(1, 0, 8192)
    res = run_one(cfg, pb.build())
    sent = res["packets_sent"][0]
    assert sent[0].tolist() == [1, 0, 8192 // 256]   # request packet; RMA data from the NIC
    assert sent[1].tolist() == [0, 0, 1]              # the receiver's GET
    assert res["messages_received"][0, 1] == 1


def _four():
    base = {"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},
            "workload": {"kind": "alltoall", "ranks": 16, "message_bytes": 512}}
    c = from_dict(base)
    return [c,
            c.replace(**{"protocol.name": "window", "protocol.mailbox_slots": 128, "seed": 3}),
            c.replace(**{"protocol.name": "backpressure", "protocol.mailbox_slots": 256,
                         "host.pio_ns": 90.0}),
            c.replace(**{"workload.message_bytes": 1000, "network.link_latency": 7})]


def test_batch_of_four_equals_four_single_runs():
    cfgs = _four()
    together = run_batch(cfgs)
    for i, c in enumerate(cfgs):
        alone = run_batch([c])
        for name in RESULT_VARIABLES:
            np.testing.assert_array_equal(together[name][i], alone[name][0], err_msg=name)
    reordered = run_batch(cfgs[::-1])
    for name in RESULT_VARIABLES:
        np.testing.assert_array_equal(reordered[name][::-1], together[name], err_msg=name)


def test_deadlock_is_reported_with_stuck_ranks():
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},
                     "protocol": {"name": "backpressure", "mailbox_slots": 16},
                     "workload": {"kind": "alltoall", "ranks": 16, "message_bytes": 2048}})
    with pytest.raises(SimulationError) as exc:
        run_batch([cfg])
    msg = str(exc.value)
    assert "deadlock" in msg and "ranks unfinished" in msg and "nic-backpressure" in msg
    assert "\n" not in msg


def test_uniform_traffic_offered_load_and_latency():
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [4, 4]},
                     "workload": {"kind": "uniform", "injection_rate": 0.1, "packet_flits": 4,
                                  "warmup_cycles": 1000, "measure_cycles": 20000}})
    ds = simulate([cfg])
    offered = float(ds.offered_flits_per_node_cycle[0])
    accepted = float(ds.accepted_flits_per_node_cycle[0])
    assert offered == pytest.approx(0.1, rel=0.05)
    assert accepted == pytest.approx(offered, rel=0.05)       # far below saturation
    zero_load = 2 * cfg.network.router_delay + 3 * cfg.network.link_latency + 3
    assert float(ds.packet_latency_cycles_mean[0]) >= zero_load
    again = simulate([cfg])
    assert float(again.packet_latency_cycles_mean[0]) == float(ds.packet_latency_cycles_mean[0])
    other = simulate([cfg.replace(seed=1)])
    assert float(other.packet_latency_cycles_mean[0]) != float(ds.packet_latency_cycles_mean[0])


def test_no_progress_watchdog_stops_the_run():
    """Events keep flowing (sources generate) but nothing is delivered for longer than the
    limit: the watchdog stops the run instead of spinning."""
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [4, 4]},
                     "workload": {"kind": "uniform", "injection_rate": 0.05},
                     "limits": {"no_progress_us": 0.004}})
    with pytest.raises(SimulationError, match="no progress"):
        simulate([cfg])


@pytest.mark.slow
def test_kernel_calls_release_the_gil():
    """A chunk of cycles may run for minutes: other threads (a Dask worker's heartbeat) must
    keep running meanwhile. The main thread's 10 ms sleeps must not stall while a simulation
    runs in another thread."""
    import threading
    import time

    cfg = get_example("tiny").replace(**{"workload.iterations": 400,
                                         "limits.chunk_cycles": 100_000_000})
    Batch([cfg]).run()                       # compiled and warm before timing
    batch = Batch([cfg])
    worker = threading.Thread(target=batch.run)
    gaps, t0 = [], time.perf_counter()
    worker.start()
    last = time.perf_counter()
    while worker.is_alive():
        time.sleep(0.01)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    busy = time.perf_counter() - t0
    assert busy > 0.5, f"the run took {busy:.2f} s: too short to tell"
    assert max(gaps) < 0.25 * busy, f"the main thread stalled {max(gaps):.2f} s of {busy:.2f} s"


def test_a_profile_of_the_wrong_shape_or_type_is_refused_before_the_kernel_runs():
    """The kernel writes a profile's rows unchecked: one row short would be written past."""
    b = Batch([get_example("tiny")] * 2)
    for bad in (np.zeros((1, D.N_PROF, 2), np.int64), np.zeros((2, D.N_PROF, 2), np.int32),
                np.zeros((2, D.N_PROF), np.int64), [[0]],
                np.zeros((2, 2 * D.N_PROF, 2), np.int64)[:, ::2]):
        with pytest.raises(ValueError, match="profile: a C-contiguous int64 array of shape"):
            b.run(profile=bad)
    assert (b.S.now == 0).all()                        # nothing ran


def test_profiled_run_times_every_event_and_changes_no_result():
    """Batch.run(profile=...) (benchmarks/profile_events.py) times every event in the same
    compiled loop: it must file every event under one kind and leave the simulation
    bit-identical."""
    cfg = get_example("tiny").replace(**{"protocol.name": "dynamic", "protocol.credit_slots": 2,
                                         "protocol.mailbox_slots": 16 * 16})
    plain, timed = Batch([cfg]), Batch([cfg])
    plain.run()
    prof = np.zeros((1, D.N_PROF, 2), np.int64)
    timed.run(profile=prof)
    counts = prof[0, :, 0]
    assert counts.sum() == timed.S.events[0] == plain.S.events[0]
    assert counts[D.EV_RANK] == 0                      # every rank turn is classified
    # every VELO packet went through a NIC receive, was written by one rank turn and taken
    # out of a mailbox by another (tiny has no rendezvous; its same-node messages go through
    # LiMIC, which writes no packet)
    pkts = int(timed.S.delivered[0])
    assert counts[D.EV_NIC_RX] == counts[D.PROF_RANK_WRITE] == counts[D.PROF_RANK_RETRIEVE] == pkts
    assert (prof[0, counts > 0, 1] > 0).all()
    a, b = plain.results(), timed.results()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
