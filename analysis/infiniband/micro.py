"""Liu and Panda's micro-benchmarks (section 6.2) as targets, under ib_hardware, ib_static and
ib_dynamic on the 8-node IB testbed (examples.ib_testbed):

- ``ib_latency`` (Figure 2): one-way latency of the ping-pong against the message size, 100
  pre-posted buffers: half the round trip, averaged over the timed iterations of rank 0.
- ``ib_bandwidth`` (Figures 3-8): bandwidth against the window size, blocking and
  non-blocking: 4-byte messages with 100 buffers (Figures 3-4) and with 10 (5-6), 32 KB with 10
  (7-8); bytes rank 0 sent over its timed part, in MB/s (10**6 bytes per second).

The text of the paper this project has carries no value of its figures, so the tables check
the paper's statements about them (the notes say which hold) rather than numbers.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict

from ..extoll.common import completed, completed_configs, configs, figure, write_outputs
from ..registry import Needs, Table, target

SCHEMES = ("ib_hardware", "ib_static", "ib_dynamic")
LABEL = {"ib_hardware": "hardware", "ib_static": "user-level static",
         "ib_dynamic": "user-level dynamic"}


@dataclasses.dataclass(frozen=True)
class IbPoints(Needs):
    """Completed points of workload `kind` under at least one of the IB schemes."""
    kind: str

    @property
    def what(self) -> str:
        return f"completed {self.kind} points of the IB schemes (an ib_{self.kind} sweep)"

    def missing(self, ds) -> str | None:
        cfgs = completed_configs(ds)
        if not any(c.workload.kind == self.kind and c.protocol.name in SCHEMES for c in cfgs):
            return f"no completed {self.kind} point of an IB scheme"
        return None


def _timed_us(ds, i: int) -> float:
    """Rank 0's timed part: from its start mark to its done mark."""
    m = ds.mark_time_us.values[i, 0]
    return float(m[1] - m[0])


def _rank_sum(ds, name: str, i: int) -> int:
    return int(ds[name].values[i].sum()) if name in ds else 0


@target("ib_latency", "Liu and Panda, Figure 2: MPI one-way latency against the message size "
        "under the hardware, static and dynamic schemes (100 pre-posted buffers)",
        needs=IbPoints("latency"), sweep=True)
def ib_latency(ds, out_dir=None) -> Table:
    ds = completed(ds)
    lat: dict[tuple, float] = {}
    for i, c in enumerate(configs(ds)):
        if c.workload.kind == "latency" and c.protocol.name in SCHEMES:
            lat[(c.protocol.name, c.workload.message_bytes)] = (
                _timed_us(ds, i) / c.workload.iterations / 2)
    sizes = sorted({b for _s, b in lat})
    rows = [[s, b, lat[(s, b)]] for s in SCHEMES for b in sizes if (s, b) in lat]
    notes = []
    for b in sizes:
        vals = [lat[(s, b)] for s in SCHEMES if (s, b) in lat]
        notes.append(f"{b} B: {', '.join(f'{v:.2f}' for v in vals)} us; the schemes differ "
                     f"by {100 * (max(vals) / min(vals) - 1):.2f} % (paper: negligible)")
    table = Table(f"ib_latency: {len(rows)} points", ["scheme", "message_bytes", "latency_us"],
                  rows, notes)
    if out_dir is not None:
        fig, axes = figure(1, width=5.5, height=4.0)
        ax = axes[0][0]
        for s in SCHEMES:
            pts = [(b, lat[(s, b)]) for b in sizes if (s, b) in lat]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=LABEL[s])
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("one-way latency (us)")
        ax.set_title("Figure 2: MPI latency (pre-post 100)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        write_outputs(table, fig, out_dir, "ib_latency")
    return table


def _panel(c) -> tuple:
    return (c.workload.message_bytes, c.protocol.prepost, c.workload.blocking)


PANELS = ((4, 100, True, "Figure 3"), (4, 100, False, "Figure 4"), (4, 10, True, "Figure 5"),
          (4, 10, False, "Figure 6"), (32768, 10, True, "Figure 7"),
          (32768, 10, False, "Figure 8"))


def _check_notes(bw: dict) -> list[str]:
    """The paper's statements on Figures 3-8 (section 6.2.2), each with what the table has."""
    notes = []

    def curve(s, nbytes, pre, blk):
        return {w: v for (ss, b, p, bl, w), v in bw.items()
                if (ss, b, p, bl) == (s, nbytes, pre, blk)}

    def spread(nbytes, pre, blk):
        """The windows every scheme has, and the largest relative gap between the schemes
        over them (ws empty: some scheme has none)."""
        cs = [curve(s, nbytes, pre, blk) for s in SCHEMES]
        ws = sorted(set.intersection(*(set(c) for c in cs))) if all(cs) else []
        gap = max((max(c[w] for c in cs) / min(c[w] for c in cs) - 1 for w in ws), default=0)
        return ws, gap

    for blk in (True, False):
        mode = "blocking" if blk else "non-blocking"
        ws, gap = spread(4, 100, blk)
        if ws:
            notes.append(f"4 B, 100 buffers, {mode}: the schemes differ by at most "
                         f"{100 * gap:.1f} % over windows {ws[0]}-{ws[-1]} (paper: "
                         "comparable)")
        hw, st, dy = (curve(s, 4, 10, blk) for s in SCHEMES)
        big = sorted(w for w in set(hw) & set(st) & set(dy) if w > 10)
        if big:
            order = [w for w in big if dy[w] >= max(hw[w], st[w]) and st[w] <= min(hw[w], dy[w])]
            notes.append(f"4 B, 10 buffers, {mode}, windows above 10 ({big}): dynamic best and "
                         f"static worst at {order or 'none'} (paper: dynamic best, static "
                         "worst); " + ", ".join(
                             f"w{w}: hw {hw[w]:.3f} st {st[w]:.3f} dy {dy[w]:.3f} MB/s"
                             for w in big))
    for s in ("ib_static", "ib_dynamic"):
        b, n = curve(s, 4, 10, True), curve(s, 4, 10, False)
        big = sorted(w for w in set(b) & set(n) if w > 10)
        if big:
            better = [w for w in big if b[w] > n[w]]
            notes.append(f"4 B, 10 buffers, {LABEL[s]}: blocking above non-blocking at windows "
                         f"{better or 'none'} of {big} (paper: blocking better for the "
                         "user-level schemes)")
    for blk in (True, False):
        ws, gap = spread(32768, 10, blk)
        if ws:
            notes.append(f"32 KB, 10 buffers, {'blocking' if blk else 'non-blocking'}: the "
                         f"schemes differ by at most {100 * gap:.1f} % (paper: all three "
                         "close)")
    nb = [curve(s, 32768, 10, False) for s in SCHEMES]
    bl = [curve(s, 32768, 10, True) for s in SCHEMES]
    pairs = [(n[w], b[w]) for n, b in zip(nb, bl) for w in set(n) & set(b) if w > 1]
    if pairs:
        notes.append(f"32 KB: non-blocking above blocking in {sum(n > b for n, b in pairs)} "
                     f"of {len(pairs)} (scheme, window > 1) points (paper: non-blocking much "
                     "better)")
    return notes


@target("ib_bandwidth", "Liu and Panda, Figures 3-8: MPI bandwidth against the window size, "
        "blocking and non-blocking, 4 B with 100 and 10 pre-posted buffers and 32 KB with 10, "
        "under the hardware, static and dynamic schemes", needs=IbPoints("bandwidth"),
        sweep=True)
def ib_bandwidth(ds, out_dir=None) -> Table:
    ds = completed(ds)
    bw: dict[tuple, float] = {}
    extra: dict[tuple, tuple] = {}
    for i, c in enumerate(configs(ds)):
        w = c.workload
        if w.kind != "bandwidth" or c.protocol.name not in SCHEMES:
            continue
        key = (c.protocol.name, *_panel(c), w.window)
        bw[key] = w.message_bytes * w.window * w.iterations / _timed_us(ds, i)
        extra[key] = (_rank_sum(ds, "ib_rnr_naks", i), _rank_sum(ds, "ib_ecm_sent", i),
                      int(ds["ib_max_posted"].values[i].max()) if "ib_max_posted" in ds else 0,
                      _rank_sum(ds, "sends_delayed", i))
    cols = ["scheme", "message_bytes", "prepost", "blocking", "window", "bandwidth_MBps",
            "rnr_naks", "ecm_sent", "max_posted", "sends_delayed"]
    rows = [[*k[:3], bool(k[3]), k[4], v, *extra[k]] for k, v in sorted(bw.items())]
    table = Table(f"ib_bandwidth: {len(rows)} points", cols, rows, _check_notes(bw))
    if out_dir is not None:
        fig, axes = figure(2, 3, width=4.2, height=3.3)
        curves = defaultdict(dict)
        for (s, b, p, blk, win), v in bw.items():
            curves[(b, p, blk, s)][win] = v
        for k, (b, p, blk, fig_name) in enumerate(PANELS):
            ax = axes[k // 2][k % 2]
            for s in SCHEMES:
                cv = curves.get((b, p, blk, s))
                if cv:
                    ws = sorted(cv)
                    ax.plot(ws, [cv[x] for x in ws], marker="o", label=LABEL[s])
            ax.set_xscale("log", base=2)
            ax.set_xlabel("window size (messages)")
            ax.set_ylabel("bandwidth (MB/s)")
            ax.set_title(f"{fig_name}: {b} B, pre-post {p}, "
                         f"{'blocking' if blk else 'non-blocking'}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        write_outputs(table, fig, out_dir, "ib_bandwidth")
    return table
