"""`make test`'s size of the runner's input fuzzing (tests/python/fuzz_runner_inputs.py):
100 mutated prompt files, corpora, import arrays and checkpoints with a fixed seed; each run
succeeds or refuses with a message (no traceback, no internal error, nothing left behind).
MDSD_FUZZ_CASES=N runs more (`make fuzz-runner`)."""

import os
import unittest

import fuzz_runner_inputs


class FuzzRunnerInputs(unittest.TestCase):
    def test_mutated_inputs_succeed_or_are_refused(self):
        cases = int(os.environ.get("MDSD_FUZZ_CASES", "100"))
        counts = fuzz_runner_inputs.run(cases, seed=1)
        self.assertEqual(counts["failures"], [], counts)
        self.assertEqual(counts["ok"] + counts["refused"], cases)
        # Both outcomes and every input must be exercised, else the run shows little.
        self.assertGreater(counts["ok"], 0, counts)
        self.assertGreater(counts["refused"], 0, counts)
        for kind, n in counts["per_kind"].items():
            self.assertGreater(n, 0, f"no {kind} case in {counts}")


if __name__ == "__main__":
    unittest.main()
