"""Long library calls from Python: interruptible by Ctrl-C, with a progress bar.

A ctypes call holds the main thread until it returns, and Python runs its SIGINT handler
(KeyboardInterrupt) only between bytecodes of the main thread: a Ctrl-C during an hour of
mdsd.table would wait the hour. So the call runs in a worker thread while the main thread
waits in short joins, where KeyboardInterrupt arrives at once; the main thread then calls
mdsd_interrupt() (the library's loops stop at the next row or tree: temporary files removed,
checkpoints kept), waits for the call to return and re-raises."""

import threading

from ._lib import lib

# tqdm bars appear only once a call has run this many seconds (tqdm's delay=): short
# calls print nothing. Tests set it to 0.
BAR_DELAY = 1.0


def interruptible(fn, *args):
    """fn(*args) (a library call) in a worker thread; Ctrl-C stops it within one row."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)  # signals reach the main thread only: nothing to wait for here
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
            pass
    except KeyboardInterrupt:
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
    """What progress= asks for, as a callback(done, total) or None:
    callable: it; False: none; None: a tqdm bar (tqdm.auto: a widget in a notebook, else
    stderr) when tqdm is importable, shown once the call has run BAR_DELAY seconds;
    True: that bar, tqdm required. Use as a context manager (the bar is closed on exit)."""

    def __init__(self, progress, what, unit="row"):
        if progress is not None and not isinstance(progress, bool) and not callable(progress):
            raise TypeError(f"{what}: progress must be callable (done, total), True, False or "
                            f"None, not {progress!r}")
        self._bar, self._what, self._unit = None, what, unit
        self.callback = progress if callable(progress) else None
        if progress is None or progress is True:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                if progress is True:
                    raise ImportError(f"{self._what}: progress=True needs tqdm (pip install "
                                      "tqdm, or Debian's python3-tqdm)") from None
                return
            self._tqdm = tqdm
            self.callback = self._tell

    def _tell(self, done, total):
        if self._bar is None:
            self._bar = self._tqdm(total=total, desc=self._what, unit=self._unit,
                                   delay=BAR_DELAY, leave=False, dynamic_ncols=True)
        self._bar.update(done - self._bar.n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.close()
        return False
