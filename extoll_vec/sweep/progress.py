"""A terminal progress bar: points done / total, rate and time left.

On a terminal the bar redraws one line (at most every `interval` seconds); on a pipe or a CI log
it prints a plain line every `log_interval` seconds and at the end; quiet prints nothing.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total: int, done: int = 0, quiet: bool = False,
                 stream: TextIO | None = None, width: int = 30, interval: float = 0.2,
                 log_interval: float = 30.0):
        self.total, self.done, self.start_done = total, done, done
        self.quiet, self.width = quiet, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if self.tty else log_interval
        self.t0 = time.monotonic()
        self.last = -1e9
        self.failed = 0
        self.rerun = self.lost = 0   # points run again after `lost` workers died (runner.py)

    def line(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        elapsed = time.monotonic() - self.t0
        new = self.done - self.start_done
        rate = new / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = _clock(left) if left is not None else "?"
        failed = f", {self.failed} failed" if self.failed else ""
        rerun = (f", {self.rerun} rerun after {self.lost} lost worker"
                 f"{'s' if self.lost > 1 else ''}" if self.rerun else "")
        return (f"[{'#' * fill}{'.' * (self.width - fill)}] {self.done}/{self.total} points"
                f"{failed}{rerun}  {rate:.2f} points/s  elapsed {_clock(elapsed)}  left {eta}")

    def update(self, points: int = 0, failed: int = 0, force: bool = False) -> None:
        self.done += points
        self.failed += failed
        if self.quiet:
            return
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.quiet:
            return
        self.update(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
