"""Long library calls from Python: interruptible by Ctrl-C, with a progress bar.

A ctypes call holds the main thread until it returns, and Python runs its SIGINT handler
(KeyboardInterrupt) only between bytecodes of the main thread: a Ctrl-C during an hour of
mdsd.table would wait the hour. So the call runs in a worker thread while the main thread
waits in short steps, where KeyboardInterrupt arrives at once; the main thread then calls
mdsd_interrupt() (the library's loops stop at the next row or tree: temporary files removed,
checkpoints kept), waits for the call to return and re-raises. Progress reported by the
library from the worker thread is handed to the caller's callback (or tqdm bar) in the main
thread, as before."""

import collections
import threading

from ._lib import lib

# tqdm bars appear only once a call has run this many seconds (tqdm's delay=): short
# calls print nothing. Tests set it to 0.
BAR_DELAY = 1.0


def interruptible(fn, *args, tick=None):
    """fn(*args) (a library call) in a worker thread; tick() (progress) in this one every
    50 ms and at the end. Ctrl-C, or an exception tick raises, stops the call within one
    row (mdsd_interrupt) and is raised once it has returned."""
    box, done = {}, threading.Event()

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: B036 - handed to the caller's thread below
            box["error"] = e
        finally:
            done.set()

    # Waited on through an Event, not Thread.join: a join that KeyboardInterrupt cuts
    # short can mark a running thread as stopped (Python 3.11, bpo-45274).
    threading.Thread(target=run, name="mdsd-call", daemon=True).start()
    try:
        while not done.wait(0.05):
            if tick is not None:
                tick()
        if tick is not None:
            tick()  # what the call's last blocks reported
    except BaseException:  # noqa: B036 - Ctrl-C or the callback's exception, re-raised
        lib.mdsd_interrupt()
        try:
            while not done.is_set():  # a second Ctrl-C does not leave the call running
                try:
                    done.wait(0.05)
                except KeyboardInterrupt:
                    pass
        finally:
            # the flag is process-wide and sticky: the next call must run
            lib.mdsd_interrupt_clear()
        raise
    if "error" in box:
        raise box["error"]
    return box.get("value")


class Progress:
    """What progress= asks for: callable: it, called as progress(done, total); False:
    nothing; None: a tqdm bar (tqdm.auto: a widget in a notebook, else stderr) when tqdm is
    importable, shown once the call has run BAR_DELAY seconds; True: that bar, tqdm
    required. record(done, total) may be called from any thread (the library's callback);
    tick() hands what was recorded, in order, to the callback or the bar (the caller's
    thread). .on: whether anything listens. A context manager: the bar closes on exit."""

    def __init__(self, progress, what, unit="row"):
        if progress is not None and not isinstance(progress, bool) and not callable(progress):
            raise TypeError(f"{what}: progress must be callable (done, total), True, False or "
                            f"None, not {progress!r}")
        self._events = collections.deque()  # appends and pops are atomic across threads
        self._bar, self._what, self._unit = None, what, unit
        self._target = progress if callable(progress) else None
        if progress is None or progress is True:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                if progress is True:
                    raise ImportError(f"{what}: progress=True needs tqdm (pip install tqdm, or "
                                      "Debian's python3-tqdm)") from None
                return
            self._tqdm, self._target = tqdm, self._show

    @property
    def on(self):
        return self._target is not None

    def record(self, done, total):
        if self._target is not None:
            self._events.append((int(done), int(total)))

    def tick(self):
        while self._events:
            self._target(*self._events.popleft())

    def _show(self, done, total):
        if self._bar is None:
            self._bar = self._tqdm(total=total, desc=self._what, unit=self._unit,
                                   delay=BAR_DELAY, leave=False, dynamic_ncols=True)
        elif total != self._bar.total or done < self._bar.n:  # the next unit (block: dump)
            self._bar.reset(total=total)
        self._bar.update(done - self._bar.n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.close()
        return False
