"""Resuming a damaged OUT.partial (src/mdsd_runner/checkpoint.py): a torn gzip chunk, rows
past the recorded progress, a checkpoint that is not a regular file, an inspection that
hangs (killed by the watchdog, and by SIGTERM) - each ends in a dump identical to an
uninterrupted run or in a refusal naming the file, never a traceback or a hang."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import h5py
import numpy as np

from support import ROOT, RUNNER, run_main
from dump_compare import assert_same_dump
from mdsd_runner import checkpoint


def write_corpus(path, words=60, lines=400, seed=3):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for _ in range(lines):
            f.write(" ".join(f"w{int(i)}" for i in rng.integers(0, words, 10)) + " .\n")


class Checkpoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.corpus = os.path.join(d, "corpus.txt")
        write_corpus(cls.corpus)
        cls.prompts = os.path.join(d, "p.jsonl")
        with open(cls.prompts, "w") as f:
            f.write('{"prompt": "w1 w2"}\n{"prompt": "w3"}\n')
        cls.reference = os.path.join(d, "reference.h5")
        rc, _, err = cls.ngram(cls.reference)
        assert rc == 0, err

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def args(cls, out, *extra):
        return ["ngram", "--corpus", cls.corpus, "--prompts", cls.prompts, "-o", out,
                "--vocab-size", "50", "--num-samples", "12", "--max-new-tokens", "24", "-q",
                *extra]

    @classmethod
    def ngram(cls, out, *extra):
        return run_main(*cls.args(out, *extra))

    def out(self, name):
        path = os.path.join(self.tmp.name, name)
        for p in (path, path + ".partial", path + ".partial.rebuild"):
            if os.path.lexists(p):
                os.unlink(p)
        return path

    def stopped(self, name, after=5):
        """A checkpoint with AFTER samples, closed cleanly."""
        out = self.out(name)
        rc, _, err = self.ngram(out, "--stop-after", str(after))
        self.assertEqual(rc, 0, err)
        return out

    def resumed_equal(self, out, *phrases):
        rc, _, err = self.ngram(out)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("Traceback", err)
        for phrase in phrases:
            self.assertIn(phrase, err)
        assert_same_dump(self, self.reference, out)
        self.assertFalse(os.path.exists(out + ".partial.rebuild"))

    def tear_chunk(self, partial, dataset, which):
        """Overwrites the middle of one stored (gzip) chunk of DATASET with garbage, as a
        write cut off by kill -9 leaves it, and marks the file as not closed cleanly."""
        with h5py.File(partial, "r+") as f:
            d = f[dataset]
            info = d.id.get_chunk_info(which if which >= 0 else d.id.get_num_chunks() + which)
            if checkpoint.CLEAN in f.attrs:
                f.attrs[checkpoint.CLEAN] = np.int64(0)
        with open(partial, "r+b") as fd:
            fd.seek(info.byte_offset + info.size // 3)
            fd.write(bytes((7 + 31 * i) % 256 for i in range(max(8, info.size // 3))))

    def test_clean_stop_resumes_in_place(self):
        out = self.stopped("clean.h5")
        with h5py.File(out + ".partial", "r") as f:
            self.assertEqual(int(f.attrs[checkpoint.CLEAN]), 1)
        self.resumed_equal(out)
        with h5py.File(out, "r") as f:  # the checkpoint's bookkeeping is gone
            self.assertNotIn(checkpoint.SAMPLE_SHA256, f)
            self.assertNotIn(checkpoint.CLEAN, f.attrs)

    def test_torn_last_chunk_is_dropped_and_rebuilt(self):
        for dataset in ("target/logits", "drafts/kn2/logits", "tokens"):
            with self.subTest(dataset=dataset):
                out = self.stopped("torn.h5")
                self.tear_chunk(out + ".partial", dataset, -1)
                self.resumed_equal(out, "was not closed cleanly", "dropped its torn tail")

    def test_torn_first_chunk_is_dropped_and_rebuilt(self):
        out = self.stopped("torn-first.h5", after=9)
        self.tear_chunk(out + ".partial", "target/logits", 0)
        self.resumed_equal(out, "rebuilt from the 0 samples")

    def test_rows_past_the_progress(self):
        # Killed after a sample's rows were written but before its progress was recorded.
        out = self.stopped("past.h5")
        with h5py.File(out + ".partial", "r+") as f:
            for name in checkpoint.row_datasets(f):
                d = f[name]
                d.resize(d.shape[0] + 7, axis=0)
                d[-7:] = 1
            f.attrs[checkpoint.CLEAN] = np.int64(0)
        self.resumed_equal(out, "7 rows past the last good one")

    def test_killed_between_samples(self):
        out = self.stopped("between.h5")
        with h5py.File(out + ".partial", "r+") as f:
            f.attrs[checkpoint.CLEAN] = np.int64(0)
        self.resumed_equal(out, "every recorded sample verifies")

    def test_progress_beyond_the_digests(self):
        out = self.stopped("beyond.h5")
        with h5py.File(out + ".partial", "r+") as f:
            f.attrs["runner_samples_done"] = np.int64(99)
            f.attrs[checkpoint.CLEAN] = np.int64(0)
        rc, _, err = self.ngram(out)
        self.assertEqual(rc, 1, err)
        self.assertIn(f"cannot resume from {out}.partial: it is damaged", err)
        self.assertIn("progress says 99 samples, 5 are recorded", err)

    def test_truncated_file_is_rebuilt(self):
        # Shorter than its superblock says: libhdf5 refuses to open it as it is.
        out = self.stopped("cut.h5")
        with open(out + ".partial", "r+b") as fd:
            fd.truncate(os.path.getsize(out + ".partial") // 2)
        self.resumed_equal(out, "was not closed cleanly", "dropped its torn tail")

    def test_truncated_superblock_is_refused(self):
        out = self.stopped("cut-superblock.h5")
        with open(out + ".partial", "r+b") as fd:
            fd.truncate(48)
        rc, _, err = self.ngram(out)
        self.assertEqual(rc, 1, err)
        self.assertIn(f"cannot resume from {out}.partial: it is damaged (libhdf5 cannot open "
                      "it", err)
        self.assertIn("delete it", err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(os.path.getsize(out + ".partial"), 48)  # left as it was

    def test_a_fifo_is_refused_not_read(self):
        out = self.out("fifo.h5")
        os.mkfifo(out + ".partial")
        try:
            rc, _, err = self.ngram(out)
        finally:
            os.unlink(out + ".partial")
        self.assertEqual(rc, 1, err)
        self.assertIn("not a regular file", err)

    def test_the_rebuild_file_is_never_an_input(self):
        # OUT.partial.rebuild is checked with -o's other files (outputs.writing).
        out = self.out("input.h5")
        args = self.args(out)
        args[args.index("--prompts") + 1] = out + ".partial.rebuild"
        shutil.copyfile(self.prompts, out + ".partial.rebuild")
        rc, _, err = run_main(*args)
        self.assertEqual(rc, 1, err)
        self.assertIn(out + ".partial.rebuild", err)
        with open(out + ".partial.rebuild") as f, open(self.prompts) as g:
            self.assertEqual(f.read(), g.read())
        os.unlink(out + ".partial.rebuild")

    def test_a_rebuild_file_left_over_is_not_replaced(self):
        out = self.stopped("left.h5")
        with h5py.File(out + ".partial", "r+") as f:
            f.attrs[checkpoint.CLEAN] = np.int64(0)
        with open(out + ".partial.rebuild", "w") as f:
            f.write("a user's file")
        rc, _, err = self.ngram(out)
        self.assertEqual(rc, 1, err)
        self.assertIn(".partial.rebuild", err)
        with open(out + ".partial.rebuild") as f:
            self.assertEqual(f.read(), "a user's file")
        os.unlink(out + ".partial.rebuild")

    def test_killed_while_validating_the_finished_file(self):
        import mdsd_runner.schema as schema
        out = self.out("validating.h5")
        saved = schema.validate

        def killed(path, **options):
            raise KeyboardInterrupt
        schema.validate = killed
        try:
            rc, _, err = self.ngram(out)
        finally:
            schema.validate = saved
        self.assertEqual(rc, 130, err)
        self.resumed_equal(out)

    def test_finished_but_not_renamed(self):
        out = self.out("unrenamed.h5")
        shutil.copyfile(self.reference, out + ".partial")
        self.resumed_equal(out, "is the finished dump", "renaming it to")

    def test_finished_but_not_renamed_and_torn(self):
        out = self.out("unrenamed-torn.h5")
        shutil.copyfile(self.reference, out + ".partial")
        self.tear_chunk(out + ".partial", "target/logits", 0)
        rc, _, err = self.ngram(out)
        self.assertEqual(rc, 1, err)
        self.assertIn("the run stopped while finishing it, and it does not validate", err)
        self.assertFalse(os.path.exists(out))

    def test_a_write_cut_off_by_the_file_size_limit(self):
        # `ulimit -f` (as a full disk): the write fails inside libhdf5, whose state for the
        # file is then broken (h5py's destructors raised, and the process crashed at exit,
        # before); the file is shorter than its superblock says, which libhdf5 refuses to
        # open, and the resume lengthens it to verify the samples written before.
        import resource
        out = self.out("fsize.h5")
        limit = os.path.getsize(self.reference) // 2

        def cap():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        proc = subprocess.run([RUNNER, *self.args(out)], stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, preexec_fn=cap, timeout=300)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith(f"mdsd-runner: error: cannot write {out}.partial"),
                        proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertNotIn("Exception ignored", proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 2, proc.stderr)  # libhdf5's message has one
        self.resumed_equal(out, "was not closed cleanly", "a write failed")

    def test_finished_but_not_renamed_and_cut_short(self):
        out = self.out("unrenamed-cut.h5")
        shutil.copyfile(self.reference, out + ".partial")
        size = os.path.getsize(out + ".partial") - 100
        os.truncate(out + ".partial", size)
        rc, _, err = self.ngram(out)
        self.assertEqual(rc, 1, err)
        self.assertIn("the run stopped while finishing it", err)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(os.path.getsize(out + ".partial"), size)  # left as it was

    def test_killed_while_creating_the_checkpoint(self):
        # SIGKILL half way through laying out OUT.partial (in a forked child): nothing that
        # libhdf5 cannot open may be left (one in 17 random kills hit this window).
        from mdsd_runner import dump
        out = self.out("creating.h5")
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
                def killed(writer, f):
                    f.create_group("half")
                    f.flush()
                    os.kill(os.getpid(), signal.SIGKILL)
                dump.DumpWriter._layout = killed
                self.ngram(out)
            finally:
                os._exit(3)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), -signal.SIGKILL)
        self.resumed_equal(out)

    def test_a_hung_inspection_is_killed_by_the_watchdog(self):
        out = self.stopped("hung.h5")
        saved = checkpoint.CHECK_TIMEOUT
        checkpoint.CHECK_TIMEOUT = 1.0
        os.environ["MDSD_RUNNER_CHECKPOINT_STALL"] = "1"
        try:
            t0 = time.monotonic()
            rc, _, err = self.ngram(out)
        finally:
            del os.environ["MDSD_RUNNER_CHECKPOINT_STALL"]
            checkpoint.CHECK_TIMEOUT = saved
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(rc, 1, err)
        self.assertIn("read no sample of it for 1 s", err)
        self.resumed_equal(out)  # the checkpoint is untouched

    def test_kill_9_during_a_rebuild_leaves_no_rebuild_file(self):
        out = self.stopped("orphan.h5")
        with h5py.File(out + ".partial", "r+") as f:
            f.attrs[checkpoint.CLEAN] = np.int64(0)
        env = dict(os.environ, MDSD_RUNNER_CHECKPOINT_STALL="rebuild")
        proc = subprocess.Popen([RUNNER, *self.args(out)], stderr=subprocess.DEVNULL, cwd=ROOT,
                                env=env)
        deadline = time.monotonic() + 60
        while not os.path.exists(out + ".partial.rebuild") and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(os.path.exists(out + ".partial.rebuild"))
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30  # the orphaned child notices within 0.2 s
        while os.path.exists(out + ".partial.rebuild") and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(os.path.exists(out + ".partial.rebuild"))
        self.resumed_equal(out, "was not closed cleanly")

    def test_sigterm_while_libhdf5_loops_on_a_checkpoint(self):
        # A checkpoint on which libhdf5 loops in C (tests/corpus/files, found by the fuzz
        # harness): the runner ignored SIGTERM; now the loop is in the child, killed.
        files = os.path.join(ROOT, "tests", "corpus", "files")
        work = os.path.join(self.tmp.name, "loops")
        os.makedirs(work, exist_ok=True)
        for name, ext in (("c.txt", "c.txt"), ("p.jsonl", "p.jsonl"),
                          ("o.h5.partial", "h5.partial")):
            shutil.copyfile(os.path.join(files, f"runner-checkpoint-libhdf5-loops.{ext}"),
                            os.path.join(work, name))
        env = {k: v for k, v in os.environ.items() if k != "MDSD_RUNNER_CHECKPOINT_TIMEOUT"}
        proc = subprocess.Popen([RUNNER, "ngram", "--corpus", "c.txt", "--prompts", "p.jsonl",
                                 "-o", "o.h5", "--vocab-size", "30", "--num-samples", "4",
                                 "--max-new-tokens", "8", "-q"], stderr=subprocess.PIPE,
                                text=True, cwd=work, env=env)
        time.sleep(3)
        self.assertIsNone(proc.poll(), "finished before the SIGTERM: the file no longer loops")
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail("SIGTERM did not stop the runner while libhdf5 looped")
        self.assertEqual(proc.returncode, 130, err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(sorted(os.listdir(work)), ["c.txt", "o.h5.partial", "p.jsonl"])

    def test_sigterm_during_a_hung_inspection(self):
        out = self.stopped("term.h5")
        env = dict(os.environ, MDSD_RUNNER_CHECKPOINT_STALL="1")
        proc = subprocess.Popen([RUNNER, *self.args(out)], stderr=subprocess.PIPE, text=True,
                                cwd=ROOT, env=env)
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.fail("SIGTERM did not stop the runner while it inspected the checkpoint")
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("interrupted", err)
        self.assertNotIn("Traceback", err)
        self.resumed_equal(out)


if __name__ == "__main__":
    unittest.main()
