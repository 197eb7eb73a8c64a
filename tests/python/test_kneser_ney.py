"""The numpy Kneser-Ney models against a brute-force reference written from the
definitions (dictionaries of n-gram tuples, recursion per word), on random toy corpora."""

import collections
import itertools
import unittest

import numpy as np

import support  # noqa: F401  (puts src/ on the path)
from mdsd_runner import ngram
from mdsd_runner.ngram import BOS, EOS, KneserNey

TOL = 1e-12


class BruteKN:
    """Interpolated modified Kneser-Ney straight from the definitions (ngram.py's top
    comment): tuples counted in dictionaries, P(w | h) by recursion for one w at a time."""

    def __init__(self, sentences, order, V):
        self.order, self.V = order, V
        padded = [[BOS] + list(map(int, s)) + [EOS] for s in sentences]
        raw = {k: collections.Counter() for k in range(1, order + 2)}
        for s in padded:
            for k in range(1, order + 2):
                for i in range(len(s) - k + 1):
                    raw[k][tuple(s[i:i + k])] += 1
        left = collections.defaultdict(set)          # g -> tokens seen right before g
        for k in range(2, order + 1):
            for g in raw[k]:
                left[g[1:]].add(g[0])
        self.adj = {}
        for k in range(1, order + 1):
            a = {}
            for g, c in raw[k].items():
                a[g] = c if (k == order or g[0] == BOS) else len(left[g])
            if k == 1:
                a.pop((BOS,), None)
            self.adj[k] = a
        self.D = {k: self.discounts(list(self.adj[k].values())) for k in self.adj}

    @staticmethod
    def discounts(values):
        n = [sum(1 for v in values if v == r) for r in range(5)]
        y = n[1] / (n[1] + 2 * n[2]) if n[1] + 2 * n[2] else None
        try:
            d = [r - (r + 1) * y * n[r + 1] / n[r] for r in (1, 2, 3)]
            if all(0 < d[r - 1] <= r for r in (1, 2, 3)):
                return [0.0] + d
        except (TypeError, ZeroDivisionError):
            pass
        plain = y if y is not None and 0 < y < 1 else 0.5
        return [0.0, plain, plain, plain]

    def D_of(self, k, a):
        return self.D[k][min(a, 3)]

    def prob(self, w, history):
        h = list(history)
        if BOS in h:
            h = h[max(i for i, t in enumerate(h) if t == BOS):]
        h = h[len(h) - (self.order - 1):] if self.order > 1 else []
        return self._p(w, tuple(h))

    def _p(self, w, h):
        k = len(h) + 1
        if k == 1:
            a = self.adj[1]
            total = sum(a.values())
            gamma = sum(self.D_of(1, c) for c in a.values()) / total
            c = a.get((w,), 0)
            return max(c - self.D_of(1, c), 0) / total + gamma / self.V
        cont = {g[-1]: c for g, c in self.adj[k].items() if g[:-1] == h}
        if not cont:
            return self._p(w, h[1:])
        total = sum(cont.values())
        gamma = sum(self.D_of(k, c) for c in cont.values()) / total
        c = cont.get(w, 0)
        return max(c - self.D_of(k, c), 0) / total + gamma * self._p(w, h[1:])


def toy_corpus(rng, n_sentences, V, max_len=8):
    ranks = np.arange(3, V)
    p = 1.0 / (ranks - 2.0)
    p /= p.sum()
    return [rng.choice(ranks, size=rng.integers(1, max_len + 1), p=p) for _ in range(n_sentences)]


def histories(rng, corpus, V, count):
    """Prefixes of training sentences (seen contexts) and random ones (unseen contexts,
    <unk>), all starting with <s> as the runner's prompts do."""
    out = []
    for s in corpus[:count]:
        for j in range(len(s) + 1):
            out.append([BOS] + list(s[:j]))
    for _ in range(count):
        tail = rng.integers(0, V, size=rng.integers(0, 6))
        out.append([BOS] + [int(t) if t != BOS else 0 for t in tail])
    return out


class AgainstBruteForce(unittest.TestCase):
    def compare(self, corpus, order, V, rng, count=12):
        fast = KneserNey(order, V).fit(corpus)
        brute = BruteKN(corpus, order, V)
        worst = 0.0
        for h in histories(rng, corpus, V, count):
            p = fast.dist(h)
            ref = np.array([brute.prob(w, h) for w in range(V)])
            worst = max(worst, np.max(np.abs(p - ref)))
            self.assertAlmostEqual(p.sum(), 1.0, delta=TOL)
            self.assertTrue((p > 0).all())
            # Stored logits are log P up to one constant per row.
            shift = fast.logits(h) - np.log(p)
            self.assertLess(np.ptp(shift), 1e-12)
        return worst

    def test_random_toy_corpora(self):
        rng = np.random.default_rng(2024)
        for trial, (n, V, order) in enumerate(itertools.product((3, 25, 120), (8, 15), (1, 2, 3, 4, 5))):
            corpus = toy_corpus(rng, n, V)
            with self.subTest(sentences=n, V=V, order=order):
                self.assertLess(self.compare(corpus, order, V, rng), TOL)

    def test_a_planted_error_is_detected(self):
        rng = np.random.default_rng(7)
        corpus = toy_corpus(rng, 120, 15)
        fast = KneserNey(4, 15).fit(corpus)
        brute = BruteKN(corpus, 4, 15)
        fast.levels[3].discounts = fast.levels[3].discounts * 1.01
        errors = [np.max(np.abs(fast.dist(h) - [brute.prob(w, h) for w in range(15)]))
                  for h in histories(rng, corpus, 15, 10)]
        self.assertGreater(max(errors), 1e-6)

    def test_sentence_boundaries_and_specials(self):
        corpus = [np.array([3, 4, 5]), np.array([5, 3])]
        kn = KneserNey(3, 6).fit(corpus)
        # <s> is never predicted beyond the uniform floor; nothing follows across sentences.
        self.assertEqual(kn.history([BOS, 3, 4, BOS, 5]), [BOS, 5])
        self.assertEqual(kn.history([3, 4, 5, 3]), [5, 3])
        brute = BruteKN(corpus, 3, 6)
        for h in ([BOS], [BOS, 3], [BOS, 5, 3], [BOS, 3, 4, 5], [4]):
            np.testing.assert_allclose(kn.dist(h), [brute.prob(w, h) for w in range(6)], atol=TOL)
        self.assertAlmostEqual(kn.dist([BOS])[BOS], min(kn.dist([BOS])), delta=TOL)


class Discounts(unittest.TestCase):
    def test_chen_goodman_and_fallback(self):
        adj = np.array([1] * 10 + [2] * 4 + [3] * 3 + [4] * 2 + [7])
        y = 10 / (10 + 8)
        np.testing.assert_allclose(ngram.discounts_for(adj),
                                   [0, 1 - 2 * y * 4 / 10, 2 - 3 * y * 3 / 4, 3 - 4 * y * 2 / 3])
        # No count of 3: D3+ undefined, so one discount Y = 3 / (3 + 2) for every count.
        np.testing.assert_allclose(ngram.discounts_for(np.array([1, 1, 1, 2, 5])), [0, .6, .6, .6])
        np.testing.assert_allclose(ngram.discounts_for(np.array([5, 6])), [0, 0.5, 0.5, 0.5])


class Vocabulary(unittest.TestCase):
    def test_capped_by_frequency_and_unknown_words(self):
        words = [ngram.split_words("The LORD's house; the house, the end.")]
        self.assertEqual(words[0], ["the", "lord's", "house", ";", "the", "house", ",", "the",
                                    "end", "."])
        vocab = ngram.WordVocab.build(words, 6)
        self.assertEqual(vocab.tokens, ["<unk>", "</s>", "<s>", "the", "house", ","])
        np.testing.assert_array_equal(vocab.encode(["the", "end", "house"]), [3, 0, 4])


class KingJamesBible(unittest.TestCase):
    def test_debian_text_and_a_trained_model(self):
        verses = ngram.kjv_verses()
        self.assertEqual(len(verses), 31102)
        self.assertEqual(verses[0], "In the beginning God created the heaven and the earth.")
        self.assertTrue(verses[-1].startswith("The grace of our Lord Jesus Christ"))
        words = [ngram.split_words(v) for v in verses[:3000]]
        vocab = ngram.WordVocab.build(words, 2000)
        kn = KneserNey(4, len(vocab)).fit([vocab.encode(w) for w in words])
        for text in ("and god said , let there be", "in the beginning", "zebra unknown words"):
            h = [BOS] + list(vocab.encode(ngram.split_words(text)))
            self.assertAlmostEqual(kn.dist(h).sum(), 1.0, delta=1e-12)


if __name__ == "__main__":
    unittest.main()
