"""The model runner's entry point: `python3 -m mdsd_runner` (__main__.py), the wheel's
`mdsd-runner` command (a console script) and src/bin/mdsd-runner all end here."""
import os
import sys


def main():
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        from .errors import install_hint
        print(f"mdsd-runner: error: {e}\n{install_hint(['numpy', 'h5py'])}", file=sys.stderr)
        return 1

    from .cli import main as run
    from .errors import WriteFailed

    status = run()
    if WriteFailed.kept:  # libhdf5 is broken for a file: end now, without its clean-up
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status
