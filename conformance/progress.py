"""Progress bars on stderr (redrawn in place on a terminal; a line every 10% otherwise): one per
namespace, or several namespaces checked at once on one line."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: float, title: str, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = max(total, 1e-9)
        self.title = title
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.done = 0.0
        self.failed = 0
        self.start = time.monotonic()
        self._last_decile = -1

    def update(self, advance: float, label: str = "", failed: int = 0) -> None:
        self.done = min(self.total, self.done + advance)
        self.failed += failed
        self._draw(label)

    def _draw(self, label: str) -> None:
        if not self.enabled:
            return
        frac = self.done / self.total
        elapsed = time.monotonic() - self.start
        fails = f" {self.failed} failed" if self.failed else ""
        if self.tty:
            width = 28
            filled = int(frac * width)
            bar = "█" * filled + "░" * (width - filled)
            line = f"\r{self.title} {bar} {frac:4.0%} {elapsed:4.0f}s{fails}  {label}"
            self.stream.write(line[:120].ljust(120))
            self.stream.flush()
        else:
            decile = int(frac * 10)
            if decile != self._last_decile:
                self._last_decile = decile
                self.stream.write(f"{self.title}: {frac:4.0%} ({elapsed:.0f}s){fails}\n")
                self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r" + " " * 120 + "\r")
            self.stream.flush()


class MultiProgress:
    """The progress of namespaces checked in parallel, on one line (a terminal) or a line per
    namespace every 10% (otherwise). Totals arrive when each namespace has planned its checks."""

    def __init__(self, titles: list[str], stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.tty = enabled and self.stream.isatty()
        self.bars = {t: Progress(0.0, t, self.stream, enabled=enabled and not self.tty) for t in titles}
        self.enabled = enabled
        self.start = time.monotonic()

    def set_total(self, title: str, total: float) -> None:
        self.bars[title].total = max(total, 1e-9)

    def update(self, title: str, advance: float, label: str = "", failed: int = 0) -> None:
        self.bars[title].update(advance, label, failed)
        if self.tty:
            parts = []
            for t, bar in self.bars.items():
                fails = f" {bar.failed} failed" if bar.failed else ""
                parts.append(f"{t} {bar.done / bar.total:4.0%}{fails}")
            line = f"\r{' | '.join(parts)}  {time.monotonic() - self.start:4.0f}s"
            self.stream.write(line[:120].ljust(120))
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r" + " " * 120 + "\r")
            self.stream.flush()
