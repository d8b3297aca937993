"""What went wrong in a batch member, in words: the kernels' error flags turned into one
paragraph naming the point, the stuck ranks and the full buffers, and the conservation checks
after a completed run (every packet and credit accounted for), so a model bug stops the run
instead of yielding plausible numbers."""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import SimulationError
from ..protocols.audit import alive_packets, lookup, pairs_of
from ..protocols.fc_layout import F_SEQ_RX, F_SEQ_TX
from ..protocols.registry import protocol_with_id
from ..routing.deadlock import buffer_id, describe_cycle, find_cycle


def describe_error(batch, b: int) -> str:
    """One paragraph that says what broke and where the member is stuck."""
    S, cfg = batch.S, batch.configs[b]
    flags = int(S.status[b])
    names = [name for bit, name in D.ERR_NAMES.items() if flags & bit]
    t_us = S.now[b] * cfg.network.cycle_ns / 1000.0
    parts = [f"{' + '.join(names)} at cycle {int(S.now[b])} ({t_us:.3f} us)"]
    region = {1: "credit packets in the credit slots", 2: "packets beyond the sender's grant",
              3: "packets in the data region"}.get(int(S.err_info[b, 3]))
    if region is not None:
        parts.append(f"mailbox of rank {int(S.err_info[b, 0])} holds {int(S.err_info[b, 2])} "
                     f"{region} of rank {int(S.err_info[b, 1])}: more than its protocol allows")
    elif S.err_info[b, 0] >= 0:
        parts.append(f"rank {int(S.err_info[b, 0])}")
    nr = S.rk_pc.shape[1]
    if nr:
        stuck = np.nonzero(S.rk_wait[b] != D.W_DONE)[0]
        if len(stuck):
            desc = []
            for r in stuck[:8]:
                pc = int(S.rk_pc[b, r])
                op = D.OP_NAMES[int(batch.ops[b, pc, 0])]
                desc.append(f"rank {r} {D.WAIT_NAMES[int(S.rk_wait[b, r])]} at {op}(row {pc}), "
                            f"mailbox {int(S.mb_cnt[b, r])}/{int(batch.par[b, D.P_MAILBOX])}")
            more = f" (+{len(stuck) - 8} more)" if len(stuck) > 8 else ""
            parts.append(f"{len(stuck)} ranks unfinished: " + "; ".join(desc) + more)
    full = np.argwhere(S.ib_flits[b] + 0 >= batch.par[b, D.P_BUF_FLITS] - 1)
    if len(full):
        parts.append(f"{len(full)} router input buffers full, e.g. router {full[0][0]} port "
                     f"{full[0][1]} vc {full[0][2]}")
    blocked = np.nonzero(S.ej_blk[b])[0]
    if len(blocked):
        parts.append(f"NICs of nodes {blocked[:8].tolist()} hold packets for full mailboxes")
    if flags & D.ERR_STALL:
        parts.append(batch.stall.notes[b])
    if flags & (D.ERR_NO_PROGRESS | D.ERR_DEADLOCK):
        parts.append(blocked_cycle(batch, b))
        # a protocol that holds packets at its NICs can be stuck with every router buffer
        # empty: it says where it waits (its queues, credits, a cycle among its NICs)
        diagnose = protocol_with_id(int(batch.par[b, D.P_PROTO])).diagnose
        if diagnose is not None:
            parts += diagnose(batch, b)
    return f"point {b}: " + "; ".join(parts)


def blocked_cycle(batch, b: int) -> str:
    """The wait-for graph of the routers' input buffers: buffer (router, port, VC) -> the
    downstream buffer a queue head of it waits for (its output has fewer credits for its VC
    than the packet has flits). A buffer is blocked if every queue head in it waits so; a set
    of blocked buffers that wait only for each other can never move again (a deadlock). Names
    a cycle of such a set, or says there is none."""
    r, pi, vi, po, ovc, flits = queue_heads(batch, b)
    if len(r) == 0:
        return "no packet waits in a router buffer"
    stuck, waiting = waiting_set(batch, b, r, pi, vi, po, ovc, flits)
    if not stuck:
        return (f"{waiting} queue heads wait for credits, but no set of router buffers "
                "waits only on itself (no routing deadlock)")
    edges = np.array([(a, c) for a, cs in stuck.items() for c in cs], np.int64)
    cycle = find_cycle(np.unique(edges, axis=0))
    return (f"routing deadlock: {len(stuck)} router input buffers wait only on each other, "
            "e.g. the cycle " + describe_cycle(cycle))


def queue_heads(batch, b: int):
    """The queue heads in the routers' input buffers of member b, as int64 arrays (router,
    input port, input VC, output port, output VC, flits): the VOQ router's one head per
    virtual output queue, the iq router's one per input VC FIFO (kernels/router_iq.py)."""
    S = batch.S
    if batch.configs[b].network.router == "iq":
        r, pi, vi = np.nonzero(S.iq_head[b] >= 0)
        return (r, pi, vi, S.iq_hout[b][r, pi, vi].astype(np.int64),
                S.iq_hovc[b][r, pi, vi].astype(np.int64),
                S.iq_hlen[b][r, pi, vi].astype(np.int64))
    heads = S.voq[b, ..., 0]
    r, pi, vi, po = np.nonzero(heads >= 0)
    h = heads[r, pi, vi, po]
    return (r, pi, vi, po, S.pk["ovc"][b, h].astype(np.int64),
            S.pk["flits"][b, h].astype(np.int64))


def waiting_set(batch, b: int, r, pi, vi, po, ovc, flits) -> tuple[dict, int]:
    """Of the given queue heads, those that wait for credits (their output has fewer credits
    for their VC than they have flits) make the wait-for graph buffer -> the downstream
    buffer; a buffer is blocked if every head of it waits. Returns the blocked buffers that
    wait only on blocked buffers ({buffer id: [buffer ids it waits on]}: such a set can never
    move again) and the number of waiting heads."""
    S, topo = batch.S, batch.topology
    waits = (topo.neighbor[r, po] >= 0) & (S.cr[b, r, po, ovc] < flits)
    src = buffer_id(r, pi, vi)
    dst = buffer_id(topo.neighbor[r, po], np.maximum(topo.neighbor_port[r, po], 0), ovc)
    free = set(src[~waits].tolist())            # buffers with a head that can move
    stuck: dict[int, list[int]] = {}
    for a, c in zip(src[waits].tolist(), dst[waits].tolist()):
        if a not in free:
            stuck.setdefault(a, []).append(c)
    changed = True
    while changed:          # keep only buffers whose every wait is on a stuck buffer
        changed = False
        for a in [a for a, cs in stuck.items() if any(c not in stuck for c in cs)]:
            del stuck[a]
            changed = True
    return stuck, int(waits.sum())


def check_invariants(batch, b: int) -> None:
    """Conservation after a completed run: every packet and credit is accounted for."""
    S, p = batch.S, batch.par[b]
    errors = []
    if p[D.P_SYNTH] != 0:
        # network-only traffic: every packet made was taken out by its destination or is
        # still alive (in a source queue, a buffer, on a link): none lost
        from ..kernels.nic import SY_MADE, SY_TAKEN
        made, taken = int(S.syn[b, SY_MADE]), int(S.syn[b, SY_TAKEN])
        alive = int(S.pk_meta[b, 1])     # every packet alive; a protocol's own ones too
        if made != taken + alive:        # then count the traffic's alone (a walk of the pool)
            alive = int((alive_packets(S, b) & (S.pk["kind"][b] == D.PK_SYNTH)).sum())
        if made != taken + alive:
            errors.append(f"packets made {made} != taken out {taken} + alive {alive}")
    if p[D.P_SYNTH] == 0:
        sent = int(S.st_sent[b].sum()) + int(S.proto_made[b])   # ranks' + a protocol's own
        if sent != int(S.delivered[b]):
            errors.append(f"packets sent {sent} != delivered {int(S.delivered[b])}")
        if int(S.pk_meta[b, 1]) != 0:
            errors.append(f"{int(S.pk_meta[b, 1])} packets still alive")
        if int(S.mb_cnt[b].sum()) != 0:
            errors.append("mailboxes not empty at the end")
        if int(S.rk_osend[b].sum()) or int(S.rk_orecv[b].sum()):
            errors.append("requests outstanding at the end")
        if int(S.ux_meta[b, :, 2].sum()) != 0:
            errors.append("unmatched messages at the end")
        term = batch.topology.terminal_node >= 0
        cr = S.cr[b]
        if not (np.all(cr[term][:, 0] == p[D.P_EJ_FLITS])
                and np.all(cr[(batch.topology.neighbor >= 0)] == p[D.P_BUF_FLITS])
                and np.all(S.nic_cr[b] == p[D.P_BUF_FLITS])):
            errors.append("link credits not all returned")
        if np.any(S.ib_cnt[b]) or np.any(S.ej_cnt[b]) or np.any(S.nq_cnt[b]):
            errors.append("buffers not empty at the end")
        # per pair of the table (engine/pairs.py): x's packets to y against y's count of x's;
        # a pair whose reverse is not in the table exchanged nothing (both read 0)
        px, py = pairs_of(S, b)
        rev = lookup(S, b, py, px)
        tx = S.fc[b, :len(px), F_SEQ_TX].astype(np.int64)
        rx = np.where(rev >= 0, S.fc[b, np.maximum(rev, 0), F_SEQ_RX], 0)
        lost = tx != rx
        if lost.any():
            i = int(np.flatnonzero(lost)[0])
            errors.append(f"rank {int(px[i])} wrote {int(tx[i])} VELO packets to rank "
                          f"{int(py[i])}, {int(rx[i])} reached its mailbox")
        # multicast: each sender's packets owe its group's other members one copy each; they
        # arrived in order (the NIC's check), so equal counts mean each arrived once everywhere
        got = np.bincount(py[py >= 0], weights=S.mseq_rx[b, :len(px)][py >= 0],
                          minlength=len(S.mc_due[b]))
        short = np.flatnonzero(got != S.mc_due[b])
        if short.size:
            s = int(short[0])
            errors.append(f"rank {s}'s multicasts owed its group {int(S.mc_due[b, s])} packets, "
                          f"{int(got[s])} reached the members' mailboxes")
    # the member's protocol's own audit (protocols/registry.py)
    errors += protocol_with_id(int(p[D.P_PROTO])).audit(batch, b)
    if errors:
        raise SimulationError(f"point {b}: invariant broken: " + "; ".join(errors),
                              D.ERR_INVARIANT, b)
