"""Builds the wheel of pyproject.toml: the package src/python/mdsd plus libmdsd.so.0, made by
`make` from this tree (build/release) and copied into the package, where mdsd/_lib.py looks
first; the `mdsd` program (build/release/mdsd) with the gnuplot scripts of `mdsd plot` beside
it (mdsd/_bin/, where the program looks for plots/KIND.gp); and the model runner's package
mdsd_runner (src/mdsd_runner). The wheel's two commands, `mdsd` and `mdsd-runner`, are console
scripts (mdsd._cli, mdsd_runner.console). The version is the Makefile's VERSION, the one the C
library reports."""

import glob
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


def copy(src, dest, mode):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(os.path.join(HERE, src), dest)
    os.chmod(dest, mode)


class BuildWithLibrary(build_py):
    """build_py, then the release library and program (make; not `make all`, which may call
    apt) copied into the package: mdsd/libmdsd.so.0, mdsd/_bin/mdsd, mdsd/_bin/plots/*.gp."""

    def run(self):
        super().run()
        library = f"build/release/libmdsd.so.{makefile_version()}"
        program = "build/release/mdsd"
        # A make that runs us (make test) must not hand its jobserver to this one.
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        rc = subprocess.run(["make", "--no-print-directory", "-C", HERE, library, program],
                            env=env).returncode
        if rc != 0:
            raise RuntimeError(f"make {library} {program} failed (exit {rc}); the C libraries "
                               "come from Debian packages: run `make deps` (or `make`) once first")
        package = os.path.join(self.build_lib, "mdsd")
        copy(library, os.path.join(package, SONAME), 0o755)
        copy(program, os.path.join(package, "_bin", "mdsd"), 0o755)
        for script in sorted(glob.glob(os.path.join(HERE, "plots", "*.gp"))):
            name = os.path.basename(script)
            copy(os.path.join("plots", name), os.path.join(package, "_bin", "plots", name), 0o644)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: a platform wheel, not a pure-Python one."""

    def has_ext_modules(self):
        return True


os.makedirs(os.path.join(HERE, "build", "python"), exist_ok=True)
setup(
    version=makefile_version(),
    package_dir={"": "src/python", "mdsd_runner": "src/mdsd_runner"},
    packages=["mdsd", "mdsd_runner"],
    entry_points={"console_scripts": ["mdsd = mdsd._cli:main",
                                      "mdsd-runner = mdsd_runner.console:main"]},
    cmdclass={"build_py": BuildWithLibrary},
    distclass=BinaryDistribution,
    zip_safe=False,
    # setuptools' work files under build/python, not beside the sources or in build/
    options={"build": {"build_base": "build/python"}, "egg_info": {"egg_base": "build/python"}},
)
