"""Builds the wheel of pyproject.toml: the package src/python/mdsd plus libmdsd.so.0, made by
`make` from this tree (build/release) and copied into the package, where mdsd/_lib.py looks
first. The version is the Makefile's VERSION, the one the C library reports."""

import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
SONAME = "libmdsd.so.0"


def makefile_version():
    with open(os.path.join(HERE, "Makefile"), encoding="utf-8") as f:
        m = re.search(r"^VERSION\s*:?=\s*(\S+)\s*$", f.read(), re.M)
    if not m:
        raise RuntimeError("Makefile: no VERSION line")
    return m.group(1)


class BuildWithLibrary(build_py):
    """build_py, then the release library (make; not `make all`, which may call apt) copied
    into the package as libmdsd.so.0."""

    def run(self):
        super().run()
        target = f"build/release/libmdsd.so.{makefile_version()}"
        # A make that runs us (make test) must not hand its jobserver to this one.
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        rc = subprocess.run(["make", "--no-print-directory", "-C", HERE, target], env=env).returncode
        if rc != 0:
            raise RuntimeError(f"make {target} failed (exit {rc}); the C libraries come from "
                               "Debian packages: run `make deps` (or `make`) once first")
        dest = os.path.join(self.build_lib, "mdsd", SONAME)
        shutil.copyfile(os.path.join(HERE, target), dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: a platform wheel, not a pure-Python one."""

    def has_ext_modules(self):
        return True


os.makedirs(os.path.join(HERE, "build", "python"), exist_ok=True)
setup(
    version=makefile_version(),
    package_dir={"": "src/python"},
    packages=["mdsd"],
    cmdclass={"build_py": BuildWithLibrary},
    distclass=BinaryDistribution,
    zip_safe=False,
    # setuptools' work files under build/python, not beside the sources or in build/
    options={"build": {"build_base": "build/python"}, "egg_info": {"egg_base": "build/python"}},
)
