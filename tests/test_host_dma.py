"""The host side of a NIC with an I/O bus (Bhoedjang et al.: 33 MHz/32-bit PCI): received
packets cross the bus by DMA into a posted host buffer, one transfer at a time, and the host
pays per byte for its PIO writes and its copies. Closed forms with 1-ns cycles, as the
engine's own (tests/test_engine.py): DMA at 500 MB/s is exactly 2 cycles per byte."""
from __future__ import annotations

import pytest

from extoll_vec.errors import ConfigError
from extoll_vec.config import from_dict
from extoll_vec.workloads import ProgramBuilder

from test_engine import ZERO_HOST, program_cfg, run_one

NET = {"link_latency": 3, "router_delay": 5, "flit_bytes": 16, "cycle_ns": 1.0}


def _cfg(network=None, host=None, **sections):
    return program_cfg([3], 1, network={**NET, **(network or {})},
                       host={**ZERO_HOST, **(host or {})}, **sections)


def _times(cfg, nbytes, hops=1):
    pb = ProgramBuilder(3)
    pb.send(0, hops, nbytes).recv(hops, 0, nbytes)
    res = run_one(cfg, pb.build("one message"))
    return [round(t * 1000) for t in res["rank_time_us"][0]], res


def test_one_packet_waits_for_its_dma_setup_and_bytes():
    plain, _ = _times(_cfg(), 40)
    dma, res = _times(_cfg({"pci_mb_s": 500.0, "dma_setup_ns": 7.0}), 40)
    L = _cfg().network.flits(16 + 40)              # header, 40 bytes, one packet
    assert res["packets_sent"][0, 0, 0] == 1
    assert dma[1] - plain[1] == 7 + L * 16 * 2    # setup + the whole packet at 2 cycles/byte
    assert dma[0] == plain[0]                     # the sender does not wait for it


def test_a_message_streams_through_the_bus_one_transfer_at_a_time():
    """37 packets of 2 KB arrive every L cycles; each transfer takes 7 + 2 x 16 L cycles, so
    the bus is the bottleneck from the first packet on (the ejection buffer fills behind it):
    the receive ends 37 transfers after the first packet arrived."""
    cfg = _cfg({"pci_mb_s": 500.0, "dma_setup_ns": 7.0})
    L = cfg.network.velo_packet_flits
    plain, _ = _times(_cfg(), 2048)
    dma, res = _times(cfg, 2048)
    assert res["packets_sent"][0, 0, 0] == 37
    sizes = [cfg.network.flits(min(cfg.mpi.velo_payload, 16 + 2048 - i * cfg.mpi.velo_payload))
             for i in range(37)]
    first = plain[1] - sum(sizes[1:])             # the first packet's arrival, without the bus
    assert sizes[1:-1] == [L] * 35 and sizes[-1] == L - 1
    assert dma[1] == first + sum(7 + 2 * 16 * s for s in sizes)


def test_a_full_mailbox_holds_the_bus_and_nothing_is_lost():
    cfg = _cfg({"pci_mb_s": 500.0}, protocol={"name": "backpressure", "mailbox_slots": 2})
    pb = ProgramBuilder(3)
    pb.send(0, 1, 2048)
    pb.compute(1, 20_000).recv(1, 0, 2048)       # the receiver posts no buffer for 20 us
    res = run_one(cfg, pb.build("held"))
    assert res["messages_received"][0, 1] == 1
    assert res["packets_delivered"][0] == 37
    assert res["mailbox_max_slots"][0, 1] == 2
    # after the compute, 35 packets still cross the bus one at a time (two were in)
    assert res["rank_time_us"][0, 1] * 1000 >= 20_000 + 35 * 2 * 16 * 4


def test_pio_and_copy_cost_per_byte_of_payload():
    """1024 ns per KiB is one cycle per byte: the sender's CPU writes every payload byte once
    (it finishes that much later), the receiver copies every byte once, and since a copy of
    a packet takes longer than its arrival, the receive ends when the last copy does."""
    nbytes = 2048
    cfg0 = _cfg()
    payload = cfg0.mpi.header_bytes + nbytes
    plain, _ = _times(cfg0, nbytes)
    pio, _ = _times(_cfg(host={"pio_ns_per_kb": 1024.0}), nbytes)
    assert pio[0] - plain[0] == payload
    copy, _ = _times(_cfg(host={"copy_ns_per_kb": 1024.0}), nbytes)
    L = cfg0.network.velo_packet_flits
    first = plain[1] - 35 * L - (L - 1)          # the last packet is a flit shorter
    assert copy[1] == first + payload


def test_slow_receivers_and_a_dma_stage_are_refused_together():
    with pytest.raises(ConfigError, match="network.pci_mb_s: got 132.0; allowed: 0 with slow"):
        from_dict({"network": {"pci_mb_s": 132.0, "slow_nodes": 1, "slow_factor": 2.0}})
