"""Generation and teacher forcing, shared by every backend (Hu et al.'s protocol: the
target generates a response to each prompt, then target and drafters are run on prompt +
response and the logits at every response position are stored).

The model interface (hf.HFModel, ngram.NgramLM, and the tests' fake):
    name               model description (the `model` attribute)
    model_vocab_size   width of its logits: embedding rows, padding rows included
    forward(ids, mask, pos, select, cache=None, keep_cache=False) -> (logits, cache)
        ids     int64 [B, L]     new tokens of each row
        mask    int64 [B, C+L]   1 real, 0 padding, over the C cached and the L new positions
        pos     int64 [B, L]     position ids of the new tokens (a row's first real token is 0)
        select  (rows, cols)     K pairs (row, index among the L new tokens)
        logits  float [K, model_vocab_size], numpy, for the selected pairs
        cache   opaque state to continue the rows with (generation), or None
The tokenizer interface (hf.HFTokenizer, ngram.NgramTokenizer):
    name, vocab_size (V), eos_ids (set), pad_id, encode(record, where) -> [int],
    tokens() -> [str] or None.

Memory: every forward pass holds at most --max-batch-tokens padded tokens (rows x longest
row; a longer sample runs alone), and the adapters compute logits only at the selected
positions, so the logits of a pass are at most [tokens, V].

Logit columns from V on (padded embedding rows) are dropped before sampling and storing.
Every sample draws from its own random stream seeded by (seed, sample id), so responses do
not depend on the batch size or on where a resumed run restarted.
"""

import hashlib
import json
import time

import numpy as np

from . import __version__
from .dump import DumpWriter
from .errors import RunnerError
from .progress import Progress


def pad_left(seqs, pad_id):
    """Left-padded ids, mask and position ids (for generation: last tokens aligned)."""
    B, L = len(seqs), max(len(s) for s in seqs)
    ids = np.full((B, L), pad_id, dtype=np.int64)
    mask = np.zeros((B, L), dtype=np.int64)
    pos = np.zeros((B, L), dtype=np.int64)
    for b, s in enumerate(seqs):
        n = len(s)
        ids[b, L - n:] = s
        mask[b, L - n:] = 1
        pos[b, L - n:] = np.arange(n)
    return ids, mask, pos


def pad_right(seqs, pad_id):
    """Right-padded ids, mask and position ids (for teacher forcing)."""
    B, L = len(seqs), max(len(s) for s in seqs)
    ids = np.full((B, L), pad_id, dtype=np.int64)
    mask = np.zeros((B, L), dtype=np.int64)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = s
        mask[b, :len(s)] = 1
    pos = np.broadcast_to(np.arange(L, dtype=np.int64), (B, L)).copy()
    return ids, mask, pos


def token_groups(lengths, max_tokens):
    """Consecutive groups of indices into lengths with len(group) * max(length) <= max_tokens
    (a single longer item makes a group of its own)."""
    groups, current, longest = [], [], 0
    for i, n in enumerate(lengths):
        if current and (len(current) + 1) * max(longest, n) > max_tokens:
            groups.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        groups.append(current)
    return groups


def sample_rng(seed, sample_id):
    return np.random.default_rng([seed, sample_id])


def sample_token(logits, temperature, rng):
    """A token from softmax(logits / temperature) by inverse CDF (one uniform draw);
    temperature 0 is argmax."""
    z = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        return int(np.argmax(z))
    w = np.exp((z - z.max()) / temperature)
    cdf = np.cumsum(w)
    t = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    if t >= z.size:     # u rounded up to the total: the last token of positive weight
        t = int(np.flatnonzero(w)[-1])
    return t


def _checked(model, logits, V, what):
    if logits.ndim != 2 or logits.shape[1] != model.model_vocab_size:
        raise RunnerError(f"model {model.name} returned logits of shape {logits.shape}, "
                          f"expected (K, {model.model_vocab_size})")
    out = logits[:, :V]
    if np.isnan(out).any() or np.isposinf(out).any():
        raise RunnerError(f"model {model.name} produced NaN or +inf logits ({what})")
    return out


def generate(model, V, prompts, max_new_tokens, temperature, rngs, eos_ids, pad_id):
    """Responses (token lists, ending at an EOS or at max_new_tokens) sampled from model,
    one batch, with its cache."""
    B = len(prompts)
    ids, mask, pos = pad_left(prompts, pad_id)
    select = (np.arange(B), np.full(B, ids.shape[1] - 1))
    logits, cache = model.forward(ids, mask, pos, select, None, keep_cache=True)
    responses = [[] for _ in range(B)]
    done = np.zeros(B, dtype=bool)
    next_pos = np.array([len(p) for p in prompts], dtype=np.int64)
    for step in range(max_new_tokens):
        logits = _checked(model, logits, V, f"generation step {step}")
        for k, b in enumerate(np.flatnonzero(~done)):
            t = sample_token(logits[k], temperature, rngs[b])
            responses[b].append(t)
            done[b] = t in eos_ids
        if done.all() or step == max_new_tokens - 1:
            break
        # Finished rows are fed padding, masked out, and not asked for logits.
        live = (~done).astype(np.int64)
        new = np.array([[responses[b][-1] if live[b] else pad_id] for b in range(B)])
        mask = np.concatenate([mask, live[:, None]], axis=1)
        rows = np.flatnonzero(live)
        logits, cache = model.forward(new, mask, next_pos[:, None].copy(),
                                      (rows, np.zeros(rows.size, dtype=np.int64)), cache,
                                      keep_cache=True)
        next_pos += live
    return responses


def generate_bounded(model, V, prompts, max_new_tokens, temperature, rngs, eos_ids, pad_id,
                     max_tokens):
    """generate() over groups of prompts whose padded length with the whole response fits
    max_tokens."""
    responses = []
    for g in token_groups([len(p) + max_new_tokens for p in prompts], max_tokens):
        responses += generate(model, V, [prompts[i] for i in g], max_new_tokens, temperature,
                              [rngs[i] for i in g], eos_ids, pad_id)
    return responses


def teacher_force(model, V, prompts, responses, max_tokens, pad_id):
    """Per sample, model's logits [len(response), V] at the response positions of
    prompt + response (row j predicts response[j]); each forward holds at most max_tokens
    padded tokens (or one sample)."""
    out = []
    lengths = [len(p) + len(r) - 1 for p, r in zip(prompts, responses)]
    for chunk in token_groups(lengths, max_tokens):
        seqs = [prompts[i] + responses[i][:-1] for i in chunk]
        ids, mask, pos = pad_right(seqs, pad_id)
        counts = [len(responses[i]) for i in chunk]
        rows = np.repeat(np.arange(len(seqs)), counts)
        cols = np.concatenate([np.arange(len(prompts[i]) - 1, len(prompts[i]) - 1 + len(responses[i]))
                               for i in chunk])
        logits, _ = model.forward(ids, mask, pos, (rows, cols))
        logits = _checked(model, logits, V, "teacher forcing")
        out.extend(np.split(logits, np.cumsum(counts)[:-1]))
    return out


def run(tokenizer, target, drafts, prompts, *, out, backend, dataset, num_samples=None,
        seed=0, temperature=1.0, max_new_tokens=64, batch_size=8, max_batch_tokens=4096,
        logits_dtype="float32",
        compression="gzip", stop_after=None, config=None, progress=None):
    """Writes the dump OUT (see module docstring); returns the writer's summary dict.

    drafts: [(name, model)]; config: dict of every option that affects the values, kept in
    the file to refuse resuming with other options; progress: draw the bar (None: when
    stderr is a terminal)."""
    V = tokenizer.vocab_size
    n = num_samples if num_samples is not None else len(prompts)
    if n < 1:
        raise RunnerError(f"--num-samples must be at least 1, not {n}")
    if batch_size < 1:
        raise RunnerError(f"--batch-size must be at least 1, not {batch_size}")
    if max_batch_tokens < 1:
        raise RunnerError(f"--max-batch-tokens must be at least 1, not {max_batch_tokens}")
    if max_new_tokens < 1:
        raise RunnerError(f"--max-new-tokens must be at least 1, not {max_new_tokens}")
    if not temperature >= 0:
        raise RunnerError(f"--gen-temperature must be >= 0, not {temperature}")
    if stop_after is not None and stop_after < 1:
        raise RunnerError(f"--stop-after must be at least 1, not {stop_after}")
    if seed < 0:
        raise RunnerError(f"--seed must be >= 0, not {seed}")
    models = [target] + [m for _, m in drafts]
    for m in models:
        if m.model_vocab_size < V:
            raise RunnerError(f"model {m.name} has {m.model_vocab_size} output rows, fewer than "
                              f"the tokenizer's {V} tokens")
    # Encode every prompt first: a bad one fails before any work.
    encoded = []
    for p in prompts:
        ids = tokenizer.encode(p.record, p.where)
        if not ids:
            raise RunnerError(f"{p.where}: the prompt encodes to no tokens")
        encoded.append(list(ids))
    groups = [("target", target.name, target.model_vocab_size, target.model_vocab_size - V)]
    groups += [(f"drafts/{name}", m.name, m.model_vocab_size, m.model_vocab_size - V)
               for name, m in drafts]
    full_config = dict(config or {}, backend=backend, num_samples=n, seed=seed,
                       gen_temperature=temperature, max_new_tokens=max_new_tokens,
                       logits_dtype=logits_dtype, compression=compression,
                       prompts_sha256=hashlib.sha256(json.dumps(
                           [p.record for p in prompts], sort_keys=True).encode()).hexdigest())
    root = {"creator": f"mdsd-runner {__version__} ({backend} backend)", "dataset": dataset,
            "tokenizer": tokenizer.name, "generation_temperature": float(temperature),
            "seed": int(seed), "max_new_tokens": int(max_new_tokens)}
    writer = DumpWriter(out, vocab_size=V, logits_dtype=logits_dtype, compression=compression,
                        root_attrs=root, groups=groups,
                        config=json.dumps(full_config, sort_keys=True), vocab=tokenizer.tokens())
    start = writer.open()
    bar = Progress(n, start, enabled=progress)
    stop = n if stop_after is None else min(n, start + stop_after)
    t0 = time.time()
    try:
        for first in range(start, stop, batch_size):
            batch = list(range(first, min(stop, first + batch_size)))
            batch_prompts = [encoded[i % len(encoded)] for i in batch]
            rngs = [sample_rng(seed, i) for i in batch]
            responses = generate_bounded(target, V, batch_prompts, max_new_tokens, temperature,
                                         rngs, tokenizer.eos_ids, tokenizer.pad_id,
                                         max_batch_tokens)
            logits = [teacher_force(m, V, batch_prompts, responses, max_batch_tokens,
                                    tokenizer.pad_id) for m in models]
            for k, i in enumerate(batch):
                writer.append(i, responses[k], [per_model[k] for per_model in logits])
                bar.update(writer.samples_done, writer.rows_done)
        finished = writer.samples_done == n
        summary = {"output": out if finished else writer.partial, "finished": finished,
                   "samples": writer.samples_done, "num_samples": n, "rows": writer.rows_done,
                   "vocab_size": V, "seconds": time.time() - t0}
        if finished:
            writer.finalize()
        return summary
    except BaseException:
        writer.close()
        if writer.samples_done == 0:
            writer.discard()
        raise
    finally:
        bar.close()
        writer.close()
