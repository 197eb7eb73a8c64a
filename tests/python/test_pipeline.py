"""Generation, teacher forcing, batching, padding and resuming against the fake model:
every batched result must equal the unbatched reference exactly."""

import math
import os
import tempfile
import unittest

import h5py
import numpy as np

from fakes import EOS, FakeLM, FakeTokenizer, reference_logits, reference_sample
from mdsd_runner import pipeline
from mdsd_runner.errors import RunnerError
from mdsd_runner.pipeline import pad_left, pad_right, sample_rng, sample_token
from mdsd_runner.prompts import Prompt

V = 40
PROMPTS = [Prompt({"prompt": " ".join(f"w{j}" for j in range(k))}, f"test line {k}")
           for k in (0, 3, 1, 6, 2, 5, 0, 4)]


def run(out, target, drafts, **kw):
    args = dict(out=out, backend="fake", dataset="toy", num_samples=11, seed=7,
                temperature=0.9, max_new_tokens=6, batch_size=3, logits_dtype="float32",
                progress=False)
    args.update(kw)
    return pipeline.run(FakeTokenizer(V), target, drafts, PROMPTS, **args)


def read(path):
    with h5py.File(path, "r") as f:
        out = {name: f[name][()] for name in ("tokens", "sample_id", "position", "target/logits")}
        for name in f["drafts"]:
            out[f"drafts/{name}/logits"] = f[f"drafts/{name}/logits"][()]
        out["attrs"] = {g: dict(f[g].attrs) for g in ["target"] + [f"drafts/{n}" for n in f["drafts"]]}
        out["root"] = dict(f.attrs)
    return out


class Padding(unittest.TestCase):
    def test_left_and_right(self):
        ids, mask, pos = pad_left([[5, 6, 7], [8]], 0)
        np.testing.assert_array_equal(ids, [[5, 6, 7], [0, 0, 8]])
        np.testing.assert_array_equal(mask, [[1, 1, 1], [0, 0, 1]])
        np.testing.assert_array_equal(pos[1, 2:], [0])
        np.testing.assert_array_equal(pos[0], [0, 1, 2])
        ids, mask, pos = pad_right([[5, 6, 7], [8]], 0)
        np.testing.assert_array_equal(ids, [[5, 6, 7], [8, 0, 0]])
        np.testing.assert_array_equal(mask, [[1, 1, 1], [1, 0, 0]])
        np.testing.assert_array_equal(pos, [[0, 1, 2], [0, 1, 2]])


class TokenGroups(unittest.TestCase):
    def test_groups_are_consecutive_bounded_and_greedy(self):
        rng = np.random.default_rng(11)
        for _ in range(500):
            lengths = list(rng.integers(1, 30, size=int(rng.integers(1, 12))))
            limit = int(rng.integers(1, 80))
            groups = pipeline.token_groups(lengths, limit)
            self.assertEqual([i for g in groups for i in g], list(range(len(lengths))))
            for k, g in enumerate(groups):
                cost = len(g) * max(lengths[i] for i in g)
                self.assertTrue(cost <= limit or len(g) == 1, (lengths, limit, groups))
                if k + 1 < len(groups):     # the next item would not have fitted
                    more = g + [groups[k + 1][0]]
                    self.assertGreater(len(more) * max(lengths[i] for i in more), limit)


class AgainstReference(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def check(self, data, target, drafts, n=11, seed=7, temperature=0.9, max_new=6):
        tok = FakeTokenizer(V)
        row = 0
        for i in range(n):
            prompt = tok.encode(PROMPTS[i % len(PROMPTS)].record, "")
            response, rows = reference_sample(target, V, prompt, max_new, temperature,
                                              sample_rng(seed, i))
            m = len(response)
            sl = slice(row, row + m)
            np.testing.assert_array_equal(data["tokens"][sl], response)
            np.testing.assert_array_equal(data["sample_id"][sl], np.full(m, i))
            np.testing.assert_array_equal(data["position"][sl], np.arange(m))
            np.testing.assert_array_equal(data["target/logits"][sl], rows)
            for name, d in drafts:
                np.testing.assert_array_equal(data[f"drafts/{name}/logits"][sl],
                                              reference_logits(d, V, prompt, response))
            row += m
        self.assertEqual(row, data["tokens"].size)

    def test_every_batch_size_matches_the_unbatched_reference(self):
        for bs in (1, 2, 3, 8, 16):
            target = FakeLM(V, padding=3, seed=1)
            drafts = [("a", FakeLM(V, padding=3, seed=2)), ("b", FakeLM(V, padding=3, seed=3))]
            out = os.path.join(self.dir.name, f"bs{bs}.h5")
            summary = run(out, target, drafts, batch_size=bs)
            self.assertTrue(summary["finished"])
            data = read(out)
            self.check(data, target, drafts)
            for g in data["attrs"].values():
                self.assertEqual(g["vocab_size"], V + 3)
                self.assertEqual(g["dropped_padding"], 3)
            self.assertEqual(data["root"]["vocab_size"], V)
        # The responses stop at EOS and at max_new_tokens, both occur.
        ends = np.flatnonzero(np.diff(data["sample_id"], append=-1) != 0)
        self.assertTrue((data["tokens"][ends] == EOS).any())
        self.assertTrue((data["position"][ends] == 5).any())

    def test_every_token_budget_matches_the_unbatched_reference(self):
        """--max-batch-tokens splits generation and teacher forcing; 1 runs every sample
        alone. The values do not change."""
        for tokens in (1, 12, 30, 4096):
            target = FakeLM(V, padding=3, seed=1)
            drafts = [("a", FakeLM(V, padding=3, seed=2))]
            out = os.path.join(self.dir.name, f"t{tokens}.h5")
            run(out, target, drafts, batch_size=8, max_batch_tokens=tokens)
            self.check(read(out), target, drafts)

    def test_greedy_and_long_responses(self):
        target = FakeLM(V, seed=4, eos_boost=-10)
        drafts = [("d", FakeLM(V, seed=5))]
        out = os.path.join(self.dir.name, "greedy.h5")
        run(out, target, drafts, temperature=0.0, max_new_tokens=9, batch_size=4, num_samples=5)
        data = read(out)
        self.check(data, target, drafts, n=5, temperature=0.0, max_new=9)
        self.assertEqual(data["tokens"].size, 5 * 9)

    def test_resume_after_stop_equals_uninterrupted(self):
        make = lambda: (FakeLM(V, padding=2, seed=1), [("d", FakeLM(V, padding=2, seed=2))])
        full = os.path.join(self.dir.name, "full.h5")
        run(full, *make())
        cut = os.path.join(self.dir.name, "cut.h5")
        s = run(cut, *make(), stop_after=4)
        self.assertFalse(s["finished"])
        self.assertFalse(os.path.exists(cut))
        self.assertTrue(os.path.exists(cut + ".partial"))
        s = run(cut, *make(), batch_size=5, stop_after=3)   # other batch size: same values
        self.assertEqual(s["samples"], 7)
        # Garbage rows of a sample that was being written when the run died.
        with h5py.File(cut + ".partial", "r+") as f:
            for d in ("tokens", "sample_id", "position", "target/logits", "drafts/d/logits"):
                f[d].resize(f[d].shape[0] + 2, axis=0)
        s = run(cut, *make())
        self.assertTrue(s["finished"])
        self.assertFalse(os.path.exists(cut + ".partial"))
        a, b = read(full), read(cut)
        for key in ("tokens", "sample_id", "position", "target/logits", "drafts/d/logits"):
            np.testing.assert_array_equal(a[key], b[key])

    def test_keyboard_interrupt_then_resume(self):
        full = os.path.join(self.dir.name, "full.h5")
        run(full, FakeLM(V, seed=1), [("d", FakeLM(V, seed=2))])
        cut = os.path.join(self.dir.name, "cut.h5")
        target = FakeLM(V, seed=1)
        target.fail_after = 15
        with self.assertRaises(KeyboardInterrupt):
            run(cut, target, [("d", FakeLM(V, seed=2))])
        with h5py.File(cut + ".partial", "r") as f:
            done = int(f.attrs["runner_samples_done"])
        self.assertTrue(0 < done < 11, done)
        run(cut, FakeLM(V, seed=1), [("d", FakeLM(V, seed=2))])
        a, b = read(full), read(cut)
        for key in ("tokens", "target/logits", "drafts/d/logits"):
            np.testing.assert_array_equal(a[key], b[key])

    def test_resume_with_other_options_is_refused(self):
        out = os.path.join(self.dir.name, "x.h5")
        run(out, FakeLM(V), [("d", FakeLM(V, seed=2))], stop_after=2)
        with self.assertRaisesRegex(RunnerError, "other options"):
            run(out, FakeLM(V), [("d", FakeLM(V, seed=2))], seed=8)

    def test_model_narrower_than_the_tokenizer_is_refused(self):
        narrow = FakeLM(V - 1)
        with self.assertRaisesRegex(RunnerError, "fewer than the tokenizer"):
            run(os.path.join(self.dir.name, "n.h5"), FakeLM(V), [("d", narrow)])

    def test_nan_logits_are_refused(self):
        bad = FakeLM(V, seed=3)
        bad.logits_of = lambda attended: np.full(V, np.nan, dtype=np.float32)
        out = os.path.join(self.dir.name, "nan.h5")
        with self.assertRaisesRegex(RunnerError, "NaN"):
            run(out, FakeLM(V), [("d", bad)])
        self.assertFalse(os.path.exists(out))


class Sampler(unittest.TestCase):
    """sample_token follows softmax(logits / T): per-token counts against their binomial
    law, Bonferroni over the tokens at level 1e-6 (|z| <= 5.45 for 6 tokens)."""

    LOGITS = np.array([2.0, 1.0, 0.5, 0.0, -1.0, -3.0])
    N = 20000

    def max_z(self, temperature, assumed):
        rng = np.random.default_rng(12345)
        counts = np.bincount([sample_token(self.LOGITS, temperature, rng) for _ in range(self.N)],
                             minlength=self.LOGITS.size)
        p = np.exp(self.LOGITS / assumed)
        p /= p.sum()
        return np.max(np.abs(counts - self.N * p) / np.sqrt(self.N * p * (1 - p)))

    def test_distribution_and_a_planted_error(self):
        bound = 5.45  # two-sided normal tail 1e-6 / 6 = 1.7e-7
        self.assertLess(self.max_z(0.7, 0.7), bound)
        self.assertGreater(self.max_z(0.7, 1.0), bound)   # the wrong temperature is caught
        self.assertLess(math.erfc(bound / math.sqrt(2)) * self.LOGITS.size, 1e-6)

    def test_greedy_and_zero_weights(self):
        rng = np.random.default_rng(0)
        self.assertEqual(sample_token(self.LOGITS, 0, rng), 0)
        logits = np.array([-np.inf, 0.0, -np.inf, 0.0])
        draws = {sample_token(logits, 1.0, rng) for _ in range(200)}
        self.assertEqual(draws, {1, 3})


if __name__ == "__main__":
    unittest.main()
