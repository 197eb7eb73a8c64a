#!/usr/bin/python3
"""SpecHub App. D toy pairs as an mdsd logit dump (format: data/README.md).

  toy_dump.py --dist normal|uniform --T T --lam L --pairs N --vocab V --seed S -o OUT.h5

Per pair: u_p, u_q i.i.d. over the V tokens, from N(0, 1) (--dist normal) or U(0, 1)
(--dist uniform, what App. D states; `mdsd toy --family spechub-toy` makes those too);
target logits u_p / T, draft logits (L u_p + (1 - L) u_q) / T, so that mdsd at
temperature 1 sees p = softmax(u_p / T), q = softmax(L u_p / T + (1 - L) u_q / T).
Each pair is its own sample (standard errors over pairs). numpy and h5py (the model
runner's dependencies); the file appears under OUT only when complete.
"""
import argparse
import os

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--dist", choices=("normal", "uniform"), required=True)
    ap.add_argument("--T", type=float, required=True)
    ap.add_argument("--lam", type=float, required=True)
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--vocab", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if not (a.T > 0 and 0 <= a.lam <= 1 and a.pairs > 0 and a.vocab > 1):
        ap.error("need T > 0, 0 <= lam <= 1, pairs > 0, vocab > 1")
    rng = np.random.default_rng(a.seed)
    draw = rng.standard_normal if a.dist == "normal" else rng.random
    N, V = a.pairs, a.vocab
    up, uq = draw((N, V)), draw((N, V))
    target = (up / a.T).astype(np.float32)
    draft = ((a.lam * up + (1 - a.lam) * uq) / a.T).astype(np.float32)
    p = np.exp(target - target.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    tokens = np.array([rng.choice(V, p=row) for row in p], np.int32)
    tmp = a.output + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs.create("mdsd_format", 1, dtype=np.int32)
        f.attrs["creator"] = "papers/spechub/toy_dump.py"
        f.attrs["created"] = ""
        f.attrs["dataset"] = f"spechub-appD-{a.dist}:T={a.T:g},lambda={a.lam:g},seed={a.seed}"
        f.attrs["tokenizer"] = f"toy:{V}"
        f.attrs.create("generation_temperature", 1.0, dtype=np.float64)
        f.attrs.create("vocab_size", V, dtype=np.int64)
        f["tokens"] = tokens
        f["sample_id"] = np.arange(N, dtype=np.int32)
        f["position"] = np.zeros(N, np.int32)
        for path, logits, model in (("target", target, "u_p/T"),
                                    ("drafts/draft", draft, "(lam u_p + (1-lam) u_q)/T")):
            f.create_dataset(f"{path}/logits", data=logits, chunks=(min(64, N), V))
            f[path].attrs["model"] = model
            f[path].attrs.create("vocab_size", V, dtype=np.int64)
    os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
