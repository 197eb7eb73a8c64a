"""The one exception the runner raises for bad input or an unusable environment;
the command line prints its message and exits with status 1."""

import sys


class RunnerError(Exception):
    """A problem the user can fix; the message names the file, line, option or value."""


class WriteFailed(RunnerError):
    """A write to an HDF5 file failed (a full disk, `ulimit -f`). libhdf5's state for that
    file is then broken: freeing its h5py objects prints tracebacks from their destructors
    and closing the library at exit can crash, so the objects are kept (`keep`) and the
    command-line entry point ends the process at once after the message
    (__main__.py)."""

    kept = []  # objects never freed before the process ends

    def __init__(self, message, keep=()):
        super().__init__(message)
        WriteFailed.kept.append(keep)


def install_hint(modules):
    """How to get MODULES for the runner: Debian's Python is externally managed (PEP 668),
    so `pip install` into it is refused; apt packages or a virtual environment work."""
    apt = {"numpy": "python3-numpy", "h5py": "python3-h5py", "torch": "python3-torch"}
    debian = [apt[m] for m in modules if m in apt]
    lines = [f"This Python is {sys.executable}; mdsd-runner runs the Python named by "
             "--python or MDSD_PYTHON, else the python3 on PATH if it imports numpy and h5py, "
             "else /usr/bin/python3."]
    if len(debian) == len(modules):
        lines.append(f"Debian's Python: sudo apt-get install {' '.join(debian)} "
                     "(pip install into /usr/bin/python3 is refused: it is externally managed).")
    lines.append(f"A virtual environment: python3 -m venv ~/.venvs/mdsd && ~/.venvs/mdsd/bin/pip "
                 f"install numpy h5py {' '.join(m for m in modules if m not in ('numpy', 'h5py'))}"
                 .rstrip() + ", then run with MDSD_PYTHON=~/.venvs/mdsd/bin/python (or "
                 "activate it). Conda: conda install the same packages and activate the "
                 "environment.")
    return "\n".join(lines)
