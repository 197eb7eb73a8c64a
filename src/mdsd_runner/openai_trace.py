"""`mdsd-runner import --openai-logprobs TARGET.jsonl --draft NAME=DRAFT.jsonl`: a dump of
truncated top-k rows (data/README.md, "Truncated rows" and "OpenAI-compatible traces")
from the responses of an OpenAI-compatible server (vLLM, SGLang) that scored the same
texts with the target and with each drafter.

One JSONL line is one response (one text, one sample of the dump), in either shape:

  * completions API (`echo: true`, `logprobs: k`): choices[0].logprobs has `tokens` and
    `top_logprobs`, a list of {token: logprob} dicts (null for the first echoed token,
    which has no prefix to be predicted from);
  * chat API (`logprobs: true`, `top_logprobs: k`): choices[0].logprobs.content is a
    list of {token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}.

A line may also be a batch-output record ({"response": {"body": RESPONSE}}, what
`vllm run_batch` writes). Position i of a response (its i-th token) becomes one row: its
top-k entries are the finite log-probabilities, every other token -inf, the row flagged
truncated with its missing mass, and /tokens holds the token at i.

Token identity: a token spelled `token_id:N` (vLLM's --return-tokens-as-token-ids) is id
N; any other spelling is looked up in --vocab FILE, a JSON list of token strings (id =
index, as the dump's /vocab) or a JSON object {token string: id}. The vocabulary size V
is --vocab-size or the vocab's size.

The engine's own token: vLLM's completions API adds the position's token to its top list
when it lies outside the top k (k + 1 entries, the OpenAI convention), and its chat API
lists the sampled token first. A kept set must be the top tokens (the bounds on truncated
rows assume every unseen token is at most the smallest kept one), so a position's own
token that is the strictly smallest entry of its list is dropped, and every row of every
model is then cut to the smallest k left: a row's kept set is always a top set. Lists whose
sizes differ by more than that (after the drop, by more than one) are refused as a k that
varies."""

import json
import math
import os
import re

import numpy as np

from .dump import DumpWriter
from .errors import RunnerError
from .importer import truncation_record

TOKEN_ID = re.compile(r"token_id:(\d+)\Z")
# OpenAI's (and vLLM's) stand-in for -inf in JSON: not a log-probability.
PLACEHOLDER = -9999.0


class _Dict(dict):
    """A JSON object that remembers its duplicate keys (json keeps the last silently)."""
    dups = ()


def _pairs(pairs):
    d = _Dict()
    dups = []
    for k, v in pairs:
        if k in d:
            dups.append(k)
        d[k] = v
    if dups:
        d.dups = dups
    return d


class _Constant:
    """NaN, Infinity, -Infinity in a JSON text (Python's json writes them, JSON has none):
    kept as such, to be refused where they stand (file, line, position, token)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON (a non-finite number)")


# ---- vocabulary --------------------------------------------------------------------------

class Vocab:
    """Token string -> id, from token_id:N or a --vocab file; V = the vocabulary size."""

    def __init__(self, path=None, vocab_size=None):
        self.path, self.ids, self.strings = path, {}, None
        if path is not None:
            try:
                with open(path, encoding="utf-8") as f:
                    data = json.load(f, object_pairs_hook=_pairs, parse_constant=_reject_constant)
            except (OSError, ValueError) as e:
                raise RunnerError(f"--vocab {path}: cannot read it as JSON: {e}") from None
            if isinstance(data, list):
                if not all(isinstance(t, str) for t in data):
                    raise RunnerError(f"--vocab {path}: a list must hold token strings only")
                self.strings = data
                for i, t in enumerate(data):
                    self.ids.setdefault(t, []).append(i)
                n = len(data)
            elif isinstance(data, dict):
                if data.dups:
                    raise RunnerError(f"--vocab {path}: token {data.dups[0]!r} is given twice")
                bad = [(t, i) for t, i in data.items() if type(i) is not int or i < 0]
                if bad:
                    raise RunnerError(f"--vocab {path}: token {bad[0][0]!r} maps to {bad[0][1]!r}, "
                                      "not a non-negative integer id")
                for t, i in data.items():
                    self.ids[t] = [i]
                n = max(data.values(), default=-1) + 1
            else:
                raise RunnerError(f"--vocab {path}: expected a JSON list of token strings or an "
                                  "object {token: id}")
            if vocab_size is not None and vocab_size < n:
                raise RunnerError(f"--vocab-size {vocab_size}: --vocab {path} has ids up to {n - 1}")
            vocab_size = n if vocab_size is None else vocab_size
        if vocab_size is None:
            raise RunnerError("give --vocab-size V (the tokenizer's vocabulary size: the unseen "
                              "tokens of a top-k row are all the others) or --vocab FILE")
        if vocab_size < 2:
            raise RunnerError(f"--vocab-size must be at least 2, not {vocab_size}")
        self.V = int(vocab_size)

    def id(self, token, where):
        """The id of `token`; `where` names file, line and position for a refusal."""
        if not isinstance(token, str):
            raise RunnerError(f"{where}: token {token!r} is not a string")
        m = TOKEN_ID.match(token)
        if m:
            i = int(m.group(1))
            if i >= self.V:
                raise RunnerError(f"{where}: token {token!r}: id {i} is outside the vocabulary "
                                  f"[0, {self.V}) (tokenizer mismatch, or a wrong --vocab-size?)")
            return i
        if self.path is None:
            raise RunnerError(f"{where}: token {token!r} is spelled as text: serve with "
                              "--return-tokens-as-token-ids (vLLM) or pass --vocab FILE")
        ids = self.ids.get(token)
        if not ids:
            raise RunnerError(f"{where}: token {token!r} is not in --vocab {self.path} "
                              "(tokenizer mismatch?)")
        if len(ids) > 1:
            raise RunnerError(f"{where}: token {token!r} is ids {ids[0]} and {ids[1]} of --vocab "
                              f"{self.path}: ambiguous (serve with --return-tokens-as-token-ids)")
        if ids[0] >= self.V:
            raise RunnerError(f"{where}: token {token!r}: id {ids[0]} is outside [0, {self.V})")
        return ids[0]


# ---- one trace file ----------------------------------------------------------------------

def _logprob(value, where, token):
    if type(value) not in (int, float) or not math.isfinite(value):
        raise RunnerError(f"{where}: token {token!r}: logprob {value!r} is not a finite number")
    if value > 0:
        raise RunnerError(f"{where}: token {token!r}: logprob {value!r} is positive (not a "
                          "log-probability)")
    if value == PLACEHOLDER:
        raise RunnerError(f"{where}: token {token!r}: logprob -9999.0 is the API's stand-in for "
                          "-inf (probability 0), not a log-probability of a top-k token")
    return float(value)


def _positions(obj, where, prompt_only=False):
    """[(token string, top list [(token string, logprob)] or None)] of one response;
    prompt_only: only the echoed prompt's (the first usage.prompt_tokens)."""
    if isinstance(obj, dict) and isinstance(obj.get("response"), dict) and "body" in obj["response"]:
        obj = obj["response"]["body"]  # a batch-output record
    choices = obj.get("choices") if isinstance(obj, dict) else None
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        got = (f"{len(choices)} choices" if isinstance(choices, list)
               else f"choices of type {type(choices).__name__}")
        raise RunnerError(f"{where}: expected a response with one choice (choices[0]), got {got}")
    lp = choices[0].get("logprobs")
    if not isinstance(lp, dict):
        raise RunnerError(f"{where}: choices[0].logprobs is {lp!r}: request logprobs (completions: "
                          "echo + logprobs k; chat: logprobs + top_logprobs k)")
    out = []
    if "content" in lp:  # chat API
        if prompt_only:
            raise RunnerError(f"{where}: --prompt-only: a chat API response's logprobs are of "
                              "the tokens it generated, not of an echoed prompt")
        content = lp["content"]
        if not isinstance(content, list):
            raise RunnerError(f"{where}: choices[0].logprobs.content is not a list")
        for i, e in enumerate(content):
            at = f"{where}, position {i}"
            if not isinstance(e, dict) or "token" not in e:
                raise RunnerError(f"{at}: a content entry without token")
            top = e.get("top_logprobs")
            if top is not None:
                if not isinstance(top, list) or not all(isinstance(t, dict) and "token" in t
                                                        and "logprob" in t for t in top):
                    raise RunnerError(f"{at}: top_logprobs must be a list of {{token, logprob}}")
                top = [(t["token"], t["logprob"]) for t in top]
            out.append((e["token"], top))
        return out
    tokens, tops = lp.get("tokens"), lp.get("top_logprobs")
    if not isinstance(tokens, list) or not isinstance(tops, list):
        raise RunnerError(f"{where}: choices[0].logprobs has neither content (chat API) nor "
                          "tokens and top_logprobs lists (completions API)")
    if len(tokens) != len(tops):
        raise RunnerError(f"{where}: {len(tokens)} tokens but {len(tops)} top_logprobs entries")
    for i, (tok, top) in enumerate(zip(tokens, tops)):
        if top is not None:
            if not isinstance(top, dict):
                raise RunnerError(f"{where}, position {i}: top_logprobs entry is not a "
                                  "{token: logprob} object")
            if top.dups:
                raise RunnerError(f"{where}, position {i}: token {top.dups[0]!r} appears twice "
                                  "in the top list")
            top = list(top.items())
        out.append((tok, top))
    if prompt_only:
        usage = obj.get("usage")
        n = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        if type(n) is not int or not 1 <= n <= len(out):
            raise RunnerError(f"{where}: --prompt-only needs usage.prompt_tokens, the echoed "
                              f"prompt's length, in [1, {len(out)}], got {n!r}")
        out = out[:n]
    return out


def read_trace(path, vocab, prompt_only=False):
    """A trace file -> [(line number, positions)], positions = [(json position i, token id,
    top ids int64 [k_i], top logprobs float64 [k_i]) or (i, token id, None, None) for a
    position without a top list]."""
    samples = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise RunnerError(f"cannot read {path}: {e}") from None
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}, line {n}"
            try:
                obj = json.loads(line, object_pairs_hook=_pairs, parse_constant=_Constant)
            except ValueError as e:
                raise RunnerError(f"{where}: not JSON: {e}") from None
            rows = []
            for i, (tok, top) in enumerate(_positions(obj, where, prompt_only)):
                at = f"{where}, position {i}"
                tid = vocab.id(tok, at)
                if top is None:
                    rows.append((i, tid, None, None))
                    continue
                ids = [vocab.id(t, at) for t, _ in top]
                seen = {}
                for (t, _), j in zip(top, ids):
                    if j in seen:
                        raise RunnerError(f"{at}: token {t!r} (id {j}) appears twice in the top "
                                          f"list (as {seen[j]!r})")
                    seen[j] = t
                lps = [_logprob(v, at, t) for t, v in top]
                if not ids:
                    raise RunnerError(f"{at}: token {tok!r}: an empty top list")
                rows.append((i, tid, np.array(ids, np.int64), np.array(lps, np.float64)))
            if not rows:
                raise RunnerError(f"{where}: a response without tokens")
            samples.append((n, rows))
    if not samples:
        raise RunnerError(f"{path}: no responses (an empty file)")
    return samples


def _drop_own(tid, ids, lps):
    """A top list without the position's own token where that is its strictly smallest
    entry (the engine may have added it from outside the top k)."""
    hit = np.flatnonzero(ids == tid)
    if hit.size and len(ids) > 1:
        j = int(hit[0])
        others = np.delete(lps, j)
        if lps[j] < others.min():
            return np.delete(ids, j), others
    return ids, lps


# ---- several traces into a dump ----------------------------------------------------------

def import_traces(out, target, drafts, *, vocab=None, vocab_size=None, prompt_only=False,
                  compression="gzip", dataset="openai-trace", target_model="target", log=print):
    """target: a JSONL path; drafts: [(name, JSONL path)]. Writes dump `out` of truncated
    rows; returns a summary dict. prompt_only: rows of the echoed prompt only (vLLM's
    completions API generates at least one token after it, which differs between models)."""
    if not drafts:
        raise RunnerError("give at least one --draft NAME=FILE.jsonl")
    names = [n for n, _ in drafts]
    for n in names:
        if not n or "/" in n or names.count(n) > 1:
            raise RunnerError(f"draft name {n!r} is empty, has a '/' or is given twice")
    voc = Vocab(vocab, vocab_size)
    models = [("target", target)] + [(f"drafts/{n}", p) for n, p in drafts]
    traces = [read_trace(p, voc, prompt_only) for _, p in models]
    t_path, t_samples = target, traces[0]
    for (gname, path), samples in zip(models[1:], traces[1:]):
        if len(samples) != len(t_samples):
            raise RunnerError(f"{path} has {len(samples)} responses, {t_path} has "
                              f"{len(t_samples)}: the traces must score the same texts, in order")
        for (tn, trows), (dn, drows) in zip(t_samples, samples):
            for a, b in zip(trows, drows):
                if a[1] != b[1]:
                    last = b is drows[-1] and a is trows[-1] and not prompt_only
                    raise RunnerError(f"{path}, line {dn}, position {b[0]}: token id {b[1]}, but "
                                      f"{t_path}, line {tn} has id {a[1]} there: the traces are "
                                      "not of the same text (or not of the same tokenizer)"
                                      + ("; if the server generated it after the echoed text, "
                                         "pass --prompt-only" if last else ""))
                if (a[2] is None) != (b[2] is None):
                    miss = (t_path, tn) if a[2] is None else (path, dn)
                    raise RunnerError(f"{miss[0]}, line {miss[1]}, position {a[0]}: token id "
                                      f"{a[1]} has no top_logprobs there, the other trace has: "
                                      "a missing position")
            if len(trows) != len(drows):
                short, sn, rows = ((path, dn, drows) if len(drows) < len(trows)
                                   else (t_path, tn, trows))
                longer = trows if rows is drows else drows
                i = longer[len(rows)]
                raise RunnerError(f"{short}, line {sn}: {len(rows)} positions, the other trace "
                                  f"has {len(longer)}: position {i[0]} (token id {i[1]}) is missing")
    # Rows: positions with a top list. Only the first position may lack one (echo's first
    # token); anywhere else it is a missing position.
    kept_k = []
    for (gname, path), samples in zip(models, traces):
        for n, rows in samples:
            for i, tid, ids, lps in rows:
                if ids is None and i != 0:
                    raise RunnerError(f"{path}, line {n}, position {i}: token id {tid} has no "
                                      "top_logprobs (a missing position)")
                if ids is not None:
                    kept_k.append((len(_drop_own(tid, ids, lps)[0]), len(ids), path, n, i, tid))
    if not kept_k:
        raise RunnerError(f"{t_path}: no position has top_logprobs")
    K = min(x[0] for x in kept_k)
    counts = np.bincount([x[0] for x in kept_k])
    usual = int(np.argmax(counts))  # the k of most rows; a row more than 1 off it is named
    for k_left, k_raw, path, n, i, tid in kept_k:
        if abs(k_left - usual) > 1:
            raise RunnerError(f"{path}, line {n}, position {i}: token id {tid}: a top list of "
                              f"{k_raw} tokens where most have {usual} (after dropping an "
                              "engine-added own token): the number of top_logprobs (k) varies; "
                              "request the same k for every text and model")
    if K >= voc.V:
        raise RunnerError(f"top lists of {K} tokens with V = {voc.V}: rows are complete, not "
                          "top-k: import them as arrays (mdsd-runner import --target ...)")
    groups = [("target", target_model, voc.V, 0)] + [(f"drafts/{n}", n, voc.V, 0) for n in names]
    config = {"backend": "import-openai-logprobs", "vocab_size": voc.V, "top_k": K,
              "prompt_only": bool(prompt_only),
              "samples": len(t_samples), "traces": [os.path.basename(p) for _, p in models]}
    vocab_strings = voc.strings if voc.strings is not None and len(voc.strings) == voc.V else None
    writer = DumpWriter(out, vocab_size=voc.V, logits_dtype="float32", compression=compression,
                        root_attrs={"creator": "mdsd-runner import --openai-logprobs",
                                    "dataset": dataset,
                                    "tokenizer": (f"vocab {os.path.basename(vocab)}" if vocab
                                                  else "token ids (token_id:N)"),
                                    "generation_temperature": float("nan")},
                        groups=groups, config=json.dumps(config, sort_keys=True),
                        vocab=vocab_strings, truncation=True)
    if os.path.exists(writer.partial):
        os.unlink(writer.partial)  # an import is quick: always start over
    writer.open()
    lo = 0
    try:
        for s in range(len(t_samples)):
            block_rows, records, tokens = [], [], None
            for (gname, path), samples in zip(models, traces):
                n, rows = samples[s]
                rows = [r for r in rows if r[2] is not None]
                dense = np.full((len(rows), voc.V), -np.inf, dtype=np.float32)
                for r, (i, tid, ids, lps) in enumerate(rows):
                    ids, lps = _drop_own(tid, ids, lps)
                    order = np.argsort(-lps, kind="stable")[:K]  # the top K of a top set
                    dense[r, ids[order]] = lps[order]
                if tokens is None:
                    tokens = np.array([r[1] for r in rows], np.int64)
                block_rows.append(dense)
                records.append(truncation_record(f"{path}, line {n}", dense, 0,
                                                 [f"position {r[0]} (token id {r[1]})" for r in rows]))
            writer.append(s, tokens, block_rows, records)
            lo += len(tokens)
        writer.finalize()
    except BaseException:
        writer.discard()
        raise
    return {"output": out, "rows": lo, "samples": len(t_samples), "vocab_size": voc.V,
            "drafts": names, "top_k": K}
