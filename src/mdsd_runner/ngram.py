"""The `ngram` backend: word-level n-gram language models with interpolated modified
Kneser-Ney smoothing (Chen & Goodman 1998), built with numpy from a text corpus, by
default the King James Bible of Debian's bible-kjv-text package.

Conventions (shared with the brute-force reference in tests/python/test_kneser_ney.py):
- Token ids: 0 `<unk>`, 1 `</s>`, 2 `<s>`, then the most frequent words (ties by spelling).
  A sentence (one corpus line, a verse for the KJV) is `<s> w1 ... wm </s>`; no n-gram
  crosses a sentence boundary, and a history is cut at its last `<s>`.
- Adjusted counts a_k (KenLM's rule): the highest order and n-grams that start with `<s>`
  use raw counts; lower orders use continuation counts N1+(. g). `<s>` is never predicted:
  its unigram count is 0, so it keeps only its share of the uniform floor.
- Discounts per order: D1, D2, D3+ from the counts of counts n1..n4 of a_k (Chen & Goodman
  eq. 26). Where one is undefined (some n_r = 0) or outside (0, r], the order falls back to
  one discount Y = n1 / (n1 + 2 n2) for all counts, or 0.5 where Y is undefined too, so that
  tiny corpora still give a proper distribution.
- P_k(w|h) = max(a_k(hw) - D(a_k(hw)), 0) / sum_v a_k(hv) + gamma(h) P_{k-1}(w|h'),
  gamma(h) = sum_v D(a_k(hv)) / sum_v a_k(hv); h' drops h's first token; a history never
  seen at order k gives P_k = P_{k-1}; P_0 is uniform over all V ids, so that every
  probability is positive and every logit finite.
"""

import collections
import hashlib
import os
import re
import shutil
import subprocess

import numpy as np

from .errors import RunnerError

UNK, EOS, BOS = 0, 1, 2
SPECIALS = ("<unk>", "</s>", "<s>")

_TOKEN = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*|[^\sa-z0-9]")
# `bible -f` prefixes every verse with its reference, e.g. "1Cor13:4 ".
_KJV_REF = re.compile(r"^[1-3]?[A-Za-z]+[0-9]+:[0-9]+\s+")
KJV_RANGE = "Gen1:1-Rev22:21"


def split_words(text):
    """Lower-cased words (with inner apostrophes and hyphens) and punctuation marks."""
    return _TOKEN.findall(text.lower())


def kjv_verses():
    """The 31,102 verses of the KJV as plain text, from Debian's `bible` program."""
    exe = shutil.which("bible")
    if exe is None:
        raise RunnerError("the default corpus 'kjv' needs the `bible` program and its text "
                          "(Debian packages bible-kjv and bible-kjv-text); install them or "
                          "pass --corpus FILE")
    try:
        proc = subprocess.run([exe, "-f", KJV_RANGE], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        raise RunnerError(f"cannot run `bible -f {KJV_RANGE}`: {e}") from None
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or not lines:
        raise RunnerError(f"`bible -f {KJV_RANGE}` failed (exit {proc.returncode}): "
                          f"{proc.stderr.strip()[:200]}")
    verses = []
    for number, line in enumerate(lines, 1):
        m = _KJV_REF.match(line)
        if m is None:
            raise RunnerError(f"`bible -f {KJV_RANGE}` line {number} has no verse reference: "
                              f"{line[:60]!r}")
        verses.append(line[m.end():])
    return verses


def load_corpus(spec):
    """(sentences as text, name, sha256 of the text) for --corpus SPEC: 'kjv' or a UTF-8
    text file with one sentence per non-blank line."""
    if spec == "kjv":
        lines, name = kjv_verses(), "kjv"
    else:
        try:
            with open(spec, encoding="utf-8") as f:
                lines = [line.strip() for line in f if line.strip()]
        except FileNotFoundError:
            raise RunnerError(f"corpus file {spec} does not exist") from None
        except (OSError, UnicodeDecodeError) as e:
            raise RunnerError(f"cannot read corpus file {spec}: {e}") from None
        name = os.path.splitext(os.path.basename(spec))[0]
        for number, line in enumerate(lines, 1):
            if "\0" in line:  # a binary file, or text HDF5 cannot store as a token string
                raise RunnerError(f"corpus file {spec}: non-blank line {number} holds a NUL "
                                  "character (not text)")
    if not lines:
        raise RunnerError(f"corpus {spec} is empty")
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return lines, name, digest


class WordVocab:
    """The three specials, then at most size - 3 words, most frequent first."""

    def __init__(self, words):
        self.tokens = list(SPECIALS) + list(words)
        self.index = {w: i for i, w in enumerate(self.tokens)}

    @classmethod
    def build(cls, sentences, size):
        """sentences: lists of words."""
        if size < 4:
            raise RunnerError(f"--vocab-size must be at least 4 (3 specials and a word), not {size}")
        counts = collections.Counter(w for s in sentences for w in s)
        for special in SPECIALS:
            counts.pop(special, None)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return cls(w for w, _ in ranked[:size - len(SPECIALS)])

    def __len__(self):
        return len(self.tokens)

    def encode(self, words):
        return np.array([self.index.get(w, UNK) for w in words], dtype=np.int64)


class _Level:
    """The n-grams of one order k >= 2, sorted by key = id(context) * V + word, where
    id(context) is the rank of the (k-1)-gram among the sorted (k-1)-grams."""

    def __init__(self, keys, adj, discounts):
        self.keys = keys
        self.adj = adj
        self.discounts = discounts          # [0, D1, D2, D3+]
        cls = np.minimum(adj, 3)
        # Integer prefix sums, so that per-context totals and gamma numerators are exact.
        self.cum_adj = np.concatenate(([0], np.cumsum(adj)))
        self.cum_n = [np.concatenate(([0], np.cumsum(cls == r))) for r in (1, 2, 3)]


def discounts_for(adj):
    """[0, D1, D2, D3+] from the positive adjusted counts of one order (see the top comment)."""
    adj = adj[adj > 0]
    n = [int(np.count_nonzero(adj == r)) for r in range(5)]
    y = n[1] / (n[1] + 2 * n[2]) if n[1] + 2 * n[2] > 0 else None
    d = [0.0]
    for r in (1, 2, 3):
        if y is None or n[r] == 0:
            d = None
            break
        dr = r - (r + 1) * y * n[r + 1] / n[r]
        if not 0 < dr <= r:
            d = None
            break
        d.append(dr)
    if d is None:
        plain = y if y is not None and 0 < y < 1 else 0.5
        d = [0.0, plain, plain, plain]
    return np.array(d)


class KneserNey:
    """Interpolated modified Kneser-Ney language model of order `order` over V ids."""

    def __init__(self, order, vocab_size):
        if order < 1:
            raise RunnerError(f"n-gram order must be at least 1, not {order}")
        self.order = order
        self.V = vocab_size

    def fit(self, sentences):
        """sentences: int arrays of word ids (without `<s>` and `</s>`)."""
        V, order = self.V, self.order
        lengths = np.array([len(s) + 2 for s in sentences], dtype=np.int64)
        if lengths.size == 0:
            raise RunnerError("cannot train an n-gram model on an empty corpus")
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        flat = np.empty(int(lengths.sum()), dtype=np.int64)
        flat[starts] = BOS
        flat[starts + lengths - 1] = EOS
        inner = np.ones(flat.size, dtype=bool)
        inner[starts] = False
        inner[starts + lengths - 1] = False
        flat[inner] = np.concatenate(sentences) if any(len(s) for s in sentences) else []
        sent = np.repeat(np.arange(len(sentences)), lengths)
        n = flat.size

        # Windows of each order: ids[k][i] = rank of the k-gram starting at i (-1 if it
        # crosses a sentence end); raw counts and first occurrences of the unique k-grams.
        ids = {1: flat}
        keys, raw, first = {}, {}, {}
        raw[1] = np.bincount(flat, minlength=V)
        for k in range(2, order + 1):
            idx = np.nonzero(sent[:n - k + 1] == sent[k - 1:])[0]
            key = ids[k - 1][idx] * V + flat[idx + k - 1]
            uniq, first_at, inverse, count = np.unique(key, return_index=True,
                                                       return_inverse=True, return_counts=True)
            cur = np.full(n, -1, dtype=np.int64)
            cur[idx] = inverse
            ids[k], keys[k], raw[k], first[k] = cur, uniq, count, idx[first_at]

        # Adjusted counts.
        adj = {}
        for k in range(1, order + 1):
            if k == order:
                a = raw[k].copy()
            else:
                # Continuation counts: distinct (k+1)-grams whose last k tokens are the k-gram.
                suffix = ids[k][first[k + 1] + 1]
                a = np.bincount(suffix, minlength=raw[k].size)
                starts_bos = (flat[first[k]] == BOS) if k > 1 else (np.arange(V) == BOS)
                a[starts_bos] = raw[k][starts_bos]
            if k == 1:
                a[BOS] = 0
            adj[k] = a.astype(np.int64)

        d1 = discounts_for(adj[1])
        total = int(adj[1].sum())
        a1 = adj[1]
        gamma = float(np.sum(d1[np.minimum(a1, 3)])) / total
        self.p1 = np.maximum(a1 - d1[np.minimum(a1, 3)], 0.0) / total + gamma / V
        self.unigram_discounts = d1
        self.levels = {k: _Level(keys[k], adj[k], discounts_for(adj[k]))
                       for k in range(2, order + 1)}
        self.ngram_counts = {1: int(np.count_nonzero(adj[1]))}
        self.ngram_counts.update({k: int(keys[k].size) for k in range(2, order + 1)})
        return self

    def _lookup(self, context):
        """Rank of the m-gram `context` among the m-grams of the corpus, or None."""
        cid = int(context[0])
        for j in range(1, len(context)):
            keys = self.levels[j + 1].keys
            key = cid * self.V + int(context[j])
            at = int(np.searchsorted(keys, key))
            if at == keys.size or keys[at] != key:
                return None
            cid = at
        return cid

    def history(self, tokens):
        """The part of `tokens` the model conditions on: from the last `<s>`, at most
        order - 1 tokens."""
        h = [int(t) for t in tokens]
        if BOS in h:
            h = h[len(h) - 1 - h[::-1].index(BOS):]
        return h[len(h) - (self.order - 1):] if self.order > 1 else []

    def scaled_dist(self, tokens):
        """(r, scale) with P(. | tokens) = scale * r. r is accumulated divided by the
        product of the backoff weights, so that its entries for words that no context of
        the history saw are exactly the unigram's: rows of log r differ from each other
        only where the contexts saw words, and a dump of them compresses well."""
        h = self.history(tokens)
        r = self.p1.copy()
        scale = 1.0
        V = self.V
        for m in range(1, len(h) + 1):
            cid = self._lookup(h[len(h) - m:])
            if cid is None:
                break
            level = self.levels[m + 1]
            lo = int(np.searchsorted(level.keys, cid * V))
            hi = int(np.searchsorted(level.keys, (cid + 1) * V))
            if lo == hi:
                break
            a = level.adj[lo:hi]
            total = int(level.cum_adj[hi] - level.cum_adj[lo])
            d = level.discounts
            counts = [int(c[hi] - c[lo]) for c in level.cum_n]
            scale *= (d[1] * counts[0] + d[2] * counts[1] + d[3] * counts[2]) / total
            r[level.keys[lo:hi] % V] += np.maximum(a - d[np.minimum(a, 3)], 0.0) / (total * scale)
        return r, scale

    def dist(self, tokens):
        """P(. | tokens) as a float64 vector of length V (sums to 1)."""
        r, scale = self.scaled_dist(tokens)
        return r * scale

    def logits(self, tokens):
        """log r of scaled_dist: log P(. | tokens) up to an additive constant."""
        return np.log(self.scaled_dist(tokens)[0])


class NgramTokenizer:
    """The runner's tokenizer interface over a WordVocab."""

    def __init__(self, vocab, name):
        self.vocab = vocab
        self.name = name
        self.vocab_size = len(vocab)
        self.eos_ids = frozenset([EOS])
        self.pad_id = EOS

    def encode(self, record, where):
        if "prompt" not in record:
            raise RunnerError(f"{where}: the ngram backend takes {{\"prompt\": TEXT}} records, "
                              "not chat messages")
        return [BOS] + [int(t) for t in self.vocab.encode(split_words(record["prompt"]))]

    def tokens(self):
        return list(self.vocab.tokens)


class NgramLM:
    """The runner's model interface (see pipeline.py) over a KneserNey model. Logits are
    natural-log probabilities up to a per-row constant (KneserNey.logits); positions are
    ignored (an n-gram model has none)."""

    def __init__(self, kn, name):
        self.kn = kn
        self.name = name
        self.model_vocab_size = kn.V

    def forward(self, ids, mask, pos, select, cache=None, keep_cache=False):
        B, L = ids.shape
        C = mask.shape[1] - L
        past = cache if cache is not None else [[] for _ in range(B)]
        rows, cols = select
        out = np.empty((len(rows), self.kn.V))
        for i, (b, j) in enumerate(zip(rows, cols)):
            real = [int(t) for t, m in zip(ids[b, :j + 1], mask[b, C:C + j + 1]) if m]
            out[i] = self.kn.logits(past[b] + real)
        new_cache = None
        if keep_cache:
            new_cache = [past[b] + [int(t) for t, m in zip(ids[b], mask[b, C:]) if m]
                         for b in range(B)]
        return out, new_cache


def build(corpus_spec, vocab_size, target_order, draft_orders):
    """Trains the tokenizer, the target and the drafters; returns
    (tokenizer, target NgramLM, [(name, NgramLM)], description dict)."""
    if target_order < 4:
        raise RunnerError(f"--order must be at least 4 for the target, not {target_order}")
    for d in draft_orders:
        if not 1 <= d < target_order:
            raise RunnerError(f"--draft-order {d} must be between 1 and --order - 1 = {target_order - 1}")
    if len(set(draft_orders)) != len(draft_orders):
        raise RunnerError("--draft-order values must differ")
    lines, corpus_name, digest = load_corpus(corpus_spec)
    words = [split_words(line) for line in lines]
    vocab = WordVocab.build(words, vocab_size)
    sentences = [vocab.encode(w) for w in words]
    tokenizer = NgramTokenizer(vocab, f"ngram-words:{corpus_name}:{len(vocab)}")

    def model(order):
        kn = KneserNey(order, len(vocab)).fit(sentences)
        return NgramLM(kn, f"kneser-ney-{order}gram:{corpus_name}")

    target = model(target_order)
    drafts = [(f"kn{d}", model(d)) for d in draft_orders]
    info = {"corpus": corpus_name, "corpus_sha256": digest, "sentences": len(lines),
            "tokens": int(sum(len(s) + 1 for s in sentences))}
    return tokenizer, target, drafts, info
