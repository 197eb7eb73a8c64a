"""`make test`'s size of the fault injection (tests/python/fault_injection.py): 50 runs of
the runner killed with SIGKILL at random points while writing, each resumed: every resume
ends with a dump identical to an uninterrupted run's or with a refusal (no traceback, no
other dump, no hang). MDSD_FAULT_RUNS=N runs more (`make fault-injection`)."""

import os
import unittest

import fault_injection


class FaultInjection(unittest.TestCase):
    def test_killed_runs_resume_to_the_same_dump_or_refuse(self):
        runs = int(os.environ.get("MDSD_FAULT_RUNS", "50"))
        counts = fault_injection.run(runs, seed=1, jobs=2, deadline_s=max(240, 4 * runs))
        self.assertEqual(counts["failures"], [], counts)
        self.assertEqual(counts["same"] + counts["refused"], runs, counts)
        # Most kills must land while the file is written (how many varies with the load on
        # the machine), and the rebuild must be what resumes them, not refusals, else the
        # test shows nothing.
        mid_run = runs - counts.get("finished before the kill", 0)
        self.assertGreaterEqual(mid_run, runs // 2, counts)
        self.assertGreaterEqual(counts.get("rebuilt", 0), runs // 3, counts)
        self.assertLessEqual(counts["refused"], runs // 25, counts)


if __name__ == "__main__":
    unittest.main()
