#!/usr/bin/python3
"""Writes the synthetic OpenAI-compatible trace fixture of data/traces/ from the shipped KJV
pair (data/kjv-ngram.h5: target, drafter kn2): the top-K log-probabilities of its first
SAMPLES samples (whole samples, rows 0..N-1), as an engine would return them for texts it
scored with echo, in both response shapes:

  kjv-completions-{target,kn2}.jsonl  completions API (echo + logprobs K): tokens spelled
      token_id:N (vLLM --return-tokens-as-token-ids), a null top list for the first echoed
      token (<s>), and, as vLLM does, the position's own token added as a (K+1)-th entry
      when it lies outside the top K; after the echoed text one generated token (vLLM
      needs max_tokens >= 1), different for the two models, and usage.prompt_tokens
      (import with --prompt-only);
  kjv-chat-{target,kn2}.jsonl  chat API (logprobs.content[].top_logprobs, K entries):
      tokens as text (resolved by kjv-vocab.json), the own token listed first as vLLM
      does (so the top K-1 follow it when it lies outside the top K);
  kjv-vocab.json  the dump's /vocab as a JSON list (id = index);
  kjv-trace.json  what was taken: source dump, row range, samples, K, models. The full
      rows stay in the source dump (rows [0, N) of data/kjv-ngram.h5, its target and kn2),
      so that tests can compare what a top-K dump says with the true alpha*.

Deterministic (ties broken by token id). Run from the repository root:
    /usr/bin/python3 data/traces/make_kjv_trace.py [OUT_FOLDER]   (default: beside this script)
"""

import json
import os
import sys

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = "data/kjv-ngram.h5"  # relative to the repository root (recorded so)
OUT = os.path.join(ROOT, "data", "traces")
SAMPLES, K = 3, 20
MODELS = [("target", "target"), ("kn2", "drafts/kn2")]
BOS = 2  # <s>: the first echoed token, which no distribution predicts


def log_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def lp(v):
    """A float32 log-probability as an engine's JSON writes it (repr of the float32)."""
    return float(np.float32(v))


def write_jsonl(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for obj in lines:
            f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.replace(tmp, path)


def main():
    global OUT
    if len(sys.argv) > 1:
        OUT = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    with h5py.File(os.path.join(ROOT, SOURCE), "r") as f:
        sid = f["sample_id"][:]
        N = int(np.flatnonzero(sid >= SAMPLES)[0])
        if list(np.unique(sid[:N])) != list(range(SAMPLES)):
            sys.exit(f"{SOURCE}: samples 0..{SAMPLES - 1} are not its first rows")
        tokens = f["tokens"][:N].astype(np.int64)
        vocab = [t.decode() if isinstance(t, bytes) else t for t in f["vocab"][:]]
        rows = {name: log_softmax(f[path + "/logits"][:N]) for name, path in MODELS}
    if len(set(vocab)) != len(vocab):
        sys.exit(f"{SOURCE}: its vocabulary has duplicate strings")
    for m, (name, L) in enumerate(rows.items()):
        comp, chat = [], []
        for s in range(SAMPLES):
            r = np.flatnonzero(sid[:N] == s)
            ctoks, ctops, content = [f"token_id:{BOS}"], [None], []
            for i in r:
                order = np.lexsort((np.arange(L.shape[1]), -L[i]))  # by logprob, then id
                top, own = list(order[:K]), int(tokens[i])
                # completions: top K, plus the own token when outside them (vLLM, OpenAI)
                ids = top + ([own] if own not in top else [])
                ctoks.append(f"token_id:{own}")
                ctops.append({f"token_id:{j}": lp(L[i, j]) for j in ids})
                # chat: the own token first, then the others, K in all (vLLM)
                ids = [own] + [j for j in top if j != own]
                ids = ids[:K]
                content.append({"token": vocab[own], "logprob": lp(L[i, own]),
                                "bytes": list(vocab[own].encode()),
                                "top_logprobs": [{"token": vocab[j], "logprob": lp(L[i, j]),
                                                  "bytes": list(vocab[j].encode())} for j in ids]})
            # the generated token: the m-th most likely after the last row (a stand-in:
            # the source has no row there), so that the two models' differ
            last = L[r[-1]]
            gen = int(np.lexsort((np.arange(L.shape[1]), -last))[m])
            P = len(ctoks)
            ctoks.append(f"token_id:{gen}")
            ctops.append(dict(list(ctops[-1].items())[:K]))
            comp.append({"id": f"cmpl-kjv-{name}-{s}", "object": "text_completion",
                         "model": name, "choices": [{"index": 0, "text": "",
                         "logprobs": {"tokens": ctoks,
                                      "token_logprobs": [None] + [lp(L[i, tokens[i]]) for i in r]
                                      + [lp(last[gen])],
                                      "top_logprobs": ctops,
                                      "text_offset": list(range(len(ctoks)))},
                         "finish_reason": "length"}],
                         "usage": {"prompt_tokens": P, "completion_tokens": 1,
                                   "total_tokens": P + 1}})
            chat.append({"id": f"chatcmpl-kjv-{name}-{s}", "object": "chat.completion",
                         "model": name, "choices": [{"index": 0, "message": {
                             "role": "assistant", "content": " ".join(vocab[t] for t in tokens[r])},
                             "logprobs": {"content": content}, "finish_reason": "length"}]})
        write_jsonl(os.path.join(OUT, f"kjv-completions-{name}.jsonl"), comp)
        write_jsonl(os.path.join(OUT, f"kjv-chat-{name}.jsonl"), chat)
    with open(os.path.join(OUT, "kjv-vocab.json.tmp"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    os.replace(os.path.join(OUT, "kjv-vocab.json.tmp"), os.path.join(OUT, "kjv-vocab.json"))
    meta = {"source": SOURCE, "rows": [0, N], "samples": SAMPLES, "top_k": K,
            "models": {name: path for name, path in MODELS}, "vocab_size": len(vocab)}
    with open(os.path.join(OUT, "kjv-trace.json.tmp"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    os.replace(os.path.join(OUT, "kjv-trace.json.tmp"), os.path.join(OUT, "kjv-trace.json"))
    print(f"wrote {OUT}: {N} positions of {SAMPLES} samples, top-{K}, models "
          f"{', '.join(n for n, _ in MODELS)}")


if __name__ == "__main__":
    main()
