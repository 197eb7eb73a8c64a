"""`python3 -m mdsd_runner ...` (with PYTHONPATH=src): see cli.py."""
import sys

try:
    import h5py  # noqa: F401
    import numpy  # noqa: F401
except ImportError as e:
    from .errors import install_hint
    print(f"mdsd-runner: error: {e}\n{install_hint(['numpy', 'h5py'])}", file=sys.stderr)
    sys.exit(1)

from .cli import main
from .errors import WriteFailed

status = main()
if WriteFailed.kept:  # libhdf5 is broken for a file: end now, without its clean-up
    import os
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
