"""src/bin/mdsd-runner picks the Python: --python PATH (first argument), else MDSD_PYTHON,
else the python3 first on PATH if it imports numpy and h5py, else /usr/bin/python3; and a
Python without numpy/h5py gets an error that names it and the fixes (apt, venv)."""

import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from support import ROOT, RUNNER, run_cli

STAND_IN = """#!/bin/sh
echo "{name} $*" >> "{log}"
{body}
"""


class Wrapper(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "log")

    def tearDown(self):
        self.tmp.cleanup()

    def python(self, folder, name, body='exec /usr/bin/python3 "$@"'):
        """An executable FOLDER/NAME that logs its arguments, then runs BODY."""
        os.makedirs(os.path.join(self.tmp.name, folder), exist_ok=True)
        path = os.path.join(self.tmp.name, folder, name)
        with open(path, "w") as f:
            f.write(STAND_IN.format(name=f"{folder}/{name}", log=self.log, body=body))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def runs(self, *args, env=None):
        if os.path.exists(self.log):
            os.unlink(self.log)
        rc, out, err = run_cli(*args, env=env)
        with open(self.log) if os.path.exists(self.log) else open(os.devnull) as f:
            return rc, out, err, [line.split()[0] for line in f if "-m mdsd_runner" in line]

    def test_choice_order(self):
        good = self.python("good", "python3")
        self.python("bare", "python3", body="exit 1")     # imports nothing
        chosen = self.python("chosen", "python")
        path = os.environ["PATH"]
        # The python3 on PATH that imports numpy and h5py.
        rc, out, err, ran = self.runs("--version", env={"PATH": f"{os.path.dirname(good)}:{path}"})
        self.assertEqual((rc, ran), (0, ["good/python3"]), err)
        self.assertIn("mdsd-runner ", out)
        # One that cannot: /usr/bin/python3.
        bare = os.path.join(self.tmp.name, "bare")
        rc, out, err, ran = self.runs("--version", env={"PATH": f"{bare}:{path}"})
        self.assertEqual((rc, ran), (0, []), err)
        self.assertIn("mdsd-runner ", out)
        # MDSD_PYTHON wins over PATH; --python wins over both.
        env = {"PATH": f"{os.path.dirname(good)}:{path}", "MDSD_PYTHON": chosen}
        rc, _, err, ran = self.runs("--version", env=env)
        self.assertEqual((rc, ran), (0, ["chosen/python"]), err)
        rc, _, err, ran = self.runs("--python", good, "--version", env=env)
        self.assertEqual((rc, ran), (0, ["good/python3"]), err)
        rc, _, err, ran = self.runs(f"--python={good}", "--version", env=env)
        self.assertEqual((rc, ran), (0, ["good/python3"]), err)

    def test_an_installed_tree(self):
        """PREFIX/bin/mdsd-runner finds the package in PREFIX/lib/mdsd/python (the layout
        `make install` uses), from any working directory."""
        prefix = os.path.join(self.tmp.name, "prefix")
        os.makedirs(os.path.join(prefix, "bin"))
        site = os.path.join(prefix, "lib", "python3", "dist-packages")
        # as make install writes it: the mdsd package's site directory filled in
        with open(RUNNER) as f:
            wrapper = f.read().replace("@PYTHON_SITE@", site)
        with open(os.path.join(prefix, "bin", "mdsd-runner"), "w") as f:
            f.write(wrapper)
        os.chmod(os.path.join(prefix, "bin", "mdsd-runner"), 0o755)
        shutil.copytree(os.path.join(ROOT, "src", "mdsd_runner"),
                        os.path.join(prefix, "lib", "mdsd", "python", "mdsd_runner"))
        # the validator is libmdsd's, through the mdsd package (MDSD_LIBRARY names the library)
        shutil.copytree(os.path.join(ROOT, "src", "python", "mdsd"), os.path.join(site, "mdsd"))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run([os.path.join(prefix, "bin", "mdsd-runner"), "validate",
                               os.path.join(ROOT, "data", "kjv-ngram.h5")], cwd=self.tmp.name,
                              env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("kjv-ngram.h5: ok:", proc.stdout)

    def test_a_python_without_the_packages_is_named(self):
        rc, _, err, _ = self.runs("--version", env={"MDSD_PYTHON": "/no/such/python"})
        self.assertEqual(rc, 1)
        self.assertIn("Python '/no/such/python' (from --python or MDSD_PYTHON) not found", err)
        rc, _, err, _ = self.runs("--python")
        self.assertEqual(rc, 2)
        # /usr/bin/python3 with numpy and h5py hidden, as a venv without them would be.
        hide = os.path.join(self.tmp.name, "hide")
        os.makedirs(hide)
        for name in ("numpy", "h5py"):
            with open(os.path.join(hide, name + ".py"), "w") as f:
                f.write(f'raise ImportError("No module named {name!r}")\n')
        rc, _, err, _ = self.runs("validate", "x.h5",
                                  env={"MDSD_PYTHON": "/usr/bin/python3", "PYTHONPATH": hide})
        self.assertEqual(rc, 1, err)
        self.assertIn("mdsd-runner: error: No module named", err)
        self.assertIn("This Python is /usr/bin/python3", err)
        self.assertIn("sudo apt-get install python3-numpy python3-h5py", err)
        self.assertIn("externally managed", err)
        self.assertIn("python3 -m venv ~/.venvs/mdsd", err)


if __name__ == "__main__":
    unittest.main()
