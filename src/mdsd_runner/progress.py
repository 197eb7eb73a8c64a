"""A one-line progress bar on stderr, drawn only when stderr is a terminal."""

import sys
import time


class Progress:
    def __init__(self, total, done=0, stream=None, enabled=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = total
        self.start_done = done
        self.t0 = time.time()
        self.drawn = False
        if self.enabled and done:
            self.stream.write(f"resuming after {done} of {total} samples\n")

    def update(self, done, rows):
        if not self.enabled:
            return
        width = 30
        filled = width * done // max(self.total, 1)
        elapsed = time.time() - self.t0
        new = done - self.start_done
        eta = elapsed / new * (self.total - done) if new else 0.0
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
                          f"samples, {rows} rows, {elapsed:.0f} s, ETA {eta:.0f} s ")
        self.stream.flush()
        self.drawn = True

    def close(self):
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
